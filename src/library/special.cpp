// lax.erf_inv and lax.nextafter as compositions of numpy functions (bitcasts for
// nextafter), mirroring XLA's lowering step by step.
#include "library/special.h"

#include <cmath>

#include "backend/backend.h"
#include "library/array_args.h"
#include "library/lax.h"

namespace kiln::lax {

namespace np = kiln::numpy;

namespace {

Array as_float32(const char* op, const Array& x) {
  if (x.dtype() == float16 || x.dtype() == float64)
    fail(op, "got dtype ", dtype_name(x.dtype()),
         ", expected float32 (float16/float64 are not supported yet)");
  return x.dtype() == float32 ? x : np::detail::cast(x, float32, x.weak_type());
}

Array u32(const Array& like, uint32_t v) {
  return np::detail::constant({}, uint32, double(v), like.device());
}

}  // namespace

Array erf_inv(const Array& x_in) {
  return with_name("erf_inv", [&]() -> Array {
    // XLA's coefficients for w < 5 (|x| <= ~0.9966) and for the tail.
    static constexpr float lt5[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                     -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                     -0.00417768164f,  0.246640727f,    1.50140941f};
    static constexpr float ge5[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                     -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                     0.00943887047f,   1.00167406f,     2.83297682f};
    Array x = as_float32("erf_inv", x_in);
    Array w = np::negative(np::log1p(np::negative(x * x)));
    Array lt = w < Array(5.0);
    w = np::where(lt, w - 2.5, np::sqrt(w) - 3.0);
    auto coef = [&](int i) { return np::where(lt, Array(double(lt5[i])), Array(double(ge5[i]))); };
    Array p = coef(0);
    for (int i = 1; i < 9; ++i) p = fma_f32(p, w, coef(i));
    // The polynomial is indeterminate at +-1, where the answer is +-inf.
    return np::where(np::equal(np::abs(x), Array(1.0)), x * INFINITY, p * x);
  });
}

Array fma_f32(const Array& a, const Array& b, const Array& c) {
  return with_name("fma_f32", [&]() -> Array {
    // Without float64 (webgpu) the product is rounded first; the samplers built on this may
    // then differ from JAX's by an ulp there, where every other device matches it bit for bit.
    if (!get_backend(a.device()).supports(float64)) return a * b + c;
    auto wide = [](const Array& v) { return np::detail::cast(v, float64, false); };
    return np::detail::cast(wide(a) * wide(b) + wide(c), float32, false);
  });
}

Array nextafter(const Array& from_in, const Array& to_in) {
  return with_name("nextafter", [&]() -> Array {
    auto b = np::broadcast_arrays({as_float32("nextafter", from_in), as_float32("nextafter", to_in)});
    const Array &from = b[0], &to = b[1];
    Array xi = bitcast_convert_type(from, uint32), yi = bitcast_convert_type(to, uint32);
    Array x_abs = xi & u32(xi, 0x7fffffffu), y_abs = yi & u32(xi, 0x7fffffffu);
    Array x_sign = xi & u32(xi, 0x80000000u), y_sign = yi & u32(xi, 0x80000000u);
    // Stepping the bit pattern moves one ulp; it shrinks the magnitude when moving to zero.
    Array smaller = np::logical_or(x_abs > y_abs, np::not_equal(x_sign, y_sign));
    Array r = np::where(smaller, xi - u32(xi, 1), xi + u32(xi, 1));
    Array from_zero = np::equal(x_abs, u32(xi, 0)), to_zero = np::equal(y_abs, u32(xi, 0));
    r = np::where(from_zero, np::where(to_zero, yi, y_sign | u32(xi, 1)), r);
    r = np::where(np::equal(from, to), yi, r);
    Array out = bitcast_convert_type(r, float32);
    return np::where(np::logical_or(np::isnan(from), np::isnan(to)), Array(NAN), out);
  });
}

}  // namespace kiln::lax
