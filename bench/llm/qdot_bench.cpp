// qdot_bench: what integer-dot q4_1 and q8_0 matvecs would gain over kiln's current float lowering on
// this CPU, measured outside kiln (issue 19). Three matvecs over the same weights and input:
//   float      kiln's lowering today: 16 rows interleaved (words [N/16][K/8][16], one scale
//              and min per 32 values), value = q * s + m in float, then x * value added to 16
//              accumulators in column order (no FMA: kiln compiles with -ffp-contract=off);
//   int-dot    llama.cpp's way: x rounded once to int8 per 32-value block (scale dx and the
//              block's sum, as ggml's q8_1), then exact int8 x int4 products summed in integers
//              per block (AVX2 maddubs/madd; Wasm i32x4.dot_i16x8_s), one float multiply-add
//              per block and row;
//   int-loops  the same integer formulation written as plain loops over kiln's interleaved
//              layout (q4_1 only), i.e. roughly what kiln's generic kernel codegen would emit if
//              quantized_linear were rewritten into integer primitives.
//   int16-dot  as int-dot with the activation rounded to int16 per 32 values (pmaddwd on the
//              widened codes; on Wasm the same instructions as int-dot), ~256x less rounding.
//   rows x4/x8 int16-dot over 4 or 8 output rows at once with the float part lane-wise across
//              rows (qdot_rows.h), checked bit-identical to a scalar reference of the definition;
//              the float form is timed again in the same rounds for its ratio.
//   tiled      prefill: 64 activation rows against the weights, codes widened once per group
//              of 8 weight rows (qdot_tiles.h), against the 8-row matvec once per row.
//   cold step  the q4_1 matvecs of 30 decode-step layers, each with its own weights (80 MB per
//              layout, past L3): float against rows x8 as the model would read them.
// It prints microseconds per matvec (best of the rounds) and the largest difference of int-dot
// from float relative to the largest output (the activation rounding, as llama.cpp's).
//
// `make bench-qdot` builds and runs both (g++ -O3 -march=x86-64-v3 -ffp-contract=off natively,
// an AVX2 CPU needed; em++ -O3 -msimd128 run in Node). Results: bench/results/llm.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include "qdot_tiles.h"
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#else
#include <immintrin.h>
#endif

