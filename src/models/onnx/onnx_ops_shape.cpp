// ONNX movement and shape operators (Reshape, Transpose, Slice, Gather, Concat, Split, Pad,
// Expand, Tile, Squeeze/Unsqueeze, Shape, Cast, Constant, Range, ...) as kiln::numpy calls.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/backend.h"
#include "library/array_args.h"
#include "library/lax.h"
#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;

Array int_vector(const std::vector<int64_t>& v) {
  std::vector<int32_t> w(v.begin(), v.end());
  return np::array(w, {int64_t(w.size())});
}

std::vector<Array> reshape(const NodeContext& c) {
  const Array& x = c.input(0);
  std::vector<int64_t> shape = c.host_ints(1);
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (int(i) >= x.ndim()) c.fail("shape entry ", i, " is 0 (copy) but the input has rank ", x.ndim());
      shape[i] = x.shape(int(i));
    }
  }
  return {np::reshape(x, shape)};
}

std::vector<Array> transpose(const NodeContext& c) {
  const Array& x = c.input(0);
  if (!c.has_attr("perm")) return {np::transpose(x)};
  std::vector<int> perm = normalize_axes(c, c.attr_ints("perm"), x.ndim());
  return {np::transpose(x, perm)};
}

std::vector<Array> flatten(const NodeContext& c) {
  const Array& x = c.input(0);
  const int64_t axis = c.attr_int("axis", 1);
  const int a = axis == x.ndim() ? x.ndim() : normalize_axis(c, axis, x.ndim());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < x.ndim(); ++i) (i < a ? outer : inner) *= x.shape(i);
  return {np::reshape(x, {outer, inner})};
}

// Squeeze/Unsqueeze take axes as an attribute before opset 13 and as an input from 13 on.
std::vector<int64_t> axes_of(const NodeContext& c, size_t input) {
  if (c.opset() < 13) return c.attr_ints("axes");
  return c.has_input(input) ? c.host_ints(input) : std::vector<int64_t>{};
}

std::vector<Array> squeeze(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::vector<int64_t> axes = axes_of(c, 1);
  if (axes.empty()) return {np::squeeze(x)};
  return {np::squeeze(x, Axes(normalize_axes(c, axes, x.ndim())))};
}

std::vector<Array> unsqueeze(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::vector<int64_t> axes = axes_of(c, 1);
  std::vector<int> norm = normalize_axes(c, axes, x.ndim() + int(axes.size()));
  std::sort(norm.begin(), norm.end());
  Array y = x;
  for (int a : norm) y = np::expand_dims(y, a);
  return {y};
}

std::vector<Array> concat(const NodeContext& c) {
  std::vector<Array> xs = c.present_inputs();
  if (xs.empty()) c.fail("needs at least one input");
  return {np::concatenate(xs, normalize_axis(c, c.attr_int("axis", 0), xs[0].ndim()))};
}

std::vector<Array> split(const NodeContext& c) {
  const Array& x = c.input(0);
  const int axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  const int64_t dim = x.shape(axis);
  const int64_t outputs = int64_t(c.node().outputs.size());
  std::vector<int64_t> sizes = c.opset() < 13 ? c.attr_ints("split") : c.has_input(1) ? c.host_ints(1) : std::vector<int64_t>{};
  if (sizes.empty()) {
    const int64_t n = c.has_attr("num_outputs") ? c.attr_int("num_outputs", outputs) : outputs;
    const int64_t each = (dim + n - 1) / n;  // opset 18: the last piece may be smaller
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * each, 0, each));
  }
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != dim)
    c.fail("split sizes add up to ", std::accumulate(sizes.begin(), sizes.end(), int64_t{0}), ", expected ", dim);
  std::vector<int64_t> cuts;
  for (size_t i = 0, at = 0; i + 1 < sizes.size(); ++i) cuts.push_back(int64_t(at += sizes[i]));
  return np::split(x, cuts, axis);
}

std::vector<Array> slice(const NodeContext& c) {
  const Array& x = c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts"), ends = c.attr_ints("ends"), axes = c.attr_ints("axes");
  } else {
    starts = c.host_ints(1), ends = c.host_ints(2);
    if (c.has_input(3)) axes = c.host_ints(3);
    if (c.has_input(4)) steps = c.host_ints(4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps have different lengths");
  std::vector<Index> index(size_t(x.ndim()), Slice{});
  for (size_t i = 0; i < starts.size(); ++i) {
    const int a = normalize_axis(c, axes[i], x.ndim());
    const int64_t dim = x.shape(a), step = steps[i];
    if (step == 0) c.fail("steps has a 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim), e = std::clamp<int64_t>(e, 0, dim);
      index[size_t(a)] = Slice{s, e, step};
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1), e = std::clamp<int64_t>(e, -1, dim - 1);
      index[size_t(a)] = Slice{s, e < 0 ? std::nullopt : std::optional<int64_t>(e), step};
    }
  }
  return {np::index(x, index)};
}

std::vector<Array> gather(const NodeContext& c) {
  const Array& x = c.input(0);
  return {np::take(x, c.input(1), normalize_axis(c, c.attr_int("axis", 0), x.ndim()))};
}

