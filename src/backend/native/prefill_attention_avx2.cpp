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
// Work is split over (kv head, query block) units on the device's threads. The code is
// prefill_attention_impl.h's, here with 8-float AVX2 vectors.
#include <immintrin.h>

#include "backend/native/exp_avx2.h"
#include "backend/native/prefill_attention_impl.h"

namespace kiln::native {

namespace {

// 12 accumulators, one key tile and a broadcast fit the 16 ymm registers. Rows per block:
// 12 / group (SmolLM2: 4 rows x 3 heads; Gemma 3: 3 x 4).
struct Avx2 {
  using T = __m256;
  static constexpr int W = 8, kMaxVectors = 12;
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float x) { return _mm256_set1_ps(x); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T x) { _mm256_storeu_ps(p, x); }
  static T bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  static T max(T s, T m) { return _mm256_max_ps(s, m); }
  static T exp(T x) { return exp_f32_avx2(x); }
};

}  // namespace

void prefill_attention_avx2(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                            const float* k, const float* v, int32_t start, float* out, GroupSplitter split,
                            void* split_ctx) {
  prefill_attention<Avx2>(s, q, keys, values, k, v, start, out, split, split_ctx);
}

}  // namespace kiln::native