namespace {

using u32 = uint32_t;
using i32 = int32_t;

struct Packed {  // kiln's device layout of a q4_1 matrix (quantized_weights.cpp, upload)
  int n, k;
  std::vector<u32> words;       // [n/16][k/8][16]
  std::vector<float> s, m;      // [n/16][k/32][16]
  u32 code(int row, int col) const {
    return (words[(size_t(row / 16) * (k / 8) + col / 8) * 16 + row % 16] >> (col % 8 * 4)) & 15u;
  }
  size_t sm(int row, int blk) const { return (size_t(row / 16) * (k / 32) + blk) * 16 + row % 16; }
};

struct Block41 {  // one row's 32 values: nibble i holds value i (low) and i + 16 (high)
  float d, m;
  uint8_t qs[16];
};

struct Block80 {  // one row's 32 values of a q8_0 matrix
  float d;
  int8_t qs[32];
};

// An activation row rounded to T per 32 values: codes, scale, and scale * sum of the codes.
template <class T, int kMax>
struct Quantized {
  std::vector<T> q;
  std::vector<float> d, sum;
};
using Q8 = Quantized<int8_t, 127>;       // llama.cpp's q8_1 / q8_0 activations
using Q16 = Quantized<int16_t, 32767>;   // 256x finer, for the same Wasm instructions

__attribute__((noinline)) void matvec_float(const Packed& w, const float* __restrict x, float* __restrict out) {
  const int k = w.k;
  for (int blk = 0; blk < w.n / 16; ++blk) {
    float acc[16] = {};
    const u32* wp = &w.words[size_t(blk) * (k / 8) * 16];
    const float* sp = &w.s[size_t(blk) * (k / 32) * 16];
    const float* mp = &w.m[size_t(blk) * (k / 32) * 16];
    for (int c = 0; c < k; ++c) {
      const float xv = x[c];
      for (int j = 0; j < 16; ++j) {
        const float v = float(i32((wp[c / 8 * 16 + j] >> (c % 8 * 4)) & 15u)) * sp[c / 32 * 16 + j] + mp[c / 32 * 16 + j];
        acc[j] = acc[j] + xv * v;
      }
    }
    for (int j = 0; j < 16; ++j) out[blk * 16 + j] = acc[j];
  }
}

// kiln's q8_0 lowering: 4 biased bytes per word (code = value + 128), value = s * (code - 128).
__attribute__((noinline)) void matvec_float_q8(const std::vector<u32>& words, const std::vector<float>& scales, int n, int k,
                                               const float* __restrict x, float* __restrict out) {
  for (int blk = 0; blk < n / 16; ++blk) {
    float acc[16] = {};
    const u32* wp = &words[size_t(blk) * (k / 4) * 16];
    const float* sp = &scales[size_t(blk) * (k / 32) * 16];
    for (int c = 0; c < k; ++c) {
      const float xv = x[c];
      for (int j = 0; j < 16; ++j) {
        const float v = sp[c / 32 * 16 + j] * (float(i32((wp[c / 4 * 16 + j] >> (c % 4 * 8)) & 255u)) - 128.0f);
        acc[j] = acc[j] + xv * v;
      }
    }
    for (int j = 0; j < 16; ++j) out[blk * 16 + j] = acc[j];
  }
}

template <class T, int kMax>
__attribute__((noinline)) void quantize_row(const float* x, int k, Quantized<T, kMax>& r) {
  r.q.resize(size_t(k)), r.d.resize(size_t(k / 32)), r.sum.resize(size_t(k / 32));
  for (int b = 0; b < k / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const float d = amax / kMax, id = d != 0 ? 1 / d : 0;
    int sum = 0;
    for (int i = 0; i < 32; ++i) {
      const int v = int(std::nearbyint(x[b * 32 + i] * id));
      r.q[size_t(b * 32 + i)] = T(v);
      sum += v;
    }
    r.d[size_t(b)] = d, r.sum[size_t(b)] = d * float(sum);
  }
}

// Per-ISA pieces: a float accumulator, acc + s * float(p) for a block's int32 partial sums p,
// its horizontal sum, and each block type's integer dot with 32 activation codes.
#ifdef __wasm_simd128__
using VecF = v128_t;
using VecI = v128_t;
const char* kIsa = "wasm simd128";
inline VecF zero() { return wasm_f32x4_splat(0); }
inline VecF add_scaled(VecF acc, float s, VecI p) {
  return wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_splat(s), wasm_f32x4_convert_i32x4(p)));
}
inline float hsum(VecF v) {
  return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
         (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}
// 16 unsigned codes (bytes) times 16 activations (i16x8 pairs), as 4 i32 lanes.
inline VecI dot16(v128_t codes, v128_t acts_lo, v128_t acts_hi) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(codes), acts_lo),
                        wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(codes), acts_hi));
}
inline VecI block_dot(const Block41& B, const int8_t* y) {
  const v128_t t = wasm_v128_load(B.qs), lo = wasm_v128_and(t, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(t, 4);
  const v128_t y0 = wasm_v128_load(y), y1 = wasm_v128_load(y + 16);
  return wasm_i32x4_add(dot16(lo, wasm_i16x8_extend_low_i8x16(y0), wasm_i16x8_extend_high_i8x16(y0)),
                        dot16(hi, wasm_i16x8_extend_low_i8x16(y1), wasm_i16x8_extend_high_i8x16(y1)));
}
inline VecI block_dot(const Block41& B, const int16_t* y) {
  const v128_t t = wasm_v128_load(B.qs), lo = wasm_v128_and(t, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(t, 4);
  return wasm_i32x4_add(dot16(lo, wasm_v128_load(y), wasm_v128_load(y + 8)),
                        dot16(hi, wasm_v128_load(y + 16), wasm_v128_load(y + 24)));
}
inline VecI block_dot(const Block80& B, const int8_t* y) {
  VecI p = wasm_i32x4_splat(0);
  for (int h = 0; h < 32; h += 16) {
    const v128_t a = wasm_v128_load(B.qs + h), b = wasm_v128_load(y + h);
    p = wasm_i32x4_add(p, wasm_i32x4_add(
        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a), wasm_i16x8_extend_low_i8x16(b)),
        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a), wasm_i16x8_extend_high_i8x16(b))));
  }
  return p;
}
inline VecI block_dot(const Block80& B, const int16_t* y) {
  VecI p = wasm_i32x4_splat(0);
  for (int h = 0; h < 32; h += 16) {
    const v128_t a = wasm_v128_load(B.qs + h);
    p = wasm_i32x4_add(p, wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a), wasm_v128_load(y + h)),
                                         wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a), wasm_v128_load(y + h + 8))));
  }
  return p;
}
#else
using VecF = __m256;
using VecI = __m256i;
const char* kIsa = "x86-64-v3 (AVX2, FMA)";
inline VecF zero() { return _mm256_setzero_ps(); }
inline VecF add_scaled(VecF acc, float s, VecI p) { return _mm256_fmadd_ps(_mm256_set1_ps(s), _mm256_cvtepi32_ps(p), acc); }
inline float hsum(VecF v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline VecI block_dot(const Block41& B, const int8_t* y) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.qs));
  const __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t), _mm256_set1_epi8(15));
  // maddubs: unsigned codes times signed activations, |q*y| <= 15*127 so pairs never saturate.
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, load256(y)), _mm256_set1_epi16(1));
}
inline VecI block_dot(const Block41& B, const int16_t* y) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(B.qs)), low = _mm_set1_epi8(15);
  const __m256i lo = _mm256_cvtepu8_epi16(_mm_and_si128(t, low));
  const __m256i hi = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(t, 4), low));
  return _mm256_add_epi32(_mm256_madd_epi16(lo, load256(y)), _mm256_madd_epi16(hi, load256(y + 16)));
}
inline VecI block_dot(const Block80& B, const int8_t* y) {
  const __m256i a = load256(B.qs);
  // maddubs multiplies unsigned by signed bytes: move a's sign onto y (codes are >= -127).
  return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(load256(y), a)),
                           _mm256_set1_epi16(1));
}
inline VecI block_dot(const Block80& B, const int16_t* y) {
  const __m128i* a = reinterpret_cast<const __m128i*>(B.qs);
  return _mm256_add_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(a)), load256(y)),
                          _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(a + 1)), load256(y + 16)));
}
#endif

