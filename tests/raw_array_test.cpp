// Checks formats::check_raw_array, the check behind the JS core's fromBytes: bytes must hold
// exactly the shape's elements, and a bad dtype, dim or size is a kiln::Error naming the op.
#include <gtest/gtest.h>

#include <string>

#include "formats/raw_array.h"
#include "ir/error.h"

namespace raw_array_test {

namespace {

using kiln::formats::check_raw_array;

std::string error_of(size_t bytes, const std::vector<int64_t>& shape, const std::string& dtype) {
  try {
    check_raw_array("array", bytes, shape, dtype);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

TEST(RawArray, AcceptsExactSizes) {
  auto r = check_raw_array("array", 24, {2, 3}, "float32");
  EXPECT_EQ(r.dtype, kiln::DType::Float32);
  EXPECT_EQ(r.count, 6);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(check_raw_array("array", 8, {}, "float64").count, 1);
  EXPECT_EQ(check_raw_array("array", 0, {0, 1000000}, "int32").count, 0);
  EXPECT_EQ(check_raw_array("array", 6, {3}, "float16").count, 3);
}

TEST(RawArray, RejectsShapesThatDoNotFitTheBytes) {
  // np.array(new Float32Array(4), {shape: [1000]}) once read 3984 bytes past the data.
  EXPECT_EQ(error_of(16, {1000}, "float32"),
            "array: got 16 bytes of float32 data for shape (1000,), expected 4000 (1000 "
            "elements of 4 bytes)");
  EXPECT_NE(error_of(16, {3}, "float32"), "");  // fewer elements than bytes: also an error
  EXPECT_NE(error_of(16, {2, -2}, "float32").find("non-negative"), std::string::npos);
  EXPECT_NE(error_of(16, {1 << 30, 1 << 30, 1 << 30}, "float64").find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of(4, {1}, "complex64").find("got dtype 'complex64'"), std::string::npos);
  // A zero dim makes the array empty whatever the other dims are, but not a negative one.
  EXPECT_NE(error_of(0, {0, -1}, "bool").find("non-negative"), std::string::npos);
}

}  // namespace

}  // namespace raw_array_test
