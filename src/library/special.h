// Special functions JAX's samplers need, built from kiln primitives so that they run on
// every backend and transform: lax.erf_inv (XLA's float32 polynomial) and lax.nextafter.
#pragma once
#include "frontend/array.h"

namespace kiln::lax {

// The inverse error function, float32 only (ints promote to float32). XLA's ErfInv32
// polynomial (Giles 2010) with its Horner steps as FMAs, as XLA's CPU backend contracts
// them; erf_inv(+-1) = +-inf, |x| > 1 gives NaN. XLA has its own float32 log1p, so results
// may still differ from JAX by up to 2 ulp (1.4% of inputs, over 200k uniform samples).
Array erf_inv(const Array& x);
// a * b + c rounded once to float32 (float32 operands), as the FMAs XLA's CPU backend
// contracts multiply-adds into: computed in float64, where the product is exact, so the only
// difference from a true FMA is double rounding (a tie at 2^-29 relative: never seen).
// kiln's own ops round every step; the samplers use this where JAX's results depend on it.
// On a device without float64 (webgpu) it is a * b + c with the product rounded first.
Array fma_f32(const Array& a, const Array& b, const Array& c);
// The next float32 after x towards y (XLA's NextAfter: nan if either is nan, y if x == y).
Array nextafter(const Array& x, const Array& y);

}  // namespace kiln::lax
