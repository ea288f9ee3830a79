// qdot_rows.h: multi-row int16-dot matvecs for qdot_bench.cpp (issue 19). The first integer-dot
// build in kiln (branch qmm) lost end to end because it summed each block's integer partials
// horizontally per row and did the float part per (row, block) in scalar code. Here R output
// rows share one pass: each row's block gives a vector of int32 partials, a transpose-add turns
// R such vectors into one vector of R block sums, and the float part
//   acc[r] = acc[r] + ((d_w[r] * d_x) * float(isum[r]) + m_w[r] * s_x)
// runs lane-wise across the R rows. Every output still adds its blocks in order, so the result
// is bit-identical to the scalar reference of the definition (matvec_rows_ref) when mul and add
// stay separate (-ffp-contract=off; the kernels use explicit mul/add, never FMA).
//
// Layout (what kiln would pack at load): rows in groups of R, per group and 32-value block the R
// rows' codes side by side, k-contiguous per row: q4_1 16 nibble bytes (value i low, i + 16
// high, as ggml), q8_0 32 signed bytes; d (and m) as [n/R][k/32][R] floats, one vector load.
#pragma once
#include <cstdint>
#include <vector>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <immintrin.h>
#endif

namespace qrows {

template <int R, int kBytes>  // kBytes: 16 (q4_1) or 32 (q8_0)
struct RowBlocks {
  int n = 0, k = 0;
  std::vector<uint8_t> codes;  // [n/R][k/32][R][kBytes]
  std::vector<float> d, m;     // [n/R][k/32][R]; m empty for q8_0
  static constexpr bool kHasMin = kBytes == 16;
  const uint8_t* at(int g, int b) const { return &codes[(size_t(g) * (k / 32) + b) * R * kBytes]; }
  size_t sm(int g, int b) const { return (size_t(g) * (k / 32) + b) * R; }
  int code(int r, int col) const {  // value of row r, column col (q4_1: 0..15; q8_0: -127..127)
    const uint8_t* p = at(r / R, col / 32) + (r % R) * kBytes;
    const int i = col % 32;
    if constexpr (kBytes == 16) return i < 16 ? p[i] & 15 : p[i - 16] >> 4;
    else return int8_t(p[i]);
  }
};

// The definition, one row and block at a time: exact integer block sum, then the float part in
// block order. x: int16 codes, per block scale dx and sx = dx * float(sum of codes).
template <int R, int kBytes>
__attribute__((noinline)) void matvec_rows_ref(const RowBlocks<R, kBytes>& w, const int16_t* xq, const float* dx,
                                               const float* sx, float* out) {
  const int nb = w.k / 32;
  for (int r = 0; r < w.n; ++r) {
    float acc = 0;
    for (int b = 0; b < nb; ++b) {
      int32_t isum = 0;
      for (int i = 0; i < 32; ++i) isum += w.code(r, b * 32 + i) * int32_t(xq[b * 32 + i]);
      const size_t s = w.sm(r / R, b) + r % R;
      float term = (w.d[s] * dx[b]) * float(isum);
      if constexpr (RowBlocks<R, kBytes>::kHasMin) term = term + w.m[s] * sx[b];
      acc = acc + term;
    }
    out[r] = acc;
  }
}

// The activation row rounded to int16 per 32 values, vectorized: amax is a max (any order),
// d = amax / 32767 and 1 / d in scalar float, each code the round-to-nearest-even of x * (1/d)
// (what std::nearbyint does in the default rounding mode), sx = d * float(sum of codes): the
// same values as the scalar quantize_row, bit for bit (the run checks it).
#ifdef __wasm_simd128__
__attribute__((noinline)) inline void quantize16(const float* x, int k, int16_t* q, float* dx, float* sx) {
  for (int b = 0; b < k / 32; ++b) {
    const float* p = x + b * 32;
    v128_t v[8], mx = wasm_f32x4_splat(0);
    for (int i = 0; i < 8; ++i) v[i] = wasm_v128_load(p + 4 * i), mx = wasm_f32x4_max(mx, wasm_f32x4_abs(v[i]));
    mx = wasm_f32x4_max(mx, wasm_i32x4_shuffle(mx, mx, 2, 3, 0, 1));
    const float amax = wasm_f32x4_extract_lane(wasm_f32x4_max(mx, wasm_i32x4_shuffle(mx, mx, 1, 0, 3, 2)), 0);
    const float d = amax / 32767, id = d != 0 ? 1 / d : 0;
    const v128_t vid = wasm_f32x4_splat(id);
    v128_t sum = wasm_i32x4_splat(0);
    for (int i = 0; i < 8; i += 2) {
      const v128_t a = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(v[i], vid)));
      const v128_t c = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(v[i + 1], vid)));
      sum = wasm_i32x4_add(sum, wasm_i32x4_add(a, c));
      wasm_v128_store(q + b * 32 + 4 * i, wasm_i16x8_narrow_i32x4(a, c));
    }
    const int s = wasm_i32x4_extract_lane(sum, 0) + wasm_i32x4_extract_lane(sum, 1) + wasm_i32x4_extract_lane(sum, 2) +
                  wasm_i32x4_extract_lane(sum, 3);
    dx[b] = d, sx[b] = d * float(s);
  }
}
#else
__attribute__((noinline)) inline void quantize16(const float* x, int k, int16_t* q, float* dx, float* sx) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int b = 0; b < k / 32; ++b) {
    const float* p = x + b * 32;
    __m256 v[4], mx = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(p + 8 * i), mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, v[i]));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    const float amax = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    const float d = amax / 32767, id = d != 0 ? 1 / d : 0;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i sum = _mm256_setzero_si256();
    for (int i = 0; i < 4; i += 2) {
      const __m256i a = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      const __m256i c = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i + 1], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      sum = _mm256_add_epi32(sum, _mm256_add_epi32(a, c));
      // packs works per 128-bit lane: [a0-3 c0-3 | a4-7 c4-7]; permute back to a0-7 c0-7.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * 32 + 8 * i),
                          _mm256_permute4x64_epi64(_mm256_packs_epi32(a, c), 0xD8));
    }
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
    dx[b] = d, sx[b] = d * float(_mm_cvtsi128_si32(s4));
  }
}
#endif