// The integer-dot matvec: per row, one integer dot and one float multiply-add per block, plus
// the min term (min * scale * sum of codes) for types that have one.
template <class Block, class T, int kMax>
__attribute__((noinline)) void matvec_int(const std::vector<Block>& w, int n, int k, const Quantized<T, kMax>& x,
                                          float* out) {
  const int nb = k / 32;
  for (int r = 0; r < n; ++r) {
    VecF acc = zero();
    float mins = 0;
    for (int b = 0; b < nb; ++b) {
      const Block& B = w[size_t(r) * nb + b];
      acc = add_scaled(acc, B.d * x.d[size_t(b)], block_dot(B, &x.q[size_t(b) * 32]));
      if constexpr (requires { B.m; }) mins += B.m * x.sum[size_t(b)];
    }
    out[r] = hsum(acc) + mins;
  }
}

__attribute__((noinline)) void matvec_int_loops(const Packed& w, const Q8& x, std::vector<i32>& isum, float* out) {
  const int k = w.k, nb = k / 32;
  isum.resize(size_t(w.n) * nb);
  for (int blk = 0; blk < w.n / 16; ++blk)  // kernel 1: integer sums per 32-value block
    for (int b = 0; b < nb; ++b) {
      i32 acc[16] = {};
      for (int c = b * 32; c < b * 32 + 32; ++c)
        for (int j = 0; j < 16; ++j)
          acc[j] += i32((w.words[(size_t(blk) * (k / 8) + c / 8) * 16 + j] >> (c % 8 * 4)) & 15u) * i32(x.q[size_t(c)]);
      for (int j = 0; j < 16; ++j) isum[(size_t(blk) * nb + b) * 16 + j] = acc[j];
    }
  for (int blk = 0; blk < w.n / 16; ++blk) {  // kernel 2: scales and mins per block
    float acc[16] = {};
    for (int b = 0; b < nb; ++b)
      for (int j = 0; j < 16; ++j) {
        const size_t i = (size_t(blk) * nb + b) * 16 + j;
        acc[j] = acc[j] + ((w.s[i] * x.d[size_t(b)]) * float(isum[i]) + w.m[i] * x.sum[size_t(b)]);
      }
    for (int j = 0; j < 16; ++j) out[blk * 16 + j] = acc[j];
  }
}

