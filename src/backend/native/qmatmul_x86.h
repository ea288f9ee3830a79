// The native device's quantized_matvec kernels (backend/quantized_matmul.h), each in a file
// compiled for its ISA: AVX2 (8 rows per pass, run where the CPU has it) and SSE2 (baseline
// x86-64, 4 rows per pass), both equal to quantized_matvec_reference bit for bit; and the
// prefill rows kernels: AVX2, AVX-VNNI, AVX512-VNNI and AMX on int16 activations (the matvec's
// floats), and the VNNI and AMX levels' opt-in int8 forms (the reference's floats over codes
// rounded at 127).
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
// Prefill with VNNI, the weight rows in the lanes (qmatmul_vnni.h): 8 rows per 256-bit vector
// (AVX-VNNI, VEX) or 16 per 512-bit one (AVX512-VNNI). The plain names take the definition's
// int16 activations (vpdpwssd: the AVX2 rows kernel's floats); the _i8 ones int8 activations
// (vpdpbusd with u8 weight codes), whose xq must hold codes within +-127
// (QuantRowsKernel::max_code kActMaxInt8).
void quantized_matmul_rows_avxvnni(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                   const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                   float* out);
void quantized_matmul_rows_avxvnni_i8(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                      const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                      float* out);
void quantized_matmul_rows_avx512vnni(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                      const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                      float* out);
void quantized_matmul_rows_avx512vnni_i8(const QuantMatmulShape& s, const int16_t* xq, const float* dx,
                                         const float* sx, const uint32_t* codes, const float* d, const float* mins,
                                         int64_t g0, int64_t g1, float* out);
// Prefill with AMX tiles (qmatmul_amx.cpp): 16 activation rows x 16 weight rows per tile
// product; the int16 codes split into a low and a high byte (two products per block: the
// definition's sums exactly), or the _i8 kernel's int8 codes (one). Under 16 rows they hand the
// call to the AVX512-VNNI kernels.
void quantized_matmul_rows_amx(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                               const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                               float* out);
void quantized_matmul_rows_amx_i8(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                  const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                  float* out);

// The kernel levels, lowest first. cpu_quant_isa() is the highest this CPU (and its OS's saved
// register state) runs; quant_isa() that, lowered by $KILN_NATIVE_QMATVEC (sse2, avx2, avxvnni,
// avx512vnni or amx: the bench's A/B and the tests of lower levels on a higher machine). Amx
// needs AVX512-VNNI and AVX512-BW as well, tiles enabled by the OS (XCR0) and, on Linux, the
// process's permission (arch_prctl ARCH_REQ_XCOMP_PERM, asked once by cpu_quant_isa()); where
// any of that fails the level is AVX512-VNNI, silently.
enum class QuantIsa { Sse2, Avx2, AvxVnni, Avx512Vnni, Amx };
// Whether this process may run AMX tile instructions (asks the OS's permission the first
// time). The AMX kernels check it themselves and take the AVX512-VNNI ones where it is false.
bool amx_usable();
QuantIsa cpu_quant_isa();
QuantIsa quant_isa();
const char* quant_isa_name(QuantIsa isa);
// The matvec of quant_isa() (AVX2 for every level above it).
QuantMatvecFn best_quantized_matvec();
// The rows kernel of a level and its rounding, or none (SSE2: the matvec per row). int8: the
// VNNI levels' int8-activation kernels (AVX2 has none, and keeps int16).
QuantRowsKernel quantized_matmul_rows_for(QuantIsa isa, bool int8 = false);
// That of quant_isa(), with int8 activations where $KILN_NATIVE_PREFILL_INT8=1 (they do not
// keep the definition: docs/ARCHITECTURE.md, "Integer-dot matvec").
QuantRowsKernel best_quantized_matmul_rows();

}  // namespace kiln::native
