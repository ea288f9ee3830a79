// ONNX reductions (ReduceSum ... ReduceLogSumExp with axes as attribute or input), ArgMax/
// ArgMin, CumSum and TopK as kiln::numpy / lax calls.
#include <cmath>

#include "library/lax.h"
#include "library/nn.h"
#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;

Array reduce_sum(const Array& x, const Axes& a, bool k) { return np::sum(x, a, k); }
Array reduce_mean(const Array& x, const Axes& a, bool k) { return np::mean(x, a, k); }
Array reduce_max(const Array& x, const Axes& a, bool k) { return np::max(x, a, k); }
Array reduce_min(const Array& x, const Axes& a, bool k) { return np::min(x, a, k); }
Array reduce_prod(const Array& x, const Axes& a, bool k) { return np::prod(x, a, k); }
Array reduce_l1(const Array& x, const Axes& a, bool k) { return np::sum(np::abs(x), a, k); }
Array reduce_l2(const Array& x, const Axes& a, bool k) {
  return cast_to(np::sqrt(np::sum(x * x, a, k)), x.dtype());
}
Array reduce_log_sum(const Array& x, const Axes& a, bool k) { return np::log(np::sum(x, a, k)); }
Array reduce_log_sum_exp(const Array& x, const Axes& a, bool k) { return nn::logsumexp(x, a, k); }
Array reduce_sum_square(const Array& x, const Axes& a, bool k) { return np::sum(x * x, a, k); }

// `since` is the opset from which axes come as input 1 (13 for ReduceSum, 18 for the rest).
template <Array (*F)(const Array&, const Axes&, bool), int64_t Since>
std::vector<Array> reduce(const NodeContext& c) {
  const Array& x = c.input(0);
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  std::vector<int64_t> axes = c.opset() < Since ? c.attr_ints("axes") : c.has_input(1) ? c.host_ints(1) : std::vector<int64_t>{};
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0)) return {x};
  if (axes.empty()) return {F(x, Axes{}, keepdims)};
  return {F(x, Axes(normalize_axes(c, axes, x.ndim())), keepdims)};
}

template <bool IsMax>
std::vector<Array> arg_reduce(const NodeContext& c) {
  const Array& x = c.input(0);
  const int axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  auto arg = [&](const Array& a) { return IsMax ? np::argmax(a, axis, keepdims) : np::argmin(a, axis, keepdims); };
  if (!c.attr_int("select_last_index", 0)) return {arg(x)};
  // The last of equal extremes: search the flipped axis and map the index back.
  return {double(x.shape(axis) - 1) - arg(np::flip(x, axis))};
}

std::vector<Array> cumsum(const NodeContext& c) {
  const Array& x = c.input(0);
  const int axis = normalize_axis(c, c.host_ints(1).at(0), x.ndim());
  const bool reverse = c.attr_int("reverse", 0) != 0, exclusive = c.attr_int("exclusive", 0) != 0;
  Array a = reverse ? np::flip(x, axis) : x;
  Array s = np::cumsum(a, axis);
  if (exclusive) s = s - a;
  return {reverse ? np::flip(s, axis) : s};
}

std::vector<Array> top_k(const NodeContext& c) {
  const Array& x = c.input(0);
  const int axis = normalize_axis(c, c.attr_int("axis", -1), x.ndim());
  const int64_t k = c.opset() < 10 ? c.attr_int("k", 0) : c.host_ints(1).at(0);
  if (k < 0 || k > x.shape(axis)) c.fail("k ", k, " is outside 0..", x.shape(axis));
  if (!c.attr_int("sorted", 1)) c.fail("sorted 0 is not supported");
  const bool largest = c.attr_int("largest", 1) != 0;
  Array moved = np::moveaxis(largest ? x : -x, axis, -1);
  auto [values, indices] = lax::top_k(moved, k, -1);
  if (!largest) values = -values;
  return {np::moveaxis(values, -1, axis), np::moveaxis(indices, -1, axis)};
}

}  // namespace

std::vector<OpRule> reduce_rules() {
  const std::vector<const char*> attrs = {"axes", "keepdims", "noop_with_empty_axes"};
  return {
      {"ReduceSum", 1, kMax, attrs, reduce<reduce_sum, 13>, {1}},
      {"ReduceMean", 1, kMax, attrs, reduce<reduce_mean, 18>, {1}},
      {"ReduceMax", 1, kMax, attrs, reduce<reduce_max, 18>, {1}},
      {"ReduceMin", 1, kMax, attrs, reduce<reduce_min, 18>, {1}},
      {"ReduceProd", 1, kMax, attrs, reduce<reduce_prod, 18>, {1}},
      {"ReduceL1", 1, kMax, attrs, reduce<reduce_l1, 18>, {1}},
      {"ReduceL2", 1, kMax, attrs, reduce<reduce_l2, 18>, {1}},
      {"ReduceLogSum", 1, kMax, attrs, reduce<reduce_log_sum, 18>, {1}},
      {"ReduceLogSumExp", 1, kMax, attrs, reduce<reduce_log_sum_exp, 18>, {1}},
      {"ReduceSumSquare", 1, kMax, attrs, reduce<reduce_sum_square, 18>, {1}},
      {"ArgMax", 1, kMax, {"axis", "keepdims", "select_last_index"}, arg_reduce<true>},
      {"ArgMin", 1, kMax, {"axis", "keepdims", "select_last_index"}, arg_reduce<false>},
      {"CumSum", 11, kMax, {"exclusive", "reverse"}, cumsum, {1}},
      {"TopK", 1, kMax, {"axis", "k", "largest", "sorted"}, top_k, {1}},
  };
}

}  // namespace kiln::onnx