double since(std::chrono::steady_clock::time_point t0, int reps) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
}

// Repacks row-major blocks into R-row groups (qdot_rows.h's layout).
template <int R, class Block>
auto pack_rows(const std::vector<Block>& blocks, int n, int k) {
  constexpr int kBytes = sizeof(Block::qs);
  qrows::RowBlocks<R, kBytes> w;
  w.n = n, w.k = k;
  const int nb = k / 32;
  w.codes.resize(size_t(n) * nb * kBytes), w.d.resize(size_t(n) * nb);
  if constexpr (kBytes == 16) w.m.resize(size_t(n) * nb);
  for (int r = 0; r < n; ++r)
    for (int b = 0; b < nb; ++b) {
      const Block& B = blocks[size_t(r) * nb + b];
      const size_t s = w.sm(r / R, b) + r % R;
      std::copy(std::begin(B.qs), std::end(B.qs), reinterpret_cast<int8_t*>(&w.codes[s * kBytes]));
      w.d[s] = B.d;
      if constexpr (kBytes == 16) w.m[s] = B.m;
    }
  return w;
}

// Times the multi-row kernels (best of 5 alternated rounds, x rounding included) and checks each
// is bit-identical to the scalar reference of the definition; float_form (kiln's lowering today)
// is timed again in the same rounds so the ratios come from alternated runs.
template <class Block, class Float>
void run_rows(const std::vector<Block>& blocks, int n, int k, const std::vector<float>& x, int reps, Float float_form,
              const std::vector<float>& y16) {
  const auto w4 = pack_rows<4>(blocks, n, k);
  Q16 q;
  quantize_row(x.data(), k, q);
  std::vector<float> ref(static_cast<size_t>(n)), y4(ref), y8(ref);
  qrows::matvec_rows_ref(w4, q.q.data(), q.d.data(), q.sum.data(), ref.data());
  double best[2] = {1e30, 1e30}, float_us = 1e30, round_us[2] = {1e30, 1e30};
  const auto w8 = pack_rows<8>(blocks, n, k);
  Q16 qv = q;  // the vector rounding's output, compared with quantize_row's
  qrows::quantize16(x.data(), k, qv.q.data(), qv.d.data(), qv.sum.data());
  const bool same_rounding = qv.q == q.q && qv.d == q.d && qv.sum == q.sum;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) float_form();
    float_us = std::min(float_us, since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q), qrows::matvec_rows4(w4, q.q.data(), q.d.data(), q.sum.data(), y4.data());
    best[0] = std::min(best[0], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q), qrows::matvec_rows8(w8, q.q.data(), q.d.data(), q.sum.data(), y8.data());
    best[1] = std::min(best[1], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q);
    round_us[0] = std::min(round_us[0], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) qrows::quantize16(x.data(), k, qv.q.data(), qv.d.data(), qv.sum.data());
    round_us[1] = std::min(round_us[1], since(t0, reps));
  }
  std::printf("    x rounding alone: scalar %.2f us, vector %.2f us (bit-identical: %s)\n", round_us[0], round_us[1],
              same_rounding ? "yes" : "NO");
  float dref = 0, top = 0;
  for (size_t r = 0; r < ref.size(); ++r) dref = std::max(dref, std::fabs(ref[r] - y16[r])), top = std::max(top, std::fabs(ref[r]));
