// kiln::numpy: NumPy-style functions over kiln::Array, written in terms of primitives.
// Names and semantics follow jax.numpy; keyword arguments become trailing parameters.
#pragma once
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "frontend/array.h"

namespace kiln {

// A set of axes: one axis, a list, or (default) all axes.
class Axes {
 public:
  Axes() = default;  // all axes
  Axes(int axis) : axes_(std::vector<int>{axis}) {}  // one axis (negative from the end)
  // A list of axes.
  Axes(std::initializer_list<int> axes) : axes_(std::vector<int>(axes)) {}
  Axes(std::vector<int> axes) : axes_(std::move(axes)) {}
  bool all() const { return !axes_.has_value(); }  // no axes given: every axis
  const std::vector<int>& list() const { return *axes_; }  // the axes given (not when all())

 private:
  std::optional<std::vector<int>> axes_;
};

namespace numpy {

// ---- creation ----
// An array holding `data` (C order) with `shape`, its dtype the element type's (bool for
// std::vector<bool>); kiln::Error when the sizes differ. Example:
//   Array m = numpy::array(std::vector<float>{1, 2, 3, 4}, {2, 2});
Array array(const std::vector<float>& data, const Shape& shape);
Array array(const std::vector<double>& data, const Shape& shape);
Array array(const std::vector<int32_t>& data, const Shape& shape);
Array array(const std::vector<uint32_t>& data, const Shape& shape);
Array array(const std::vector<bool>& data, const Shape& shape);
// Raw little-endian C-order bytes of the given dtype (float16 as IEEE half bits).
Array array(const void* data, const Shape& shape, DType dtype);
// `a` itself, converted to dtype when given.
Array asarray(const Array& a, std::optional<DType> dtype = std::nullopt);
Array zeros(const Shape& shape, DType dtype = float32);  // zeros of `shape`
Array ones(const Shape& shape, DType dtype = float32);  // ones of `shape`
// `fill_value` broadcast to `shape` (its dtype by default).
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
// Zeros with a's shape (and dtype unless given).
Array zeros_like(const Array& a, std::optional<DType> dtype = std::nullopt);
// Ones with a's shape (and dtype unless given).
Array ones_like(const Array& a, std::optional<DType> dtype = std::nullopt);
// `fill_value` with a's shape (and dtype unless given).
Array full_like(const Array& a, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
// The implementation behind arange (call arange).
Array arange_impl(double start, double stop, double step, bool integral, std::optional<DType> dtype);
// Evenly spaced values in [start, stop) by step. arange infers int32 when every bound is a C++
// integer and float32 otherwise, as jnp.arange does with Python ints and floats: arange(5) is
// int32, arange(5.0) float32.
template <typename T>
  requires std::is_arithmetic_v<T>
Array arange(T stop, std::optional<DType> dtype = std::nullopt) {
  return arange_impl(0, double(stop), 1, std::is_integral_v<T>, dtype);
}
template <typename A, typename B, typename C = int>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C>)
Array arange(A start, B stop, C step = 1, std::optional<DType> dtype = std::nullopt) {
  constexpr bool integral = std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>;
  return arange_impl(double(start), double(stop), double(step), integral, dtype);
}
Array linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               DType dtype = float32);  // num values from start to stop (included unless !endpoint)
// An n x m (m defaults to n) array with ones on diagonal k.
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0, DType dtype = float32);

