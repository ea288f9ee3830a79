// numpy functions composed in TypeScript whose jax-js argument forms go beyond the plain
// case: diff/ediff1d with prepend/append and booleans, trapezoid with sample points, cross of
// 2-vectors, indices with sparse (issue 22). Each consumes its Array arguments once.
import { Array, DType, asArray, axisTerms, checkOperands, checkShape, type ArrayLike, named } from "./array.js";
import { unstack } from "./numpy_composite.js";
import * as np from "./numpy_ops.js";

/** `v` as an Array to attach to `x` along `axis`: a scalar is broadcast to size 1 there. */
function attachable(v: ArrayLike, x: Array, axis: number): Array {
  const a = asArray(v, "diff");
  if (a.ndim > 0) return a;
  const shape = x.shape.map((d, i) => (i === (axis + x.ndim) % x.ndim ? 1 : d));
  return np.broadcastTo(np.astype(a, x.dtype), shape);
}

function diff_(a: ArrayLike, n = 1, axis = -1, { prepend, append }: { prepend?: ArrayLike; append?: ArrayLike } = {}): Array {
  checkOperands("diff", a, ...[prepend, append].filter((v) => v !== undefined));
  let x = asArray(a, "diff");
  if (prepend !== undefined || append !== undefined) {
    const parts = [prepend !== undefined ? attachable(prepend, x, axis) : null, x, append !== undefined ? attachable(append, x, axis) : null];
    x = np.concatenate(parts.filter((p): p is Array => p !== null), axis);
  }
  for (let i = 0; i < n; i++) {
    const nd = x.ndim;
    const hi = x.ref.slice(...axisTerms(nd, axis, [1]));
    const lo = x.slice(...axisTerms(nd, axis, [0, -1]));
    // Booleans differ where they change (jax-js and NumPy use not_equal).
    x = hi.dtype === DType.Bool ? np.notEqual(hi, lo) : np.subtract(hi, lo);
  }
  return x;
}

function ediff1d_(ary: ArrayLike, { toEnd, toBegin }: { toEnd?: ArrayLike; toBegin?: ArrayLike } = {}): Array {
  checkOperands("ediff1d", ary, ...[toBegin, toEnd].filter((v) => v !== undefined));
  const d = diff(np.ravel(ary), 1, 0);
  if (toBegin === undefined && toEnd === undefined) return d;
  // The attached values are flattened and cast to the input's dtype.
  const flat = (v: ArrayLike) => np.astype(np.ravel(v), d.dtype);
  const parts = [toBegin !== undefined ? flat(toBegin) : null, d, toEnd !== undefined ? flat(toEnd) : null];
  return np.concatenate(parts.filter((p): p is Array => p !== null), 0);
}

/** The trapezoidal rule along `axis`: sample points `x` (1-d, or y's shape) or spacing `dx`. */
function trapezoid_(y: ArrayLike, x: ArrayLike | null = null, { dx = 1, axis = -1 }: { dx?: ArrayLike; axis?: number } = {}): Array {
  checkOperands("trapezoid", y, ...(x === null ? [dx] : [x]));
  let a = asArray(y, "trapezoid");
  if (!a.dtype.startsWith("float")) a = np.astype(a, DType.Float32);
  const nd = a.ndim;
  const hi = a.ref.slice(...axisTerms(nd, axis, [1]));
  const sums = np.add(hi, a.slice(...axisTerms(nd, axis, [0, -1])));
  if (x === null) return np.multiply(np.sum(sums, axis), np.divide(dx, 2));
  // 1-d sample points lie along `axis`; otherwise they have y's shape.
  const xs = asArray(x, "trapezoid");
  const spacing = xs.ndim === 1 ? np.reshape(diff(xs, 1, -1), sums.shape.map((d, i) => (i === (axis + nd) % nd ? d : 1))) : diff(xs, 1, axis);
  return np.divide(np.sum(np.multiply(sums, spacing), axis), 2);
}

/** Cross product along `axis`; 2-vectors have z = 0, and two 2-vectors give the z component. */
function cross_(x1: ArrayLike, x2: ArrayLike, axis = -1): Array {
  const a = unstack(x1, axis), b = unstack(x2, axis);
  if (![2, 3].includes(a.length) || ![2, 3].includes(b.length)) {
    for (const t of [...a, ...b]) t.dispose();
    throw new Error(`cross: got vectors of length ${a.length} and ${b.length}, expected 2 or 3`);
  }
  const c = (i: number, j: number) => np.subtract(np.multiply(a[i].ref, b[j].ref), np.multiply(a[j].ref, b[i].ref));
  if (a.length === 2 && b.length === 2) {
    const z = c(0, 1);
    for (const t of [...a, ...b]) t.dispose();
    return z;
  }
  for (const v of [a, b]) if (v.length === 2) v.push(np.zerosLike(v[0].ref));
  const out = [c(1, 2), c(2, 0), c(0, 1)];
  for (const t of [...a, ...b]) t.dispose();
  return np.stack(out, axis < 0 ? axis + out[0].ndim + 1 : axis);
}

function indices_(dimensions: number[], { dtype = DType.Int32, sparse = false }: { dtype?: DType; sparse?: boolean } = {}): Array | Array[] {
  checkShape("indices", dimensions, "dimensions");
  const grids = dimensions.map((d, i) => {
    const shape = dimensions.map((_, j) => (j === i ? d : 1));
    const axisRange = np.reshape(np.arange(0, d, 1, { dtype }), shape);
    return sparse ? axisRange : np.broadcastTo(axisRange, dimensions);
  });
  return sparse ? grids : np.stack(grids, 0);
}

/**
 * The n-th discrete difference (default n = 1) along `axis` (default -1), with `prepend`/`append` values attached first.
 */
export const diff = named("diff", diff_);
/**
 * Differences of consecutive elements of the flattened array, with `toBegin`/`toEnd` values around them.
 */
export const ediff1d = named("ediff1d", ediff1d_);
/**
 * The integral of `y` along `axis` by the trapezoidal rule, over sample points `x` or a spacing `dx` (default 1).
 */
export const trapezoid = named("trapezoid", trapezoid_);
/**
 * The cross product of 3-vectors (or 2-vectors, as NumPy) along the last axes.
 *
 * @throws Error when the vectors are not of size 2 or 3.
 */
export const cross = named("cross", cross_);
/** The grid of indices of an array of the given shape: one int32 array per axis, stacked. */
export const indices = named("indices", indices_);
