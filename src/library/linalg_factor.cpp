// kiln::linalg factorizations (cholesky, lu) and triangular_solve: unrolled row/column
// algorithms over numpy functions, so they batch, differentiate and jit like any program.
//
// Each step updates the whole matrix through masks (`where`, one-hot outer products) rather
// than writing a slice, because kiln arrays are immutable values: step j costs O(n^2)
// elementwise work plus one matrix-vector product, O(n^3) in all, like LAPACK's unblocked
// loops. Each step is realized (eval), so an n-step loop is O(n) kernels, not one
// expression that doubles per step; under tracing eval is a no-op and jit fuses as usual.
#include "library/array_args.h"
#include "library/linalg.h"
#include "library/numpy.h"

namespace kiln::linalg {

namespace np = kiln::numpy;

namespace {

Array col(const Array& a, int64_t j) { return np::index(a, {ellipsis, Slice{}, j}); }
Array row(const Array& a, int64_t i) { return np::index(a, {ellipsis, i, Slice{}}); }
Array last_to_col(const Array& v) { return np::expand_dims(v, -1); }  // [.., n] -> [.., n, 1]
Array last_to_row(const Array& v) { return np::expand_dims(v, -2); }  // [.., n] -> [.., 1, n]
Array iota(int64_t n) { return np::arange(int64_t(0), n, int64_t(1), DType::Int32); }

void check_matrix(const char* op, const Array& a, bool square) {
  if (a.ndim() < 2) fail(op, "got an array of shape ", shape_str(a.shape()), ", expected a matrix [..., m, n]");
  if (square && a.shape(-1) != a.shape(-2))
    fail(op, "got an array of shape ", shape_str(a.shape()), ", expected square matrices [..., n, n]");
  if (!is_float(a.dtype()))
    fail(op, "got dtype ", dtype_name(a.dtype()), ", expected a float dtype (cast integer matrices first)");
}

Array swap_last(const Array& a) { return np::swapaxes(a, -1, -2); }

// Forward substitution for lower-triangular m (only its strictly lower part and, unless
// unit, its diagonal are read): x with m x = b, b [.., n, k].
Array forward_substitute(const Array& m, const Array& b, bool unit) {
  int64_t n = m.shape(-1);
  Shape out = np::broadcast_shapes(Shape(m.shape().begin(), m.shape().end() - 2), Shape(b.shape().begin(), b.shape().end() - 2));
  out.push_back(n);
  out.push_back(b.shape(-1));
  Array x = np::zeros(out, promote({m.dtype(), false}, {b.dtype(), false}).dtype);
  Array r = iota(n);
  for (int64_t i = 0; i < n; i++) {
    // Rows >= i of x are still zero, so row(m, i) @ x sums over the columns before i only.
    Array rhs = row(b, i) - np::matmul(last_to_row(row(m, i)), x).reshape([&] {
      Shape s = out;
      s.erase(s.end() - 2);
      return s;
    }());
    Array xi = unit ? rhs : rhs / last_to_col(np::index(m, {ellipsis, i, i}));
    x = x + last_to_col((r == Array(int(i))).astype(x.dtype())) * last_to_row(xi);
    x.eval();
  }
  return x;
}

}  // namespace

Array cholesky(const Array& a, bool upper, bool symmetrize_input) {
  return with_name("cholesky", [&]() -> Array {
    check_matrix("cholesky", a, true);
    int64_t n = a.shape(-1);
    Array s = symmetrize_input ? (a + swap_last(a)) / Array(2.0) : a;
    Array l = np::zeros_like(s);
    Array r = iota(n);
    for (int64_t j = 0; j < n; j++) {
      // Columns >= j of l are zero, so l @ l[j, :] sums over k < j: s[:, j] - sum l[:, k] l[j, k].
      Array v = col(s, j) - col(np::matmul(l, last_to_col(row(l, j))), 0);
      Array d = np::sqrt(np::index(v, {ellipsis, j}));
      Array below = r > Array(int(j));
      Array de = np::expand_dims(d, -1);
      Array cj = np::where(r == Array(int(j)), de, np::where(below, v / de, Array(0.0)));
      l = l + last_to_col(cj) * last_to_row((r == Array(int(j))).astype(l.dtype()));
      l.eval();
    }
    return upper ? swap_last(l) : l;
  });
}

Array triangular_solve(const Array& a, const Array& b, bool left_side, bool lower, bool transpose_a,
                       bool unit_diagonal) {
  return with_name("triangular_solve", [&]() -> Array {
    check_matrix("triangular_solve", a, true);
    if (b.ndim() < 2) fail("triangular_solve", "got b of shape ", shape_str(b.shape()), ", expected a matrix [..., m, k]");
    int64_t n = a.shape(-1);
    if (!left_side) {
      // x a = b  <=>  a^T x^T = b^T.
      if (b.shape(-1) != n)
        fail("triangular_solve", "got a ", shape_str(a.shape()), " and b ", shape_str(b.shape()),
             ", expected b's last axis to be ", n, " (left_side=false)");
      return swap_last(triangular_solve(a, swap_last(b), true, lower, !transpose_a, unit_diagonal));
    }
    if (b.shape(-2) != n)
      fail("triangular_solve", "got a ", shape_str(a.shape()), " and b ", shape_str(b.shape()),
           ", expected b's second-to-last axis to be ", n);
    Array m = transpose_a ? swap_last(a) : a;
    bool is_lower = transpose_a ? !lower : lower;
    if (is_lower) return forward_substitute(m, b, unit_diagonal);
    // Upper: reversing rows and columns makes it lower (views only).
    Array flipped = np::flip(m, {-2, -1});
    return np::flip(forward_substitute(flipped, np::flip(b, -2), unit_diagonal), -2);
  });
}

std::tuple<Array, Array, Array> lu(const Array& a) {
  return with_name("lu", [&]() -> std::tuple<Array, Array, Array> {
    check_matrix("lu", a, false);
    int64_t m = a.shape(-2), n = a.shape(-1), kmax = std::min(m, n);
    Shape batch(a.shape().begin(), a.shape().end() - 2);
    Array r = iota(m), c = iota(n);
    Shape perm_shape = batch;
    perm_shape.push_back(m);
    Array x = a;
    Array perm = np::broadcast_to(r, perm_shape);
    std::vector<Array> pivots;
    for (int64_t k = 0; k < kmax; k++) {
      Array kk = Array(int(k));
      // The pivot: the first largest |entry| of column k at or below row k (LAPACK's idamax).
      Array cand = np::where(r >= kk, np::abs(col(x, k)), Array(-1.0));
      Array p = np::argmax(cand, -1).astype(DType::Int32);  // [..]
      Array pe = np::expand_dims(p, -1);
      Array sel = np::where(r == kk, pe, np::where(r == pe, kk, r));  // row swap k <-> p
      Shape full = x.shape();
      x = np::take_along_axis(x, np::broadcast_to(last_to_col(sel), full), -2);
      perm = np::take_along_axis(perm, sel, -1);
      pivots.push_back(p);
      // Eliminate below the pivot. A zero pivot (its whole subcolumn is zero) leaves the
      // column as is, as getrf does; the safe divisor keeps NaNs out of gradients.
      Array piv = np::index(x, {ellipsis, k, k});
      Array safe = np::where(piv == Array(0.0), Array(1.0), piv);
      Array l = np::where(r > kk, col(x, k) / np::expand_dims(safe, -1), Array(0.0));  // [.., m]
      Array rowk = np::where(c > kk, row(x, k), Array(0.0));                            // [.., n]
      x = x - last_to_col(l) * last_to_row(rowk);
      Array below_k = np::logical_and(last_to_col(r > kk), last_to_row(c == kk));
      x = np::where(below_k, np::broadcast_to(last_to_col(l), full), x);
      x.eval();
      perm.eval();
    }
    Shape piv_shape = batch;
    piv_shape.push_back(0);
    Array piv_all = kmax == 0 ? np::zeros(piv_shape, DType::Int32) : np::stack(pivots, -1);
    return {x, piv_all, perm};
  });
}

}  // namespace kiln::linalg
