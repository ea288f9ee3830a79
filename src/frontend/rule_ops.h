// Primitive shorthands for the transformation rules (jvp, transpose, vmap): thin wrappers
// over frontend::bind() with exact shapes and dtypes, so rules never depend on numpy's promotion.
#pragma once
#include <optional>
#include <vector>

#include "frontend/primitive.h"

namespace kiln::frontend::ops {

Array unary(Prim p, const Array& a);
Array binary(Prim p, const Array& a, const Array& b);
inline Array add(const Array& a, const Array& b) { return binary(Prim::Add, a, b); }
inline Array sub(const Array& a, const Array& b) { return binary(Prim::Sub, a, b); }
inline Array mul(const Array& a, const Array& b) { return binary(Prim::Mul, a, b); }
inline Array div(const Array& a, const Array& b) { return binary(Prim::Div, a, b); }
inline Array neg(const Array& a) { return unary(Prim::Neg, a); }
Array where(const Array& c, const Array& x, const Array& y);

// Tangent arithmetic where an invalid (empty) Array is a symbolic zero.
Array add_any(const Array& a, const Array& b);
Array neg_any(const Array& a);

// A constant with x's shape, dtype and weak flag (no data; never traced).
Array full_like(const Array& x, double v);
Array zeros(const Aval& aval, const std::string& device);
// A scalar constant broadcast to shape (no data).
Array filled(const Shape& shape, DType dtype, double v, const std::string& device,
             bool weak = false);
// int32 0..n-1 along `axis` of `shape`.
Array iota(const Shape& shape, int axis, const std::string& device);

Array cast(const Array& a, DType dtype, bool weak);
Array reshape(const Array& a, const Shape& shape);
Array transpose(const Array& a, const std::vector<int>& perm);
Array expand(const Array& a, const Shape& shape);  // same rank
Array pad(const Array& a, const Ranges& widths);
Array shrink(const Array& a, const Ranges& ranges);
Array flip(const Array& a, const std::vector<int>& axes);
Array reduce(Prim p, const Array& a, const std::vector<int>& axes);
inline Array reduce_sum(const Array& a, const std::vector<int>& axes) {
  return reduce(Prim::ReduceSum, a, axes);
}
// Reduced axes kept as size 1, then broadcast back to `shape`.
Array unreduce(const Array& r, const Shape& shape, const std::vector<int>& axes);
// Moves axis `from` to position `to`.
Array moveaxis(const Array& a, int from, int to);
// Inserts a size-1 axis at `axis`, then broadcasts it to n.
Array insert_axis(const Array& a, int axis, int64_t n);
// Sums a (shape `from`) down to `to` where `to` has size-1 axes (same rank).
Array sum_to(const Array& a, const Shape& to);

}  // namespace kiln::frontend::ops
