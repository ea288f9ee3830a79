// Errors are part of the API: each class of bad input gets a kiln::Error naming the op, what
// it got and what it expected, and arrays that existed before the failing call stay intact.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "kiln/kiln.h"

namespace errors_test {

namespace {

using kiln::Array;
using kiln::Slice;
namespace np = kiln::numpy;
namespace lax = kiln::lax;

// Runs `f` and checks that it throws a kiln::Error whose message contains every one of
// `parts` (the op's name first, then what it got or expected).
::testing::AssertionResult throws_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const kiln::Error& e) {
    std::string what = e.what();
    for (const auto& p : parts)
      if (what.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message '" << what << "' lacks '" << p << "'";
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-kiln exception: " << e.what();
  } catch (...) {
    return ::testing::AssertionFailure() << "threw something that is not a std::exception";
  }
  return ::testing::AssertionFailure() << "nothing was thrown";
}

#define EXPECT_KILN_ERROR(stmt, ...) EXPECT_TRUE(throws_error([&] { stmt; }, {__VA_ARGS__}))

// Arrays that exist before every failing call: realized data, a lazy expression, a view
// and a constant. After each error they must read back unchanged and still compute.
class Errors : public testing::Test {
 protected:
  void SetUp() override {
    x = np::array(std::vector<float>{0, 1, 2, 3, 4, 5}, {2, 3});
    i = np::array(std::vector<int32_t>{1, 2, 3}, {3});
    b = np::array(std::vector<bool>{true, false, true}, {3});
    lazy = x * 2 + 1;     // never read before the error
    view = np::transpose(x);  // (3, 2)
    ones = np::ones({2, 3});
  }

  void expect_intact() {
    EXPECT_EQ(x.shape(), (kiln::Shape{2, 3}));
    EXPECT_EQ(x.dtype(), kiln::float32);
    EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
    EXPECT_EQ(lazy.shape(), (kiln::Shape{2, 3}));
    EXPECT_EQ(lazy.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
    EXPECT_EQ(view.shape(), (kiln::Shape{3, 2}));
    EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
    EXPECT_EQ(ones.to_vector<float>(), std::vector<float>(6, 1.0f));
    // Still usable in new computations.
    Array y = np::sum(x + view.T() * lazy, 1) + np::sum(i);
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{22, 130}));  // 2x^2 + 2x summed, + 6
  }

  Array x, i, b, lazy, view, ones;
};

TEST_F(Errors, BroadcastMismatchInAdd) {
  EXPECT_KILN_ERROR(np::add(x, np::ones({4})), "add", "(2, 3)", "(4,)", "cannot be broadcast");
  EXPECT_KILN_ERROR(x + i.reshape({3, 1}), "add", "(2, 3)", "(3, 1)");
  EXPECT_KILN_ERROR(np::add(view, lazy), "add", "(3, 2)", "(2, 3)");
  expect_intact();
}

// The kind of the kiln::Error `f` throws (bindings turn Type and Range into JS TypeError and
// RangeError, as jax-js throws them), or nullopt when it throws none.
std::optional<kiln::ErrorKind> kind_thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.kind();
  }
  return std::nullopt;
}

TEST_F(Errors, KindsPickTheJsClass) {
  using kiln::ErrorKind;
  EXPECT_EQ(kind_thrown([&] { np::add(x, np::ones({4})); }), ErrorKind::Type);
  // with_name keeps the kind when a composed function names itself in front.
  EXPECT_EQ(kind_thrown([&] { kiln::with_name("outer_op", [&] { return np::add(x, np::ones({4})); }); }), ErrorKind::Type);
  EXPECT_EQ(kind_thrown([&] { np::bitwise_and(x, x); }), ErrorKind::Type);
  EXPECT_EQ(kind_thrown([&] { np::arange(0, 10, 0); }), ErrorKind::Range);
  EXPECT_EQ(kind_thrown([&] { np::linspace(0, 1, -1); }), ErrorKind::Range);
  EXPECT_EQ(kind_thrown([&] { np::sum(x, 2); }), ErrorKind::Value);
  EXPECT_EQ(kind_thrown([&] { x.reshape({4}); }), ErrorKind::Value);
  expect_intact();
}

