// lax::quantized_matmul: x against integer-packed weight rows (backend/quantized_matmul.h has
// the layout and the definition), a routine primitive run by the cpu, native and wasm devices.
#pragma once
#include <cstdint>

#include "backend/quantized_matmul.h"
#include "frontend/array.h"

namespace kiln::lax {

// x float32 [..., k] (k a multiple of 32); codes uint32 [groups, k / 32, 8, words]; d
// float32 [groups, k / 32, 8]; mins the same for Nibble4, float32 [0] for Int8. Returns
// float32 [..., rows]. Differentiable in x (straight-through: the float weight's matmul).
Array quantized_matmul(const Array& x, const Array& codes, const Array& d, const Array& mins, QuantLayout layout,
                       int64_t rows);

// The packed weight as float32 [rows, k]: a lazy expression of the operands above (value
// d * q + min, or d * q for Int8), exact for codes and scales taken from ggml blocks.
Array dequantize_packed(const Array& codes, const Array& d, const Array& mins, QuantLayout layout, int64_t rows,
                        int64_t k);

}  // namespace kiln::lax
