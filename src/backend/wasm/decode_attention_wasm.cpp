// SIMD128 decode_attention (decode_attention_wasm.h), compiled with -msimd128 and
// -ffp-contract=off in the Emscripten builds: the reference's floats bit for bit, as native's
// AVX2 kernel (native/decode_attention_avx2.cpp) with 4 lanes: the scores with lanes along
// cache rows (4 rows' dot products side by side, each summed over d in order, from 4 x 4 tiles
// of keys transposed), the weighted values with lanes along d (each lane sums its column over
// the rows in order). Separate mul and add, as the reference. The unfused attention it
// replaces ran 6 generic kernels per layer that scored all n_ctx rows (the masked ones too);
// the routine takes ~5 % off a SmolLM2 decode step's CPU time at 1 thread (bench/results/llm.md).
#ifdef __wasm_simd128__
#include "backend/wasm/decode_attention_wasm.h"

#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/float32_math.h"

namespace kiln::wasm {

namespace {

// The reference's score of one row: scale * sum over d in order.
inline float score_row(const float* q, const float* key, int64_t D, float scale) {
  float acc = 0;
  for (int64_t d = 0; d < D; ++d) acc += q[d] * key[d];
  return scale * acc;
}

// Rows r0..r3 of 4 lanes, transposed (lane c of row r -> lane r of row c).
inline void transpose4(v128_t* t) {
  const v128_t a = wasm_i32x4_shuffle(t[0], t[1], 0, 4, 1, 5), b = wasm_i32x4_shuffle(t[0], t[1], 2, 6, 3, 7);
  const v128_t c = wasm_i32x4_shuffle(t[2], t[3], 0, 4, 1, 5), d = wasm_i32x4_shuffle(t[2], t[3], 2, 6, 3, 7);
  t[0] = wasm_i32x4_shuffle(a, c, 0, 1, 4, 5), t[1] = wasm_i32x4_shuffle(a, c, 2, 3, 6, 7);
  t[2] = wasm_i32x4_shuffle(b, d, 0, 1, 4, 5), t[3] = wasm_i32x4_shuffle(b, d, 2, 3, 6, 7);
}

// Query heads per pass: a template count keeps the accumulators in wasm locals (an array
// indexed at run time would live in linear memory). A larger group runs in passes of up to 4.
constexpr int kPass = 4;

// Scores of rows [begin, end) for G query heads of one kv head into e[g][c - begin]; qs holds
// each query value splatted (qs[g * D + d]), loaded once per tile instead of splatted again.
template <int G>
void scores(const v128_t* qs, const float* keys, int64_t row, int64_t D, int64_t begin, int64_t end, float scale,
            float* const* e) {
  for (int64_t c0 = begin; c0 < end; c0 += 4) {
    v128_t acc[G];
    for (int g = 0; g < G; ++g) acc[g] = wasm_f32x4_splat(0);
    const int64_t live = std::min<int64_t>(4, end - c0);
    const float* r[4];
    // Rows past end repeat the last one (their lanes are dropped).
    for (int i = 0; i < 4; ++i) r[i] = keys + (c0 + std::min<int64_t>(i, live - 1)) * row;
    for (int64_t d0 = 0; d0 < D; d0 += 4) {
      v128_t t[4];
      for (int i = 0; i < 4; ++i) t[i] = wasm_v128_load(r[i] + d0);
      transpose4(t);
      for (int g = 0; g < G; ++g)
        for (int j = 0; j < 4; ++j) acc[g] = wasm_f32x4_add(acc[g], wasm_f32x4_mul(qs[g * D + d0 + j], t[j]));
    }
    for (int g = 0; g < G; ++g) {
      const v128_t sc = wasm_f32x4_mul(wasm_f32x4_splat(scale), acc[g]);
      if (live == 4) {
        wasm_v128_store(e[g] + (c0 - begin), sc);
      } else {
        alignas(16) float s[4];
        wasm_v128_store(s, sc);
        for (int64_t i = 0; i < live; ++i) e[g][c0 - begin + i] = s[i];
      }
    }
  }
}

// out[g][d] = (sum over rows in order of e[g][c] * value_c[d] + e_new[g] * v[d]) / total[g],
// 8 columns (two vectors) per pass over the rows.
template <int G>
void weighted_values(const float* const* e, const float* values, int64_t row, int64_t D, int64_t n,
                     const float* e_new, const float* v, const float* total, float* const* out) {
  for (int64_t d0 = 0; d0 < D; d0 += 8) {
    v128_t acc[G][2];
    for (int g = 0; g < G; ++g) acc[g][0] = acc[g][1] = wasm_f32x4_splat(0);
    for (int64_t c = 0; c < n; ++c) {
      const v128_t x0 = wasm_v128_load(values + c * row + d0), x1 = wasm_v128_load(values + c * row + d0 + 4);
      for (int g = 0; g < G; ++g) {
        const v128_t w = wasm_f32x4_splat(e[g][c]);
        acc[g][0] = wasm_f32x4_add(acc[g][0], wasm_f32x4_mul(w, x0));
        acc[g][1] = wasm_f32x4_add(acc[g][1], wasm_f32x4_mul(w, x1));
      }
    }
    for (int h = 0; h < 2; ++h) {
      const v128_t vn = wasm_v128_load(v + d0 + 4 * h);
      for (int g = 0; g < G; ++g)
        wasm_v128_store(out[g] + d0 + 4 * h,
                        wasm_f32x4_div(wasm_f32x4_add(acc[g][h], wasm_f32x4_mul(wasm_f32x4_splat(e_new[g]), vn)),
                                       wasm_f32x4_splat(total[g])));
    }
  }
}

// G query heads of one kv head: scores, the softmax in the reference's order, weighted values.
template <int G>
void heads_pass(const float* const* qg, const float* keys, const float* values, const float* k, const float* v,
                int64_t row, int64_t D, int64_t begin, int64_t n, float scale, float* const* e, float* const* o,
                v128_t* qs) {
  float e_new[G], total[G];
  for (int g = 0; g < G; ++g)
    for (int64_t d = 0; d < D; ++d) qs[g * D + d] = wasm_f32x4_splat(qg[g][d]);
  scores<G>(qs, keys, row, D, begin, begin + n, scale, e);
  for (int g = 0; g < G; ++g) {
    // The new row's score first, the maximum over the rows in order (std::max keeps m where a
    // score is NaN), then exp and the sum in order, the new row last.
    float m = e_new[g] = score_row(qg[g], k, D, scale);
    for (int64_t c = 0; c < n; ++c) m = std::max(m, e[g][c]);
    float t = 0;
    for (int64_t c = 0; c < n; ++c) t += (e[g][c] = exp_f32(e[g][c] - m));
    total[g] = t + (e_new[g] = exp_f32(e_new[g] - m));
  }
  weighted_values<G>(e, values + begin * row, row, D, n, e_new, v, total, o);
}

}  // namespace

void decode_attention_simd128_heads(const DecodeAttentionShape& s, const float* q, const float* keys,
                                    const float* values, const float* k, const float* v, int32_t start, float* out,
                                    int64_t kh0, int64_t kh1) {
  const int64_t D = s.head_dim, group = s.heads / s.kv_heads, row = s.kv_heads * D;
  const int64_t end = std::clamp<int64_t>(start, 0, s.n_ctx), begin = decode_attention_begin(s, end);
  const int64_t n = std::max<int64_t>(end - begin, 0);
  // Reused per thread: this runs per layer and decode step. Rows padded to 4 floats, so the
  // scores' full-tile stores stay aligned to their row.
  const int64_t stride = (n + 4) & ~int64_t(3);
  thread_local std::vector<float> scratch;
  thread_local std::vector<v128_t> splats;  // the pass's query values, each splatted
  scratch.resize(size_t(kPass * stride));
  splats.resize(size_t(kPass * D));
  float* e[kPass];
  for (int g = 0; g < kPass; ++g) e[g] = scratch.data() + g * stride;
  for (int64_t kh = kh0; kh < kh1; ++kh)
    for (int64_t g0 = 0; g0 < group; g0 += kPass) {
      const int G = int(std::min<int64_t>(kPass, group - g0));
      const float* qg[kPass];
      float* o[kPass];
      for (int g = 0; g < G; ++g) {
        qg[g] = q + (kh * group + g0 + g) * D;
        o[g] = out + (kh * group + g0 + g) * D;
      }
      const float *kc = keys + kh * D, *vc = values + kh * D, *kn = k + kh * D, *vn = v + kh * D;
      switch (G) {
        case 1: heads_pass<1>(qg, kc, vc, kn, vn, row, D, begin, n, s.scale, e, o, splats.data()); break;
        case 2: heads_pass<2>(qg, kc, vc, kn, vn, row, D, begin, n, s.scale, e, o, splats.data()); break;
        case 3: heads_pass<3>(qg, kc, vc, kn, vn, row, D, begin, n, s.scale, e, o, splats.data()); break;
        default: heads_pass<4>(qg, kc, vc, kn, vn, row, D, begin, n, s.scale, e, o, splats.data()); break;
      }
    }
}

void decode_attention_simd128(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                              const float* k, const float* v, int32_t start, float* out) {
  if (s.head_dim % 8 != 0) return decode_attention_reference(s, q, keys, values, k, v, start, out);
  decode_attention_simd128_heads(s, q, keys, values, k, v, start, out, 0, s.kv_heads);
}

}  // namespace kiln::wasm
#endif  // __wasm_simd128__
