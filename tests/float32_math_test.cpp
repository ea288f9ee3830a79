// Float32Math: kiln's float32 exp and tanh (ir/float32_math.h). The scalar functions are
// within their stated bounds of the exact value (float64 libm as the reference) and exact at
// the special values; every device computes the same bits as the scalar functions, eagerly
// and inside a fused jit kernel (the cpu device through alu_eval, native and wasm through
// legalize()'s expansion, vectorized), so the two forms of the steps agree.
#include "ir/float32_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "backend/backend.h"
#include "kiln/jit.h"
#include "library/numpy.h"

namespace float32_math_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// |got - want| in units of the last place of the float32 nearest want.
double ulps(float got, double want) {
  const float w = float(want);
  if (std::isinf(w)) return std::isinf(got) && (got > 0) == (w > 0) ? 0 : 1e9;
  const float aw = std::fabs(w);
  const double ulp = aw == 0 ? double(std::numeric_limits<float>::denorm_min())
                             : double(std::nextafter(aw, INFINITY)) - double(aw);
  return std::fabs(double(got) - want) / ulp;
}

// Special values, the edges of exp's range and of tanh's branches, then a stride through
// every float32 bit pattern (both signs, subnormals to infinities).
std::vector<float> inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, inf, -inf, std::nanf(""), 1.0f, -1.0f, 88.7228394f, 88.72283f, 88.8f,
                          -103.972084f, -103.97f, -87.3f, -100.0f, 0.625f, -0.625f, 0.62499994f, 1.2207031e-4f,
                          -1.2207031e-4f, 9.0f, 20.0f, -20.0f, 1e-30f, -1e-30f, 1e-45f};
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 40009) v.push_back(from_bits(uint32_t(u)));
  return v;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& x,
                      const std::function<float(float)>& f, const char* what) {
  ASSERT_EQ(got.size(), x.size());
  int shown = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = f(x[i]);
    const bool same = std::isnan(want) ? std::isnan(got[i]) : bits_of(got[i]) == bits_of(want);
    if (!same && shown++ < 5)
      ADD_FAILURE() << what << " on " << kiln::default_device() << " of " << x[i] << ": got " << got[i] << ", expected "
                    << want;
  }
}

}  // namespace

TEST(Float32Math, WithinTheStatedBounds) {
  double exp_worst = 0, tanh_worst = 0;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4099) {
    const float x = from_bits(uint32_t(u));
    if (std::isnan(x)) continue;
    exp_worst = std::max(exp_worst, ulps(kiln::exp_f32(x), std::exp(double(x))));
    tanh_worst = std::max(tanh_worst, ulps(kiln::tanh_f32(x), std::tanh(double(x))));
  }
  EXPECT_LT(exp_worst, 1.0);
  EXPECT_LT(tanh_worst, 1.5);
  std::printf("[ Float32Math ] worst exp %.3f ulp, tanh %.3f ulp\n", exp_worst, tanh_worst);
}

TEST(Float32Math, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(kiln::exp_f32(-inf), 0.0f);
  EXPECT_EQ(kiln::exp_f32(inf), inf);
  EXPECT_EQ(kiln::exp_f32(0.0f), 1.0f);
  EXPECT_EQ(kiln::exp_f32(89.0f), inf);
  EXPECT_EQ(kiln::exp_f32(-104.0f), 0.0f);
  EXPECT_EQ(kiln::exp_f32(-103.9f), std::numeric_limits<float>::denorm_min());  // e^-103.9 ~ 1.07 * 2^-149
  EXPECT_TRUE(std::isnan(kiln::exp_f32(std::nanf(""))));
  EXPECT_EQ(kiln::tanh_f32(inf), 1.0f);
  EXPECT_EQ(kiln::tanh_f32(-inf), -1.0f);
  EXPECT_EQ(bits_of(kiln::tanh_f32(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(kiln::tanh_f32(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(kiln::tanh_f32(std::nanf(""))));
}

TEST(Float32Math, EveryDeviceComputesTheScalarBits) {
  const std::vector<float> x = inputs();
  const Array a = np::array(x, {int64_t(x.size())});
  expect_same_bits(np::exp(a).to_vector<float>(), x, kiln::exp_f32, "exp");
  expect_same_bits(np::tanh(a).to_vector<float>(), x, kiln::tanh_f32, "tanh");
}

TEST(Float32Math, FusedKernelsComputeTheScalarBits) {
  // exp and tanh inside one jit kernel with other arithmetic around them.
  const std::vector<float> x = inputs();
  auto f = kiln::jit([](const std::vector<kiln::Tree>& in) {
    const Array& v = in[0].array();
    return kiln::Tree(np::tanh(v * 0.5f) + np::exp(v - 1.0f));
  });
  const std::vector<float> got = f({kiln::Tree(np::array(x, {int64_t(x.size())}))}).array().to_vector<float>();
  expect_same_bits(got, x, [](float v) { return kiln::tanh_f32(v * 0.5f) + kiln::exp_f32(v - 1.0f); },
                   "tanh(x/2) + exp(x-1)");
}

}  // namespace float32_math_test
