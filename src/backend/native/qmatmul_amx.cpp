// AMX prefill rows kernels (qmatmul_x86.h), compiled with -mamx-tile -mamx-int8 -mavx512f
// -mavx512bw and run only where CPUID, XCR0 and the OS's permission say tiles work
// (amx_usable() in qmatmul_sse2.cpp). Per 16 activation rows x 16 weight rows (two groups) and
// block, the tile unit sums the block's 32 products in int32; the float part is the VNNI
// kernels', lane-wise in block order per row with separate mul and add.
//
// The definition's int16 activation codes do not fit AMX's bytes, so each code a is split as
// a = lo + 256 * hi (lo = a & 255 unsigned, hi = a >> 8 signed, both exact) and a block takes
// two tile products: sum(w * lo) (tdpbuud for q4_1 nibbles 0..15, tdpbusd for signed Int8
// codes) and sum(w * hi) (tdpbsud, tdpbssd), combined as lo_sum + (hi_sum << 8). No int32 step
// can overflow: |lo_sum| <= 32 * 255 * 128 = 1044480, |hi_sum| <= 32 * 128 * 128 = 524288,
// 256 * |hi_sum| <= 2^27, and the combined value is the exact block sum, |isum| <= 32 * 32768
// * 128 = 2^27 (the definition's own bound). So the int32 sums, and with them the floats, are
// the definition's bit for bit. The int8-activation form (_i8, $KILN_NATIVE_PREFILL_INT8=1)
// takes one signed-activation product per block (tdpbsud / tdpbssd), no correction term.
//
// No STL here (an inline template instantiated with AMX/AVX-512 code could be merged with
// another file's copy); the scratch buffers come from malloc.
#include <cstdlib>
#include <cstring>

#include "backend/native/qmatmul_vnni.h"
#include "backend/native/qmatmul_x86.h"

// g++ 12's AVX-512 intrinsics pass a self-initialized `_mm512_undefined_*` value as the unused
// merge operand, which -Wmaybe-uninitialized reports once inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace kiln::native {

namespace {

constexpr int kTileRows = 16;            // activation rows per A tile, output rows per C tile
constexpr int kBlockBTile = 8 * 64;      // one block's B tile: 8 rows of 16 x 4 code bytes

// ldtilecfg's 64-byte operand (palette 1).
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tile registers: the activations' low and high bytes (16 rows x 32 bytes, one block), the
// weights (8 rows of 16 columns x 4 bytes: 16 weight rows' 32 codes), and two sets of sum
// tiles (low, high), so that one block's products run while the previous block's are stored.
// (The tile intrinsics take the register numbers as literals.)
#define KILN_ALO 0
#define KILN_AHI 1
#define KILN_B 2

// _tile_loadd is an asm with no memory operand: the compiler must finish the stores that
// fill the buffers it reads (the split activations, the re-laid weights) before it.
inline void memory_barrier() { __asm__ __volatile__("" ::: "memory"); }

// Activation rows [0, m) of xq as bytes, [mpad][k] each, rows past m zero (the A tiles always
// read 16 rows; those rows' sums are never used): kSplit, lo = a & 255 and hi = a >> 8; else
// lo = a (int8 codes within +-127).
template <bool kSplit>
void split_activations(const int16_t* xq, int64_t m, int64_t mpad, int64_t k, uint8_t* lo, uint8_t* hi) {
  const int64_t n = m * k;  // k is a multiple of 32
  for (int64_t j = 0; j < n; j += 32) {
    const __m512i v = _mm512_loadu_si512(xq + j);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + j), _mm512_cvtepi16_epi8(v));
    if (kSplit)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + j), _mm512_cvtepi16_epi8(_mm512_srai_epi16(v, 8)));
  }
  std::memset(lo + n, 0, size_t((mpad - m) * k));
  if (kSplit) std::memset(hi + n, 0, size_t((mpad - m) * k));
}