std::vector<Array> gather_elements(const NodeContext& c) {
  const Array& x = c.input(0);
  const int axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  const Array& idx = c.input(1);
  Array wrapped = np::where(idx < 0, idx + double(x.shape(axis)), idx);
  return {np::take_along_axis(x, cast_to(wrapped, int32), axis)};
}

std::vector<Array> expand(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::vector<int64_t> shape = c.host_ints(1);
  return {np::broadcast_to(x, np::broadcast_shapes(x.shape(), Shape(shape.begin(), shape.end())))};
}

std::vector<Array> tile(const NodeContext& c) { return {np::tile(c.input(0), c.host_ints(1))}; }

std::vector<Array> pad(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> pads = c.opset() < 11 ? c.attr_ints("pads") : c.host_ints(1);
  Array value = c.opset() < 11 ? Array(double(c.attr_float("value", 0.0f)))
                               : c.has_input(2) ? c.input(2) : Array(0.0);
  std::vector<int> axes;
  if (c.opset() >= 18 && c.has_input(3)) {
    axes = normalize_axes(c, c.host_ints(3), x.ndim());
  } else {
    for (int i = 0; i < x.ndim(); ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) c.fail("pads has ", pads.size(), " entries, expected ", 2 * axes.size());
  std::vector<std::pair<int64_t, int64_t>> widths(size_t(x.ndim()), {0, 0});
  for (size_t i = 0; i < axes.size(); ++i) {
    if (pads[i] < 0 || pads[i + axes.size()] < 0) c.fail("negative pads are not supported");
    widths[size_t(axes[i])] = {pads[i], pads[i + axes.size()]};
  }
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    c.fail("mode '", mode, "' is not supported (supported: constant, reflect, edge)");
  return {np::pad(x, widths, mode, cast_to(value, x.dtype()))};
}

std::vector<Array> shape(const NodeContext& c) {
  const Shape& s = c.input(0).shape();
  const int64_t r = int64_t(s.size());
  auto clamp_axis = [&](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + r : a, 0, r); };
  const int64_t start = clamp_axis(c.attr_int("start", 0)), end = clamp_axis(c.attr_int("end", r));
  return {int_vector(std::vector<int64_t>(s.begin() + start, s.begin() + std::max(start, end)))};
}

std::vector<Array> size(const NodeContext& c) {
  return {np::reshape(int_vector({c.input(0).size()}), {})};
}

std::vector<Array> cast(const NodeContext& c) {
  const int64_t to = c.attr_int("to", 0);
  return {cast_to(c.input(0), dtype_of(int32_t(to), c.where() + ": attribute 'to'"))};
}

std::vector<Array> cast_like(const NodeContext& c) { return {cast_to(c.input(0), c.input(1).dtype())}; }

std::vector<Array> constant(const NodeContext& c) {
  if (c.has_attr("value")) return {c.attr_tensor("value")};
  if (c.has_attr("value_float")) return {np::array(std::vector<float>{c.attr_float("value_float", 0)}, {})};
  if (c.has_attr("value_floats")) {
    std::vector<float> v = c.attr_floats("value_floats");
    return {np::array(v, {int64_t(v.size())})};
  }
  if (c.has_attr("value_int")) return {np::reshape(int_vector({c.attr_int("value_int", 0)}), {})};
  if (c.has_attr("value_ints")) return {int_vector(c.attr_ints("value_ints"))};
  c.fail("has none of value, value_float(s), value_int(s)");
}

std::vector<Array> constant_of_shape(const NodeContext& c) {
  const std::vector<int64_t> shape = c.host_ints(0);
  Array value = c.has_attr("value") ? c.attr_tensor("value") : np::zeros({1}, float32);
  return {np::broadcast_to(np::reshape(value, {}), Shape(shape.begin(), shape.end()))};
}

std::vector<Array> range(const NodeContext& c) {
  const double start = c.host_doubles(0).at(0), limit = c.host_doubles(1).at(0), delta = c.host_doubles(2).at(0);
  if (delta == 0) c.fail("delta is 0");
  const int64_t n = std::max<int64_t>(int64_t(std::ceil((limit - start) / delta)), 0);
  // Computed on the host in double and rounded once to the output dtype (no float64 on the
  // device: WebGPU has none).
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = start + double(i) * delta;
  return {np::detail::host_array(values, {n}, c.input(0).dtype(), default_device())};
}

// DepthToSpace / SpaceToDepth: a reshape, a transpose and a reshape (NCHW).
std::vector<Array> depth_to_space(const NodeContext& c) {
  const Array& x = c.input(0);
  if (x.ndim() != 4) c.fail("input of rank ", x.ndim(), ", expected 4 (NCHW)");
  const int64_t b = c.attr_int("blocksize", 0), N = x.shape(0), C = x.shape(1), H = x.shape(2), W = x.shape(3);
  if (b <= 0 || C % (b * b)) c.fail("blocksize ", b, " must be > 0 and its square divide C = ", C);
  const bool crd = c.attr_string("mode", "DCR") == "CRD";
  Array t = crd ? np::transpose(np::reshape(x, {N, C / (b * b), b, b, H, W}), std::vector<int>{0, 1, 4, 2, 5, 3})
                : np::transpose(np::reshape(x, {N, b, b, C / (b * b), H, W}), std::vector<int>{0, 3, 4, 1, 5, 2});
  return {np::reshape(t, {N, C / (b * b), H * b, W * b})};
}