#ifdef __wasm_simd128__
// [sum(a0), sum(a1), sum(a2), sum(a3)]: integer adds, so any order gives the same sums.
inline v128_t tsum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t s01 = wasm_i32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 2, 6), wasm_i32x4_shuffle(a0, a1, 1, 5, 3, 7));
  const v128_t s23 = wasm_i32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 2, 6), wasm_i32x4_shuffle(a2, a3, 1, 5, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(s01, s23, 0, 1, 4, 5), wasm_i32x4_shuffle(s01, s23, 2, 3, 6, 7));
}
// One row's q4_1 block against the block's 32 activations y[0..3] (8 int16 each).
inline v128_t dot41(const uint8_t* qs, const v128_t* y) {
  const v128_t t = wasm_v128_load(qs), lo = wasm_v128_and(t, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(t, 4);
  return wasm_i32x4_add(
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(lo), y[0]),
                     wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(lo), y[1])),
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(hi), y[2]),
                     wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(hi), y[3])));
}
inline v128_t dot80(const uint8_t* qs, const v128_t* y) {
  const v128_t a = wasm_v128_load(qs), b = wasm_v128_load(qs + 16);
  return wasm_i32x4_add(
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a), y[0]),
                     wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a), y[1])),
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(b), y[2]),
                     wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(b), y[3])));
}
// R = 4 or 8 rows: R / 4 vectors of block sums, the float part on each.
template <int R, int kBytes>
__attribute__((noinline)) void matvec_rows_wasm(const RowBlocks<R, kBytes>& w, const int16_t* xq, const float* dx,
                                                const float* sx, float* out) {
  const int nb = w.k / 32;
  for (int g = 0; g < w.n / R; ++g) {
    v128_t acc[R / 4];
    for (auto& a : acc) a = wasm_f32x4_splat(0);
    for (int b = 0; b < nb; ++b) {
      const v128_t y[4] = {wasm_v128_load(xq + b * 32), wasm_v128_load(xq + b * 32 + 8),
                           wasm_v128_load(xq + b * 32 + 16), wasm_v128_load(xq + b * 32 + 24)};
      const uint8_t* c = w.at(g, b);
      for (int h = 0; h < R / 4; ++h) {
        v128_t p[4];
        for (int j = 0; j < 4; ++j) p[j] = kBytes == 16 ? dot41(c + (h * 4 + j) * 16, y) : dot80(c + (h * 4 + j) * 32, y);
        const v128_t isum = tsum4(p[0], p[1], p[2], p[3]);
        const size_t s = w.sm(g, b) + h * 4;
        v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(&w.d[s]), wasm_f32x4_splat(dx[b])),
                                     wasm_f32x4_convert_i32x4(isum));
        if constexpr (kBytes == 16)
          term = wasm_f32x4_add(term, wasm_f32x4_mul(wasm_v128_load(&w.m[s]), wasm_f32x4_splat(sx[b])));
        acc[h] = wasm_f32x4_add(acc[h], term);
      }
    }
    for (int h = 0; h < R / 4; ++h) wasm_v128_store(out + g * R + h * 4, acc[h]);
  }
}
template <int kBytes>
void matvec_rows4(const RowBlocks<4, kBytes>& w, const int16_t* xq, const float* dx, const float* sx, float* out) {
  matvec_rows_wasm(w, xq, dx, sx, out);
}
template <int kBytes>
void matvec_rows8(const RowBlocks<8, kBytes>& w, const int16_t* xq, const float* dx, const float* sx, float* out) {
  matvec_rows_wasm(w, xq, dx, sx, out);
}
#else
// SSE2 only (baseline x86-64): no pmovzx, no phadd. Transpose-add by unpacks.
inline __m128i tsum4_sse2(__m128i a0, __m128i a1, __m128i a2, __m128i a3) {
  const __m128i s01 = _mm_add_epi32(_mm_unpacklo_epi32(a0, a1), _mm_unpackhi_epi32(a0, a1));  // a0 02, a1 02, a0 13, a1 13
  const __m128i s23 = _mm_add_epi32(_mm_unpacklo_epi32(a2, a3), _mm_unpackhi_epi32(a2, a3));
  return _mm_add_epi32(_mm_unpacklo_epi64(s01, s23), _mm_unpackhi_epi64(s01, s23));
}
inline __m128i dot41_sse2(const uint8_t* qs, const __m128i* y) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), low = _mm_set1_epi8(15), z = _mm_setzero_si128();
  const __m128i lo = _mm_and_si128(t, low), hi = _mm_and_si128(_mm_srli_epi16(t, 4), low);
  return _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(lo, z), y[0]), _mm_madd_epi16(_mm_unpackhi_epi8(lo, z), y[1])),
                       _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(hi, z), y[2]), _mm_madd_epi16(_mm_unpackhi_epi8(hi, z), y[3])));
}
inline __m128i sext_lo(__m128i a) { return _mm_srai_epi16(_mm_unpacklo_epi8(a, a), 8); }
inline __m128i sext_hi(__m128i a) { return _mm_srai_epi16(_mm_unpackhi_epi8(a, a), 8); }
inline __m128i dot80_sse2(const uint8_t* qs, const __m128i* y) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16));
  return _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(sext_lo(a), y[0]), _mm_madd_epi16(sext_hi(a), y[1])),
                       _mm_add_epi32(_mm_madd_epi16(sext_lo(b), y[2]), _mm_madd_epi16(sext_hi(b), y[3])));
}
template <int kBytes>
__attribute__((noinline)) void matvec_rows4(const RowBlocks<4, kBytes>& w, const int16_t* xq, const float* dx,
                                            const float* sx, float* out) {
  const int nb = w.k / 32;
  for (int g = 0; g < w.n / 4; ++g) {
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m128i* xp = reinterpret_cast<const __m128i*>(xq + b * 32);
      const __m128i y[4] = {_mm_loadu_si128(xp), _mm_loadu_si128(xp + 1), _mm_loadu_si128(xp + 2), _mm_loadu_si128(xp + 3)};
      const uint8_t* c = w.at(g, b);
      __m128i p[4];
      for (int j = 0; j < 4; ++j) p[j] = kBytes == 16 ? dot41_sse2(c + j * 16, y) : dot80_sse2(c + j * 32, y);
      const __m128i isum = tsum4_sse2(p[0], p[1], p[2], p[3]);
      __m128 term = _mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(&w.d[w.sm(g, b)]), _mm_set1_ps(dx[b])), _mm_cvtepi32_ps(isum));
      if constexpr (kBytes == 16) term = _mm_add_ps(term, _mm_mul_ps(_mm_loadu_ps(&w.m[w.sm(g, b)]), _mm_set1_ps(sx[b])));
      acc = _mm_add_ps(acc, term);
    }
    _mm_storeu_ps(out + g * 4, acc);
  }
}

