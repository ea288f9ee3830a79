// kiln's float32 exp (ir/float32_math.h, exp_f32) on 8 AVX2 lanes: the same steps, so the
// same bits as the scalar function in every lane. Include only from files compiled with
// -mavx2 and -ffp-contract=off (a fused multiply-add would round differently).
#pragma once
#include <immintrin.h>

#include "ir/float32_math.h"

namespace kiln::native {

// 2^k for integral k in [-126, 127] in each lane, from its exponent bits (float32_math::pow2).
inline __m256 pow2_avx2(__m256 k) {
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_castsi256_ps(bits);
}

inline __m256 exp_f32_avx2(__m256 x) {
  using namespace float32_math;
  const __m256 lo = _mm256_set1_ps(kExpLo), hi = _mm256_set1_ps(kExpHi);
  const __m256 below = _mm256_cmp_ps(x, lo, _CMP_LT_OQ), above = _mm256_cmp_ps(hi, x, _CMP_LT_OQ);
  // Outside [kExpLo, kExpHi] the steps run on 0 (NaN stays NaN: neither compare holds).
  const __m256 xc = _mm256_andnot_ps(_mm256_or_ps(below, above), x);
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_sub_ps(_mm256_sub_ps(xc, _mm256_mul_ps(n, _mm256_set1_ps(kLn2Hi))),
                                 _mm256_mul_ps(n, _mm256_set1_ps(kLn2Lo)));
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpPoly[i]));
  p = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(p, _mm256_mul_ps(r, r)), r), _mm256_set1_ps(1.0f));
  const __m256 a = _mm256_floor_ps(_mm256_mul_ps(n, _mm256_set1_ps(0.5f)));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, pow2_avx2(a)), pow2_avx2(_mm256_sub_ps(n, a)));
  const __m256 low = _mm256_andnot_ps(below, y);  // x < kExpLo: 0
  return _mm256_blendv_ps(low, _mm256_set1_ps(__builtin_inff()), above);
}

}  // namespace kiln::native
