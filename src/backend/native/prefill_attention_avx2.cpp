// decode_attention for several query rows (a prefill chunk; backend/decode_attention.h) with
// AVX2, compiled with -mavx2 -ffp-contract=off and run only where the CPU has it. It gives the
// reference's floats bit for bit, each sum in the reference's order:
// - scores: SIMD lanes along keys, each lane summing q[d] * key[d] over d in order, read from a
//   transposed copy of the keys ([kv head][d][key], made once per call), for up to
//   kMaxVectors query vectors (row, head) of one kv head at a time, their accumulators in
//   registers; keys outside a row's span are scored anyway and then set to -inf;
// - the maximum over the span is order-free (a NaN score is skipped either way), the
//   exponentials are kiln's exp_f32 in 8 lanes (exp_avx2.h; masked keys give exactly 0);
// - each row's exponential sum runs over its keys in order: the masked zeros around its span
//   change no bit of a sum of non-negative terms that starts at +0;
// - the weighted values: lanes along d, each summing over the row's keys in order (keys
//   outside a row's span are skipped, never added as zeros: their values are not read).
// Causally masked keys cost nothing past a query block's edge: each block of rows scores only
// the keys its rows attend (the causal half and, with a window, what lies before it).
// Work is split over (kv head, query block) units on the device's threads.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "backend/native/decode_attention_x86.h"
#include "backend/native/exp_avx2.h"

namespace kiln::native {

namespace {

// Query vectors scored together: 12 accumulators, one key tile and a broadcast fit the 16
// ymm registers. Rows per block: kMaxVectors / group (SmolLM2: 4 rows x 3 heads; Gemma 3:
// 3 x 4).
constexpr int kMaxVectors = 12;

struct Job {
  DecodeAttentionShape s;
  const float *q, *keys, *values, *k, *v;
  float* out;
  int64_t end = 0;     // start clamped to [0, n_ctx]
  int64_t lo0 = 0;     // the first key any row attends (row 0's)
  int64_t stride = 0;  // floats per row of kt (a multiple of 8, with zeros past the keys)
  const float* kt = nullptr;  // [kv_heads][head_dim][stride]: key u at column u - lo0
  int64_t block = 1, blocks = 1;  // query rows per unit, units per kv head
};

// The vectors of one batch: query row t, head h, its keys [lo, hi) (the own row last).
struct Vec {
  const float* q;
  float* out;
  int64_t lo, hi;
};

float* scratch(size_t n) {
  thread_local std::vector<float> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// Scores of keys [ulo, uhi) for P vectors into sc[p * len + (u - ulo)], 8 keys at a time.
template <int P>
void scores(const Job& j, const Vec* vec, int64_t kh, int64_t ulo, int64_t uhi, int64_t len, float* sc) {
  const int64_t D = j.s.head_dim;
  const float* kt = j.kt + kh * D * j.stride - j.lo0;
  const __m256 scale = _mm256_set1_ps(j.s.scale);
  for (int64_t u0 = ulo; u0 < uhi; u0 += 8) {
    __m256 acc[P];
    for (int p = 0; p < P; ++p) acc[p] = _mm256_setzero_ps();
    for (int64_t d = 0; d < D; ++d) {
      const __m256 key = _mm256_loadu_ps(kt + d * j.stride + u0);
      for (int p = 0; p < P; ++p) acc[p] = _mm256_add_ps(acc[p], _mm256_mul_ps(_mm256_broadcast_ss(vec[p].q + d), key));
    }
    for (int p = 0; p < P; ++p) _mm256_storeu_ps(sc + p * len + (u0 - ulo), _mm256_mul_ps(scale, acc[p]));
  }
}

// Each vector's span masked (-inf around it), its maximum from the own score on, the
// exponentials in place and their sum in order into total[p].
template <int P>
void softmax_terms(const Vec* vec, int64_t ulo, int64_t len, float* sc, float* total) {
  for (int p = 0; p < P; ++p) {
    float* e = sc + p * len;
    const int64_t a = vec[p].lo - ulo, b = vec[p].hi - ulo;
    for (int64_t i = 0; i < a; ++i) e[i] = -INFINITY;
    for (int64_t i = b; i < len; ++i) e[i] = -INFINITY;
    // std::max(m, s) is s > m ? s : m, as _mm256_max_ps(s, m) per lane: the lanes' maxima
    // and then theirs are the maximum (a NaN score never replaces m; equal scores differ at
    // most in the sign of a zero, which s - m does not see).
    const float own = e[b - 1];
    __m256 m8 = _mm256_set1_ps(own);
    for (int64_t i = 0; i < len; i += 8) m8 = _mm256_max_ps(_mm256_loadu_ps(e + i), m8);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, m8);
    float m = own;
    for (float x : lanes) m = std::max(m, x);
    const __m256 mv = _mm256_set1_ps(m);
    for (int64_t i = 0; i < len; i += 8) _mm256_storeu_ps(e + i, exp_f32_avx2(_mm256_sub_ps(_mm256_loadu_ps(e + i), mv)));
  }
  // The sums: P independent chains interleaved, each over its keys in order.
  float t[P];
  for (int p = 0; p < P; ++p) t[p] = 0;
  for (int64_t i = 0; i < len; ++i)
    for (int p = 0; p < P; ++p) t[p] += sc[p * len + i];
  for (int p = 0; p < P; ++p) total[p] = t[p];
}

// out_p = sum over the span of e_u * value_u (in order of u) / total_p, 8 columns at a time.
template <int P>
void weighted_values(const Job& j, const Vec* vec, int64_t kh, int64_t ulo, int64_t uhi, int64_t len,
                     const float* sc, const float* total) {
  const int64_t D = j.s.head_dim, row = j.s.kv_heads * D;
  // Keys every vector attends: no per-key test there.
  int64_t common_lo = ulo, common_hi = uhi;
  for (int p = 0; p < P; ++p) common_lo = std::max(common_lo, vec[p].lo), common_hi = std::min(common_hi, vec[p].hi);
  if (common_hi < common_lo) common_hi = common_lo;
  auto value = [&](int64_t u) { return (u < j.end ? j.values + u * row : j.v + (u - j.end) * row) + kh * D; };
  for (int64_t d0 = 0; d0 < D; d0 += 8) {
    __m256 acc[P];
    for (int p = 0; p < P; ++p) acc[p] = _mm256_setzero_ps();
    auto edge = [&](int64_t u) {
      const __m256 x = _mm256_loadu_ps(value(u) + d0);
      for (int p = 0; p < P; ++p)
        if (vec[p].lo <= u && u < vec[p].hi)
          acc[p] = _mm256_add_ps(acc[p], _mm256_mul_ps(_mm256_broadcast_ss(sc + p * len + (u - ulo)), x));
    };
    for (int64_t u = ulo; u < common_lo; ++u) edge(u);
    for (int64_t u = common_lo; u < common_hi; ++u) {
      const __m256 x = _mm256_loadu_ps(value(u) + d0);
      for (int p = 0; p < P; ++p)
        acc[p] = _mm256_add_ps(acc[p], _mm256_mul_ps(_mm256_broadcast_ss(sc + p * len + (u - ulo)), x));
    }
    for (int64_t u = common_hi; u < uhi; ++u) edge(u);
    for (int p = 0; p < P; ++p) _mm256_storeu_ps(vec[p].out + d0, _mm256_div_ps(acc[p], _mm256_set1_ps(total[p])));
  }
}

template <int P>
void batch(const Job& j, const Vec* vec, int64_t kh) {
  int64_t ulo = vec[0].lo, uhi = vec[0].hi;
  for (int p = 1; p < P; ++p) ulo = std::min(ulo, vec[p].lo), uhi = std::max(uhi, vec[p].hi);
  const int64_t len = (uhi - ulo + 7) / 8 * 8;
  float* sc = scratch(size_t(P * len));
  float total[P];
  scores<P>(j, vec, kh, ulo, uhi, len, sc);
  softmax_terms<P>(vec, ulo, len, sc, total);
  weighted_values<P>(j, vec, kh, ulo, uhi, len, sc, total);
}

using BatchFn = void (*)(const Job&, const Vec*, int64_t);

template <int... P>
constexpr std::array<BatchFn, sizeof...(P)> batch_table(std::integer_sequence<int, P...>) {
  return {&batch<P + 1>...};
}
// kBatch[n - 1]: the kernel for n vectors.
constexpr std::array<BatchFn, kMaxVectors> kBatch = batch_table(std::make_integer_sequence<int, kMaxVectors>{});

// Units [u0, u1): unit i is kv head i % kv_heads of block order(i / kv_heads), the blocks
// taken from both ends in turn (0, last, 1, last - 1, ...) so that contiguous ranges of units,
// as the pool hands them out, cost about the same (later rows attend more keys).
void run_units(void* ctx, int64_t u0, int64_t u1) {
  const Job& j = *static_cast<const Job*>(ctx);
  const DecodeAttentionShape& s = j.s;
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads;
  for (int64_t i = u0; i < u1; ++i) {
    const int64_t kh = i % s.kv_heads, bb = i / s.kv_heads;
    const int64_t b = bb % 2 == 0 ? bb / 2 : j.blocks - 1 - bb / 2;
    const int64_t t0 = b * j.block, t1 = std::min(s.rows, t0 + j.block);
    Vec vec[kMaxVectors];
    int n = 0;
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t g = 0; g < group; ++g) {
        const int64_t h = kh * group + g;
        vec[n++] = {j.q + (t * s.heads + h) * D, j.out + (t * s.heads + h) * D, decode_attention_begin(s, j.end, t),
                    j.end + t + 1};
        if (n == kMaxVectors || (t == t1 - 1 && g == group - 1)) {
          kBatch[size_t(n - 1)](j, vec, kh);
          n = 0;
        }
      }
  }
}

}  // namespace

