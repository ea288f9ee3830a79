// qdot_tiles.h: the prefill form of qdot_rows.h's 8-row int16-dot kernel (issue 19). For m
// activation rows (each rounded to int16 per 32 values as for a matvec) against one group of 8
// weight rows, the group's codes are widened to int16 once into a scratch buffer (8 x k values:
// 9 KiB at k = 576, 24 KiB at 1536, both in L1) and every activation row reads them from there:
// the matvec kernel instead unpacks (mask, shift, widen) every block for every row of x. Each
// output still sums its blocks in order with the same float part, so out[i][r] is bit-identical
// to the matvec of row i (and so to the scalar reference).
#pragma once
#include "qdot_rows.h"

namespace qrows {

#ifdef __wasm_simd128__
using V16 = v128_t;  // 8 int16 codes
constexpr int kPer = 8;
// Row j's block (kBytes code bytes) widened into 4 vectors of 8 int16 codes, in the order the
// matvec kernels pair them with the activations (q4_1: low nibbles 0-15, then high 16-31).
template <int kBytes>
inline void widen(const uint8_t* c, V16* o) {
  if constexpr (kBytes == 16) {
    const v128_t t = wasm_v128_load(c), lo = wasm_v128_and(t, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(t, 4);
    o[0] = wasm_u16x8_extend_low_u8x16(lo), o[1] = wasm_u16x8_extend_high_u8x16(lo);
    o[2] = wasm_u16x8_extend_low_u8x16(hi), o[3] = wasm_u16x8_extend_high_u8x16(hi);
  } else {
    const v128_t a = wasm_v128_load(c), b = wasm_v128_load(c + 16);
    o[0] = wasm_i16x8_extend_low_i8x16(a), o[1] = wasm_i16x8_extend_high_i8x16(a);
    o[2] = wasm_i16x8_extend_low_i8x16(b), o[3] = wasm_i16x8_extend_high_i8x16(b);
  }
}
// One activation row against the group's widened codes: the 8 rows' block sums of block b.
inline void block_sums8(const V16* s, const int16_t* y, v128_t* isum) {
  const v128_t y0 = wasm_v128_load(y), y1 = wasm_v128_load(y + 8), y2 = wasm_v128_load(y + 16), y3 = wasm_v128_load(y + 24);
  v128_t p[8];
  for (int j = 0; j < 8; ++j) {
    const V16* c = s + j * 4;
    p[j] = wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_dot_i16x8(c[0], y0), wasm_i32x4_dot_i16x8(c[1], y1)),
                          wasm_i32x4_add(wasm_i32x4_dot_i16x8(c[2], y2), wasm_i32x4_dot_i16x8(c[3], y3)));
  }
  isum[0] = tsum4(p[0], p[1], p[2], p[3]), isum[1] = tsum4(p[4], p[5], p[6], p[7]);
}
#else
using V16 = __m256i;  // 16 int16 codes
constexpr int kPer = 16;
template <int kBytes>
inline void widen(const uint8_t* c, V16* o) {
  if constexpr (kBytes == 16) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c)), low = _mm_set1_epi8(15);
    o[0] = _mm256_cvtepu8_epi16(_mm_and_si128(t, low));
    o[1] = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(t, 4), low));
  } else {
    const __m128i* a = reinterpret_cast<const __m128i*>(c);
    o[0] = _mm256_cvtepi8_epi16(_mm_loadu_si128(a)), o[1] = _mm256_cvtepi8_epi16(_mm_loadu_si128(a + 1));
  }
}
inline void block_sums8(const V16* s, const int16_t* y, __m256i* isum) {
  const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y));
  const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + 16));
  __m256i p[8];
  for (int j = 0; j < 8; ++j)
    p[j] = _mm256_add_epi32(_mm256_madd_epi16(_mm256_load_si256(s + 2 * j), y0), _mm256_madd_epi16(_mm256_load_si256(s + 2 * j + 1), y1));
  isum[0] = tsum8(p);
}
#endif
constexpr int kVecs = 32 / kPer;  // int16 vectors per row and block

// out[i * n + r] for i < m: x rows xq[i * k ..], scales dx/sx[i * (k / 32) ..]. scratch: 8 * k
// int16 codes, vector-aligned.
template <int kBytes>
__attribute__((noinline)) void matmul_rows8(const RowBlocks<8, kBytes>& w, int m, const int16_t* xq, const float* dx,
                                            const float* sx, float* out, V16* scratch) {
  const int nb = w.k / 32, n = w.n;
  for (int g = 0; g < n / 8; ++g) {
    for (int b = 0; b < nb; ++b)
      for (int j = 0; j < 8; ++j) widen<kBytes>(w.at(g, b) + j * kBytes, scratch + (b * 8 + j) * kVecs);
    for (int i = 0; i < m; ++i) {
      const float *di = dx + size_t(i) * nb, *si = sx + size_t(i) * nb;
#ifdef __wasm_simd128__
      v128_t acc[2] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
      for (int b = 0; b < nb; ++b) {
        v128_t isum[2];
        block_sums8(scratch + b * 8 * kVecs, xq + size_t(i) * w.k + b * 32, isum);
        for (int h = 0; h < 2; ++h) {
          const size_t s = w.sm(g, b) + h * 4;
          v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(&w.d[s]), wasm_f32x4_splat(di[b])),
                                       wasm_f32x4_convert_i32x4(isum[h]));
          if constexpr (kBytes == 16)
            term = wasm_f32x4_add(term, wasm_f32x4_mul(wasm_v128_load(&w.m[s]), wasm_f32x4_splat(si[b])));
          acc[h] = wasm_f32x4_add(acc[h], term);
        }
      }
      wasm_v128_store(out + size_t(i) * n + g * 8, acc[0]), wasm_v128_store(out + size_t(i) * n + g * 8 + 4, acc[1]);
#else
      __m256 acc = _mm256_setzero_ps();
      for (int b = 0; b < nb; ++b) {
        __m256i isum[1];
        block_sums8(scratch + b * 8 * kVecs, xq + size_t(i) * w.k + b * 32, isum);
        __m256 term = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(&w.d[w.sm(g, b)]), _mm256_set1_ps(di[b])),
                                    _mm256_cvtepi32_ps(isum[0]));
        if constexpr (kBytes == 16)
          term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_loadu_ps(&w.m[w.sm(g, b)]), _mm256_set1_ps(si[b])));
        acc = _mm256_add_ps(acc, term);
      }
      _mm256_storeu_ps(out + size_t(i) * n + g * 8, acc);
#endif
    }
  }
}

}  // namespace qrows
