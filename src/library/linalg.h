// kiln::linalg: matrix factorizations and solvers (JAX's jnp.linalg / lax.linalg, MLX's
// mlx::core::linalg names), written with numpy functions only, so they batch and differentiate.
#pragma once
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

}  // namespace kiln::linalg
