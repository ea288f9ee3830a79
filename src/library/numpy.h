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
  Axes() = default;
  Axes(int axis) : axes_(std::vector<int>{axis}) {}
  Axes(std::initializer_list<int> axes) : axes_(std::vector<int>(axes)) {}
  Axes(std::vector<int> axes) : axes_(std::move(axes)) {}
  bool all() const { return !axes_.has_value(); }
  const std::vector<int>& list() const { return *axes_; }

 private:
  std::optional<std::vector<int>> axes_;
};

namespace numpy {

// ---- creation ----
Array array(const std::vector<float>& data, const Shape& shape);
Array array(const std::vector<double>& data, const Shape& shape);
Array array(const std::vector<int32_t>& data, const Shape& shape);
Array array(const std::vector<uint32_t>& data, const Shape& shape);
Array array(const std::vector<bool>& data, const Shape& shape);
// Raw little-endian C-order bytes of the given dtype (float16 as IEEE half bits).
Array array(const void* data, const Shape& shape, DType dtype);
Array asarray(const Array& a, std::optional<DType> dtype = std::nullopt);
Array zeros(const Shape& shape, DType dtype = float32);
Array ones(const Shape& shape, DType dtype = float32);
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
Array zeros_like(const Array& a, std::optional<DType> dtype = std::nullopt);
Array ones_like(const Array& a, std::optional<DType> dtype = std::nullopt);
Array full_like(const Array& a, const Array& fill_value, std::optional<DType> dtype = std::nullopt);
// arange infers int32 when every bound is a C++ integer and float32 otherwise, as
// jnp.arange does with Python ints and floats: arange(5) is int32, arange(5.0) float32.
Array arange_impl(double start, double stop, double step, bool integral, std::optional<DType> dtype);
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
               DType dtype = float32);
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0, DType dtype = float32);

// ---- elementwise (NumPy broadcasting, JAX promotion) ----
Array add(const Array& a, const Array& b);
Array subtract(const Array& a, const Array& b);
Array multiply(const Array& a, const Array& b);
Array divide(const Array& a, const Array& b);  // true division: ints promote to float32
Array true_divide(const Array& a, const Array& b);
Array floor_divide(const Array& a, const Array& b);
Array mod(const Array& a, const Array& b);  // sign of the divisor, as NumPy
Array remainder(const Array& a, const Array& b);
Array power(const Array& a, const Array& b);
Array negative(const Array& a);
Array positive(const Array& a);
Array abs(const Array& a);
Array absolute(const Array& a);
Array sign(const Array& a);
Array exp(const Array& a);
Array exp2(const Array& a);
Array expm1(const Array& a);
Array log(const Array& a);
Array log1p(const Array& a);
Array log2(const Array& a);
Array log10(const Array& a);
Array sqrt(const Array& a);
Array rsqrt(const Array& a);
Array square(const Array& a);
Array reciprocal(const Array& a);
Array sin(const Array& a);
Array cos(const Array& a);
Array tan(const Array& a);
Array arcsin(const Array& a);
Array arccos(const Array& a);
Array arctan(const Array& a);
Array arctan2(const Array& y, const Array& x);
// log(exp(a) + exp(b)) without overflow; one primitive (Prim::Logaddexp).
Array logaddexp(const Array& a, const Array& b);
Array sinh(const Array& a);
Array cosh(const Array& a);
Array tanh(const Array& a);
Array arcsinh(const Array& a);
Array arccosh(const Array& a);
Array arctanh(const Array& a);
Array erf(const Array& a);
Array floor(const Array& a);
Array ceil(const Array& a);
Array round(const Array& a);  // half to even, as NumPy
Array trunc(const Array& a);
Array maximum(const Array& a, const Array& b);
Array minimum(const Array& a, const Array& b);
Array equal(const Array& a, const Array& b);
Array not_equal(const Array& a, const Array& b);
Array less(const Array& a, const Array& b);
Array less_equal(const Array& a, const Array& b);
Array greater(const Array& a, const Array& b);
Array greater_equal(const Array& a, const Array& b);
Array logical_and(const Array& a, const Array& b);
Array logical_or(const Array& a, const Array& b);
Array logical_xor(const Array& a, const Array& b);
Array logical_not(const Array& a);
Array bitwise_and(const Array& a, const Array& b);
Array bitwise_or(const Array& a, const Array& b);
Array bitwise_xor(const Array& a, const Array& b);
Array bitwise_not(const Array& a);
Array invert(const Array& a);
Array left_shift(const Array& a, const Array& b);
Array right_shift(const Array& a, const Array& b);
Array isnan(const Array& a);
Array isinf(const Array& a);
Array isfinite(const Array& a);
Array where(const Array& cond, const Array& x, const Array& y);
Array clip(const Array& a, std::optional<Array> a_min, std::optional<Array> a_max);