// ---- elementwise (NumPy broadcasting, JAX promotion) ----
Array add(const Array& a, const Array& b);  // a + b
Array subtract(const Array& a, const Array& b);  // a - b
Array multiply(const Array& a, const Array& b);  // a * b
Array divide(const Array& a, const Array& b);  // true division: ints promote to float32
Array true_divide(const Array& a, const Array& b);  // a / b, as divide
Array floor_divide(const Array& a, const Array& b);  // floor(a / b)
Array mod(const Array& a, const Array& b);  // sign of the divisor, as NumPy
Array remainder(const Array& a, const Array& b);  // a mod b, as mod
Array power(const Array& a, const Array& b);  // a ** b
Array negative(const Array& a);  // -a
Array positive(const Array& a);  // +a (a copy)
Array abs(const Array& a);  // |a|
Array absolute(const Array& a);  // |a|, as abs
Array sign(const Array& a);  // -1, 0 or 1 (NaN stays NaN)
Array exp(const Array& a);  // e^a
Array exp2(const Array& a);  // 2^a
Array expm1(const Array& a);  // e^a - 1, accurate near 0
Array log(const Array& a);  // natural logarithm
Array log1p(const Array& a);  // log(1 + a), accurate near 0
Array log2(const Array& a);  // base-2 logarithm
Array log10(const Array& a);  // base-10 logarithm
Array sqrt(const Array& a);  // square root (NaN below 0)
Array rsqrt(const Array& a);  // 1 / sqrt(a)
Array square(const Array& a);  // a * a
Array reciprocal(const Array& a);  // 1 / a
Array sin(const Array& a);  // sine (radians)
Array cos(const Array& a);  // cosine (radians)
Array tan(const Array& a);  // tangent (radians)
Array arcsin(const Array& a);  // inverse sine
Array arccos(const Array& a);  // inverse cosine
Array arctan(const Array& a);  // inverse tangent
Array arctan2(const Array& y, const Array& x);  // the angle of the point (x, y), in [-pi, pi]
// log(exp(a) + exp(b)) without overflow; one primitive (Prim::Logaddexp).
Array logaddexp(const Array& a, const Array& b);
Array sinh(const Array& a);  // hyperbolic sine
Array cosh(const Array& a);  // hyperbolic cosine
Array tanh(const Array& a);  // hyperbolic tangent
Array arcsinh(const Array& a);  // inverse hyperbolic sine
Array arccosh(const Array& a);  // inverse hyperbolic cosine
Array arctanh(const Array& a);  // inverse hyperbolic tangent
Array erf(const Array& a);  // the error function
Array floor(const Array& a);  // largest integer <= a
Array ceil(const Array& a);  // smallest integer >= a
Array round(const Array& a);  // half to even, as NumPy
Array trunc(const Array& a);  // rounds toward zero
Array maximum(const Array& a, const Array& b);  // elementwise max (NaN propagates)
Array minimum(const Array& a, const Array& b);  // elementwise min (NaN propagates)
Array equal(const Array& a, const Array& b);  // a == b (bool)
Array not_equal(const Array& a, const Array& b);  // a != b (bool)
Array less(const Array& a, const Array& b);  // a < b (bool)
Array less_equal(const Array& a, const Array& b);  // a <= b (bool)
Array greater(const Array& a, const Array& b);  // a > b (bool)
Array greater_equal(const Array& a, const Array& b);  // a >= b (bool)
Array logical_and(const Array& a, const Array& b);  // a && b (nonzero is true)
Array logical_or(const Array& a, const Array& b);  // a || b
Array logical_xor(const Array& a, const Array& b);  // a != b as bools
Array logical_not(const Array& a);  // !a
Array bitwise_and(const Array& a, const Array& b);  // a & b (ints, bools)
Array bitwise_or(const Array& a, const Array& b);  // a | b
Array bitwise_xor(const Array& a, const Array& b);  // a ^ b
Array bitwise_not(const Array& a);  // ~a (ints), !a (bools)
Array invert(const Array& a);  // ~a, as bitwise_not
Array left_shift(const Array& a, const Array& b);  // a << b
Array right_shift(const Array& a, const Array& b);  // a >> b (arithmetic for int32)
Array isnan(const Array& a);  // a is NaN (bool)
Array isinf(const Array& a);  // a is +-inf (bool)
Array isfinite(const Array& a);  // a is neither NaN nor inf
// `x` where cond, else `y` (all three broadcast).
Array where(const Array& cond, const Array& x, const Array& y);
// `a` limited to [a_min, a_max]; either may be nullopt.
Array clip(const Array& a, std::optional<Array> a_min, std::optional<Array> a_max);

// ---- reductions ----
Array sum(const Array& a, Axes axes = {}, bool keepdims = false);  // sum over axes (all by default)
Array prod(const Array& a, Axes axes = {}, bool keepdims = false);  // product over axes
// Maximum over axes (NaN propagates).
Array max(const Array& a, Axes axes = {}, bool keepdims = false);
// Minimum over axes (NaN propagates).
Array min(const Array& a, Axes axes = {}, bool keepdims = false);
Array amax(const Array& a, Axes axes = {}, bool keepdims = false);  // maximum over axes, as max
Array amin(const Array& a, Axes axes = {}, bool keepdims = false);  // minimum over axes, as min
// Mean over axes (ints give float32).
Array mean(const Array& a, Axes axes = {}, bool keepdims = false);
// Variance over axes, ddof: delta degrees of freedom.
Array var(const Array& a, Axes axes = {}, bool keepdims = false, int64_t ddof = 0);
// sqrt(var(...)): the standard deviation over axes.
Array std(const Array& a, Axes axes = {}, bool keepdims = false, int64_t ddof = 0);
Array any(const Array& a, Axes axes = {}, bool keepdims = false);  // any element nonzero (bool)
Array all(const Array& a, Axes axes = {}, bool keepdims = false);  // every element nonzero (bool)
// axis = nullopt flattens first, as NumPy does.
Array argmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array cumsum(const Array& a, std::optional<int> axis = std::nullopt);  // running sum along axis
// Running product along axis.
Array cumprod(const Array& a, std::optional<int> axis = std::nullopt);

// ---- movement ----
Array reshape(const Array& a, const Shape& shape);  // one entry may be -1
Array ravel(const Array& a);  // flattened, C order
// Axes permuted (default: reversed).
Array transpose(const Array& a, std::optional<std::vector<int>> axes = std::nullopt);
Array swapaxes(const Array& a, int axis1, int axis2);  // two axes swapped
// Source axes moved to destination.
Array moveaxis(const Array& a, const std::vector<int>& source, const std::vector<int>& destination);
Array moveaxis(const Array& a, int source, int destination);  // source axes moved to destination
Array broadcast_to(const Array& a, const Shape& shape);  // a broadcast to shape (a view)
// All broadcast to one shape.
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);
Shape broadcast_shapes(const Shape& a, const Shape& b);  // the shape a and b broadcast to
Array expand_dims(const Array& a, Axes axes);  // new axes of size 1 at axes
Array squeeze(const Array& a, Axes axes = {});  // without axes of size 1 (only those named)
Array index(const Array& a, const std::vector<Index>& index);  // basic indexing: a[...]
// Pad widths per axis (before, after); a single pair applies to every axis.
// mode: "constant", "edge", "reflect" or "symmetric".
Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& pad_width,
          const std::string& mode = "constant", const Array& constant_value = 0);
