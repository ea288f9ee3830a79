// Weakly typed scalars: a C++ double is JAX's Python float (weak float32). It is rounded to
// float32 when arithmetic uses it, and keeps its full value only for a cast to float64.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/kiln.h"

namespace weak_types_test {

namespace {

using kiln::Array;
namespace np = kiln::numpy;

// JAX: 1 - 0.999 ** t with an int32 t is computed from float32(0.999); in double precision
// the cancellation in 1 - x would show a different float32 result.
TEST(WeakTypes, FloatMeetingIntIsRoundedToFloat32) {
  Array t = np::array(std::vector<int32_t>{1, 2, 3}, {3});
  Array r = Array(1.0) - np::power(Array(0.999), t);
  EXPECT_EQ(r.dtype(), kiln::float32);
  EXPECT_TRUE(r.weak_type());
  std::vector<float> got = r.to_vector<float>();
  for (int i = 0; i < 3; i++) {
    float want = 1.0f - std::pow(0.999f, float(i + 1));
    float from_double = float(1.0 - std::pow(0.999, i + 1));
    ASSERT_NE(want, from_double) << "the case must tell the two roundings apart";
    EXPECT_EQ(got[size_t(i)], want) << "t = " << i + 1;
  }
}

TEST(WeakTypes, FloatMeetingInt32TimesIsFloat32Product) {
  Array t = np::array(std::vector<int32_t>{3}, {1});
  EXPECT_EQ((Array(0.1) * t).to_vector<float>()[0], 0.1f * 3.0f);
}

// A cast to a wider float sees the full value: 0.1 + float64 zeros is the double 0.1.
TEST(WeakTypes, FloatMeetingFloat64KeepsFullPrecision) {
  Array r = Array(0.1) + np::zeros({2}, kiln::float64);
  EXPECT_EQ(r.dtype(), kiln::float64);
  EXPECT_EQ(r.to_vector<double>()[0], 0.1);
}

}  // namespace

}  // namespace weak_types_test
