// numpy reductions: sum/prod/max/min and the statistics built on them, argmax/argmin,
// any/all, and cumulative sums and products (as windowed reductions).
#include <algorithm>

#include "library/array_args.h"

namespace kiln::numpy {

using namespace detail;

namespace {

Array keep_dims(const Array& r, const Shape& in_shape, const std::vector<int>& axes) {
  Shape s = in_shape;
  for (int ax : axes) s[size_t(ax)] = 1;
  return reshape(r, s);
}

// `has_identity`: max/min of numbers have none, so empty axes are an error (as NumPy).
Array reduce(const char* op, Prim p, const Array& a, const Axes& axes, bool keepdims,
             bool has_identity = false) {
  std::vector<int> ax = normalize_axes(op, axes, a.ndim());
  if ((p == Prim::ReduceMax || p == Prim::ReduceMin) && !has_identity) {
    for (int i : ax)
      if (a.shape()[size_t(i)] == 0)
        fail(op, "zero-size array ", shape_str(a.shape()), " along axis ", i,
             " has no identity, expected a non-empty axis");
  }
  Array x = a;
  // Sums and products of bool count in int32, as in JAX.
  if ((p == Prim::ReduceSum || p == Prim::ReduceProd) && a.dtype() == DType::Bool)
    x = cast(a, DType::Int32, false);
  Params prm;
  prm.axes = ax;
  Array r = bind1(p, x, prm);
  return keepdims ? keep_dims(r, a.shape(), ax) : r;
}

int64_t count(const Array& a, const std::vector<int>& ax) {
  int64_t n = 1;
  for (int i : ax) n *= a.shape()[size_t(i)];
  return n;
}

// float16 statistics accumulate in float32, as in JAX.
Array stat_input(const Array& a) {
  if (a.dtype() == DType::Float16) return cast(a, DType::Float32, a.weak_type());
  if (!is_float(a.dtype())) return cast(a, DType::Float32, a.weak_type());
  return a;
}
DType stat_dtype(const Array& a) { return is_float(a.dtype()) ? a.dtype() : DType::Float32; }

}  // namespace

Array sum(const Array& a, Axes axes, bool keepdims) {
  return with_name("sum", [&]() -> Array { return reduce("sum", Prim::ReduceSum, a, axes, keepdims); });
}
Array prod(const Array& a, Axes axes, bool keepdims) {
  return with_name("prod", [&]() -> Array { return reduce("prod", Prim::ReduceProd, a, axes, keepdims); });
}
Array max(const Array& a, Axes axes, bool keepdims) {
  return with_name("max", [&]() -> Array { return reduce("max", Prim::ReduceMax, a, axes, keepdims); });
}
Array min(const Array& a, Axes axes, bool keepdims) {
  return with_name("min", [&]() -> Array { return reduce("min", Prim::ReduceMin, a, axes, keepdims); });
}
Array amax(const Array& a, Axes axes, bool keepdims) {
  return with_name("amax", [&]() -> Array { return max(a, axes, keepdims); });
}
Array amin(const Array& a, Axes axes, bool keepdims) {
  return with_name("amin", [&]() -> Array { return min(a, axes, keepdims); });
}

Array mean(const Array& a, Axes axes, bool keepdims) {
  return with_name("mean", [&]() -> Array {
    std::vector<int> ax = normalize_axes("mean", axes, a.ndim());
    Array x = stat_input(a);
    Array s = sum(x, Axes(ax), keepdims);
    Array m = divide(s, constant({}, x.dtype(), double(count(a, ax)), a.device()));
    return cast(m, stat_dtype(a), a.weak_type());
  });
}

Array var(const Array& a, Axes axes, bool keepdims, int64_t ddof) {
  return with_name("var", [&]() -> Array {
    std::vector<int> ax = normalize_axes("var", axes, a.ndim());
    Array x = stat_input(a);
    Array centered = subtract(x, mean(x, Axes(ax), true));
    Array ss = sum(multiply(centered, centered), Axes(ax), keepdims);
    int64_t n = count(a, ax) - ddof;
    Array v = divide(ss, constant({}, x.dtype(), double(std::max<int64_t>(n, 0)), a.device()));
    return cast(v, stat_dtype(a), a.weak_type());
  });
}

Array std(const Array& a, Axes axes, bool keepdims, int64_t ddof) {
  return with_name("std", [&]() -> Array { return sqrt(var(a, axes, keepdims, ddof)); });
}

// any/all have identities (false/true), so unlike max/min they accept empty axes.
Array any(const Array& a, Axes axes, bool keepdims) {
  return with_name("any", [&]() -> Array { return reduce("any", Prim::ReduceMax, cast(a, DType::Bool, false), axes, keepdims, true); });
}
Array all(const Array& a, Axes axes, bool keepdims) {
  return with_name("all", [&]() -> Array { return reduce("all", Prim::ReduceMin, cast(a, DType::Bool, false), axes, keepdims, true); });
}

namespace {
// The first index of the extreme value along an axis; NaN counts as extreme, as in NumPy.
Array arg_extreme(const char* op, bool is_max, const Array& a, std::optional<int> axis, bool keepdims) {
  Array x = axis ? a : ravel(a);
  int ax = normalize_axis(op, axis ? *axis : 0, std::max(x.ndim(), 1));
  if (x.ndim() == 0) fail(op, "got a 0-d array, expected at least one axis");
  int64_t n = x.shape()[size_t(ax)];
  if (n == 0) fail(op, "attempt to get ", op, " of an empty sequence");
  Array m = is_max ? max(x, ax, true) : min(x, ax, true);
  Array hit = equal(x, m);
  if (is_float(x.dtype())) hit = logical_or(hit, isnan(x));
  Array idx = iota(x.shape(), ax, x.device());
  Array cand = where(hit, idx, constant(x.shape(), DType::Int32, double(n), x.device()));
  Array r = min(cand, ax, keepdims);
  if (keepdims && !axis) r = reshape(r, Shape(size_t(a.ndim()), 1));
  return r;
}

// Inclusive scan along an axis as a windowed reduction: pad n-1 identities in front and
// reduce windows of n.
Array cumulative(const char* op, bool is_sum, const Array& a, std::optional<int> axis) {
  // A 0-d array scans as a 1-element vector, as in NumPy (JAX: for Python scalars).
  Array x = axis && a.ndim() > 0 ? a : ravel(a);
  int ax = normalize_axis(op, axis ? *axis : 0, x.ndim());
  if (x.dtype() == DType::Bool) x = cast(x, DType::Int32, false);
  int64_t n = x.shape()[size_t(ax)];
  // An empty array scans to itself (the windows below would span more than a zero-length axis).
  if (x.size() == 0) return x;
  Array moved = moveaxis(x, ax, -1);
  int nd = moved.ndim();
  Params pad;
  pad.ranges.assign(size_t(nd), {0, 0});
  pad.ranges.back() = {n - 1, 0};
  Array padded = bind1(Prim::Pad, moved, pad);
  if (!is_sum) {
    // Products pad with ones: select them where the padding mask is false.
    Array ones = constant(moved.shape(), DType::Bool, 1, x.device());
    Array mask = bind1(Prim::Pad, ones, pad);
    padded = where(mask, padded, constant(padded.shape(), x.dtype(), 1, x.device()));
  }
  Params w;
  w.window.assign(size_t(nd), 1);
  w.window.back() = n;
  w.strides.assign(size_t(nd), 1);
  w.dilation.assign(size_t(nd), 1);
  Array windows = bind1(Prim::Window, padded, w);
  std::vector<int> red;
  for (int i = nd; i < 2 * nd; i++) red.push_back(i);
  Params r;
  r.axes = red;
  Array out = bind1(is_sum ? Prim::ReduceSum : Prim::ReduceProd, windows, r);
  return moveaxis(out, -1, ax);
}
}  // namespace

Array argmax(const Array& a, std::optional<int> axis, bool keepdims) {
  return with_name("argmax", [&]() -> Array { return arg_extreme("argmax", true, a, axis, keepdims); });
}
Array argmin(const Array& a, std::optional<int> axis, bool keepdims) {
  return with_name("argmin", [&]() -> Array { return arg_extreme("argmin", false, a, axis, keepdims); });
}
Array cumsum(const Array& a, std::optional<int> axis) {
  return with_name("cumsum", [&]() -> Array { return cumulative("cumsum", true, a, axis); });
}
Array cumprod(const Array& a, std::optional<int> axis) {
  return with_name("cumprod", [&]() -> Array { return cumulative("cumprod", false, a, axis); });
}

}  // namespace kiln::numpy