#ifdef __wasm_simd128__
  std::printf("    float %8.1f us  rows x4 (i32x4.dot_i16x8_s) %7.1f us (%.2fx)  rows x8 %7.1f us (%.2fx)  "
              "bit-identical to reference: x4 %s, x8 %s  reference vs int16-dot %.2g of max |y|\n",
              float_us, best[0], float_us / best[0], best[1], float_us / best[1], y4 == ref ? "yes" : "NO",
              y8 == ref ? "yes" : "NO", dref / top);
#else
  std::printf("    float %8.1f us  rows x4 (SSE2 pmaddwd) %7.1f us (%.2fx)  rows x8 (AVX2 vpmaddwd) %7.1f us (%.2fx)  "
              "bit-identical to reference: x4 %s, x8 %s  reference vs int16-dot %.2g of max |y|\n",
              float_us, best[0], float_us / best[0], best[1], float_us / best[1], y4 == ref ? "yes" : "NO",
              y8 == ref ? "yes" : "NO", dref / top);
#endif
}

// Prefill: m activation rows against the weights, the 8-row matvec once per row against the
// tiled kernel (codes widened once per group of 8 weight rows); x rounding inside both timings.
template <class Block>
void run_prefill(const std::vector<Block>& blocks, int n, int k, int m, int reps) {
  const auto w8 = pack_rows<8>(blocks, n, k);
  const int nb = k / 32;
  u32 state = 99u + u32(n + k);
  std::vector<float> x(size_t(m) * k);
  for (float& v : x) v = float(int((state = state * 1664525u + 1013904223u) % 2001) - 1000) * 1e-3f;
  std::vector<int16_t> xq(x.size());
  std::vector<float> dx(size_t(m) * nb), sx(dx.size()), y_rows(size_t(m) * n), y_tile(y_rows.size());
  // aligned_alloc, not std::vector: a vector of __m256i drops its alignment attribute (a warning).
  qrows::V16* scratch = static_cast<qrows::V16*>(std::aligned_alloc(64, size_t(8) * k * sizeof(int16_t)));
  Q16 q;
  auto round_rows = [&] {
    for (int i = 0; i < m; ++i) {
      quantize_row(&x[size_t(i) * k], k, q);
      std::copy(q.q.begin(), q.q.end(), &xq[size_t(i) * k]);
      std::copy(q.d.begin(), q.d.end(), &dx[size_t(i) * nb]), std::copy(q.sum.begin(), q.sum.end(), &sx[size_t(i) * nb]);
    }
  };
  double best[2] = {1e30, 1e30};
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
      round_rows();
      for (int i = 0; i < m; ++i)
        qrows::matvec_rows8(w8, &xq[size_t(i) * k], &dx[size_t(i) * nb], &sx[size_t(i) * nb], &y_rows[size_t(i) * n]);
    }
    best[0] = std::min(best[0], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) round_rows(), qrows::matmul_rows8(w8, m, xq.data(), dx.data(), sx.data(), y_tile.data(), scratch);
    best[1] = std::min(best[1], since(t0, reps));
  }
  std::printf("%s [%5d x %4d] x %d rows: matvec rows x8 per row %8.1f us  tiled %8.1f us (%.2fx)  bit-identical: %s\n",
              sizeof(Block::qs) == 16 ? "q4_1" : "q8_0", n, k, m, best[0], best[1], best[0] / best[1],
              y_rows == y_tile ? "yes" : "NO");
  std::free(scratch);
}

// A random q4_1 matrix in kiln's layout, and the same values as row-major ggml blocks.
Packed random_q41(int n, int k, u32 state) {
  auto rnd = [&] { return state = state * 1664525u + 1013904223u; };
  Packed p{n, k, std::vector<u32>(size_t(n) * k / 8), std::vector<float>(size_t(n) * k / 32),
           std::vector<float>(size_t(n) * k / 32)};
  for (u32& v : p.words) v = rnd();
  for (float& v : p.s) v = float(rnd() % 1000 + 1) * 1e-5f;
  for (float& v : p.m) v = -float(rnd() % 1000) * 1e-4f;
  return p;
}
std::vector<Block41> blocks_of(const Packed& p) {
  const int n = p.n, k = p.k;
  std::vector<Block41> blocks(size_t(n) * k / 32);
  for (int r = 0; r < n; ++r)
    for (int b = 0; b < k / 32; ++b) {
      Block41& B = blocks[size_t(r) * (k / 32) + b];
      B.d = p.s[p.sm(r, b)], B.m = p.m[p.sm(r, b)];
      for (int i = 0; i < 16; ++i) B.qs[i] = uint8_t(p.code(r, b * 32 + i) | p.code(r, b * 32 + 16 + i) << 4);
    }
  return blocks;
}

