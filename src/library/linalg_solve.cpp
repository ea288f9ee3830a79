// kiln::linalg solvers on top of the LU factorization: solve, inv, det, slogdet (the
// algorithms of jnp.linalg: P a = L U, then two triangular solves; det from U's diagonal
// and the parity of the row swaps).
#include "library/array_args.h"
#include "library/linalg.h"
#include "library/numpy.h"

namespace kiln::linalg {

namespace np = kiln::numpy;

namespace {

void check_square(const char* op, const Array& a) {
  if (a.ndim() < 2 || a.shape(-1) != a.shape(-2))
    fail(op, "got an array of shape ", shape_str(a.shape()), ", expected square matrices [..., n, n]");
  if (!is_float(a.dtype()))
    fail(op, "got dtype ", dtype_name(a.dtype()), ", expected a float dtype (cast integer matrices first)");
}

Array diagonal(const Array& a) { return np::einsum("...ii->...i", {a}); }

// (-1)^(number of pivots that swapped a row): the determinant of P.
Array parity_sign(const Array& pivots, DType dtype) {
  int64_t k = pivots.shape(-1);
  Array swaps = np::sum((pivots != np::arange(int64_t(0), k, int64_t(1), DType::Int32)).astype(DType::Int32), -1);
  Array odd = (swaps % Array(2)) == Array(1);
  return np::where(odd, Array(-1.0), Array(1.0)).astype(dtype);
}

}  // namespace

Array solve(const Array& a, const Array& b) {
  return with_name("solve", [&]() -> Array {
    check_square("solve", a);
    int64_t n = a.shape(-1);
    bool vector = b.ndim() == 1;
    Array bm = vector ? np::expand_dims(b, -1) : b;
    if (bm.ndim() < 2 || bm.shape(-2) != n)
      fail("solve", "got a ", shape_str(a.shape()), " and b ", shape_str(b.shape()), ", expected b of shape (", n,
           ",) or (..., ", n, ", k)");
    auto [lu_, pivots, perm] = lu(a);
    (void)pivots;
    // P b: rows of b in the order of the permutation, batch axes broadcast against a's.
    Shape batch = np::broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                       Shape(bm.shape().begin(), bm.shape().end() - 2));
    Shape bs = batch, ps = batch, ls = batch;
    bs.insert(bs.end(), {n, bm.shape(-1)});
    ps.push_back(n);
    ls.insert(ls.end(), {n, n});
    Array pb = np::take_along_axis(np::broadcast_to(bm, bs), np::broadcast_to(np::expand_dims(np::broadcast_to(perm, ps), -1), bs), -2);
    Array lub = np::broadcast_to(lu_, ls);
    Array y = triangular_solve(lub, pb, true, /*lower=*/true, false, /*unit_diagonal=*/true);
    Array x = triangular_solve(lub, y, true, /*lower=*/false, false, false);
    return vector ? np::squeeze(x, -1) : x;
  });
}

Array inv(const Array& a) {
  return with_name("inv", [&]() -> Array {
    check_square("inv", a);
    int64_t n = a.shape(-1);
    return solve(a, np::broadcast_to(np::eye(n, std::nullopt, 0, a.dtype()), a.shape()));
  });
}

Array det(const Array& a) {
  return with_name("det", [&]() -> Array {
    check_square("det", a);
    if (a.shape(-1) == 0) return np::ones(Shape(a.shape().begin(), a.shape().end() - 2), a.dtype());
    auto [lu_, pivots, perm] = lu(a);
    (void)perm;
    return parity_sign(pivots, a.dtype()) * np::prod(diagonal(lu_), -1);
  });
}

std::pair<Array, Array> slogdet(const Array& a) {
  return with_name("slogdet", [&]() -> std::pair<Array, Array> {
    check_square("slogdet", a);
    Shape batch(a.shape().begin(), a.shape().end() - 2);
    if (a.shape(-1) == 0) return {np::ones(batch, a.dtype()), np::zeros(batch, a.dtype())};
    auto [lu_, pivots, perm] = lu(a);
    (void)perm;
    Array d = diagonal(lu_);
    Array sign = parity_sign(pivots, a.dtype()) * np::prod(np::sign(d), -1);
    return {sign, np::sum(np::log(np::abs(d)), -1)};
  });
}

}  // namespace kiln::linalg
