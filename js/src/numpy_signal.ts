// jax-js's numpy functions over sequences and samples, composed in TypeScript over core ops
// as jax-js composes them: convolve/correlate (one lax conv), polymul, unwrap, cov and
// corrcoef. Each consumes its Array arguments exactly once.
import { Array, asArray, type ArrayLike, named } from "./array.js";
import { convGeneralDilated, type PaddingType } from "./lax.js";
import { diag, resultType, vstack } from "./numpy_composite.js";
import * as np from "./numpy_ops.js";

type Mode = "full" | "same" | "valid";

function conv1d(name: string, x0: ArrayLike, y0: ArrayLike, mode: Mode): Array {
  let x = asArray(x0), y = asArray(y0);
  if (x.ndim !== 1 || y.ndim !== 1) {
    const [nx, ny] = [x.ndim, y.ndim];
    x.dispose();
    y.dispose();
    throw new Error(`${name}: both inputs must be 1D arrays, got ${nx}D and ${ny}D`);
  }
  if (mode !== "full" && mode !== "same" && mode !== "valid") {
    x.dispose();
    y.dispose();
    throw new Error(`${name}: invalid mode ${mode}, expected "full", "same", or "valid"`);
  }
  // The longer input slides under the shorter one (NumPy's rule); correlate then reverses.
  let flipOutput = false;
  if (x.shape[0] < y.shape[0]) {
    [x, y] = [y, x];
    flipOutput = name === "correlate";
  }
  const m = y.shape[0];
  const padding: PaddingType = mode === "valid" ? "VALID" : mode === "same" ? "SAME_LOWER" : [[m - 1, m - 1]];
  if (name === "convolve") y = np.flip(y);
  const z = convGeneralDilated(x.reshape([1, 1, -1]), y.reshape([1, 1, -1]), [1], padding).reshape([-1]);
  return flipOutput ? np.flip(z) : z;
}

/** Convolution of two one-dimensional arrays. */
export const convolve = named("convolve", (x: Array, y: Array, mode: Mode = "full"): Array => conv1d("convolve", x, y, mode));
/** Correlation of two one dimensional arrays. */
export const correlate = named("correlate", (x: Array, y: Array, mode: Mode = "valid"): Array => conv1d("correlate", x, y, mode));

const isFloat = (d: string) => d === "float32" || d === "float64" || d === "float16";

/** Return the product of two polynomials. */
function polymul_(a1: ArrayLike, a2: ArrayLike): Array {
  let a = asArray(a1, "polymul"), b = asArray(a2, "polymul");
  if (a.ndim !== 1 || b.ndim !== 1) {
    const [n1, n2] = [a.ndim, b.ndim];
    a.dispose();
    b.dispose();
    throw new Error(`polymul: both inputs must be 1D arrays, got ${n1}D and ${n2}D`);
  }
  const t = resultType(a.dtype, b.dtype);
  const dtype = isFloat(t) ? t : np.float32;
  a = np.astype(a, dtype);
  b = np.astype(b, dtype);
  if (a.shape[0] === 0) {
    a.dispose();
    a = np.zeros([1], { dtype });
  }
  if (b.shape[0] === 0) {
    b.dispose();
    b = np.zeros([1], { dtype });
  }
  return convolve(a, b, "full");
}

/** Unwrap a periodic signal: differences larger than `discont` become their wrapped value. */
function unwrap_(p: ArrayLike, discont: number | null = null, axis = -1, period = 2 * Math.PI): Array {
  let x = asArray(p, "unwrap");
  const nd = x.ndim;
  if (axis < -nd || axis >= nd) {
    x.dispose();
    throw new Error(`unwrap: axis ${axis} is out of bounds for an array of rank ${nd}`);
  }
  axis = (axis + nd) % nd;
  if (!isFloat(x.dtype)) x = np.astype(x, np.float32);
  const n = x.shape[axis];
  if (n <= 1) return x;
  const round = x.dtype === "float64" ? (v: number) => v : Math.fround;
  const T = round(period), interval = round(T / 2), disc = round(discont ?? T / 2);
  const [head, tail] = np.split(x.ref, [1], axis);
  const [prev, last] = np.split(x, [n - 1], axis);
  last.dispose();
  const dd = np.subtract(tail.ref, prev);
  // ddmod = mod(dd + T/2, T) - T/2, with -T/2 mapped to T/2 where dd > 0 (NumPy's rule).
  let ddmod = np.subtract(np.remainder(np.add(dd.ref, interval), T), interval);
  ddmod = np.where(np.logicalAnd(np.equal(ddmod.ref, -interval), np.greater(dd.ref, 0)), interval, ddmod);
  const correction = np.where(np.less(np.abs(dd.ref), disc), 0, np.subtract(ddmod, dd));
  return np.concatenate([head, np.add(tail, np.cumsum(correction, axis))], axis);
}

/** Estimate the sample covariance of a set of variables (rows, unless rowvar is false). */
function cov_(x: ArrayLike, y: ArrayLike | null = null, { rowvar = true }: { rowvar?: boolean } = {}): Array {
  let a = asArray(x, "cov");
  if (a.ndim === 1) a = a.reshape([1, a.shape[0]]);
  if (y !== null) {
    let b = asArray(y, "cov");
    if (b.ndim === 1) b = b.reshape([1, b.shape[0]]);
    a = vstack([a, b]);
  }
  if (a.ndim !== 2) {
    const s = a.shape;
    a.dispose();
    throw new Error(`cov: got an array of shape [${s}], expected 1D or 2D`);
  }
  if (!rowvar) a = np.transpose(a);
  const n = a.shape[1];
  const c = np.subtract(a.ref, np.mean(a, 1, { keepdims: true }));
  return np.divide(np.matmul(c.ref, np.transpose(c)), n - 1);
}

/** Compute the Pearson correlation coefficients (in range `[-1, 1]`). */
function corrcoef_(x: ArrayLike, y?: ArrayLike): Array {
  const c = cov(x, y ?? null);
  const d = diag(c.ref);
  return np.divide(c, np.sqrt(np.outer(d.ref, d)));
}

// Errors name these functions first (array.ts, named): they are composed of other kiln functions.
/** The product of two polynomials (coefficient arrays, highest power first). */
export const polymul = named("polymul", polymul_);
/**
 * Unwraps a periodic signal along `axis`: jumps larger than `discont` (default period/2) become their wrapped value.
 */
export const unwrap = named("unwrap", unwrap_);
/**
 * The sample covariance matrix of variables in rows (columns when `rowvar` is false), `y` adding more variables.
 */
export const cov = named("cov", cov_);
/** Pearson correlation coefficients (in [-1, 1]) of variables in rows. */
export const corrcoef = named("corrcoef", corrcoef_);