TEST_F(Errors, BadAxis) {
  EXPECT_KILN_ERROR(np::sum(x, 2), "sum", "axis 2", "rank 2");
  EXPECT_KILN_ERROR(np::sum(lazy, -3), "sum", "axis -3", "rank 2");
  EXPECT_KILN_ERROR(np::sum(x, {0, 0}), "sum", "repeated axis");
  EXPECT_KILN_ERROR(np::argmax(x, 5), "argmax", "axis 5", "rank 2");
  EXPECT_KILN_ERROR(np::argmin(view, -3), "argmin", "axis -3", "rank 2");
  EXPECT_KILN_ERROR(np::moveaxis(x, 0, 3), "moveaxis", "axis 3", "rank 2");
  EXPECT_KILN_ERROR(np::moveaxis(x, 2, 0), "moveaxis", "axis 2", "rank 2");
  EXPECT_KILN_ERROR(np::moveaxis(x, std::vector<int>{0, 1}, std::vector<int>{1}), "moveaxis", "2 source",
                    "1 destination");
  // Repeated axes (these used to crash or blame transpose).
  EXPECT_KILN_ERROR(np::moveaxis(x, std::vector<int>{0, 1}, std::vector<int>{1, 1}), "moveaxis",
                    "repeated axis", "destination");
  EXPECT_KILN_ERROR(np::moveaxis(x, std::vector<int>{0, -2}, std::vector<int>{0, 1}), "moveaxis",
                    "repeated axis", "source");
  EXPECT_KILN_ERROR(np::argmax(Array(1.0), 0), "argmax", "0-d");  // JAX's choice; NumPy gives 0
  // The new array has rank 3, so axis 3 is out of bounds (as NumPy's AxisError says).
  EXPECT_KILN_ERROR(np::expand_dims(x, 3), "expand_dims", "axis 3", "rank 3");
  EXPECT_KILN_ERROR(np::expand_dims(x, -4), "expand_dims", "axis -4", "rank 3");
  EXPECT_KILN_ERROR(x.shape(2), "shape", "axis 2", "rank 2");
  expect_intact();
}

TEST_F(Errors, ReshapeSizeMismatchAndTwoInferredDims) {
  EXPECT_KILN_ERROR(np::reshape(x, {4}), "reshape", "(2, 3)", "(4,)");
  EXPECT_KILN_ERROR(lazy.reshape({5, -1}), "reshape", "(2, 3)", "(5, -1)");
  EXPECT_KILN_ERROR(np::reshape(view, {-1, -1}), "reshape", "(-1, -1)", "at most one -1");
  EXPECT_KILN_ERROR(np::reshape(x, {-2, 3}), "reshape", "(-2, 3)");
  expect_intact();
}

TEST_F(Errors, TransposeWithABadPermutation) {
  EXPECT_KILN_ERROR(np::transpose(x, std::vector<int>{0, 0}), "transpose", "permutation");
  EXPECT_KILN_ERROR(np::transpose(x, std::vector<int>{0}), "transpose", "got 1 axes", "rank 2");
  EXPECT_KILN_ERROR(np::transpose(x, std::vector<int>{0, 2}), "transpose", "axis 2", "rank 2");
  EXPECT_KILN_ERROR(np::swapaxes(x, 0, 2), "swapaxes", "axis 2");
  expect_intact();
}

TEST_F(Errors, SqueezeOfANonUnitAxis) {
  EXPECT_KILN_ERROR(np::squeeze(x, 0), "squeeze", "axis 0", "(2, 3)", "not 1");
  EXPECT_KILN_ERROR(np::squeeze(x.reshape({2, 1, 3}), {1, 2}), "squeeze", "axis 2", "(2, 1, 3)");
  EXPECT_KILN_ERROR(np::squeeze(x, 2), "squeeze", "axis 2", "rank 2");
  expect_intact();
}

TEST_F(Errors, BadIndices) {
  EXPECT_KILN_ERROR(x[5], "index", "index 5", "axis 0", "size 2");
  EXPECT_KILN_ERROR(x[-3], "index", "index -3", "size 2");
  EXPECT_KILN_ERROR((x[{int64_t(0), int64_t(3)}]), "index", "index 3", "axis 1", "size 3");
  EXPECT_KILN_ERROR((x[{int64_t(0), int64_t(0), int64_t(0)}]), "index", "too many indices", "3", "rank 2");
  EXPECT_KILN_ERROR((view[{Slice{}, Slice{std::nullopt, std::nullopt, 0}}]), "index", "step", "zero");
  EXPECT_KILN_ERROR((x[{kiln::ellipsis, int64_t(0), kiln::ellipsis}]), "index", "2 ellipses");
  expect_intact();
}

