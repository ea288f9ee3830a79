// AVX-VNNI prefill rows kernels (qmatmul_x86.h), compiled with -mavx2 -mavxvnni and run only
// where the CPU has AVX-VNNI: 8 weight rows in the lanes (qmatmul_vnni.h), two activation rows
// per pass, int16 activations (the definition) through vpdpwssd or int8 ones through vpdpbusd
// (16 or 32 multiply-adds per 256-bit instruction), the float part lane-wise in block order per
// row with separate mul and add: quantized_matvec_reference's floats at that rounding.
#include "backend/native/qmatmul_vnni.h"
#include "backend/native/qmatmul_x86.h"

namespace kiln::native {

namespace {

// Activation rows [i, i + R) (x: int16 codes, or int8 ones with corr) against group g (w: its
// re-laid blocks). Two accumulators per row halve the dot products' dependency chain.
template <bool kNibbles, bool kWide, int R>
inline void rows_tile(const QuantMatmulShape& s, const void* x, const int32_t* corr, const float* dx,
                      const float* sx, const __m256i* w, const float* d, const float* mins, int64_t g, int64_t i,
                      float* out) {
  constexpr int kVectors = kWide ? 16 : 8, kCodeBytes = kWide ? 2 : 1;
  const int64_t nb = s.k / kQuantBlock;
  const auto* xs = static_cast<const int8_t*>(x);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t at = (g * nb + b) * kQuantRowGroup;
    const __m256 dw = _mm256_loadu_ps(d + at);
    const __m256i* wb = w + b * kVectors;
    // Each weight vector loaded once for the R rows.
    const int8_t* xb[R];
    __m256i a0[R], a1[R];
    for (int r = 0; r < R; ++r) {
      xb[r] = xs + ((i + r) * s.k + b * kQuantBlock) * kCodeBytes;
      a0[r] = kWide ? _mm256_setzero_si256() : _mm256_set1_epi32(corr[(i + r) * nb + b]);
      a1[r] = _mm256_setzero_si256();
    }
    for (int v = 0; v < kVectors; v += 2) {
      const __m256i w0 = wb[v], w1 = wb[v + 1];
      for (int r = 0; r < R; ++r) {
        const __m256i x0 = _mm256_set1_epi32(load_word(xb[r] + 4 * v));
        const __m256i x1 = _mm256_set1_epi32(load_word(xb[r] + 4 * v + 4));
        if (kWide) {
          a0[r] = _mm256_dpwssd_avx_epi32(a0[r], w0, x0);
          a1[r] = _mm256_dpwssd_avx_epi32(a1[r], w1, x1);
        } else {
          a0[r] = _mm256_dpbusd_avx_epi32(a0[r], w0, x0);
          a1[r] = _mm256_dpbusd_avx_epi32(a1[r], w1, x1);
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m256 isum = _mm256_cvtepi32_ps(_mm256_add_epi32(a0[r], a1[r]));
      __m256 term = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_set1_ps(dx[(i + r) * nb + b])), isum);
      if (kNibbles)
        term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_loadu_ps(mins + at), _mm256_set1_ps(sx[(i + r) * nb + b])));
      acc[r] = _mm256_add_ps(acc[r], term);
    }
  }
  const int64_t live = s.rows - g * kQuantRowGroup;
  for (int r = 0; r < R; ++r) {
    float* o = out + (i + r) * s.rows + g * kQuantRowGroup;
    if (live >= kQuantRowGroup) {
      _mm256_storeu_ps(o, acc[r]);
    } else {
      alignas(32) float tail[kQuantRowGroup];
      _mm256_store_ps(tail, acc[r]);
      for (int64_t j = 0; j < live; ++j) o[j] = tail[j];
    }
  }
}

// Rows [0, m) of one pass: each group's blocks re-laid once into w, then every row against them.
template <bool kNibbles, bool kWide>
void pass_rows(const QuantMatmulShape& s, int64_t m, const void* x, const int32_t* corr, const float* dx,
               const float* sx, const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
               float* out, __m256i* w) {
  constexpr int kBytes = kNibbles ? 16 : 32, kVectors = kWide ? 16 : 8;
  const int64_t nb = s.k / kQuantBlock;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  for (int64_t g = g0; g < g1; ++g) {
    for (int64_t b = 0; b < nb; ++b)
      relayout_block<kNibbles, kWide>(bytes + ((g * nb + b) * kQuantRowGroup) * kBytes, w + b * kVectors, 1);
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) rows_tile<kNibbles, kWide, 2>(s, x, corr, dx, sx, w, d, mins, g, i, out);
    if (i < m) rows_tile<kNibbles, kWide, 1>(s, x, corr, dx, sx, w, d, mins, g, i, out);
  }
}

// This file's ISA for the shared driver (qmatmul_vnni.h).
struct AvxVnni {
  using Vec = __m256i;
  template <bool kNibbles, bool kWide>
  static constexpr auto pass = &pass_rows<kNibbles, kWide>;
};

}  // namespace

void quantized_matmul_rows_avxvnni(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                   const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                   float* out) {
  vnni_rows_kernel<AvxVnni, true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

void quantized_matmul_rows_avxvnni_i8(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                      const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                      float* out) {
  vnni_rows_kernel<AvxVnni, false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::native
