// kiln's `numpy.linalg` namespace (jax-js's names): factorizations and solvers call the
// core (src/library/linalg_*.cpp); norms, powers and lstsq compose them as jax-js does.
/**
 * Linear algebra (jax.numpy.linalg): determinants, inverses, solvers, factorizations and norms,
 * batched over leading axes. Functions consume their Array arguments.
 * @module
 */
import { Array, asArray, run, type ArrayLike, named } from "./array.js";
import { triangularSolve } from "./lax_linalg.js";
import { cross as numpyCross } from "./numpy_forms.js";
import * as np from "./numpy_ops.js";

export { matmul, matrixTranspose, outer, tensordot, diagonal } from "./numpy_ops.js";
export { trace, vecdot } from "./numpy_composite.js";

function cholesky_(a: ArrayLike, { upper = false, symmetrizeInput = true }: { upper?: boolean; symmetrizeInput?: boolean } = {}): Array {
  return run("cholesky", [a], { upper, symmetrizeInput });
}
/**
 * The determinant of square matrices (batched over leading axes).
 *
 * @throws Error when the last two axes are not square.
 */
export const det = named("det", (a: ArrayLike): Array => run("det", [a]));
/**
 * The inverse of square matrices (batched); singular matrices give inf/NaN, as JAX.
 *
 * @throws Error when the last two axes are not square.
 */
export const inv = named("inv", (a: ArrayLike): Array => run("inv", [a]));
/**
 * The solution x of `a x = b` for square `a` (batched).
 *
 * @throws Error on mismatched shapes.
 * @example
 * ```ts
 * const x = np.linalg.solve(np.array([[2, 0], [0, 4]]), np.array([2, 4])); // [1, 1]
 * ```
 */
export const solve = named("solve", (a: ArrayLike, b: ArrayLike): Array => run("solve", [a, b]));
/** [sign, log|det|] of square matrices (batched). */
export const slogdet = named("slogdet", (a: ArrayLike): [Array, Array] => run("slogdet", [a]));
/** [q, r] with a = q r, as jnp.linalg.qr: mode "reduced" (default) or "complete"; differentiable. */
export const qr = named("qr", (a: ArrayLike, mode: "reduced" | "complete" = "reduced"): [Array, Array] => run("qr", [a], { mode }));

type EighOpts = { symmetrizeInput?: boolean };
type SvdOpts = { fullMatrices?: boolean; computeUv?: boolean };

/** Eigenvalues (ascending) and eigenvectors (columns) of real symmetric matrices. */
function eigh_(a: ArrayLike, { symmetrizeInput = true }: EighOpts = {}): [Array, Array] {
  return run("eigh", [a], { symmetrizeInput });
}
/** Eigenvalues (ascending) of real symmetric matrices. */
export const eigvalsh = named("eigvalsh", (a: ArrayLike, { symmetrizeInput = true }: EighOpts = {}): Array => run("eigvalsh", [a], { symmetrizeInput }));
/** Thin SVD [u, s, vh] with a = u diag(s) vh, s descending; `computeUv: false` gives s only. */
export function svd(a: ArrayLike, opts: SvdOpts & { computeUv: false }): Array;
export function svd(a: ArrayLike, opts?: SvdOpts): [Array, Array, Array];
export function svd(a: ArrayLike, { fullMatrices = false, computeUv = true }: SvdOpts = {}): [Array, Array, Array] | Array {
  if (!computeUv) return run("svdvals", [a]);
  return run("svd", [a], { fullMatrices });
}
/** Singular values (descending) of real matrices. */
export const svdvals = named("svdvals", (a: ArrayLike): Array => run("svdvals", [a]));

// ord 2, -2 and "nuc" of the matrices on the last two axes: max, min and sum of the
// singular values.
function singularNorm(a: Array, ord: number | string, keepdims: boolean): Array {
  const s = svdvals(a);
  const r = ord === 2 ? np.max(s, -1) : ord === -2 ? np.min(s, -1) : np.sum(s, -1);
  return keepdims ? np.expandDims(r, [-2, -1]) : r;
}
const isSingularOrd = (ord: unknown): boolean => ord === 2 || ord === -2 || ord === "nuc";

/** Cross product of 3-vectors along `axis` (both inputs must have size 3 there). */
function cross_(x1: ArrayLike, x2: ArrayLike, axis = -1): Array {
  for (const [name, x] of [["x1", x1], ["x2", x2]] as const) {
    const s = np.shape(x);
    if (s.length === 0 || s[(axis + s.length) % s.length] !== 3)
      throw new Error(`linalg.cross: ${name} must have size 3 along axis ${axis}, got shape [${s}]`);
  }
  return numpyCross(x1, x2, axis);
}

