// kiln's `lax.linalg` namespace (jax-js's names): cholesky, eigh, lu, svd and
// triangularSolve, each one call into the core (src/library/linalg_factor.cpp, linalg_eigen.cpp).
/**
 * Matrix factorizations at the level of jax.lax.linalg (cholesky, lu, eigh, svd,
 * triangularSolve): the building blocks behind numpy.linalg, each one call into the core.
 * @module
 */
import { Array, run, type ArrayLike } from "./array.js";

/** Lower L with a = L L^T (upper: U with a = U^T U); the input is used as given. */
export function cholesky(a: ArrayLike, { upper = false }: { upper?: boolean } = {}): Array {
  return run("cholesky", [a], { upper, symmetrizeInput: false });
}
/** LU with partial pivoting: [lu, pivots, permutation] with P a = L U. */
export const lu = (x: ArrayLike): [Array, Array, Array] => run("lu", [x]);
/**
 * Solves `x a = b` (default, as JAX) or `a x = b` (`leftSide: true`) for triangular `a`: `lower`
 * picks the triangle, `transposeA` solves with aᵀ, `unitDiagonal` assumes ones on the diagonal.
 */
export function triangularSolve(
  a: ArrayLike,
  b: ArrayLike,
  { leftSide = false, lower = false, transposeA = false, unitDiagonal = false }: { leftSide?: boolean; lower?: boolean; transposeA?: boolean; unitDiagonal?: boolean } = {},
): Array {
  return run("triangular_solve", [a, b], { leftSide, lower, transposeA, unitDiagonal });
}
/**
 * Eigendecomposition of real symmetric matrices (Jacobi rotations): eigenvectors as columns
 * first, then eigenvalues (ascending unless `sortEigenvalues` is false).
 */
export function eigh(
  x: ArrayLike,
  { lower = true, sortEigenvalues = true, symmetrizeInput = true }: { lower?: boolean; sortEigenvalues?: boolean; symmetrizeInput?: boolean } = {},
): [Array, Array] {
  const [w, v] = run("eigh", [x], { lower, sortEigenvalues, symmetrizeInput });
  return [v, w];
}
/** Singular value decomposition [u, s, vh] (one-sided Jacobi); `computeUv: false` gives s. */
export function svd(a: ArrayLike, { computeUv = true, fullMatrices = false }: { computeUv?: boolean; fullMatrices?: boolean } = {}): [Array, Array, Array] | Array {
  if (!computeUv) return run("svdvals", [a]);
  return run("svd", [a], { fullMatrices });
}
