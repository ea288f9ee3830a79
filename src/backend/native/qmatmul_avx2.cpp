// AVX2 quantized_matvec (qmatmul_x86.h), compiled with -mavx2 and run only where the CPU has
// it. Per group of 8 rows and block: each row's 32 codes widened to int16 and multiplied with
// the activation's int16 codes (vpmaddwd: 8 int32 partials per row), an hadd tree making one
// vector of the 8 rows' block sums, then the float part lane-wise across the rows, in block
// order per row, with separate mul and add: the reference's floats exactly. No STL here: an
// inline function instantiated in this file could be merged with other files' copies.
#include <immintrin.h>

#include "backend/native/qmatmul_x86.h"

namespace kiln::native {

namespace {

// [sum(a0) .. sum(a7)]: integer adds, so any order gives the same sums.
inline __m256i transpose_sum8(const __m256i* a) {
  const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(a[0], a[1]), _mm256_hadd_epi32(a[2], a[3]));
  const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(a[4], a[5]), _mm256_hadd_epi32(a[6], a[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
}
inline __m256i dot_nibbles(const uint8_t* qs, __m256i y0, __m256i y1) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), low = _mm_set1_epi8(15);
  const __m256i lo = _mm256_cvtepu8_epi16(_mm_and_si128(t, low));
  const __m256i hi = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(t, 4), low));
  return _mm256_add_epi32(_mm256_madd_epi16(lo, y0), _mm256_madd_epi16(hi, y1));
}
inline __m256i dot_int8(const uint8_t* qs, __m256i y0, __m256i y1) {
  const __m128i* a = reinterpret_cast<const __m128i*>(qs);
  return _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(a)), y0),
                          _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(a + 1)), y1));
}

template <bool kNibbles>
void matvec(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx, const uint32_t* codes,
            const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  const int64_t nb = s.k / kQuantBlock;
  constexpr int kBytes = kNibbles ? 16 : 32;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  for (int64_t g = g0; g < g1; ++g) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32));
      const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + b * 32 + 16));
      const int64_t at = (g * nb + b) * kQuantRowGroup;
      const uint8_t* c = bytes + at * kBytes;
      __m256i p[8];
      for (int j = 0; j < 8; ++j) p[j] = kNibbles ? dot_nibbles(c + j * kBytes, y0, y1) : dot_int8(c + j * kBytes, y0, y1);
      __m256 term = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(d + at), _mm256_set1_ps(dx[b])),
                                  _mm256_cvtepi32_ps(transpose_sum8(p)));
      if (kNibbles) term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_loadu_ps(mins + at), _mm256_set1_ps(sx[b])));
      acc = _mm256_add_ps(acc, term);
    }
    const int64_t live = s.rows - g * kQuantRowGroup;
    if (live >= kQuantRowGroup) {
      _mm256_storeu_ps(out + g * kQuantRowGroup, acc);
    } else {
      alignas(32) float tail[kQuantRowGroup];
      _mm256_store_ps(tail, acc);
      for (int64_t r = 0; r < live; ++r) out[g * kQuantRowGroup + r] = tail[r];
    }
  }
}

// Prefill: every activation row (s.m of them, xq/dx/sx/out row after row) against groups
// [g0, g1). Each group's codes are widened to int16 once into `wide` (nb x 8 rows x 2
// vectors: 24 KiB at k = 1536, in L1) and each row's block sums read them from there, where
// the matvec would mask, shift and widen every block again for every row. Per output the
// same integer sums and the same float operations in block order: the matvec's floats.
template <bool kNibbles>
void matmul_rows(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                 const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out,
                 __m256i* wide) {
  const int64_t nb = s.k / kQuantBlock;
  constexpr int kBytes = kNibbles ? 16 : 32;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  const __m128i low = _mm_set1_epi8(15);
  for (int64_t g = g0; g < g1; ++g) {
    const uint8_t* c = bytes + g * nb * kQuantRowGroup * kBytes;
    for (int64_t v = 0; v < nb * kQuantRowGroup; ++v, c += kBytes) {
      const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
      if (kNibbles) {
        wide[2 * v] = _mm256_cvtepu8_epi16(_mm_and_si128(t, low));
        wide[2 * v + 1] = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(t, 4), low));
      } else {
        wide[2 * v] = _mm256_cvtepi8_epi16(t);
        wide[2 * v + 1] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 16)));
      }
    }
    const int64_t live = s.rows - g * kQuantRowGroup;
    for (int64_t i = 0; i < s.m; ++i) {
      const int16_t* y = xq + i * s.k;
      const float *di = dx + i * nb, *si = sx + i * nb;
      __m256 acc = _mm256_setzero_ps();
      for (int64_t b = 0; b < nb; ++b) {
        const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + b * 32));
        const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + b * 32 + 16));
        const __m256i* w = wide + b * 2 * kQuantRowGroup;
        __m256i p[8];
        for (int j = 0; j < 8; ++j)
          p[j] = _mm256_add_epi32(_mm256_madd_epi16(w[2 * j], y0), _mm256_madd_epi16(w[2 * j + 1], y1));
        const int64_t at = (g * nb + b) * kQuantRowGroup;
        __m256 term = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(d + at), _mm256_set1_ps(di[b])),
                                    _mm256_cvtepi32_ps(transpose_sum8(p)));
        if (kNibbles) term = _mm256_add_ps(term, _mm256_mul_ps(_mm256_loadu_ps(mins + at), _mm256_set1_ps(si[b])));
        acc = _mm256_add_ps(acc, term);
      }
      float* o = out + i * s.rows + g * kQuantRowGroup;
      if (live >= kQuantRowGroup) {
        _mm256_storeu_ps(o, acc);
      } else {
        alignas(32) float tail[kQuantRowGroup];
        _mm256_store_ps(tail, acc);
        for (int64_t r = 0; r < live; ++r) o[r] = tail[r];
      }
    }
  }
}

}  // namespace

void quantized_matmul_rows_avx2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                float* out) {
  // The widened group lives on the stack (64 KiB at most); longer rows take the matvec per row.
  constexpr int64_t kMaxBlocks = 128;
  const int64_t nb = s.k / kQuantBlock;
  if (nb > kMaxBlocks) {
    const QuantMatmulShape one{s.layout, 1, s.k, s.rows};
    for (int64_t i = 0; i < s.m; ++i)
      quantized_matvec_avx2(one, xq + i * s.k, dx + i * nb, sx + i * nb, codes, d, mins, g0, g1, out + i * s.rows);
    return;
  }
  alignas(32) __m256i wide[kMaxBlocks * kQuantRowGroup * 2];
  if (s.layout == QuantLayout::Nibble4) matmul_rows<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out, wide);
  else matmul_rows<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out, wide);
}

void quantized_matvec_avx2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                           const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  if (s.layout == QuantLayout::Nibble4) matvec<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else matvec<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::native
