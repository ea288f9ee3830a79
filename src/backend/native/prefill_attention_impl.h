// The prefill rows kernel of decode_attention (decode_attention_x86.h), written once over a
// SIMD vector type V and compiled per ISA: prefill_attention_avx2.cpp (8 lanes, -mavx2, the
// baseline) and prefill_attention_avx512.cpp (16 lanes, -mavx512f, where CPUID has it). Both
// give the reference's floats bit for bit; the design is in prefill_attention_avx2.cpp.
// Everything here has internal linkage (an anonymous namespace), so each ISA's file keeps its
// own copies and no function compiled for one ISA is called from the other's code.
//
// V provides: float type T, lanes W, kMaxVectors (query vectors scored together: their
// accumulators, a key tile and a broadcast fit the register file), zero, set1, load, store,
// bcast (one float to every lane), add, mul, div, max(s, m) (s > m ? s : m per lane, as
// std::max(m, s)), exp (kiln's exp_f32 per lane).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "backend/native/decode_attention_x86.h"

namespace kiln::native {

namespace {

struct Job {
  DecodeAttentionShape s;
  const float *q, *keys, *values, *k, *v;
  float* out;
  int64_t end = 0;     // start clamped to [0, n_ctx]
  int64_t lo0 = 0;     // the first key any row attends (row 0's)
  int64_t stride = 0;  // floats per row of kt (a multiple of W, with zeros past the keys)
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

// Scores of keys [ulo, uhi) for P vectors into sc[p * len + (u - ulo)], W keys at a time.
template <class V, int P>
void scores(const Job& j, const Vec* vec, int64_t kh, int64_t ulo, int64_t uhi, int64_t len, float* sc) {
  using T = typename V::T;
  const int64_t D = j.s.head_dim;
  const float* kt = j.kt + kh * D * j.stride - j.lo0;
  const T scale = V::set1(j.s.scale);
  for (int64_t u0 = ulo; u0 < uhi; u0 += V::W) {
    T acc[P];
    for (int p = 0; p < P; ++p) acc[p] = V::zero();
    for (int64_t d = 0; d < D; ++d) {
      const T key = V::load(kt + d * j.stride + u0);
      for (int p = 0; p < P; ++p) acc[p] = V::add(acc[p], V::mul(V::bcast(vec[p].q + d), key));
    }
    for (int p = 0; p < P; ++p) V::store(sc + p * len + (u0 - ulo), V::mul(scale, acc[p]));
  }
}

// Each vector's span masked (-inf around it), its maximum from the own score on, the
// exponentials in place and their sum in order into total[p].
template <class V, int P>
void softmax_terms(const Vec* vec, int64_t ulo, int64_t len, float* sc, float* total) {
  using T = typename V::T;
  for (int p = 0; p < P; ++p) {
    float* e = sc + p * len;
    const int64_t a = vec[p].lo - ulo, b = vec[p].hi - ulo;
    for (int64_t i = 0; i < a; ++i) e[i] = -INFINITY;
    for (int64_t i = b; i < len; ++i) e[i] = -INFINITY;
    // std::max(m, s) is s > m ? s : m, as V::max(s, m) per lane: the lanes' maxima and then
    // theirs are the maximum (a NaN score never replaces m; equal scores differ at most in
    // the sign of a zero, which s - m does not see).
    const float own = e[b - 1];
    T mv = V::set1(own);
    for (int64_t i = 0; i < len; i += V::W) mv = V::max(V::load(e + i), mv);
    alignas(64) float lanes[V::W];
    V::store(lanes, mv);
    float m = own;
    for (float x : lanes) m = std::max(m, x);
    mv = V::set1(m);
    for (int64_t i = 0; i < len; i += V::W) V::store(e + i, V::exp(V::sub(V::load(e + i), mv)));
  }
  // The sums: P independent chains interleaved, each over its keys in order.
  float t[P];
  for (int p = 0; p < P; ++p) t[p] = 0;
  for (int64_t i = 0; i < len; ++i)
    for (int p = 0; p < P; ++p) t[p] += sc[p * len + i];
  for (int p = 0; p < P; ++p) total[p] = t[p];
}

// out_p = sum over the span of e_u * value_u (in order of u) / total_p, W columns at a time.
template <class V, int P>
void weighted_values(const Job& j, const Vec* vec, int64_t kh, int64_t ulo, int64_t uhi, int64_t len,
                     const float* sc, const float* total) {
  using T = typename V::T;
  const int64_t D = j.s.head_dim, row = j.s.kv_heads * D;
  // Keys every vector attends: no per-key test there.
  int64_t common_lo = ulo, common_hi = uhi;
  for (int p = 0; p < P; ++p) common_lo = std::max(common_lo, vec[p].lo), common_hi = std::min(common_hi, vec[p].hi);
  if (common_hi < common_lo) common_hi = common_lo;
  auto value = [&](int64_t u) { return (u < j.end ? j.values + u * row : j.v + (u - j.end) * row) + kh * D; };
  for (int64_t d0 = 0; d0 < D; d0 += V::W) {
    T acc[P];
    for (int p = 0; p < P; ++p) acc[p] = V::zero();
    auto edge = [&](int64_t u) {
      const T x = V::load(value(u) + d0);
      for (int p = 0; p < P; ++p)
        if (vec[p].lo <= u && u < vec[p].hi) acc[p] = V::add(acc[p], V::mul(V::bcast(sc + p * len + (u - ulo)), x));
    };
    for (int64_t u = ulo; u < common_lo; ++u) edge(u);
    for (int64_t u = common_lo; u < common_hi; ++u) {
      const T x = V::load(value(u) + d0);
      for (int p = 0; p < P; ++p) acc[p] = V::add(acc[p], V::mul(V::bcast(sc + p * len + (u - ulo)), x));
    }
    for (int64_t u = common_hi; u < uhi; ++u) edge(u);
    for (int p = 0; p < P; ++p) V::store(vec[p].out + d0, V::div(acc[p], V::set1(total[p])));
  }
}

template <class V, int P>
void batch(const Job& j, const Vec* vec, int64_t kh) {
  int64_t ulo = vec[0].lo, uhi = vec[0].hi;
  for (int p = 1; p < P; ++p) ulo = std::min(ulo, vec[p].lo), uhi = std::max(uhi, vec[p].hi);
  const int64_t len = (uhi - ulo + V::W - 1) / V::W * V::W;
  float* sc = scratch(size_t(P * len));
  float total[P];
  scores<V, P>(j, vec, kh, ulo, uhi, len, sc);
  softmax_terms<V, P>(vec, ulo, len, sc, total);
  weighted_values<V, P>(j, vec, kh, ulo, uhi, len, sc, total);
}

using BatchFn = void (*)(const Job&, const Vec*, int64_t);

template <class V, int... P>
constexpr std::array<BatchFn, sizeof...(P)> batch_table(std::integer_sequence<int, P...>) {
  return {&batch<V, P + 1>...};
}

// Units [u0, u1): unit i is kv head i % kv_heads of block order(i / kv_heads), the blocks
// taken from both ends in turn (0, last, 1, last - 1, ...) so that contiguous ranges of units,
// as the pool hands them out, cost about the same (later rows attend more keys).
template <class V>
void run_units(void* ctx, int64_t u0, int64_t u1) {
  // kBatch[n - 1]: the kernel for n vectors.
  static constexpr std::array<BatchFn, V::kMaxVectors> kBatch =
      batch_table<V>(std::make_integer_sequence<int, V::kMaxVectors>{});
  const Job& j = *static_cast<const Job*>(ctx);
  const DecodeAttentionShape& s = j.s;
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads;
  for (int64_t i = u0; i < u1; ++i) {
    const int64_t kh = i % s.kv_heads, bb = i / s.kv_heads;
    const int64_t b = bb % 2 == 0 ? bb / 2 : j.blocks - 1 - bb / 2;
    const int64_t t0 = b * j.block, t1 = std::min(s.rows, t0 + j.block);
    Vec vec[V::kMaxVectors];
    int n = 0;
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t g = 0; g < group; ++g) {
        const int64_t h = kh * group + g;
        vec[n++] = {j.q + (t * s.heads + h) * D, j.out + (t * s.heads + h) * D, decode_attention_begin(s, j.end, t),
                    j.end + t + 1};
        if (n == V::kMaxVectors || (t == t1 - 1 && g == group - 1)) {
          kBatch[size_t(n - 1)](j, vec, kh);
          n = 0;
        }
      }
  }
}

template <class V>
void prefill_attention(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                       const float* k, const float* v, int32_t start, float* out, GroupSplitter split,
                       void* split_ctx) {
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads, row = s.kv_heads * D;
  if (D % V::W != 0) return decode_attention_reference(s, q, keys, values, k, v, start, out);
  Job j{s, q, keys, values, k, v, out};
  j.end = std::clamp<int64_t>(start, 0, s.n_ctx);
  j.lo0 = decode_attention_begin(s, j.end, 0);
  const int64_t n_keys = j.end + s.rows - j.lo0;
  j.stride = (n_keys + 2 * V::W - 1) / V::W * V::W;  // a tile read at the last key stays inside
  // The keys transposed, [kv head][d][key], on the calling thread (n_keys x row floats: small
  // beside the scores' n_keys x rows x heads x head_dim multiply-adds).
  thread_local std::vector<float> kt;
  kt.assign(size_t(s.kv_heads * D * j.stride), 0.0f);
  for (int64_t u = j.lo0; u < j.end + s.rows; ++u) {
    const float* src = u < j.end ? keys + u * row : k + (u - j.end) * row;
    for (int64_t c = 0; c < row; ++c) kt[size_t(c * j.stride + (u - j.lo0))] = src[c];
  }
  j.kt = kt.data();
  j.block = std::max<int64_t>(1, V::kMaxVectors / group);
  j.blocks = (s.rows + j.block - 1) / j.block;
  const int64_t units = j.blocks * s.kv_heads;
  if (split)
    split(split_ctx, units, &run_units<V>, &j);
  else
    run_units<V>(&j, 0, units);
}

}  // namespace

}  // namespace kiln::native
