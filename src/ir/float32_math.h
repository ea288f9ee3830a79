// kiln's float32 exp and tanh: each a fixed sequence of float32 +, -, *, /, nearest, floor,
// compare, select and integer-to-bits steps, so that it vectorizes (no libm call per element)
// and every CPU device computes the same bits. alu_eval (the cpu interpreter, constant
// folding) calls the scalar functions; legalize() rewrites float32 Exp/Tanh nodes into the
// same steps as AluExp nodes (expand_*), which the wasm and native code generators render
// with their ordinary vector rules. A test checks that the two forms agree bit for bit.
//
// Accuracy against the exact value, over every 7th float32 bit pattern (docs/WASM.md,
// "Accuracy bound"): exp within 0.98 ulp, tanh within 1.33 ulp. Both are exact at
// the special values: exp(-inf) = 0, exp(inf) = inf, tanh(+-inf) = +-1, tanh(-0) = -0, NaN in
// NaN out; exp underflows through the subnormals with one rounding.
//
// exp: x = n ln2 + r with n = nearest(x log2 e), r by a two-part ln2 (the high part has 9
// bits, so n * high is exact for |n| <= 150); e^r by a degree-7 polynomial on |r| <= ln2/2
// (Cephes' expf coefficients); 2^n applied as two factors 2^floor(n/2) * 2^(n - floor(n/2)),
// each a normal float built from its exponent bits, so results near overflow and in the
// subnormal range round once. tanh: x + x^3 P(x^2) for |x| < 0.625 (Cephes' tanhf
// coefficients; x itself below 2^-13, where that is the float32 value), else
// 1 - 2 / (e^2|x| + 1) with the sign of x.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kiln {

class AluExp;

namespace float32_math {

// The constants the scalar and the AluExp forms share.
inline constexpr float kExpHi = 88.7228394f;    // above: inf (e^x > FLT_MAX)
inline constexpr float kExpLo = -103.972084f;   // below: 0 (e^x < 2^-150)
inline constexpr float kLog2e = 1.44269502f;
inline constexpr float kLn2Hi = 0.693359375f;   // 355 / 512
inline constexpr float kLn2Lo = -2.12194440e-4f;  // ln 2 - kLn2Hi
inline constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
inline constexpr float kTanhSmall = 0.625f;
inline constexpr float kTanhTiny = 1.220703125e-4f;  // 2^-13
inline constexpr float kTanhPoly[5] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                       1.33314422036e-1f, -3.33332819422e-1f};

// alu_eval's float -> int32 cast: truncate, saturate, NaN -> 0.
inline int32_t to_int32(float x) {
  if (std::isnan(x)) return 0;
  if (x <= -2147483648.0f) return INT32_MIN;
  if (x >= 2147483648.0f) return INT32_MAX;
  return int32_t(x);
}

// 2^k for an integral float k in [-126, 127], from its exponent bits ((k + 127) << 23 as a
// product, which the vector forms have).
inline float pow2(float k) {
  const int32_t bits = int32_t(uint32_t(to_int32(k) + 127) * 8388608u);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace float32_math

inline float exp_f32(float x) {
  using namespace float32_math;
  // Outside [kExpLo, kExpHi] the steps run on 0 and the result is selected at the end: a
  // clamped -inf (masked attention scores) would make the last product subnormal, which
  // x86 computes ~100x slower. NaN stays NaN.
  const float xc = x < kExpLo ? 0.0f : (kExpHi < x ? 0.0f : x);
  const float n = std::nearbyint(xc * kLog2e);
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i) p = p * r + kExpPoly[i];
  p = (p * (r * r) + r) + 1.0f;
  const float a = std::floor(n * 0.5f);
  const float y = (p * pow2(a)) * pow2(n - a);
  return kExpHi < x ? std::numeric_limits<float>::infinity() : (x < kExpLo ? 0.0f : y);
}

inline float tanh_f32(float x) {
  using namespace float32_math;
  const float z = x * x;
  float s = kTanhPoly[0];
  for (int i = 1; i < 5; ++i) s = s * z + kTanhPoly[i];
  const float ax = x < 0.0f ? -x : x;
  const float small = ax < kTanhTiny ? x : (s * z) * x + x;
  const float large = 1.0f - 2.0f / (exp_f32(ax * 2.0f) + 1.0f);
  return ax < kTanhSmall ? small : (x < 0.0f ? -large : large);
}

// The same steps as AluExp nodes over a float32 expression (float32_math.cpp).
AluExp expand_exp_f32(const AluExp& x);
AluExp expand_tanh_f32(const AluExp& x);

}  // namespace kiln