void prefill_attention_avx2(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                            const float* k, const float* v, int32_t start, float* out, GroupSplitter split,
                            void* split_ctx) {
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads, row = s.kv_heads * D;
  if (D % 8 != 0) return decode_attention_reference(s, q, keys, values, k, v, start, out);
  Job j{s, q, keys, values, k, v, out};
  j.end = std::clamp<int64_t>(start, 0, s.n_ctx);
  j.lo0 = decode_attention_begin(s, j.end, 0);
  const int64_t n_keys = j.end + s.rows - j.lo0;
  j.stride = (n_keys + 15) / 8 * 8;  // a tile read at the last key stays inside the row
  // The keys transposed, [kv head][d][key], on the calling thread (n_keys x row floats: small
  // beside the scores' n_keys x rows x heads x head_dim multiply-adds).
  thread_local std::vector<float> kt;
  kt.assign(size_t(s.kv_heads * D * j.stride), 0.0f);
  for (int64_t u = j.lo0; u < j.end + s.rows; ++u) {
    const float* src = u < j.end ? keys + u * row : k + (u - j.end) * row;
    for (int64_t c = 0; c < row; ++c) kt[size_t(c * j.stride + (u - j.lo0))] = src[c];
  }
  j.kt = kt.data();
  j.block = std::max<int64_t>(1, kMaxVectors / group);
  j.blocks = (s.rows + j.block - 1) / j.block;
  const int64_t units = j.blocks * s.kv_heads;
  if (split)
    split(split_ctx, units, &run_units, &j);
  else
    run_units(&j, 0, units);
}

}  // namespace kiln::native