// AVX2, 8 rows: each row's block gives 8 int32 partials; a phadd tree and one cross-lane add
// give [sum(a0) .. sum(a7)].
inline __m256i tsum8(const __m256i* a) {
  const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(a[0], a[1]), _mm256_hadd_epi32(a[2], a[3]));
  const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(a[4], a[5]), _mm256_hadd_epi32(a[6], a[7]));
  // h0 = [a0..a3 low-half sums | a0..a3 high-half sums], h1 the same for a4..a7
  return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
}
inline __m256i dot41_avx2(const uint8_t* qs, __m256i y0, __m256i y1) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), low = _mm_set1_epi8(15);
  const __m256i lo = _mm256_cvtepu8_epi16(_mm_and_si128(t, low));
  const __m256i hi = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(t, 4), low));
  return _mm256_add_epi32(_mm256_madd_epi16(lo, y0), _mm256_madd_epi16(hi, y1));
}
inline __m256i dot80_avx2(const uint8_t* qs, __m256i y0, __m256i y1) {
  const __m128i* a = reinterpret_cast<const __m128i*>(qs);
  return _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(a)), y0),
                          _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(a + 1)), y1));
}
template <int kBytes>
__attribute__((noinline)) void matvec_rows8(const RowBlocks<8, kBytes>& w, const int16_t* xq, const float* dx,
                                            const float* sx, float* out) {
  const int nb = w.k / 32;
  for (int g = 0; g < w.n / 8; ++g) {
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32));
      const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32 + 16));
      const uint8_t* c = w.at(g, b);
      __m256i p[8];
      for (int j = 0; j < 8; ++j) p[j] = kBytes == 16 ? dot41_avx2(c + j * 16, y0, y1) : dot80_avx2(c + j * 32, y0, y1);
      const __m256i isum = tsum8(p);
      __m256 term = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(&w.d[w.sm(g, b)]), _mm256_set1_ps(dx[b])),
                                  _mm256_cvtepi32_ps(isum));
      if constexpr (kBytes == 16)
        term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_loadu_ps(&w.m[w.sm(g, b)]), _mm256_set1_ps(sx[b])));
      acc = _mm256_add_ps(acc, term);
    }
    _mm256_storeu_ps(out + g * 8, acc);
  }
}
#endif

}  // namespace qrows
