// kiln's `lax.linalg` namespace (jax-js's names): cholesky, lu and triangularSolve, each
// one call into the core (src/library/linalg_factor.cpp).
import { Array, run, type ArrayLike } from "./array.js";

/** Lower L with a = L L^T (upper: U with a = U^T U); the input is used as given. */
export function cholesky(a: ArrayLike, { upper = false }: { upper?: boolean } = {}): Array {
  return run("cholesky", [a], { upper, symmetrizeInput: false });
}
/** LU with partial pivoting: [lu, pivots, permutation] with P a = L U. */
export const lu = (x: ArrayLike): [Array, Array, Array] => run("lu", [x]);
export function triangularSolve(
  a: ArrayLike,
  b: ArrayLike,
  { leftSide = false, lower = false, transposeA = false, unitDiagonal = false }: { leftSide?: boolean; lower?: boolean; transposeA?: boolean; unitDiagonal?: boolean } = {},
): Array {
  return run("triangular_solve", [a, b], { leftSide, lower, transposeA, unitDiagonal });
}