// ---- reductions ----
Array sum(const Array& a, Axes axes = {}, bool keepdims = false);
Array prod(const Array& a, Axes axes = {}, bool keepdims = false);
Array max(const Array& a, Axes axes = {}, bool keepdims = false);
Array min(const Array& a, Axes axes = {}, bool keepdims = false);
Array amax(const Array& a, Axes axes = {}, bool keepdims = false);
Array amin(const Array& a, Axes axes = {}, bool keepdims = false);
Array mean(const Array& a, Axes axes = {}, bool keepdims = false);
Array var(const Array& a, Axes axes = {}, bool keepdims = false, int64_t ddof = 0);
Array std(const Array& a, Axes axes = {}, bool keepdims = false, int64_t ddof = 0);
Array any(const Array& a, Axes axes = {}, bool keepdims = false);
Array all(const Array& a, Axes axes = {}, bool keepdims = false);
// axis = nullopt flattens first, as NumPy does.
Array argmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array cumsum(const Array& a, std::optional<int> axis = std::nullopt);
Array cumprod(const Array& a, std::optional<int> axis = std::nullopt);

// ---- movement ----
Array reshape(const Array& a, const Shape& shape);  // one entry may be -1
Array ravel(const Array& a);
Array transpose(const Array& a, std::optional<std::vector<int>> axes = std::nullopt);
Array swapaxes(const Array& a, int axis1, int axis2);
Array moveaxis(const Array& a, const std::vector<int>& source, const std::vector<int>& destination);
Array moveaxis(const Array& a, int source, int destination);
Array broadcast_to(const Array& a, const Shape& shape);
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);
Shape broadcast_shapes(const Shape& a, const Shape& b);
Array expand_dims(const Array& a, Axes axes);
Array squeeze(const Array& a, Axes axes = {});
Array index(const Array& a, const std::vector<Index>& index);  // basic indexing: a[...]
// Pad widths per axis (before, after); a single pair applies to every axis.
// mode: "constant", "edge", "reflect" or "symmetric".
Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& pad_width,
          const std::string& mode = "constant", const Array& constant_value = 0);
Array concatenate(const std::vector<Array>& arrays, int axis = 0);
Array stack(const std::vector<Array>& arrays, int axis = 0);
std::vector<Array> split(const Array& a, int64_t sections, int axis = 0);
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int axis = 0);
Array flip(const Array& a, Axes axes = {});
Array repeat(const Array& a, int64_t repeats, std::optional<int> axis = std::nullopt);
Array repeat(const Array& a, const std::vector<int64_t>& repeats, std::optional<int> axis = std::nullopt);
Array tile(const Array& a, const std::vector<int64_t>& reps);
// Negative indices wrap once; indices out of range are clamped (JAX's default for gathers).
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt);
Array take_along_axis(const Array& a, const Array& indices, int axis);

// ---- indexed updates (numpy_scatter.cpp): JAX's x.at[idx] ----
// One index term: an integer, a slice, an ellipsis or an integer index array (index arrays
// broadcast together, NumPy's advanced indexing; integers beside them count as arrays).
struct AtIndex {
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
  IndexUpdate(Array x, std::vector<AtIndex> index) : x_(std::move(x)), index_(std::move(index)) {}
  Array get(const std::string& mode = "", std::optional<double> fill_value = std::nullopt) const;
  Array set(const Array& v, const std::string& mode = "") const;
  Array add(const Array& v, const std::string& mode = "") const;
  Array multiply(const Array& v, const std::string& mode = "") const;
  Array min(const Array& v, const std::string& mode = "") const;
  Array max(const Array& v, const std::string& mode = "") const;

 private:
  Array x_;
  std::vector<AtIndex> index_;
};
IndexUpdate at(const Array& x, std::vector<AtIndex> index);

// ---- sorting (numpy_sort.cpp: a bitonic network of primitives, differentiable) ----
// Stable (equal keys keep their order); NaN sorts last (first when descending), as NumPy.
// axis = nullopt flattens first.
Array sort(const Array& a, std::optional<int> axis = -1, bool descending = false);
Array argsort(const Array& a, std::optional<int> axis = -1, bool descending = false);

// ---- linear algebra ----
Array matmul(const Array& a, const Array& b);
Array dot(const Array& a, const Array& b);
Array vdot(const Array& a, const Array& b);
Array inner(const Array& a, const Array& b);
Array outer(const Array& a, const Array& b);
Array tensordot(const Array& a, const Array& b, int axes = 2);
Array tensordot(const Array& a, const Array& b,
                const std::pair<std::vector<int>, std::vector<int>>& axes);
Array einsum(const std::string& subscripts, const std::vector<Array>& operands);

}  // namespace numpy
}  // namespace kiln
