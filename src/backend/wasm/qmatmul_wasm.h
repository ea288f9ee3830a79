// The wasm device's quantized_matvec kernel (backend/quantized_matmul.h): SIMD128
// i32x4.dot_i16x8_s, 8 rows per pass, equal to quantized_matvec_reference bit for bit.
#pragma once
#include "backend/quantized_matmul.h"

namespace kiln::wasm {

void quantized_matvec_simd128(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                              const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                              float* out);
// The same for two consecutive activation rows (QuantMatvec2Fn), each code widened once.
void quantized_matvec2_simd128(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                               const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                               float* out);

}  // namespace kiln::wasm
