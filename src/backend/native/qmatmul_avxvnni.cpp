// AVX-VNNI prefill rows kernel (qmatmul_x86.h), compiled with -mavx2 -mavxvnni and run only
// where the CPU has AVX-VNNI: int8 activation codes against u8 weight codes with vpdpbusd
// (32 multiply-adds per 256-bit instruction, vpmaddwd's 16 twice over), 8 weight rows in the
// lanes (qmatmul_vnni.h), the float part lane-wise in block order per row with separate mul
// and add: quantized_matvec_reference's floats over int8-rounded activations, bit for bit.
#include "backend/native/qmatmul_vnni.h"
#include "backend/native/qmatmul_x86.h"

namespace kiln::native {

namespace {

constexpr int64_t kMaxBlocks = 128;          // k <= 4096: the re-laid group, 32 KiB on the stack
constexpr int64_t kPackBytes = 48 << 10;     // int8 activation rows packed per pass

// Activation rows [i, i + R) of the packed chunk against one group (w: its re-laid blocks).
// Two accumulators per row halve vpdpbusd's dependency chain.
template <bool kNibbles, int R>
inline void rows_tile(const QuantMatmulShape& s, const int8_t* x8, const int32_t* corr, const float* dx,
                      const float* sx, const __m256i* w, const float* d, const float* mins, int64_t g, int64_t i,
                      float* out) {
  const int64_t nb = s.k / kQuantBlock;
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t at = (g * nb + b) * kQuantRowGroup;
    const __m256 dw = _mm256_loadu_ps(d + at);
    const __m256i* wb = w + b * 8;
    for (int r = 0; r < R; ++r) {
      const int8_t* xb = x8 + (i + r) * s.k + b * kQuantBlock;
      __m256i a0 = _mm256_set1_epi32(corr[(i + r) * nb + b]), a1 = _mm256_setzero_si256();
      for (int v = 0; v < 8; v += 2) {
        a0 = _mm256_dpbusd_avx_epi32(a0, wb[v], _mm256_set1_epi32(load_word(xb + 4 * v)));
        a1 = _mm256_dpbusd_avx_epi32(a1, wb[v + 1], _mm256_set1_epi32(load_word(xb + 4 * v + 4)));
      }
      const __m256 isum = _mm256_cvtepi32_ps(_mm256_add_epi32(a0, a1));
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

template <bool kNibbles>
void matmul_rows(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                 const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  const int64_t nb = s.k / kQuantBlock;
  constexpr int kBytes = kNibbles ? 16 : 32;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  alignas(32) __m256i w[kMaxBlocks * 8];
  alignas(32) int8_t x8[kPackBytes];
  int32_t corr[kPackBytes / kQuantBlock];
  const int64_t pass = kPackBytes / s.k;  // >= 8 rows: k <= 4096
  for (int64_t i0 = 0; i0 < s.m; i0 += pass) {
    const int64_t m = s.m - i0 < pass ? s.m - i0 : pass;
    pack_activations<kNibbles>(xq + i0 * s.k, m * s.k, x8, corr);
    const float *dxi = dx + i0 * nb, *sxi = sx + i0 * nb;
    float* o = out + i0 * s.rows;
    for (int64_t g = g0; g < g1; ++g) {
      for (int64_t b = 0; b < nb; ++b)
        relayout_block<kNibbles>(bytes + ((g * nb + b) * kQuantRowGroup) * kBytes, w + b * 8, 1);
      int64_t i = 0;
      for (; i + 2 <= m; i += 2) rows_tile<kNibbles, 2>(s, x8, corr, dxi, sxi, w, d, mins, g, i, o);
      if (i < m) rows_tile<kNibbles, 1>(s, x8, corr, dxi, sxi, w, d, mins, g, i, o);
    }
  }
}

}  // namespace

void quantized_matmul_rows_avxvnni(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                   const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                   float* out) {
  if (s.k / kQuantBlock > kMaxBlocks) {  // the same values from the AVX2 matvec, row by row
    const int64_t nb = s.k / kQuantBlock;
    const QuantMatmulShape one{s.layout, 1, s.k, s.rows};
    for (int64_t i = 0; i < s.m; ++i)
      quantized_matvec_avx2(one, xq + i * s.k, dx + i * nb, sx + i * nb, codes, d, mins, g0, g1, out + i * s.rows);
    return;
  }
  if (s.layout == QuantLayout::Nibble4) matmul_rows<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else matmul_rows<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::native
