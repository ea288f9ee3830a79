// The native device's quantized_matvec kernels (backend/quantized_matmul.h), each in a file
// compiled for its ISA: AVX2 (8 rows per pass, run where the CPU has it) and SSE2 (baseline
// x86-64, 4 rows per pass). Both equal quantized_matvec_reference bit for bit.
#pragma once
#include "backend/quantized_matmul.h"

namespace kiln::native {

void quantized_matvec_avx2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                           const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out);
void quantized_matvec_sse2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                           const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out);
// Several activation rows at once (prefill; QuantMatmulRowsFn): each group's codes widened
// once for all of them. Bit-identical to quantized_matvec_avx2 per row.
void quantized_matmul_rows_avx2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                float* out);
// The fastest of the two this CPU runs.
QuantMatvecFn best_quantized_matvec();
// The rows kernel this CPU runs (AVX2), or nullptr (prefill then runs the matvec per row).
QuantMatmulRowsFn best_quantized_matmul_rows();

}  // namespace kiln::native
