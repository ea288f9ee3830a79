// AVX512-VNNI prefill rows kernels (qmatmul_x86.h), compiled with -mavx512f -mavx512vnni and
// run only where the CPU has both: two groups of weight rows at once, 16 rows in the lanes
// (qmatmul_vnni.h), and four activation rows per pass (the 32 registers hold their
// accumulators and a block's weight vectors). int16 activations (the definition) through
// vpdpwssd, 32 multiply-adds per instruction, or int8 ones through vpdpbusd, 64; either way
// the float part lane-wise in block order per row with separate mul and add:
// quantized_matvec_reference's floats at that rounding, bit for bit.
#include "backend/native/qmatmul_vnni.h"
#include "backend/native/qmatmul_x86.h"

// g++ 12's AVX-512 intrinsics pass a self-initialized `_mm512_undefined_*` value as the unused
// merge operand (cvtepi32_ps, insertf64x4), which -Wmaybe-uninitialized reports once inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace kiln::native {

namespace {

// Group g's 8 floats of block b in the low half, group g + 1's (or zeros) in the high half.
inline __m512 load_pair(const float* p, int64_t next, bool two) {
  const __m256 lo = _mm256_loadu_ps(p), hi = two ? _mm256_loadu_ps(p + next) : _mm256_setzero_ps();
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

// Activation rows [i, i + R) (x: int16 codes, or int8 ones with corr) against groups g and
// (if two) g + 1. Two accumulators per row halve the dot products' dependency chain.
template <bool kNibbles, bool kWide, int R>
inline void rows_tile(const QuantMatmulShape& s, const void* x, const int32_t* corr, const float* dx,
                      const float* sx, const __m512i* w, const float* d, const float* mins, int64_t g, bool two,
                      int64_t i, float* out) {
  constexpr int kVectors = kWide ? 16 : 8, kCodeBytes = kWide ? 2 : 1;
  const int64_t nb = s.k / kQuantBlock, next = nb * kQuantRowGroup;
  const auto* xs = static_cast<const int8_t*>(x);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t at = (g * nb + b) * kQuantRowGroup;
    const __m512 dw = load_pair(d + at, next, two);
    __m512 mw = _mm512_setzero_ps();
    if (kNibbles) mw = load_pair(mins + at, next, two);
    const __m512i* wb = w + b * kVectors;
    // Each weight vector loaded once for the R rows; the activation words broadcast from memory.
    const int8_t* xb[R];
    __m512i a0[R], a1[R];
    for (int r = 0; r < R; ++r) {
      xb[r] = xs + ((i + r) * s.k + b * kQuantBlock) * kCodeBytes;
      a0[r] = kWide ? _mm512_setzero_si512() : _mm512_set1_epi32(corr[(i + r) * nb + b]);
      a1[r] = _mm512_setzero_si512();
    }
    for (int v = 0; v < kVectors; v += 2) {
      const __m512i w0 = wb[v], w1 = wb[v + 1];
      for (int r = 0; r < R; ++r) {
        const __m512i x0 = _mm512_set1_epi32(load_word(xb[r] + 4 * v));
        const __m512i x1 = _mm512_set1_epi32(load_word(xb[r] + 4 * v + 4));
        if (kWide) {
          a0[r] = _mm512_dpwssd_epi32(a0[r], w0, x0);
          a1[r] = _mm512_dpwssd_epi32(a1[r], w1, x1);
        } else {
          a0[r] = _mm512_dpbusd_epi32(a0[r], w0, x0);
          a1[r] = _mm512_dpbusd_epi32(a1[r], w1, x1);
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m512 isum = _mm512_cvtepi32_ps(_mm512_add_epi32(a0[r], a1[r]));
      __m512 term = _mm512_mul_ps(_mm512_mul_ps(dw, _mm512_set1_ps(dx[(i + r) * nb + b])), isum);
      if (kNibbles) term = _mm512_add_ps(term, _mm512_mul_ps(mw, _mm512_set1_ps(sx[(i + r) * nb + b])));
      acc[r] = _mm512_add_ps(acc[r], term);
    }
  }
  int64_t live = s.rows - g * kQuantRowGroup;
  const int64_t lanes = two ? 2 * kQuantRowGroup : kQuantRowGroup;
  if (live > lanes) live = lanes;
  const __mmask16 keep = __mmask16((1u << live) - 1);
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(out + (i + r) * s.rows + g * kQuantRowGroup, keep, acc[r]);
}

// Rows [0, m) of one pass: for each pair of groups, its blocks re-laid once into w, then every
// row against them, four at a time.
template <bool kNibbles, bool kWide>
void pass_rows(const QuantMatmulShape& s, int64_t m, const void* x, const int32_t* corr, const float* dx,
               const float* sx, const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
               float* out, __m512i* w) {
  constexpr int kBytes = kNibbles ? 16 : 32, kVectors = kWide ? 16 : 8;
  const int64_t nb = s.k / kQuantBlock;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  __m256i* halves = reinterpret_cast<__m256i*>(w);  // vector v of block b: group g's 8 lanes, then g + 1's
  for (int64_t g = g0; g < g1; g += 2) {
    const bool two = g + 1 < g1;
    for (int64_t b = 0; b < nb; ++b) {
      __m256i* h = halves + b * kVectors * 2;
      relayout_block<kNibbles, kWide>(bytes + ((g * nb + b) * kQuantRowGroup) * kBytes, h, 2);
      if (two) relayout_block<kNibbles, kWide>(bytes + (((g + 1) * nb + b) * kQuantRowGroup) * kBytes, h + 1, 2);
      else
        for (int v = 0; v < kVectors; ++v) h[2 * v + 1] = _mm256_setzero_si256();
    }
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) rows_tile<kNibbles, kWide, 4>(s, x, corr, dx, sx, w, d, mins, g, two, i, out);
    switch (m - i) {
      case 3: rows_tile<kNibbles, kWide, 3>(s, x, corr, dx, sx, w, d, mins, g, two, i, out); break;
      case 2: rows_tile<kNibbles, kWide, 2>(s, x, corr, dx, sx, w, d, mins, g, two, i, out); break;
      case 1: rows_tile<kNibbles, kWide, 1>(s, x, corr, dx, sx, w, d, mins, g, two, i, out); break;
      default: break;
    }
  }
}

// This file's ISA for the shared driver (qmatmul_vnni.h).
struct Avx512Vnni {
  using Vec = __m512i;
  template <bool kNibbles, bool kWide>
  static constexpr auto pass = &pass_rows<kNibbles, kWide>;
};

}  // namespace

void quantized_matmul_rows_avx512vnni(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                      const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                      float* out) {
  vnni_rows_kernel<Avx512Vnni, true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

void quantized_matmul_rows_avx512vnni_i8(const QuantMatmulShape& s, const int16_t* xq, const float* dx,
                                         const float* sx, const uint32_t* codes, const float* d, const float* mins,
                                         int64_t g0, int64_t g1, float* out) {
  vnni_rows_kernel<Avx512Vnni, false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::native