// The q4_1 matvecs of whole decode steps: every shape of SmolLM2's 30 layers with its own
// weights (80 MB per layout, past this CPU's L3), so each matvec reads its weights from memory
// as in the model, where the per-shape timings above re-read one matrix from cache.
void run_step(const int (*shapes)[2], int count, int layers) {
  std::vector<Packed> p;
  std::vector<qrows::RowBlocks<8, 16>> w8;
  std::vector<std::vector<float>> xs;
  for (int l = 0; l < layers; ++l)
    for (int s = 0; s < count; ++s) {
      p.push_back(random_q41(shapes[s][0], shapes[s][1], u32(l * 131 + s)));
      w8.push_back(pack_rows<8>(blocks_of(p.back()), shapes[s][0], shapes[s][1]));
    }
  size_t bytes = 0;
  for (const Packed& m : p) bytes += m.words.size() * 4 + m.s.size() * 8;
  std::vector<float> x(1536), y(1536);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 37 % 2001) - 1000) * 1e-3f;
  Q16 q;
  double best[2] = {1e30, 1e30};
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (const Packed& m : p) matvec_float(m, x.data(), y.data());
    best[0] = std::min(best[0], since(t0, 1));
    t0 = std::chrono::steady_clock::now();
    for (const auto& w : w8) quantize_row(x.data(), w.k, q), qrows::matvec_rows8(w, q.q.data(), q.d.data(), q.sum.data(), y.data());
    best[1] = std::min(best[1], since(t0, 1));
  }
  std::printf("q4_1 matvecs of %d layers (%.0f MB of weights, cold): float %.2f ms  rows x8 %.2f ms (%.2fx)\n", layers,
              double(bytes) / 1e6, best[0] / 1e3, best[1] / 1e3, best[0] / best[1]);
}

void run_shape(int n, int k, int reps) {
  const Packed p = random_q41(n, k, 12345u + u32(n * 7 + k));
  u32 state = 999u + u32(n + k);
  auto rnd = [&] { return state = state * 1664525u + 1013904223u; };
  std::vector<float> x(static_cast<size_t>(k));
  for (float& v : x) v = float(int(rnd() % 2001) - 1000) * 1e-3f;
  const std::vector<Block41> blocks = blocks_of(p);
  const size_t rows = static_cast<size_t>(n);
  std::vector<float> yf(rows), yi(rows), yl(rows), y16(rows);
  std::vector<i32> isum;
  Q8 q;
  Q16 q16;
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  for (int round = 0; round < 5; ++round) {  // alternated, so a loaded machine slows all three alike
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) matvec_float(p, x.data(), yf.data());
    best[0] = std::min(best[0], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q), matvec_int(blocks, n, k, q, yi.data());
    best[1] = std::min(best[1], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q), matvec_int_loops(p, q, isum, yl.data());
    best[2] = std::min(best[2], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q16), matvec_int(blocks, n, k, q16, y16.data());
    best[3] = std::min(best[3], since(t0, reps));
  }
  float err = 0, top = 0, loops_err = 0, err16 = 0;
  for (int r = 0; r < n; ++r) {
    err = std::max(err, std::fabs(yi[size_t(r)] - yf[size_t(r)]));
    loops_err = std::max(loops_err, std::fabs(yl[size_t(r)] - yi[size_t(r)]));
    err16 = std::max(err16, std::fabs(y16[size_t(r)] - yf[size_t(r)]));
    top = std::max(top, std::fabs(yf[size_t(r)]));
  }
  std::printf("q4_1 [%5d x %4d]  float %8.1f us  int-dot %7.1f us (%.2fx)  int-loops %8.1f us (%.2fx)  "
              "int16-dot %7.1f us (%.2fx)  vs float: int-dot %.2g, int16-dot %.2g of max |y| (int-loops vs int-dot %.2g)\n",
              n, k, best[0], best[1], best[0] / best[1], best[2], best[0] / best[2], best[3], best[0] / best[3], err / top,
              err16 / top, loops_err / top);
  run_rows(blocks, n, k, x, reps, [&] { matvec_float(p, x.data(), yf.data()); }, y16);
  run_prefill(blocks, n, k, 64, std::max(1, reps / 64));
}