// Groups g and (if two) g + 1 as B tiles, one per block (qmatmul_vnni.h's re-layout with the
// Int8 codes kept signed: row v of block b's tile = 16 lanes of 4 code bytes, group g's 8
// rows, then g + 1's or zeros), and their scales and mins as one 16-float vector per block.
template <bool kNibbles>
void relayout_pair(int64_t nb, const uint8_t* bytes, const float* d, const float* mins, int64_t g, bool two,
                   uint8_t* w, float* dw, float* mw) {
  constexpr int kBytes = kNibbles ? 16 : 32;
  for (int64_t b = 0; b < nb; ++b) {
    __m256i* h = reinterpret_cast<__m256i*>(w + b * kBlockBTile);
    relayout_block<kNibbles, false, true>(bytes + ((g * nb + b) * kQuantRowGroup) * kBytes, h, 2);
    if (two) relayout_block<kNibbles, false, true>(bytes + (((g + 1) * nb + b) * kQuantRowGroup) * kBytes, h + 1, 2);
    else
      for (int v = 0; v < 8; ++v) h[2 * v + 1] = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {
      const bool live = half == 0 || two;
      const int64_t at = ((g + half) * nb + b) * kQuantRowGroup;
      _mm256_storeu_ps(dw + b * 16 + 8 * half, live ? _mm256_loadu_ps(d + at) : _mm256_setzero_ps());
      if (kNibbles)
        _mm256_storeu_ps(mw + b * 16 + 8 * half, live ? _mm256_loadu_ps(mins + at) : _mm256_setzero_ps());
    }
  }
}

// One block's tile products into sum set kSet (tiles 3, 4 or 5, 6): the low bytes' sums and,
// kSplit, the high bytes'.
#define KILN_PRODUCTS(clo, chi)                               \
  do {                                                        \
    _tile_zero(clo);                                          \
    if (kSplit) {                                             \
      _tile_zero(chi);                                        \
      if (kNibbles) {                                         \
        _tile_dpbuud(clo, KILN_ALO, KILN_B);                  \
        _tile_dpbsud(chi, KILN_AHI, KILN_B);                  \
      } else {                                                \
        _tile_dpbusd(clo, KILN_ALO, KILN_B);                  \
        _tile_dpbssd(chi, KILN_AHI, KILN_B);                  \
      }                                                       \
    } else if (kNibbles) {                                    \
      _tile_dpbsud(clo, KILN_ALO, KILN_B);                    \
    } else {                                                  \
      _tile_dpbssd(clo, KILN_ALO, KILN_B);                    \
    }                                                         \
  } while (0)
template <bool kNibbles, bool kSplit, int kSet>
inline void block_products(const uint8_t* lo, const uint8_t* hi, const uint8_t* w, int64_t k) {
  _tile_loadd(KILN_ALO, lo, k);
  if (kSplit) _tile_loadd(KILN_AHI, hi, k);
  _tile_loadd(KILN_B, w, 64);
  if (kSet == 0) KILN_PRODUCTS(3, 4);
  else KILN_PRODUCTS(5, 6);
}
#undef KILN_PRODUCTS
// Sum tile t to the 16 x 16 int32 at p. Not _tile_stored: its asm clobbers all memory, which
// makes the compiler keep the accumulators (whose address the float part takes) in memory
// around every store; this one names the 1 KiB it writes.
#define KILN_TILE_STORE(t, p)                                                                 \
  __asm__ volatile("tilestored %%tmm" #t ", (%1,%2,1)"                                        \
                   : "=m"(*reinterpret_cast<int32_t(*)[kTileRows * 16]>(p))                   \
                   : "r"(p), "r"(int64_t(64)))
// Sum set kSet to c (low sums at c, high at c + 256).
template <bool kSplit, int kSet>
inline void store_sums(int32_t* c) {
  if (kSet == 0) {
    KILN_TILE_STORE(3, c);
    if (kSplit) KILN_TILE_STORE(4, c + 256);
  } else {
    KILN_TILE_STORE(5, c);
    if (kSplit) KILN_TILE_STORE(6, c + 256);
  }
}
#undef KILN_TILE_STORE