TEST_F(Errors, BadPadding) {
  EXPECT_KILN_ERROR(np::pad(x, {{1, 1}}, "wrap"), "pad", "unknown mode 'wrap'", "constant");
  EXPECT_KILN_ERROR(np::pad(x, {{1, -1}}), "pad", "negative");
  EXPECT_KILN_ERROR(np::pad(lazy, {{-1, 0}, {0, 0}}, "edge"), "pad", "negative");
  EXPECT_KILN_ERROR(np::pad(x, {{1, 1}, {1, 1}, {1, 1}}), "pad", "3 (before, after) pairs", "rank 2");
  EXPECT_KILN_ERROR(np::pad(i, {{1, 1}, {1, 1}}), "pad", "2 (before, after) pairs", "rank 1");
  EXPECT_KILN_ERROR(np::pad(np::zeros({0, 2}), {{1, 1}, {0, 0}}, "reflect"), "pad", "empty axis");
  expect_intact();
}

TEST_F(Errors, BadConcatenation) {
  EXPECT_KILN_ERROR(np::concatenate({x, i}), "concatenate", "same rank", "(2, 3)", "(3,)");
  EXPECT_KILN_ERROR(np::concatenate({x, view}), "concatenate", "(2, 3)", "(3, 2)", "axis 1");
  EXPECT_KILN_ERROR(np::concatenate({x, lazy}, 2), "concatenate", "axis 2");
  EXPECT_KILN_ERROR(np::concatenate({}), "concatenate", "at least one array");
  EXPECT_KILN_ERROR(np::concatenate({Array(1.0), Array(2.0)}), "concatenate", "zero-dimensional");
  EXPECT_KILN_ERROR(np::stack({x, view}), "stack", "same shape", "(2, 3)", "(3, 2)");
  EXPECT_KILN_ERROR(np::stack({}), "stack", "at least one array");
  expect_intact();
}

TEST_F(Errors, SplitIntoUnequalSections) {
  EXPECT_KILN_ERROR(np::split(x, 2, 1), "split", "equal division", "3 into 2");
  EXPECT_KILN_ERROR(np::split(i, 0), "split", "3 into 0");
  EXPECT_KILN_ERROR(np::split(x, 2, 2), "split", "axis 2");
  expect_intact();
}

TEST_F(Errors, TakeWithFloatIndices) {
  EXPECT_KILN_ERROR(np::take(i, np::array(std::vector<float>{0, 1}, {2})), "take", "float32", "integer");
  EXPECT_KILN_ERROR(np::take(x, x, 0), "take", "float32", "integer");
  EXPECT_KILN_ERROR(np::take_along_axis(x, lazy, 1), "take_along_axis", "float32", "integer");
  EXPECT_KILN_ERROR(np::take(x, i, 2), "take", "axis 2");
  expect_intact();
}

TEST_F(Errors, DtypeErrors) {
  EXPECT_KILN_ERROR(np::bitwise_and(x, x), "bitwise_and", "float32", "bool or an integer");
  EXPECT_KILN_ERROR(x | i, "bitwise_or", "float32");
  EXPECT_KILN_ERROR(~lazy, "bitwise_not", "float32");
  EXPECT_KILN_ERROR(np::left_shift(x, i), "left_shift", "float32");
  EXPECT_KILN_ERROR(np::subtract(b, b), "subtract", "bool");
  EXPECT_KILN_ERROR(b - true, "subtract", "bool");
  EXPECT_KILN_ERROR(np::negative(b), "negative", "bool");
  EXPECT_KILN_ERROR(lax::bitcast_convert_type(x, kiln::float16), "bitcast_convert_type", "float32", "float16",
                    "equal size");
  EXPECT_KILN_ERROR(lax::bitcast_convert_type(x, kiln::float64), "bitcast_convert_type", "float32", "float64");
  EXPECT_KILN_ERROR(lax::bitcast_convert_type(b, kiln::int32), "bitcast_convert_type", "bool");
  EXPECT_KILN_ERROR(kiln::dtype_from_name("float128"), "float128");
  expect_intact();
}

TEST_F(Errors, EmptyHandle) {
  Array a;
  EXPECT_FALSE(a.valid());
  EXPECT_KILN_ERROR(a.shape(), "Array", "empty");
  EXPECT_KILN_ERROR(a.dtype(), "Array", "empty");
  EXPECT_KILN_ERROR(a.to_vector<float>(), "Array", "empty");
  EXPECT_KILN_ERROR(a.eval(), "Array", "empty");
  EXPECT_KILN_ERROR(np::add(x, a), "empty");
  EXPECT_KILN_ERROR(np::sum(a), "empty");
  EXPECT_KILN_ERROR(np::concatenate({x, a}), "empty");
  Array moved = std::move(lazy);
  EXPECT_KILN_ERROR(lazy.size(), "Array", "empty");  // NOLINT(bugprone-use-after-move)
  lazy = moved;
  expect_intact();
}