Array concatenate(const std::vector<Array>& arrays, int axis = 0);  // joined along an existing axis
Array stack(const std::vector<Array>& arrays, int axis = 0);  // joined along a new axis
// Equal sections, or split at indices.
std::vector<Array> split(const Array& a, int64_t sections, int axis = 0);
// Equal sections, or split at indices.
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int axis = 0);
Array flip(const Array& a, Axes axes = {});  // reversed along axes (all by default)
// Each element repeated (flattened when axis is nullopt).
Array repeat(const Array& a, int64_t repeats, std::optional<int> axis = std::nullopt);
// Each element repeated (flattened when axis is nullopt).
Array repeat(const Array& a, const std::vector<int64_t>& repeats, std::optional<int> axis = std::nullopt);
Array tile(const Array& a, const std::vector<int64_t>& reps);  // a repeated reps times per axis
// Negative indices wrap once; indices out of range are clamped (JAX's default for gathers).
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt);
Array take_along_axis(const Array& a, const Array& indices, int axis);

// ---- indexed updates (numpy_scatter.cpp): JAX's x.at[idx] ----
// One index term: an integer, a slice, an ellipsis or an integer index array (index arrays
// broadcast together, NumPy's advanced indexing; integers beside them count as arrays).
struct AtIndex {
  // Each kind of term converts implicitly, so an index is written {0, Slice{}, idx}.
  AtIndex(int64_t i) : term(i) {}
  AtIndex(int i) : term(int64_t(i)) {}
  AtIndex(Slice s) : term(s) {}
  AtIndex(Ellipsis e) : term(e) {}
  AtIndex(Array a) : term(std::move(a)) {}
  std::variant<int64_t, Slice, Ellipsis, Array> term;
};
// at(x, idx).set(v) etc. return x with x[idx] replaced, accumulated (duplicates all apply)
// or read. Negative indices wrap once. mode: "promise_in_bounds" (default: reads clamp,
// updates drop out-of-bounds indices), "clip", "drop" or "fill" (reads give fill_value:
// NaN, the smallest int32, the largest uint32, or true, as JAX).
class IndexUpdate {
 public:
  // x and its index, as at(x, index) makes them.
  IndexUpdate(Array x, std::vector<AtIndex> index) : x_(std::move(x)), index_(std::move(index)) {}
  // x[idx], with the mode's out-of-bounds rule.
  Array get(const std::string& mode = "", std::optional<double> fill_value = std::nullopt) const;
  // x with x[idx] = v (v broadcast to x[idx]'s shape; the last duplicate index wins).
  Array set(const Array& v, const std::string& mode = "") const;
  // x with v added, multiplied, or min/max-combined at idx (duplicates accumulate).
  Array add(const Array& v, const std::string& mode = "") const;
  Array multiply(const Array& v, const std::string& mode = "") const;
  Array min(const Array& v, const std::string& mode = "") const;
  Array max(const Array& v, const std::string& mode = "") const;

 private:
  Array x_;
  std::vector<AtIndex> index_;
};
// JAX's x.at[index]: the updates and reads above.
IndexUpdate at(const Array& x, std::vector<AtIndex> index);

// ---- sorting (numpy_sort.cpp: a bitonic network of primitives, differentiable) ----
// Stable (equal keys keep their order); NaN sorts last (first when descending), as NumPy.
// axis = nullopt flattens first.
Array sort(const Array& a, std::optional<int> axis = -1, bool descending = false);
// Indices that sort a (int32), stably.
Array argsort(const Array& a, std::optional<int> axis = -1, bool descending = false);

// ---- linear algebra ----
// Matrix product; 1-d operands promoted, batch axes broadcast.
Array matmul(const Array& a, const Array& b);
// NumPy's dot: inner, matrix or sum-product over a's last and b's second-to-last axis.
Array dot(const Array& a, const Array& b);
Array vdot(const Array& a, const Array& b);  // inner product of the flattened arrays
Array inner(const Array& a, const Array& b);  // sum-product over the last axes
Array outer(const Array& a, const Array& b);  // outer product of the flattened arrays
// Contraction over the last `axes` of a and first of b, or the listed axes.
Array tensordot(const Array& a, const Array& b, int axes = 2);
// Contraction over the last `axes` of a and first of b, or the listed axes.
Array tensordot(const Array& a, const Array& b,
                const std::pair<std::vector<int>, std::vector<int>>& axes);
// Einstein summation: einsum("ij,jk->ik", {a, b}).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands);

}  // namespace numpy
}  // namespace kiln