std::vector<Array> space_to_depth(const NodeContext& c) {
  const Array& x = c.input(0);
  if (x.ndim() != 4) c.fail("input of rank ", x.ndim(), ", expected 4 (NCHW)");
  const int64_t b = c.attr_int("blocksize", 0), N = x.shape(0), C = x.shape(1), H = x.shape(2), W = x.shape(3);
  if (b <= 0 || H % b || W % b) c.fail("blocksize ", b, " must be > 0 and divide H and W");
  Array t = np::transpose(np::reshape(x, {N, C, H / b, b, W / b, b}), std::vector<int>{0, 3, 5, 1, 2, 4});
  return {np::reshape(t, {N, C * b * b, H / b, W / b})};
}

std::vector<Array> eye_like(const NodeContext& c) {
  const Array& x = c.input(0);
  if (x.ndim() != 2) c.fail("input of rank ", x.ndim(), ", expected 2");
  const DType dt = c.has_attr("dtype") ? dtype_of(int32_t(c.attr_int("dtype", 1)), c.where()) : x.dtype();
  return {np::eye(x.shape(0), x.shape(1), c.attr_int("k", 0), dt)};
}

std::vector<Array> trilu(const NodeContext& c) {
  const Array& x = c.input(0);
  if (x.ndim() < 2) c.fail("input of rank ", x.ndim(), ", expected >= 2");
  const int64_t k = c.has_input(1) ? c.host_ints(1).at(0) : 0;
  const int64_t rows = x.shape(-2), cols = x.shape(-1);
  Array i = np::reshape(np::arange(rows), {rows, 1}), j = np::reshape(np::arange(cols), {1, cols});
  Array keep = c.attr_int("upper", 1) ? (j - i >= double(k)) : (j - i <= double(k));
  return {np::where(keep, x, np::zeros_like(x))};
}

std::vector<Array> one_hot(const NodeContext& c) {
  const Array& idx = c.input(0);
  const int64_t depth = int64_t(c.host_doubles(1).at(0));
  const Array& values = c.input(2);
  const int axis = normalize_axis(c, c.attr_int("axis", -1), idx.ndim() + 1);
  Array wrapped = np::where(idx < 0, idx + double(depth), idx);
  Array hot = np::expand_dims(wrapped, axis) ==
              np::reshape(np::arange(depth), [&] {
                Shape s(size_t(idx.ndim() + 1), 1);
                s[size_t(axis)] = depth;
                return s;
              }());
  return {np::where(hot, values[1], values[0])};
}

}  // namespace

std::vector<OpRule> shape_rules() {
  return {
      {"Reshape", 5, kMax, {"allowzero"}, reshape, {1}},
      {"Transpose", 1, kMax, {"perm"}, transpose},
      {"Flatten", 1, kMax, {"axis"}, flatten},
      {"Squeeze", 1, kMax, {"axes"}, squeeze, {1}},
      {"Unsqueeze", 1, kMax, {"axes"}, unsqueeze, {1}},
      {"Concat", 4, kMax, {"axis"}, concat},
      {"Split", 2, kMax, {"axis", "split", "num_outputs"}, split, {1}},
      {"Slice", 1, kMax, {"starts", "ends", "axes"}, slice, {1, 2, 3, 4}},
      {"Gather", 1, kMax, {"axis"}, gather},
      {"GatherElements", 11, kMax, {"axis"}, gather_elements},
      {"Expand", 8, kMax, {}, expand, {1}},
      {"Tile", 6, kMax, {}, tile, {1}},
      {"Pad", 2, kMax, {"mode", "pads", "value"}, pad, {1, 3}},
      {"Shape", 1, kMax, {"start", "end"}, shape},
      {"Size", 1, kMax, {}, size},
      {"Cast", 6, kMax, {"to", "saturate"}, cast},
      {"CastLike", 15, kMax, {"saturate"}, cast_like},
      {"Constant", 9, kMax, {"value", "value_float", "value_floats", "value_int", "value_ints"}, constant},
      {"ConstantOfShape", 9, kMax, {"value"}, constant_of_shape, {0}},
      {"Range", 11, kMax, {}, range, {0, 1, 2}},
      {"DepthToSpace", 1, kMax, {"blocksize", "mode"}, depth_to_space},
      {"SpaceToDepth", 1, kMax, {"blocksize"}, space_to_depth},
      {"EyeLike", 9, kMax, {"dtype", "k"}, eye_like},
      {"Trilu", 14, kMax, {"upper"}, trilu, {1}},
      {"OneHot", 9, kMax, {"axis"}, one_hot, {1}},
  };
}

}  // namespace kiln::onnx