TEST_F(Errors, MaxOfAnEmptyAxis) {
  Array e = np::zeros({0, 3});
  EXPECT_KILN_ERROR(np::max(e, 0), "max", "zero-size", "(0, 3)", "axis 0");
  EXPECT_KILN_ERROR(np::min(e), "min", "zero-size", "axis 0");
  EXPECT_KILN_ERROR(np::amax(e, {0, 1}), "max", "zero-size");
  EXPECT_KILN_ERROR(np::argmax(e), "argmax", "empty");
  EXPECT_KILN_ERROR(np::argmin(np::zeros({3, 0}), 1), "argmin", "empty");
  // Axes that are not empty reduce fine, to an empty result; sum has an identity.
  EXPECT_EQ(np::max(e, 1).shape(), (kiln::Shape{0}));
  EXPECT_EQ(np::sum(e, 0).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  expect_intact();
}

TEST_F(Errors, CreationErrors) {
  EXPECT_KILN_ERROR(np::arange(0, 10, 0), "arange", "step 0", "non-zero");
  EXPECT_KILN_ERROR(np::arange(0.0, 1.0, 0.0), "arange", "step 0");
  EXPECT_KILN_ERROR(np::linspace(0, 1, -1), "linspace", "num -1", ">= 0");
  EXPECT_KILN_ERROR(np::zeros({2, -1}), "zeros", "(2, -1)");
  EXPECT_KILN_ERROR(np::array(std::vector<float>{1, 2, 3}, {2, 2}), "array", "3 values", "(2, 2)", "4");
  EXPECT_KILN_ERROR(np::full({2}, x), "broadcast_to", "(2, 3)", "(2,)");
  // Negative sizes used to make an array of shape (-2,) whose read threw std::length_error.
  EXPECT_KILN_ERROR(np::broadcast_to(np::ones({1}), {-2}), "broadcast_to", "(-2,)", "non-negative");
  EXPECT_KILN_ERROR(np::broadcast_to(x, {-1, 3}), "broadcast_to", "(-1, 3)", "non-negative");
  expect_intact();
}

TEST_F(Errors, UnknownDevice) {
  const std::string before = kiln::default_device();
  EXPECT_KILN_ERROR(kiln::get_backend("nope"), "device", "unknown device 'nope'", "cpu");
  EXPECT_KILN_ERROR(kiln::set_default_device("nope"), "unknown device 'nope'");
  EXPECT_EQ(kiln::default_device(), before);
  expect_intact();
}

TEST_F(Errors, ItemOfANonScalar) {
  EXPECT_KILN_ERROR(x.item(), "item", "(2, 3)", "size 1");
  EXPECT_KILN_ERROR(np::zeros({0}).item(), "item", "(0,)", "size 1");
  EXPECT_EQ((x[{int64_t(1), int64_t(2)}]).item(), 5.0);
  EXPECT_EQ(np::sum(i).item(), 6.0);
  expect_intact();
}

// A 0-d array scans as a 1-element vector, with or without an axis (as NumPy); axis 0
// used to read past the end of its empty shape.
TEST_F(Errors, CumulativeOfAScalarWithAnAxis) {
  EXPECT_EQ(np::cumsum(Array(2.0), 0).to_vector<float>(), std::vector<float>{2});
  EXPECT_EQ(np::cumprod(np::sum(i), -1).to_vector<int32_t>(), std::vector<int32_t>{6});
  EXPECT_KILN_ERROR(np::cumsum(Array(2.0), 1), "cumsum", "axis 1", "rank 1");
  EXPECT_KILN_ERROR(np::cumsum(x, 2), "cumsum", "axis 2", "rank 2");
  expect_intact();
}

// Errors from lazy chains: the failure comes before anything is built, so a later read
// of the partial chain's inputs sees the original data.
TEST_F(Errors, ErrorsInsideChainsLeaveEarlierStepsIntact) {
  Array t = np::transpose(lazy).reshape({6});  // a two-view tracker over an expression
  EXPECT_KILN_ERROR(np::reshape(t, {4}), "reshape", "(6,)", "(4,)");
  EXPECT_KILN_ERROR(np::pad(t, {{1, 1}}, "bogus"), "pad", "bogus");
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 7, 3, 9, 5, 11}));
  expect_intact();
}

}  // namespace

}  // namespace errors_test