/** Least squares through the normal equations and a Cholesky factor (jax-js's method). */
function lstsq_(a: ArrayLike, b: ArrayLike): Array {
  const aa = asArray(a, "lstsq"), bb = asArray(b, "lstsq");
  if (aa.ndim !== 2) throw new Error(`lstsq: 'a' must be a 2D array, got shape [${aa.shape}]`);
  const [m, n] = aa.shape;
  if (bb.shape[0] !== m) throw new Error(`lstsq: leading dimension of 'b' must match the rows of 'a' (${m}), got shape [${bb.shape}]`);
  const vec = bb.ndim === 1;
  const b2 = vec ? bb.reshape([m, 1]) : bb;
  const at = np.matrixTranspose(aa.ref);
  let x: Array;
  if (m <= n) {
    const l = cholesky(np.matmul(aa, at.ref), { symmetrizeInput: false });
    const y = triangularSolve(l.ref, b2, { leftSide: true, lower: true });
    x = np.matmul(at, triangularSolve(l, y, { leftSide: true, lower: true, transposeA: true }));
  } else {
    const l = cholesky(np.matmul(at.ref, aa), { symmetrizeInput: false });
    const y = triangularSolve(l.ref, np.matmul(at, b2), { leftSide: true, lower: true });
    x = triangularSolve(l, y, { leftSide: true, lower: true, transposeA: true });
  }
  return vec ? x.reshape([n]) : x;
}

/** a^n by repeated squaring (n < 0 inverts first). */
function matrixPower_(a: ArrayLike, n: number): Array {
  if (!Number.isInteger(n)) throw new Error(`matrixPower: exponent must be an integer, got ${n}`);
  let x = asArray(a, "matrixPower");
  const s = x.shape;
  if (s.length < 2 || s[s.length - 1] !== s[s.length - 2]) throw new Error(`matrixPower: got shape [${s}], expected square matrices [..., n, n]`);
  if (n === 0) {
    const dtype = x.dtype;
    x.dispose();
    return np.broadcastTo(np.eye(s[s.length - 1], undefined, { dtype }), s);
  }
  if (n < 0) {
    x = inv(x);
    n = -n;
  }
  let result: Array | null = null;
  for (let k = 0; n; k++) {
    if (k > 0) x = np.matmul(x.ref, x);
    if (n % 2 === 1) result = result === null ? x.ref : np.matmul(result, x.ref);
    n = Math.floor(n / 2);
  }
  x.dispose();
  return result!;
}

/** The product of a chain of matrices (1-D ends are a row and a column vector), left to right. */
function multiDot_(arrays: Array[]): Array {
  if (arrays.length < 2) throw new Error(`multiDot: expected at least two arrays, got ${arrays.length}`);
  let acc = arrays[0];
  for (let i = 1; i < arrays.length; i++) acc = np.matmul(acc, arrays[i]);
  return acc;
}

function vectorNorm_(x: ArrayLike, { ord = 2, axis = null, keepdims = false }: { ord?: number; axis?: number | number[] | null; keepdims?: boolean } = {}): Array {
  const ax = axis ?? undefined;
  if (ord === Infinity) return np.max(np.abs(x), ax, { keepdims });
  if (ord === -Infinity) return np.min(np.abs(x), ax, { keepdims });
  const a = asArray(x, "vectorNorm");
  if (ord === 0) return np.sum(np.astype(np.notEqual(a.ref, 0), a.dtype), ax, { keepdims });
  return np.power(np.sum(np.power(np.abs(a), ord), ax, { keepdims }), 1 / ord);
}

function matrixNorm_(x: ArrayLike, { ord = "fro", keepdims = false }: { ord?: number | "fro" | "nuc"; keepdims?: boolean } = {}): Array {
  if (np.ndim(x) < 2) throw new Error(`matrixNorm: got a ${np.ndim(x)}-dimensional array, expected at least 2 dimensions`);
  if (ord === "fro") return np.sqrt(np.sum(np.square(x), [-2, -1], { keepdims }));
  if (ord === 1 || ord === -1) {
    const s = np.sum(np.abs(x), [-2], { keepdims });
    return ord === 1 ? np.max(s, [-1], { keepdims }) : np.min(s, [-1], { keepdims });
  }
  if (ord === Infinity || ord === -Infinity) {
    const s = np.sum(np.abs(x), [-1], { keepdims });
    return ord === Infinity ? np.max(s, [keepdims ? -2 : -1], { keepdims }) : np.min(s, [keepdims ? -2 : -1], { keepdims });
  }
  if (isSingularOrd(ord)) return singularNorm(asArray(x, "matrixNorm"), ord, keepdims);
  throw new Error(`matrixNorm: got order ${ord}, expected "fro", "nuc", 1, -1, 2, -2, Infinity or -Infinity`);
}

