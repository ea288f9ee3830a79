// kiln::linalg: matrix factorizations and solvers (JAX's jnp.linalg / lax.linalg, MLX's
// mlx::core::linalg names), written with numpy functions only, so they batch and differentiate.
#pragma once
#include <string>
#include <tuple>
#include <utility>

#include "frontend/array.h"

namespace kiln::linalg {

// All functions take float matrices [..., m, n] (leading axes are a batch) and use
// unrolled algorithms: one step per row or column, each a few fused kernels. Gradients are
// those of the algorithm (exact, as JAX's rules, away from pivot ties and singularities).

// Lower L with a = L L^T (upper: U with a = U^T U). symmetrize_input uses (a + a^T) / 2, as
// JAX. Not positive definite: NaNs, as JAX. Column by column (Cholesky-Banachiewicz).
Array cholesky(const Array& a, bool upper = false, bool symmetrize_input = true);
// Solves a x = b (left_side) or x a = b, with a triangular (lower or upper), using op(a) =
// a^T when transpose_a; unit_diagonal ignores a's diagonal. Forward/back substitution.
Array triangular_solve(const Array& a, const Array& b, bool left_side = false, bool lower = false,
                       bool transpose_a = false, bool unit_diagonal = false);
// LU with partial pivoting (LAPACK getrf's choice: the first largest |entry|), as
// jax.lax.linalg.lu: (lu, pivots int32 [..., min(m, n)], permutation int32 [..., m]).
std::tuple<Array, Array, Array> lu(const Array& a);
// a x = b: b is [..., n] (one vector per matrix) or [..., n, k], batch axes broadcast.
Array solve(const Array& a, const Array& b);
Array inv(const Array& a);
Array det(const Array& a);
// (sign, log|det|), from the LU factors.
std::pair<Array, Array> slogdet(const Array& a);
// (q, r) with a = q r, as jnp.linalg.qr: mode "reduced" (q [..., m, k], r [..., k, n],
// k = min(m, n)) or "complete" (q [..., m, m], r [..., m, n]). Householder reflectors with
// LAPACK's signs (linalg_qr.cpp); integer input promotes to float32.
std::pair<Array, Array> qr(const Array& a, const std::string& mode = "reduced");

// Eigen and singular value decompositions (linalg_eigen.cpp): Jacobi rotations for the
// values, JAX's jvp rules for the derivatives (so gradients are those of the exact
// decomposition; they are infinite or NaN at repeated eigenvalues or singular values, as
// JAX's). Integer input promotes to float32; float16 is computed in float32.
//
// (eigenvalues [..., n], eigenvectors [..., n, n] as columns) of symmetric matrices, as
// jnp.linalg.eigh: symmetrize_input uses (a + a^T) / 2, otherwise the lower (or upper)
// triangle is mirrored. Eigenvalues ascend unless sort_eigenvalues is false.
std::pair<Array, Array> eigh(const Array& a, bool lower = true, bool symmetrize_input = true,
                             bool sort_eigenvalues = true);
Array eigvalsh(const Array& a, bool lower = true, bool symmetrize_input = true);
// Thin SVD (u [..., m, k], s [..., k] descending, vh [..., k, n]), k = min(m, n), by
// one-sided Jacobi. full_matrices is accepted for square matrices only, where it is the same.
std::tuple<Array, Array, Array> svd(const Array& a, bool full_matrices = false);
Array svdvals(const Array& a);

}  // namespace kiln::linalg
