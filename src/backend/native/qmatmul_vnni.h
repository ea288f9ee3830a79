// What native's VNNI prefill kernels (qmatmul_avxvnni.cpp, qmatmul_avx512vnni.cpp) share: the
// int8 activation packing and the weight re-layout that puts the rows in the SIMD lanes (which
// is also the AMX kernel's B tile layout, qmatmul_amx.cpp).
// Included only by those files (each compiled for its ISA); everything here has internal
// linkage, so no copy built for one ISA can stand in for another's.
#pragma once
#include <immintrin.h>

#include "backend/native/qmatmul_x86.h"
#include "backend/quantized_matmul.h"

namespace kiln::native {
namespace {

constexpr int64_t kMaxBlocks = 128;       // k <= 4096
constexpr int64_t kPackBytes = 48 << 10;  // int8 activation rows packed per pass

// vpdpbusd multiplies unsigned by signed bytes. The activation codes (within +-127) are the
// signed side; q4_1/q4_K nibbles (0..15) are unsigned already, and the Int8 layout's signed
// codes c are stored as c + 128 (0..255), so a block's sum over them is the wanted sum plus
// 128 * (sum of the activation codes): `corr` holds -128 times that sum per activation
// block (0 for nibbles), the accumulator's start, so the integer sums are the definition's.
template <bool kNibbles>
inline void pack_activations(const int16_t* xq, int64_t n, int8_t* x8, int32_t* corr) {
  for (int64_t b = 0; b < n / kQuantBlock; ++b) {
    int32_t sum = 0;
    for (int i = 0; i < kQuantBlock; ++i) {
      const int16_t q = xq[b * kQuantBlock + i];
      x8[b * kQuantBlock + i] = int8_t(q);
      sum += q;
    }
    corr[b] = kNibbles ? 0 : -128 * sum;
  }
}

// out[v * stride] lane j = word v of r[j]: an 8 x 8 transpose of 32-bit words.
inline void transpose_words(const __m256i* r, __m256i* out, int64_t stride) {
  __m256i t[8], u[8];
  for (int j = 0; j < 8; j += 2) {
    t[j] = _mm256_unpacklo_epi32(r[j], r[j + 1]);
    t[j + 1] = _mm256_unpackhi_epi32(r[j], r[j + 1]);
  }
  for (int h = 0; h < 8; h += 4) {  // rows 0-3, then 4-7
    u[h] = _mm256_unpacklo_epi64(t[h], t[h + 2]);          // words 0 | 4
    u[h + 1] = _mm256_unpackhi_epi64(t[h], t[h + 2]);      // 1 | 5
    u[h + 2] = _mm256_unpacklo_epi64(t[h + 1], t[h + 3]);  // 2 | 6
    u[h + 3] = _mm256_unpackhi_epi64(t[h + 1], t[h + 3]);  // 3 | 7
  }
  for (int v = 0; v < 4; ++v) {
    out[v * stride] = _mm256_permute2x128_si256(u[v], u[v + 4], 0x20);
    out[(v + 4) * stride] = _mm256_permute2x128_si256(u[v], u[v + 4], 0x31);
  }
}

// One block of a group of 8 weight rows (at c: 8 rows x 16 nibble bytes or 32 Int8 bytes) with
// the rows in the lanes, so that one vpdpbusd / vpdpwssd with activation codes broadcast adds
// their products to each row's lane and a block's vectors leave the 8 rows' block sums in the
// lanes, with no horizontal adds. kWide false (int8 activations): 8 vectors, w[v * stride]
// lane r = row r's codes 4v .. 4v + 3 as unsigned bytes (Int8 codes + 128; kSigned keeps them
// signed, for AMX's tdpb*sd, which has a signed weight side). kWide true (int16 activations):
// 16 vectors, lane r = row r's codes 2v, 2v + 1 as int16.
template <bool kNibbles, bool kWide, bool kSigned = false>
inline void relayout_block(const uint8_t* c, __m256i* w, int64_t stride) {
  __m256i lo[8], hi[8];  // codes 0-15 and 16-31 of each row (kWide), or all 32 in lo
  const __m128i low = _mm_set1_epi8(15);
  for (int j = 0; j < 8; ++j) {
    __m128i a, b;  // the row's codes 0-15 and 16-31, one byte each
    if (kNibbles) {
      const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 16 * j));
      a = _mm_and_si128(t, low), b = _mm_and_si128(_mm_srli_epi16(t, 4), low);
    } else {
      a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 32 * j));
      b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 32 * j + 16));
    }
    if (kWide) {
      lo[j] = kNibbles ? _mm256_cvtepu8_epi16(a) : _mm256_cvtepi8_epi16(a);
      hi[j] = kNibbles ? _mm256_cvtepu8_epi16(b) : _mm256_cvtepi8_epi16(b);
    } else {
      lo[j] = _mm256_set_m128i(b, a);
      if (!kNibbles && !kSigned) lo[j] = _mm256_xor_si256(lo[j], _mm256_set1_epi8(char(0x80)));
    }
  }
  transpose_words(lo, w, stride);
  if (kWide) transpose_words(hi, w + 8 * stride, stride);
}