/** jnp.linalg.norm: vector norms over one axis, matrix norms over two, the flat 2-norm by default. */
function norm_(x: ArrayLike, { ord = null, axis = null, keepdims = false }: { ord?: number | "f" | "fro" | "nuc" | null; axis?: number | number[] | null; keepdims?: boolean } = {}): Array {
  let a = asArray(x, "norm");
  if (a.dtype !== "float32" && a.dtype !== "float16" && a.dtype !== "float64") a = np.astype(a, np.float32);
  const nd = a.ndim;
  let axes: number[];
  if (axis === null) {
    if (ord === null) return np.sqrt(np.sum(np.square(a), undefined, { keepdims }));
    axes = [...globalThis.Array(nd).keys()];
  } else axes = (typeof axis === "number" ? [axis] : axis).map((v) => (v + nd) % nd);
  if (axes.length === 1) {
    if (typeof ord === "string") throw new Error(`norm: invalid order '${ord}' for a vector norm`);
    return vectorNorm(a, { ord: ord ?? 2, axis: axes[0], keepdims });
  }
  if (axes.length !== 2) throw new Error(`norm: axis must be null, an integer or a pair, got ${JSON.stringify(axis)}`);
  let [rowAxis, colAxis] = axes;
  if (rowAxis === colAxis) throw new Error(`norm: duplicate axes ${JSON.stringify(axis)}`);
  if (ord === null || ord === "f" || ord === "fro") return np.sqrt(np.sum(np.square(a), axes, { keepdims }));
  if (ord === 1 || ord === -1) {
    const s = np.sum(np.abs(a), rowAxis, { keepdims });
    if (!keepdims && colAxis > rowAxis) colAxis -= 1;
    return ord === 1 ? np.max(s, colAxis, { keepdims }) : np.min(s, colAxis, { keepdims });
  }
  if (ord === Infinity || ord === -Infinity) {
    const s = np.sum(np.abs(a), colAxis, { keepdims });
    if (!keepdims && rowAxis > colAxis) rowAxis -= 1;
    return ord === Infinity ? np.max(s, rowAxis, { keepdims }) : np.min(s, rowAxis, { keepdims });
  }
  if (isSingularOrd(ord)) {
    // The two axes go last (row, then column), and come back as size-1 axes for keepdims.
    const r = singularNorm(np.moveaxis(np.moveaxis(a, rowAxis, -1), colAxis > rowAxis ? colAxis - 1 : colAxis, -1), ord!, false);
    if (!keepdims) return r;
    const lo = Math.min(rowAxis, colAxis), hi = Math.max(rowAxis, colAxis);
    return np.expandDims(np.expandDims(r, lo), hi);
  }
  a.dispose();
  throw new Error(`norm: got order ${ord}, expected null, "fro", "nuc", 1, -1, 2, -2, Infinity or -Infinity`);
}

// Errors name these functions first (array.ts, named): they are composed of other kiln functions.
/**
 * The Cholesky factor of symmetric positive definite matrices: lower (default) or upper with `upper: true`; NaN where not positive definite.
 */
export const cholesky = named("cholesky", cholesky_);
/** [eigenvalues (ascending), eigenvectors (columns)] of real symmetric matrices (batched). */
export const eigh = named("eigh", eigh_);
/**
 * The cross product of 3-vectors along `axis` (default -1).
 *
 * @throws Error when either input does not have size 3 there.
 */
export const cross = named("cross", cross_);
/**
 * The least-squares solution of `a x = b` (through the normal equations and a Cholesky factor, as jax-js).
 */
export const lstsq = named("lstsq", lstsq_);
/**
 * `a` to the integer power n by repeated squaring (n < 0 inverts first, n = 0 gives the identity).
 */
export const matrixPower = named("matrixPower", matrixPower_);
/**
 * The product of a chain of matrices, left to right (a 1-D first or last array is a row or column vector).
 */
export const multiDot = named("multiDot", multiDot_);
/**
 * The vector norm of order `ord` (default 2; inf, -inf, 0 and any p) over `axis` (all axes when null).
 */
export const vectorNorm = named("vectorNorm", vectorNorm_);
/**
 * The matrix norm over the last two axes: `ord` "fro" (default), "nuc", 1, -1, 2, -2, inf or -inf.
 */
export const matrixNorm = named("matrixNorm", matrixNorm_);
/**
 * jnp.linalg.norm: a vector norm over one axis, a matrix norm over two, the 2-norm of the flattened array by default.
 */
export const norm = named("norm", norm_);
