// decode_attention's prefill rows kernel (prefill_attention_impl.h; the design is in
// prefill_attention_avx2.cpp) with 16-float AVX-512 vectors, compiled with -mavx512f
// -ffp-contract=off and chosen only where CPUID has AVX-512F (never needed: Zen 3 and many
// CI machines lack it; the AVX2 kernel is the baseline). The same steps per lane as the AVX2
// form and the reference, so the same floats bit for bit. 12 query vectors a batch, as AVX2's
// (SmolLM2: 4 rows x 3 heads; Gemma 3: 3 x 4): on the Xeon of bench/results/llm.md
// (2026-12-07 22:45) 6, 12, 18 and 24 took 1.37-1.41, 1.36-1.43, 1.82-1.85 and 1.68 ms per
// SmolLM2 layer at T = 256 (AVX2 with 12: 1.87-1.93; larger blocks score more of the
// diagonal they then mask).
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_ps() as the unused merge operand (max,
// roundscale, cvttps2dq), which -Wmaybe-uninitialized reports once inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "backend/native/prefill_attention_impl.h"
#include "ir/float32_math.h"

namespace kiln::native {

namespace {

// kiln's float32 exp (ir/float32_math.h, exp_f32) in 16 lanes: exp_avx2.h's steps.
inline __m512 pow2_avx512(__m512 k) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(k), _mm512_set1_epi32(127)), 23));
}

inline __m512 exp_f32_avx512(__m512 x) {
  using namespace float32_math;
  const __mmask16 below = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpLo), _CMP_LT_OQ);
  const __mmask16 above = _mm512_cmp_ps_mask(_mm512_set1_ps(kExpHi), x, _CMP_LT_OQ);
  // Outside [kExpLo, kExpHi] the steps run on 0 (NaN stays NaN: neither compare holds).
  const __m512 xc = _mm512_maskz_mov_ps(__mmask16(~(below | above)), x);
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  constexpr int kFloor = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(kLog2e)), kNearest);
  const __m512 r = _mm512_sub_ps(_mm512_sub_ps(xc, _mm512_mul_ps(n, _mm512_set1_ps(kLn2Hi))),
                                 _mm512_mul_ps(n, _mm512_set1_ps(kLn2Lo)));
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kExpPoly[i]));
  p = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(p, _mm512_mul_ps(r, r)), r), _mm512_set1_ps(1.0f));
  const __m512 a = _mm512_roundscale_ps(_mm512_mul_ps(n, _mm512_set1_ps(0.5f)), kFloor);
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, pow2_avx512(a)), pow2_avx512(_mm512_sub_ps(n, a)));
  const __m512 low = _mm512_maskz_mov_ps(__mmask16(~below), y);  // x < kExpLo: 0
  return _mm512_mask_mov_ps(low, above, _mm512_set1_ps(__builtin_inff()));
}

struct Avx512 {
  using T = __m512;
  static constexpr int W = 16, kMaxVectors = 12;
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float x) { return _mm512_set1_ps(x); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T x) { _mm512_storeu_ps(p, x); }
  static T bcast(const float* p) { return _mm512_set1_ps(*p); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  static T max(T s, T m) { return _mm512_max_ps(s, m); }
  static T exp(T x) { return exp_f32_avx512(x); }
};

}  // namespace

void prefill_attention_avx512(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                              const float* k, const float* v, int32_t start, float* out, GroupSplitter split,
                              void* split_ctx) {
  prefill_attention<Avx512>(s, q, keys, values, k, v, start, out, split, split_ctx);
}

}  // namespace kiln::native