inline int32_t load_word(const int8_t* p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}


// The driver both files share, for `Isa`: its weight vector type `Vec` and its
// `pass<kNibbles, kWide>` (rows [0, m) of one pass: each group's blocks re-laid once into w,
// then every row against them). kWide (int16 activations) passes every row at once; int8
// ones are packed per pass of kPackBytes.
template <class Isa, bool kNibbles, bool kWide>
void vnni_matmul_rows(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                      const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  using Vec = typename Isa::Vec;
  // The re-laid groups: 32-128 KiB of stack at k = 4096 (by ISA and activation width).
  alignas(alignof(Vec)) Vec w[kMaxBlocks * (kWide ? 16 : 8)];
  if (kWide) return Isa::template pass<kNibbles, true>(s, s.m, xq, nullptr, dx, sx, codes, d, mins, g0, g1, out, w);
  const int64_t nb = s.k / kQuantBlock;
  alignas(alignof(Vec)) int8_t x8[kPackBytes];
  int32_t corr[kPackBytes / kQuantBlock];
  const int64_t pass = kPackBytes / s.k;  // >= 12 rows: k <= 4096
  for (int64_t i0 = 0; i0 < s.m; i0 += pass) {
    const int64_t m = s.m - i0 < pass ? s.m - i0 : pass;
    pack_activations<kNibbles>(xq + i0 * s.k, m * s.k, x8, corr);
    Isa::template pass<kNibbles, false>(s, m, x8, corr, dx + i0 * nb, sx + i0 * nb, codes, d, mins, g0, g1,
                                        out + i0 * s.rows, w);
  }
}

// A VNNI rows kernel: kWide true reads the definition's int16 codes, false int8 ones.
template <class Isa, bool kWide>
void vnni_rows_kernel(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                      const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  if (s.k / kQuantBlock > kMaxBlocks) {  // the same values from the AVX2 matvec, row by row
    const int64_t nb = s.k / kQuantBlock;
    const QuantMatmulShape one{s.layout, 1, s.k, s.rows};
    for (int64_t i = 0; i < s.m; ++i)
      quantized_matvec_avx2(one, xq + i * s.k, dx + i * nb, sx + i * nb, codes, d, mins, g0, g1, out + i * s.rows);
    return;
  }
  // Under 4 rows the re-layout costs more than it saves (0.80-1.07x the matvec per row at 2
  // rows, kiln_qmatmul_bench): the AVX2 rows kernel gives the same int16 values.
  if (kWide && s.m < 4) return quantized_matmul_rows_avx2(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  if (s.layout == QuantLayout::Nibble4) vnni_matmul_rows<Isa, true, kWide>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else vnni_matmul_rows<Isa, false, kWide>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace
}  // namespace kiln::native