// Activation rows [t, t + R) (R = 16, or `live` where kFull is false: the last, partial tile)
// against the 16 weight rows of w, dw, mw: per block the tile sums, then per row
// acc + ((dw * dx) * float(isum) + mw * sx), stored under `keep` (the live output rows).
template <bool kNibbles, bool kSplit, bool kFull>
void rows_tile(int64_t nb, int64_t k, const uint8_t* lo, const uint8_t* hi, const float* dx, const float* sx,
               const uint8_t* w, const float* dw, const float* mw, int live, float* out, int64_t out_stride,
               __mmask16 keep, int32_t* c) {
  const int rows = kFull ? kTileRows : live;
  // Sixteen named accumulators, not an array: g++ keeps a 1 KiB array of vectors in memory
  // (past its scalarization limit), which costs a load and a store per row and block.
  __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0, acc4 = acc0, acc5 = acc0, acc6 = acc0,
         acc7 = acc0, acc8 = acc0, acc9 = acc0, acc10 = acc0, acc11 = acc0, acc12 = acc0, acc13 = acc0, acc14 = acc0,
         acc15 = acc0;
  // Software-pipelined: block b + 1's tile products are issued before block b's float part and
  // stored after it (two sum tile sets, two 2 KiB buffers in c), so the tile unit works during
  // the vector work, and the float part's loads are not queued behind a pending tile store.
  block_products<kNibbles, kSplit, 0>(lo, hi, w, k);
  store_sums<kSplit, 0>(c);
  for (int64_t b = 0; b < nb; ++b) {
    const bool more = b + 1 < nb, odd = b & 1;  // block b's sums are in set b & 1
    if (more && odd) block_products<kNibbles, kSplit, 0>(lo + (b + 1) * kQuantBlock, hi + (b + 1) * kQuantBlock,
                                                         w + (b + 1) * kBlockBTile, k);
    if (more && !odd) block_products<kNibbles, kSplit, 1>(lo + (b + 1) * kQuantBlock, hi + (b + 1) * kQuantBlock,
                                                          w + (b + 1) * kBlockBTile, k);
    const int32_t* cb = c + 512 * (b & 1);
    const __m512 dwb = _mm512_loadu_ps(dw + b * 16);
    const __m512 mwb = kNibbles ? _mm512_loadu_ps(mw + b * 16) : _mm512_setzero_ps();
#define KILN_ROW(r)                                                                                                \
  if (kFull || (r) < rows) {                                                                                       \
    __m512i isum = _mm512_loadu_si512(cb + 16 * (r));                                                              \
    if (kSplit) isum = _mm512_add_epi32(isum, _mm512_slli_epi32(_mm512_loadu_si512(cb + 256 + 16 * (r)), 8));     \
    __m512 term = _mm512_mul_ps(_mm512_mul_ps(dwb, _mm512_set1_ps(dx[(r) * nb + b])), _mm512_cvtepi32_ps(isum));  \
    if (kNibbles) term = _mm512_add_ps(term, _mm512_mul_ps(mwb, _mm512_set1_ps(sx[(r) * nb + b])));               \
    acc##r = _mm512_add_ps(acc##r, term);                                                                          \
  }
    KILN_ROW(0) KILN_ROW(1) KILN_ROW(2) KILN_ROW(3) KILN_ROW(4) KILN_ROW(5) KILN_ROW(6) KILN_ROW(7)
    KILN_ROW(8) KILN_ROW(9) KILN_ROW(10) KILN_ROW(11) KILN_ROW(12) KILN_ROW(13) KILN_ROW(14) KILN_ROW(15)
#undef KILN_ROW
    if (more && odd) store_sums<kSplit, 0>(c);
    if (more && !odd) store_sums<kSplit, 1>(c + 512);
  }
#define KILN_STORE(r) \
  if (kFull || (r) < rows) _mm512_mask_storeu_ps(out + (r) * out_stride, keep, acc##r);
  KILN_STORE(0) KILN_STORE(1) KILN_STORE(2) KILN_STORE(3) KILN_STORE(4) KILN_STORE(5) KILN_STORE(6) KILN_STORE(7)
  KILN_STORE(8) KILN_STORE(9) KILN_STORE(10) KILN_STORE(11) KILN_STORE(12) KILN_STORE(13) KILN_STORE(14) KILN_STORE(15)
#undef KILN_STORE
}

// All s.m rows (>= 16) against groups [g0, g1): the activations split once, then per pair of
// groups its B tiles built once and every 16-row tile of activations run against them.
template <bool kNibbles, bool kSplit>
void amx_rows(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx, const uint32_t* codes,
              const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  const int64_t nb = s.k / kQuantBlock, mpad = (s.m + kTileRows - 1) / kTileRows * kTileRows;
  const size_t act = size_t(mpad * s.k), wbytes = size_t(nb * kBlockBTile), scales = size_t(nb * 16) * sizeof(float);
  // lo, hi, the B tiles, dw, mw, and two blocks' sum tiles (4 KiB): ~100 KiB for an 80-row chunk.
  const size_t total = act * (kSplit ? 2 : 1) + wbytes + 2 * scales + 4096;
  auto* base = static_cast<uint8_t*>(std::aligned_alloc(64, (total + 63) / 64 * 64));
  if (!base)  // the same values without scratch memory
    return (kSplit ? quantized_matmul_rows_avx512vnni : quantized_matmul_rows_avx512vnni_i8)(s, xq, dx, sx, codes, d,
                                                                                              mins, g0, g1, out);
  uint8_t* lo = base;
  uint8_t* hi = lo + act * (kSplit ? 1 : 0);
  uint8_t* w = lo + act * (kSplit ? 2 : 1);  // act is a multiple of 32 * 16
  auto* dw = reinterpret_cast<float*>(w + wbytes);
  auto* mw = reinterpret_cast<float*>(w + wbytes + scales);
  auto* c = reinterpret_cast<int32_t*>(w + wbytes + 2 * scales);
  split_activations<kSplit>(xq, s.m, mpad, s.k, lo, hi);

  TileConfig cfg;  // per thread: a pool worker loads it on each call
  cfg.colsb[KILN_ALO] = cfg.colsb[KILN_AHI] = kQuantBlock;
  cfg.rows[KILN_ALO] = cfg.rows[KILN_AHI] = kTileRows;
  cfg.colsb[KILN_B] = 64, cfg.rows[KILN_B] = kQuantBlock / 4;
  for (int t = 3; t <= 6; ++t) cfg.colsb[t] = 64, cfg.rows[t] = kTileRows;
  _tile_loadconfig(&cfg);
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  for (int64_t g = g0; g < g1; g += 2) {
    const bool two = g + 1 < g1;
    relayout_pair<kNibbles>(nb, bytes, d, mins, g, two, w, dw, mw);
    memory_barrier();
    int64_t live = s.rows - g * kQuantRowGroup;
    if (live > (two ? 16 : 8)) live = two ? 16 : 8;
    const __mmask16 keep = __mmask16((1u << live) - 1);
    for (int64_t t = 0; t < s.m; t += kTileRows) {
      const int64_t at = t * s.k;
      float* o = out + t * s.rows + g * kQuantRowGroup;
      if (s.m - t >= kTileRows)
        rows_tile<kNibbles, kSplit, true>(nb, s.k, lo + at, hi + at, dx + t * nb, sx + t * nb, w, dw, mw, kTileRows,
                                          o, s.rows, keep, c);
      else
        rows_tile<kNibbles, kSplit, false>(nb, s.k, lo + at, hi + at, dx + t * nb, sx + t * nb, w, dw, mw,
                                           int(s.m - t), o, s.rows, keep, c);
    }
  }
  _tile_release();
  std::free(base);
}

template <bool kSplit>
void amx_kernel(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx, const uint32_t* codes,
                const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  // Fewer rows than one tile, or no tiles (called directly where amx_usable() is false): the
  // AVX512-VNNI kernel (the same values; it hands under 4 rows to the AVX2 one).
  if (s.m < kTileRows || !amx_usable())
    return (kSplit ? quantized_matmul_rows_avx512vnni : quantized_matmul_rows_avx512vnni_i8)(s, xq, dx, sx, codes, d,
                                                                                              mins, g0, g1, out);
  if (s.layout == QuantLayout::Nibble4) amx_rows<true, kSplit>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else amx_rows<false, kSplit>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace

void quantized_matmul_rows_amx(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                               const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                               float* out) {
  amx_kernel<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

void quantized_matmul_rows_amx_i8(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                  const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                  float* out) {
  amx_kernel<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::native
