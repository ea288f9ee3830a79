// kiln::linalg::qr: Householder QR with LAPACK geqrf's reflectors (so the signs of R's
// diagonal are JAX's), unrolled over the columns with masks like linalg_factor.cpp.
//
// Step j reflects rows j.. of column j onto beta e_j, beta = -sign(alpha) ||x|| (alpha the
// diagonal entry, sign(0) = +1), with v = (0.., 1, x_below / (alpha - beta)) and
// tau = (beta - alpha) / beta; a column already zero below the diagonal gets tau = 0 (no
// reflection), as dlarfg. A <- A - tau v (v^T A) and Q <- Q - tau (Q v) v^T. Gradients are
// those of the algorithm, which for full-rank input are the derivative of the unique QR
// with this sign convention (JAX's qr jvp rule).
#include "library/array_args.h"
#include "library/linalg.h"
#include "library/numpy.h"

namespace kiln::linalg {

namespace np = kiln::numpy;

std::pair<Array, Array> qr(const Array& a_in, const std::string& mode) {
  return with_name("qr", [&]() -> std::pair<Array, Array> {
    if (mode != "reduced" && mode != "complete")
      fail("qr", "got mode '", mode, "', expected 'reduced' or 'complete'");
    if (a_in.ndim() < 2) fail("qr", "got an array of shape ", shape_str(a_in.shape()), ", expected a matrix [..., m, n]");
    Array a = is_float(a_in.dtype()) ? a_in : np::asarray(a_in, DType::Float32);
    const int64_t m = a.shape(-2), n = a.shape(-1), k = std::min(m, n);
    const DType dt = a.dtype();
    Shape batch(a.shape().begin(), a.shape().end() - 2);
    Shape qs = batch;
    qs.push_back(m);
    qs.push_back(m);
    Array q = np::broadcast_to(np::eye(m, std::nullopt, 0, dt), qs);
    Array rows = np::arange(int64_t(0), m, int64_t(1), DType::Int32);  // [m]
    for (int64_t j = 0; j < k; j++) {
      Array x = np::index(a, {ellipsis, Slice{}, j});             // [.., m]
      Array below = np::greater(rows, Array(int(j)));             // rows > j
      Array alpha = np::index(a, {ellipsis, j, j});               // [..]
      Array sub = np::sum(np::where(below, np::square(x), Array(0.0)), -1);
      Array norm = np::sqrt(np::square(alpha) + sub);
      Array beta = np::where(np::greater_equal(alpha, Array(0.0)), -norm, norm);
      Array reflect = np::greater(sub, Array(0.0));               // else tau = 0, as dlarfg
      Array safe_beta = np::where(reflect, beta, Array(1.0));
      Array denom = np::where(reflect, alpha - beta, Array(1.0));
      Array tau = np::where(reflect, (beta - alpha) / safe_beta, Array(0.0));
      Array v = np::where(below, x / np::expand_dims(denom, -1),
                          np::where(np::equal(rows, Array(int(j))), Array(1.0), Array(0.0)));  // [.., m]
      Array vc = np::expand_dims(v, -1), vr = np::expand_dims(v, -2);   // [.., m, 1], [.., 1, m]
      Array t = np::expand_dims(np::expand_dims(tau, -1), -1);
      a = a - t * np::matmul(vc, np::matmul(vr, a));
      q = q - t * np::matmul(np::matmul(q, vc), vr);
      a.eval();
      q.eval();
    }
    // R: the upper triangle (the reflections leave roundoff below the diagonal).
    Array r = np::where(np::less_equal(np::expand_dims(rows, -1), np::arange(int64_t(0), n, int64_t(1), DType::Int32)),
                        a, Array(0.0));
    if (mode == "reduced" && m > n)
      return {np::index(q, {ellipsis, Slice{}, Slice{0, k, std::nullopt}}), np::index(r, {ellipsis, Slice{0, k, std::nullopt}, Slice{}})};
    return {q, r};
  });
}

}  // namespace kiln::linalg