void run_q8(int n, int k, int reps) {
  u32 state = 777u + u32(n + k);
  auto rnd = [&] { return state = state * 1664525u + 1013904223u; };
  std::vector<u32> words(size_t(n) * k / 4);
  std::vector<float> scales(size_t(n) * k / 32), x(static_cast<size_t>(k));
  for (u32& v : words) v = rnd() | 0x01010101u;  // no code 0: ggml's q8_0 values are >= -127
  for (float& v : scales) v = float(rnd() % 1000 + 1) * 1e-5f;
  for (float& v : x) v = float(int(rnd() % 2001) - 1000) * 1e-3f;
  std::vector<Block80> blocks(size_t(n) * k / 32);
  for (int r = 0; r < n; ++r)
    for (int b = 0; b < k / 32; ++b) {
      Block80& B = blocks[size_t(r) * (k / 32) + b];
      B.d = scales[(size_t(r / 16) * (k / 32) + b) * 16 + r % 16];
      for (int i = 0; i < 32; ++i) {
        const int c = b * 32 + i;
        B.qs[i] = int8_t(int((words[(size_t(r / 16) * (k / 4) + c / 4) * 16 + r % 16] >> (c % 4 * 8)) & 255u) - 128);
      }
    }
  const size_t rows = static_cast<size_t>(n);
  std::vector<float> yf(rows), yi(rows), y16(rows);
  Q8 q;
  Q16 q16;
  double best[3] = {1e30, 1e30, 1e30};
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) matvec_float_q8(words, scales, n, k, x.data(), yf.data());
    best[0] = std::min(best[0], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q), matvec_int(blocks, n, k, q, yi.data());
    best[1] = std::min(best[1], since(t0, reps));
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) quantize_row(x.data(), k, q16), matvec_int(blocks, n, k, q16, y16.data());
    best[2] = std::min(best[2], since(t0, reps));
  }
  float err = 0, err16 = 0, top = 0;
  for (size_t r = 0; r < rows; ++r)
    err = std::max(err, std::fabs(yi[r] - yf[r])), err16 = std::max(err16, std::fabs(y16[r] - yf[r])),
    top = std::max(top, std::fabs(yf[r]));
  std::printf("q8_0 [%5d x %4d]  float %8.1f us  int-dot %7.1f us (%.2fx)  int16-dot %7.1f us (%.2fx)  "
              "vs float: int-dot %.2g, int16-dot %.2g of max |y|\n",
              n, k, best[0], best[1], best[0] / best[1], best[2], best[0] / best[2], err / top, err16 / top);
  run_rows(blocks, n, k, x, reps, [&] { matvec_float_q8(words, scales, n, k, x.data(), yf.data()); }, y16);
}

}  // namespace

int main() {
  std::printf("matvecs, %s, 1 thread, best of 5 alternated rounds\n", kIsa);
  // SmolLM2-135M's q4_1 shapes (rows x columns): ffn gate/up, ffn down, attn q/o, attn k/v, and
  // q, k and v merged into one matvec (what the transformer runs since they were merged).
  const int shapes[][2] = {{1536, 576}, {576, 1536}, {576, 576}, {192, 576}, {960, 576}};
  for (auto& s : shapes) run_shape(s[0], s[1], 4000000 / (s[0] * s[1] / 64));
  // One decode step's q4_1 matvecs: gate and up, down, o, q/k/v merged (30 layers).
  const int step[][2] = {{1536, 576}, {1536, 576}, {576, 1536}, {576, 576}, {960, 576}};
  run_step(step, 5, 30);
  run_q8(49152, 576, 4);  // the output projection (tied embedding)
  return 0;
}
