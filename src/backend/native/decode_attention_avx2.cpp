// decode_attention (backend/decode_attention.h) with AVX2, compiled with -mavx2 and run only
// where the CPU has it: the reference's floats bit for bit, with SIMD lanes along cache rows
// (scores: 8 rows' dot products side by side, each summed over d in order) and along d (the
// weighted values: each lane sums its column over the rows in order). No FMA: separate mul
// and add, as the reference. No STL containers in the kernel's loops.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "backend/native/decode_attention_x86.h"
#include "backend/native/exp_avx2.h"

namespace kiln::native {

namespace {

// [v0 .. v7] as rows of 8 float lanes, transposed in place (lane c of row r -> lane r of row c).
inline void transpose8x8(__m256* v) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    const __m256 a = t[4 * i], b = t[4 * i + 1], c = t[4 * i + 2], d = t[4 * i + 3];
    u[4 * i] = _mm256_shuffle_ps(a, c, 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(a, c, 0xee);
    u[4 * i + 2] = _mm256_shuffle_ps(b, d, 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(b, d, 0xee);
  }
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
    v[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
  }
}

// The reference's score of one row: scale * sum over d in order.
inline float score_row(const float* q, const float* key, int64_t D, float scale) {
  float acc = 0;
  for (int64_t d = 0; d < D; ++d) acc += q[d] * key[d];
  return scale * acc;
}

constexpr int kMaxGroup = 16;  // query heads per kv head handled together (more: one at a time)

// Scores of rows [begin, end) for the G query heads q[0..G) of one kv head into e[g][c - begin]:
// 8 rows at a time, each 8 x 8 tile of keys transposed so that lane i holds row c0 + i.
void scores(const float* const* q, int G, const float* keys, int64_t row, int64_t D, int64_t begin, int64_t end,
            float scale, float* const* e) {
  for (int64_t c0 = begin; c0 < end; c0 += 8) {
    __m256 acc[kMaxGroup];
    for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_ps();
    const int64_t live = std::min<int64_t>(8, end - c0);
    for (int64_t d0 = 0; d0 < D; d0 += 8) {
      __m256 t[8];
      for (int i = 0; i < 8; ++i)  // rows past end repeat the last one (their lanes are dropped)
        t[i] = _mm256_loadu_ps(keys + (c0 + std::min<int64_t>(i, live - 1)) * row + d0);
      transpose8x8(t);
      for (int g = 0; g < G; ++g)
        for (int j = 0; j < 8; ++j) acc[g] = _mm256_add_ps(acc[g], _mm256_mul_ps(_mm256_set1_ps(q[g][d0 + j]), t[j]));
    }
    for (int g = 0; g < G; ++g) {
      alignas(32) float s[8];
      _mm256_store_ps(s, _mm256_mul_ps(_mm256_set1_ps(scale), acc[g]));
      for (int64_t i = 0; i < live; ++i) e[g][c0 - begin + i] = s[i];
    }
  }
}

// out[g][d] = (sum over rows in order of e[g][c] * value_c[d] + e_new[g] * v[d]) / total[g].
void weighted_values(const float* const* e, int G, const float* values, int64_t row, int64_t D, int64_t n,
                     const float* e_new, const float* v, const float* total, float* const* out) {
  for (int64_t d0 = 0; d0 < D; d0 += 8) {
    __m256 acc[kMaxGroup];
    for (int g = 0; g < G; ++g) acc[g] = _mm256_setzero_ps();
    for (int64_t c = 0; c < n; ++c) {
      const __m256 x = _mm256_loadu_ps(values + c * row + d0);
      for (int g = 0; g < G; ++g) acc[g] = _mm256_add_ps(acc[g], _mm256_mul_ps(_mm256_set1_ps(e[g][c]), x));
    }
    const __m256 vn = _mm256_loadu_ps(v + d0);
    for (int g = 0; g < G; ++g)
      _mm256_storeu_ps(out[g] + d0, _mm256_div_ps(_mm256_add_ps(acc[g], _mm256_mul_ps(_mm256_set1_ps(e_new[g]), vn)),
                                                  _mm256_set1_ps(total[g])));
  }
}

}  // namespace

void decode_attention_avx2(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                           const float* k, const float* v, int32_t start, float* out) {
  const int64_t D = s.head_dim, H = s.heads, group = H / s.kv_heads, row = s.kv_heads * D;
  if (D % 8 != 0 || group > kMaxGroup) return decode_attention_reference(s, q, keys, values, k, v, start, out);
  const int64_t end = std::clamp<int64_t>(start, 0, s.n_ctx), begin = decode_attention_begin(s, end);
  const int64_t n = std::max<int64_t>(end - begin, 0);
  // Reused per thread: this runs per layer and decode step.
  thread_local std::vector<float> scratch;
  scratch.resize(size_t(group * (n + 1)));
  for (int64_t kh = 0; kh < s.kv_heads; ++kh) {
    const float* qg[kMaxGroup];
    float* e[kMaxGroup];
    float* o[kMaxGroup];
    float e_new[kMaxGroup], total[kMaxGroup];
    for (int g = 0; g < group; ++g) {
      qg[g] = q + (kh * group + g) * D;
      e[g] = scratch.data() + g * (n + 1);
      o[g] = out + (kh * group + g) * D;
    }
    scores(qg, int(group), keys + kh * D, row, D, begin, end, s.scale, e);
    for (int g = 0; g < group; ++g) {
      // The reference's order: the new row's score first, the maximum over the rows in order
      // (std::max keeps m where a score is NaN), then exp_f32 and the sum in order, new row last.
      float m = e_new[g] = score_row(qg[g], k + kh * D, D, s.scale);
      for (int64_t c = 0; c < n; ++c) m = std::max(m, e[g][c]);
      // exp_f32 in 8 lanes (the same bits as the scalar steps the rest takes), then the sum
      // in order.
      int64_t c = 0;
      for (const __m256 mv = _mm256_set1_ps(m); c + 8 <= n; c += 8)
        _mm256_storeu_ps(e[g] + c, exp_f32_avx2(_mm256_sub_ps(_mm256_loadu_ps(e[g] + c), mv)));
      for (; c < n; ++c) e[g][c] = exp_f32(e[g][c] - m);
      float t = 0;
      for (c = 0; c < n; ++c) t += e[g][c];
      total[g] = t + (e_new[g] = exp_f32(e_new[g] - m));
    }
    weighted_values(e, int(group), values + begin * row + kh * D, row, D, n, e_new, v + kh * D, total, o);
  }
}

DecodeAttentionFn best_decode_attention() {
  static const DecodeAttentionFn fn = __builtin_cpu_supports("avx2") ? &decode_attention_avx2 : nullptr;
  return fn;
}

PrefillAttentionFn best_prefill_attention() {
  static const PrefillAttentionFn fn = []() -> PrefillAttentionFn {
    if (!__builtin_cpu_supports("avx2")) return nullptr;
    const char* env = std::getenv("KILN_NATIVE_PREFILL_ATTENTION");
    if (__builtin_cpu_supports("avx512f") && !(env && std::string(env) == "avx2")) return &prefill_attention_avx512;
    return &prefill_attention_avx2;
  }();
  return fn;
}

}  // namespace kiln::native
