// The numpy functions of jax-js that kiln composes from core ops in TypeScript (no C++
// primitive of their own). Each consumes its Array arguments once, with .ref for reuse.
import { Array, DType, asArray, axisTerms, checkOperands, checkShape, describeValue, freeOnError, run, type ArrayLike, type Axis, type Device, type ReduceOpts, named } from "./array.js";
import { bitcastConvertType } from "./lax.js";
import * as np from "./numpy_ops.js";

function hypot_(x1: ArrayLike, x2: ArrayLike): Array {
  return np.sqrt(np.add(np.square(x1), np.square(x2)));
}
function logaddexp2_(x1: ArrayLike, x2: ArrayLike): Array {
  const a = asArray(x1, "logaddexp2"), b = asArray(x2, "logaddexp2");
  const m = np.maximum(a.ref, b.ref);
  const d = np.abs(np.subtract(a, b));
  return np.add(m, np.divide(np.log1p(np.exp2(np.negative(d))), Math.LN2));
}
function cbrt_(x: ArrayLike): Array {
  const a = asArray(x, "cbrt");
  return np.multiply(np.sign(a.ref), np.power(np.abs(a), 1 / 3));
}
/** Degrees to radians, elementwise. */
export const deg2rad = named("deg2rad", (x: ArrayLike): Array => np.multiply(x, Math.PI / 180));
/** Radians to degrees, elementwise. */
export const rad2deg = named("rad2deg", (x: ArrayLike): Array => np.multiply(x, 180 / Math.PI));
/** Alias of {@link deg2rad}. */
export const radians = deg2rad;
/** Alias of {@link rad2deg}. */
export const degrees = rad2deg;
function sinc_(x: ArrayLike): Array {
  const a = asArray(x, "sinc");
  const px = np.multiply(a.ref, Math.PI);
  const q = np.divide(np.sin(px.ref), px);
  return np.where(np.equal(a, 0), 1, q);
}
function heaviside_(x1: ArrayLike, x2: ArrayLike): Array {
  const a = asArray(x1, "heaviside");
  return np.where(np.less(a.ref, 0), 0, np.where(np.greater(a, 0), 1, x2));
}
function signbit_(x: ArrayLike): Array {
  const a = asArray(x, "signbit");
  // -0.0 has its sign bit set: 1 / -0 is -inf.
  const zeroNeg = np.logicalAnd(np.equal(a.ref, 0), np.less(np.divide(1, a.ref), 0));
  return np.logicalOr(np.less(a, 0), zeroNeg);
}
function copysign_(x: ArrayLike, y: ArrayLike): Array {
  const m = np.abs(x);
  return np.where(signbit(y), np.negative(m.ref), m);
}
function fmax_(x1: ArrayLike, x2: ArrayLike): Array {
  const a = asArray(x1, "fmax"), b = asArray(x2, "fmax");
  const m = np.maximum(a.ref, b.ref);
  return np.where(np.isnan(b.ref), a.ref, np.where(np.isnan(a), b, m));
}
function fmin_(x1: ArrayLike, x2: ArrayLike): Array {
  const a = asArray(x1, "fmin"), b = asArray(x2, "fmin");
  const m = np.minimum(a.ref, b.ref);
  return np.where(np.isnan(b.ref), a.ref, np.where(np.isnan(a), b, m));
}
/** C's fmod (the sign of the dividend), from the exact floor-mod (the sign of the divisor). */
function fmod_(x: ArrayLike, y: ArrayLike): Array {
  const a = asArray(x, "fmod"), b = asArray(y, "fmod");
  const r = np.remainder(a.ref, b.ref);
  const fix = np.logicalAnd(np.notEqual(r.ref, 0), np.notEqual(np.less(r.ref, 0), np.less(a, 0)));
  return np.where(fix, np.subtract(r.ref, b), r);
}
function ldexp_(x1: ArrayLike, x2: ArrayLike): Array {
  // x1 is checked first: a bad x1 met after exp2 would leak exp2's result.
  const a = asArray(x1, "ldexp");
  return np.multiply(a, np.exp2(np.astype(x2, DType.Float32)));
}
/** Elementwise test for +infinity; a bool array. */
export const isposinf = named("isposinf", (x: ArrayLike): Array => np.equal(x, Infinity));
/** Elementwise test for -infinity; a bool array. */
export const isneginf = named("isneginf", (x: ArrayLike): Array => np.equal(x, -Infinity));

function ptp_(a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  const x = asArray(a, "ptp");
  return np.subtract(np.max(x.ref, axis, opts), np.min(x, axis, opts));
}
function countNonzero_(a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  return np.astype(np.sum(np.astype(np.notEqual(a, 0), DType.Int32), axis, opts), DType.Int32);
}
const nanTo = (a: ArrayLike, v: number) => {
  const x = asArray(a);
  return np.where(np.isnan(x.ref), v, x);
};
/** {@link sum} with NaNs counted as 0. */
export const nansum = named("nansum", (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => np.sum(nanTo(a, 0), axis, opts));
/** {@link prod} with NaNs counted as 1. */
export const nanprod = named("nanprod", (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => np.prod(nanTo(a, 1), axis, opts));
/** {@link max} ignoring NaNs (-inf where a slice is all NaN). */
export const nanmax = named("nanmax", (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => np.max(nanTo(a, -Infinity), axis, opts));
/** {@link min} ignoring NaNs (+inf where a slice is all NaN). */
export const nanmin = named("nanmin", (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => np.min(nanTo(a, Infinity), axis, opts));
function nanmean_(a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  const x = asArray(a, "nanmean");
  const n = np.sum(np.astype(np.logicalNot(np.isnan(x.ref)), DType.Float32), axis, opts);
  return np.divide(nansum(x, axis, opts), n);
}
function nanToNum_(x: ArrayLike, { nan = 0, posinf, neginf }: { nan?: number; posinf?: number; neginf?: number } = {}): Array {
  const a = asArray(x, "nanToNum");
  const big = a.dtype === DType.Float64 ? Number.MAX_VALUE : a.dtype === DType.Float16 ? 65504 : 3.4028234663852886e38;
  const y = np.where(np.isnan(a.ref), nan, a);
  const z = np.where(np.equal(y.ref, Infinity), posinf ?? big, y);
  return np.where(np.equal(z.ref, -Infinity), neginf ?? -big, z);
}
function average_(a: ArrayLike, axis?: Axis, opts: { weights?: ArrayLike } & ReduceOpts = {}): Array {
  if (opts.weights === undefined) return np.mean(a, axis, opts);
  const x = asArray(a, "average");
  let w = asArray(opts.weights, "average");
  if (w.ndim === 1 && x.ndim > 1 && typeof axis === "number") {
    // 1-d weights lie along `axis`, as NumPy's average takes them.
    const shape = x.shape.map((_, i) => (i === (axis + x.ndim) % x.ndim ? -1 : 1));
    w = np.broadcastTo(np.reshape(w, shape), x.shape);
  }
  const num = np.sum(np.multiply(x, w.ref), axis, opts);
  return np.divide(num, np.sum(w, axis, opts));
}

/** Ones on and below diagonal k of an n x m matrix. */
function tri_(n: number, m?: number, k = 0, { dtype = DType.Float32 }: { dtype?: DType } = {}): Array {
  for (const d of m === undefined ? [n] : [n, m])
    if (!Number.isInteger(d) || d < 0) throw new Error(`tri: got size ${d}, expected a non-negative integer`);
  const i = np.reshape(np.arange(0, n), [n, 1]);
  const j = np.reshape(np.arange(0, m ?? n), [1, m ?? n]);
  return np.astype(np.greaterEqual(np.add(i, k), j), dtype);
}
function triMask(a: Array, k: number): Array {
  const s = a.shape;
  return tri(s[s.length - 2], s[s.length - 1], k, { dtype: DType.Bool });
}
function tril_(a: ArrayLike, k = 0): Array {
  const x = asArray(a, "tril");
  return np.where(triMask(x, k), x, 0);
}
function triu_(a: ArrayLike, k = 0): Array {
  const x = asArray(a, "triu");
  return np.where(triMask(x, k - 1), 0, x);
}
function roll_(a: ArrayLike, shift: number | number[], axis?: Axis): Array {
  let x = asArray(a, "roll");
  if (axis === undefined || axis === null) {
    const shape = x.shape;
    return np.reshape(roll(np.ravel(x), shift, 0), shape);
  }
  const axes = typeof axis === "number" ? [axis] : axis;
  const shifts = typeof shift === "number" ? axes.map(() => shift) : shift;
  axes.forEach((ax, i) => {
    const n = x.shape[(ax + x.ndim) % x.ndim];
    const s = ((shifts[i] % n) + n) % n;
    if (s === 0 || n === 0) return;
    const tail = x.ref.slice(...axisTerms(x.ndim, ax, [n - s, n]));
    const head = x.slice(...axisTerms(x.ndim, ax, [0, n - s]));
    x = np.concatenate([tail, head], ax);
  });
  return x;
}
function vecdot_(x: ArrayLike, y: ArrayLike, { axis = -1 }: { axis?: number } = {}): Array {
  return np.sum(np.multiply(x, y), axis);
}
// matvec and vecmat: the vector is checked with the matrix before it is expanded, and the
// expanded copy is freed when matmul fails (the caller's arrays keep their references).
function matvec_(x1: ArrayLike, x2: ArrayLike): Array {
  checkOperands("matvec", x1, x2);
  const v = np.expandDims(x2, -1);
  return np.squeeze(freeOnError([v], () => np.matmul(x1, v)), -1);
}
function vecmat_(x1: ArrayLike, x2: ArrayLike): Array {
  checkOperands("vecmat", x1, x2);
  const v = np.expandDims(x1, -2);
  return np.squeeze(freeOnError([v], () => np.matmul(v, x2)), -2);
}
/**
 * concatenate of reshape(x) for each x (vstack, columnStack, dstack): everything is checked
 * before anything is reshaped, and when concatenate fails the reshaped copies are freed and
 * the caller's arrays keep their references; on success all are consumed, as concatenate's.
 */
function concatenateReshaped(op: string, xs: ArrayLike[], reshape: (x: Array) => Array, axis: number): Array {
  if (!globalThis.Array.isArray(xs)) throw new TypeError(`${op}: got ${describeValue(xs)}, expected a JS array of Arrays`);
  checkOperands(op, ...xs);
  const arrays = xs.map((x) => asArray(x));
  // Freed if concatenate fails: the arrays converted from numbers, and the reshaped copies (or
  // the extra reference of an array used as it is); the caller's keep their references.
  const toFree = arrays.filter((a, i) => a !== xs[i]);
  const out = freeOnError(toFree, () => {
    const reshaped = arrays.map((a) => reshape(a.ref));
    toFree.push(...reshaped);
    return np.concatenate(reshaped, axis);
  });
  for (const a of arrays) a.dispose();
  return out;
}
function vstack_(xs: ArrayLike[]): Array {
  return concatenateReshaped("vstack", xs, (x) => (x.ndim < 2 ? np.reshape(x, [1, -1]) : x), 0);
}
function columnStack_(xs: ArrayLike[]): Array {
  return concatenateReshaped("columnStack", xs, (x) => (x.ndim < 2 ? np.reshape(x, [-1, 1]) : x), 1);
}
function dstack_(xs: ArrayLike[]): Array {
  const up = (x: Array) => (x.ndim === 0 ? np.reshape(x, [1, 1, 1]) : x.ndim === 1 ? np.reshape(x, [1, -1, 1]) : x.ndim === 2 ? np.expandDims(x, 2) : x);
  return concatenateReshaped("dstack", xs, up, 2);
}
function hstack_(xs: ArrayLike[]): Array {
  // 0-d arrays count as 1-d (NumPy's atleast_1d); 1-d ones join along axis 0, others along 1.
  const first = xs?.[0];
  const axis = first instanceof Array && first.ndim > 1 ? 1 : 0;
  return concatenateReshaped("hstack", xs, (x) => (x.ndim === 0 ? np.reshape(x, [1]) : x), axis);
}
function unstack_(x: ArrayLike, axis = 0): Array[] {
  const a = asArray(x, "unstack");
  const n = a.shape[(axis + a.ndim) % a.ndim];
  const out: Array[] = [];
  for (let i = 0; i < n; i++) out.push(a.ref.slice(...axisTerms(a.ndim, axis, i)));
  a.dispose();
  return out;
}
function arraySplit_(a: ArrayLike, indicesOrSections: number | number[], axis = 0): Array[] {
  if (typeof indicesOrSections !== "number") return np.split(a, indicesOrSections, axis);
  const x = asArray(a, "arraySplit");
  const n = x.shape[(axis + x.ndim) % x.ndim];
  const s = indicesOrSections;
  const idx: number[] = [];
  let at = 0;
  for (let i = 0; i < s - 1; i++) idx.push((at += Math.floor(n / s) + (i < n % s ? 1 : 0)));
  return np.split(x, idx, axis);
}
function append_(arr: ArrayLike, values: ArrayLike, axis: number | null = null): Array {
  if (axis === null) return np.concatenate([np.ravel(arr), np.ravel(values)], 0);
  return np.concatenate([arr, values] as Array[], axis);
}
function logspace_(start: number, stop: number, num = 50, endpoint = true, base = 10, { dtype = DType.Float32 }: { dtype?: DType } = {}): Array {
  const e = np.linspace(start, stop, num, endpoint, { dtype: DType.Float32 });
  return np.astype(np.power(base, e), dtype);
}
function geomspace_(start: number, stop: number, num = 50, endpoint = true, { dtype = DType.Float32, device }: { dtype?: DType; device?: Device } = {}): Array {
  if (start === 0 || stop === 0 || Math.sign(start) !== Math.sign(stop)) throw new RangeError(`geomspace: got start ${start}, stop ${stop}, expected nonzero values of one sign`);
  if (!Number.isInteger(num) || num < 0) throw new RangeError(`geomspace: got num ${num}, expected a non-negative integer`);
  // In JS doubles (NumPy computes in float64), so that no device needs float64 and integer
  // dtypes get 10, 100, ... rather than a float32 rounding below them; the ends are exact.
  const [l0, l1] = [Math.log10(Math.abs(start)), Math.log10(Math.abs(stop))];
  const step = (l1 - l0) / (endpoint ? Math.max(num - 1, 1) : num);
  const values = globalThis.Array.from({ length: num }, (_, i) => Math.sign(start) * 10 ** (l0 + i * step));
  if (num > 0) values[0] = start;
  if (num > 1 && endpoint) values[num - 1] = stop;
  return np.array(values, { dtype, device });
}
function diag_(v: ArrayLike, k = 0): Array {
  const x = asArray(v, "diag");
  if (x.ndim === 1) {
    const n = x.shape[0] + Math.abs(k);
    const dtype = x.dtype;
    const padded = np.pad(x, [[0, Math.abs(k)]]);
    // numpy.eye has no diagonal offset in jax-js's API, so this one call goes to the op table.
    const e = run("eye", [], { n, m: n, k, dtype });
    return np.multiply(e, np.reshape(padded, k >= 0 ? [n, 1] : [1, n]));
  }
  if (x.ndim !== 2) throw new Error(`diag: got an array of rank ${x.ndim}, expected 1 or 2`);
  const sub = k >= 0 ? x.slice([], [k, x.shape[1]]) : x.slice([-k, x.shape[0]], []);
  const m = Math.min(sub.shape[0], sub.shape[1]);
  return sub.slice([0, m], [0, m]).diagonal();
}
function trace_(a: Array, offset = 0, axis1 = 0, axis2 = 1): Array {
  return np.sum(np.diagonal(a, offset, axis1, axis2), -1);
}
function select_(condlist: ArrayLike[], choicelist: ArrayLike[], defaultValue: ArrayLike = 0): Array {
  if (condlist.length !== choicelist.length) throw new Error(`select: got ${condlist.length} conditions and ${choicelist.length} choices, expected as many`);
  let out: ArrayLike = defaultValue;
  for (let i = condlist.length - 1; i >= 0; i--) out = np.where(condlist[i], choicelist[i], out);
  return asArray(out, "select");
}
function meshgrid_(arrays: ArrayLike[], { indexing = "xy" }: { indexing?: "xy" | "ij" } = {}): Array[] {
  // Everything is checked before the first grid is made: a later failure would leak it.
  if (!globalThis.Array.isArray(arrays)) throw new TypeError(`meshgrid: got ${describeValue(arrays)}, expected a JS array of Arrays`);
  if (indexing !== "xy" && indexing !== "ij") throw new Error(`meshgrid: got indexing ${JSON.stringify(indexing)}, expected 'xy' or 'ij'`);
  checkOperands("meshgrid", ...arrays);
  const xs = arrays.map((x) => asArray(x));
  const n = xs.length;
  const sizes = xs.map((x) => x.size);
  if (indexing === "xy" && n >= 2) [sizes[0], sizes[1]] = [sizes[1], sizes[0]];
  return xs.map((x, i) => {
    const shape = globalThis.Array.from({ length: n }, () => 1);
    let pos = i;
    if (indexing === "xy" && n >= 2 && i < 2) pos = 1 - i;
    shape[pos] = x.size;
    return np.broadcastTo(np.reshape(x, shape), sizes);
  });
}

// ---- more of jax-js's numpy, composed ----
function arrayEqual_(a1: ArrayLike, a2: ArrayLike, { equalNaN = false }: { equalNaN?: boolean } = {}): Array {
  const a = asArray(a1, "arrayEqual"), b = asArray(a2, "arrayEqual");
  if (a.shape.join(",") !== b.shape.join(",")) {
    a.dispose();
    b.dispose();
    return np.positive(false);
  }
  let eq = np.equal(a.ref, b.ref);
  if (equalNaN) eq = np.logicalOr(eq, np.logicalAnd(np.isnan(a.ref), np.isnan(b.ref)));
  a.dispose();
  b.dispose();
  return np.all(eq);
}
/** Equal after broadcasting. */
function arrayEquiv_(a1: ArrayLike, a2: ArrayLike): Array {
  return np.all(np.equal(a1, a2));
}
function isscalar_(element: unknown): boolean {
  return typeof element === "number" || typeof element === "boolean" || (element instanceof Array && element.ndim === 0);
}
function checkDType(op: string, d: unknown) {
  if (!Object.values(DType).includes(d as DType)) throw new TypeError(`${op}: got dtype ${typeof d === "string" ? `'${d}'` : describeValue(d)}, expected one of ${Object.values(DType).join(", ")}`);
}
/** The dtype of a binary op on strong operands of these dtypes (the core's promotion). */
function promoteTypes_(dtype1: DType, dtype2: DType): DType {
  // Checked first: the zeros made below would leak if the second dtype failed.
  for (const d of [dtype1, dtype2]) checkDType("promoteTypes", d);
  const z = np.add(np.zeros([], { dtype: dtype1 }), np.zeros([], { dtype: dtype2 }));
  const d = z.dtype;
  z.dispose();
  return d;
}
/**
 * The dtype of an elementwise op on these operands (dtypes, Arrays, JS numbers), by the
 * rule the ops themselves follow: each is a zero scalar (a number or weak Array a weak one)
 * and the dtype is that of np.where over them all, so it can never disagree with the ops.
 */
function resultType_(...args: (ArrayLike | DType)[]): DType {
  if (args.length === 0) throw new TypeError("resultType: got no arguments, expected at least one dtype, Array or number");
  for (const a of args) if (typeof a === "string") checkDType("resultType", a);
  checkOperands("resultType", ...args.filter((a) => typeof a !== "string"));
  const zeros = args.map((a) => {
    if (typeof a === "string") return np.zeros([], { dtype: a });
    // A weak Array's zero stays weak: 0 times a reference to it.
    if (a instanceof Array) return a.weakType ? np.multiply(a.ref, 0) : np.zeros([], { dtype: a.dtype });
    return typeof a === "boolean" ? np.positive(false) : np.positive(0);
  });
  const r = zeros.slice(1).reduce((acc, z) => np.where(true, acc, z), zeros[0]);
  const d = r.dtype;
  r.dispose();
  return d;
}
function diagflat_(v: ArrayLike, k = 0): Array {
  return diag(np.ravel(v), k);
}
function divmod_(x1: ArrayLike, x2: ArrayLike): [Array, Array] {
  const a = asArray(x1, "divmod"), b = asArray(x2, "divmod");
  return [np.floorDivide(a.ref, b.ref), np.remainder(a, b)];
}
function modf_(x: ArrayLike): [Array, Array] {
  // Integers give float32 parts, as jax-js (and NumPy's float results).
  let a = asArray(x, "modf");
  if (!a.dtype.startsWith("float")) a = np.astype(a, DType.Float32);
  const whole = np.trunc(a.ref);
  return [np.subtract(a, whole.ref), whole];
}
// The split functions check their array first: split would report a bad one under its own name.
/**
 * {@link split} along axis 1 (axis 0 for 1-D input).
 *
 * @throws Error on a 0-d array or sections that do not divide the axis.
 */
export const hsplit = named("hsplit", (a: ArrayLike, s: number | number[]): Array[] => {
  checkOperands("hsplit", a);
  return np.split(a, s, np.ndim(a) === 1 ? 0 : 1);
});
/**
 * {@link split} along axis 0.
 *
 * @throws Error on an array of rank below 2.
 */
export const vsplit = named("vsplit", (a: ArrayLike, s: number | number[]): Array[] => {
  checkOperands("vsplit", a);
  return np.split(a, s, 0);
});
/**
 * {@link split} along axis 2.
 *
 * @throws Error on an array of rank below 3.
 */
export const dsplit = named("dsplit", (a: ArrayLike, s: number | number[]): Array[] => {
  checkOperands("dsplit", a);
  return np.split(a, s, 2);
});
/** {@link cumsum} with NaNs counted as 0. */
export const nancumsum = named("nancumsum", (a: ArrayLike, axis?: number): Array => np.cumsum(nanTo(a, 0), axis));
/** {@link cumprod} with NaNs counted as 1. */
export const nancumprod = named("nancumprod", (a: ArrayLike, axis?: number): Array => np.cumprod(nanTo(a, 1), axis));
function nanvar_(a: ArrayLike, axis?: Axis, opts: ReduceOpts & { correction?: number } = {}): Array {
  const x = asArray(a, "nanvar");
  const valid = np.logicalNot(np.isnan(x.ref));
  const n = np.sum(np.astype(valid, DType.Float32), axis, { keepdims: true });
  const mean = np.divide(nansum(x.ref, axis, { keepdims: true }), n.ref);
  const dev = nansum(np.square(np.subtract(x, mean)), axis, opts);
  const denom = np.subtract(opts.keepdims ? n : np.squeeze(n, axis ?? undefined), opts.correction ?? 0);
  return np.divide(dev, denom);
}
/** {@link std} over the non-NaN elements. */
export const nanstd = named("nanstd", (a: ArrayLike, axis?: Axis, opts: ReduceOpts & { correction?: number } = {}): Array => np.sqrt(nanvar(a, axis, opts)));
function rot90_(m: ArrayLike, k = 1, axes: [number, number] = [0, 1]): Array {
  let x = asArray(m, "rot90");
  const kk = ((k % 4) + 4) % 4;
  const [a0, a1] = axes;
  if (kk === 0) return x;
  if (kk === 2) return np.flip(x, [a0, a1]);
  if (kk === 1) return np.swapaxes(np.flip(x, a1), a0, a1);
  x = np.swapaxes(x, a0, a1);
  return np.flip(x, a1);
}
function vander_(x: ArrayLike, { n: N, increasing = false }: { n?: number; increasing?: boolean } = {}): Array {
  const a = asArray(x, "vander");
  const n = N ?? a.shape[0];
  let p = np.arange(0, n, 1, { dtype: a.dtype });
  if (!increasing) p = np.flip(p, 0);
  return np.power(np.expandDims(a, 1), p);
}
/** Elementwise `x1 ** x2` computed in a float dtype (integers promote to float32). */
export const floatPower = named("floatPower", (x1: ArrayLike, x2: ArrayLike): Array => {
  checkOperands("floatPower", x1, x2);
  const base = np.astype(x1, DType.Float32);
  return freeOnError([base], () => np.power(base, x2));
});
const window = (M: number, f: (n: Array) => Array): Array => {
  if (M <= 1) return np.ones([Math.max(M, 0)]);
  return f(np.arange(0, M, 1, { dtype: DType.Float32 }));
};
/** The Hann window of M points (a float32 vector). */
export const hann = named("hann", (M: number): Array => window(M, (n) => np.subtract(0.5, np.multiply(np.cos(np.multiply(n, (2 * Math.PI) / (M - 1))), 0.5))));
/** The Bartlett (triangular) window of M points. */
export const bartlett = (M: number): Array =>
  window(M, (n) => np.subtract(1, np.abs(np.subtract(np.multiply(n, 2 / (M - 1)), 1))));
/** The Blackman window of M points. */
export const blackman = (M: number): Array =>
  window(M, (n) => {
    const t = np.multiply(n, (2 * Math.PI) / (M - 1));
    return np.add(np.subtract(0.42, np.multiply(np.cos(t.ref), 0.5)), np.multiply(np.cos(np.multiply(t, 2)), 0.08));
  });
/** Machine limits of a float dtype (eps, min, max, tiny, bits), as numpy.finfo. */
function finfo_(dtype: DType) {
  const t: Record<string, { bits: number; eps: number; max: number; tiny: number }> = {
    float16: { bits: 16, eps: 2 ** -10, max: 65504, tiny: 2 ** -14 },
    float32: { bits: 32, eps: 2 ** -23, max: 3.4028234663852886e38, tiny: 2 ** -126 },
    float64: { bits: 64, eps: Number.EPSILON, max: Number.MAX_VALUE, tiny: 2 ** -1022 },
  };
  const f = t[dtype];
  if (!f) throw new Error(`finfo: got dtype ${dtype}, expected a float dtype`);
  return { dtype, bits: f.bits, eps: f.eps, max: f.max, min: -f.max, tiny: f.tiny, smallestNormal: f.tiny };
}
/** Limits of an integer dtype, as numpy.iinfo. */
function iinfo_(dtype: DType) {
  if (dtype === DType.Int32) return { dtype, bits: 32, min: -(2 ** 31), max: 2 ** 31 - 1 };
  if (dtype === DType.Uint32) return { dtype, bits: 32, min: 0, max: 2 ** 32 - 1 };
  throw new Error(`iinfo: got dtype ${dtype}, expected int32 or uint32`);
}

// ---- membership, NaN-aware argmax/argmin and polynomials (jax-js's compositions) ----
/** Whether each element of `element` occurs in `testElements` (invert: does not). */
function isin_(element: ArrayLike, testElements: ArrayLike, { invert = false }: { invert?: boolean } = {}): Array {
  const e = asArray(element, "isin");
  const s = e.shape;
  const hit = np.any(np.equal(np.expandDims(np.ravel(e), 1), np.ravel(testElements)), 1);
  return np.reshape(invert ? np.logicalNot(hit) : hit, s);
}
function nanArg(op: "argmax" | "argmin", a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array {
  const x = asArray(a);
  const arg = op === "argmax" ? np.argmax : np.argmin;
  if (!x.dtype.startsWith("float")) return arg(x, axis, opts);
  const nan = np.isnan(x.ref);
  const r = arg(np.where(nan.ref, op === "argmax" ? -Infinity : Infinity, x), axis, opts);
  // All-NaN slices give -1, as jax.numpy.
  return np.where(np.all(nan, axis, opts), np.astype(-1, DType.Int32), r);
}
/** {@link argmax} ignoring NaNs. */
export const nanargmax = named("nanargmax", (a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array => nanArg("argmax", a, axis, opts));
/** {@link argmin} ignoring NaNs. */
export const nanargmin = named("nanargmin", (a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array => nanArg("argmin", a, axis, opts));
/** p[0] x^(n-1) + ... + p[n-1], by Horner's rule. */
function polyval_(p: ArrayLike, x: ArrayLike): Array {
  const c = asArray(p, "polyval"), xx = asArray(x, "polyval");
  if (c.ndim === 0) throw new Error(`polyval: coefficients must have at least one dimension, got 0D`);
  const terms = unstack(c, 0);
  let acc = terms[0];
  for (let i = 1; i < terms.length; i++) acc = np.add(np.multiply(acc, xx.ref), terms[i]);
  xx.dispose();
  return acc;
}
function polyAlign(a1: ArrayLike, a2: ArrayLike): [Array, Array] {
  const a = asArray(a1), b = asArray(a2);
  const n = Math.max(a.shape[0], b.shape[0]);
  const lead = (v: Array) => (v.shape[0] === n ? v : np.pad(v, [[n - v.shape[0], 0]]));
  return [lead(a), lead(b)];
}
function polyadd_(a1: ArrayLike, a2: ArrayLike): Array {
  return np.add(...polyAlign(a1, a2));
}
function polysub_(a1: ArrayLike, a2: ArrayLike): Array {
  return np.subtract(...polyAlign(a1, a2));
}
/** The m-th derivative of the polynomial p (highest power first). */
function polyder_(p: ArrayLike, m = 1): Array {
  if (!Number.isInteger(m) || m < 0) throw new Error(`polyder: order of derivative must be a non-negative integer, got ${m}`);
  let c = asArray(p, "polyder");
  if (!c.dtype.startsWith("float")) c = np.astype(c, DType.Float32);
  for (let k = 0; k < m; k++) {
    const n = c.shape[0];
    if (n <= 1) {
      // NumPy: the derivative of a constant is the empty polynomial.
      const dtype = c.dtype, device = c.device;
      c.dispose();
      return np.zeros([0], { dtype, device });
    }
    const powers = np.arange(n - 1, 0, -1, { dtype: c.dtype });
    c = np.multiply(c.slice([0, n - 1]), powers);
  }
  return c;
}

/** Mantissa in ±[0.5, 1) and int32 exponent with x = m 2^e (0, inf and NaN: exponent 0). */
function frexp_(x: ArrayLike): [Array, Array] {
  let a = asArray(x, "frexp");
  if (a.dtype !== "float32" && a.dtype !== "float16" && a.dtype !== "float64") a = np.astype(a, DType.Float32);
  const dtype = a.dtype;
  if (dtype === "float64") return frexpByScaling(a);
  // float32 (float16 through float32): the exponent field read from the bits, exactly;
  // subnormals are scaled by 2^24 first.
  const f = dtype === "float32" ? a : np.astype(a, DType.Float32);
  const sub = np.less(np.abs(f.ref), 1.1754943508222875e-38);
  const scaled = np.where(sub.ref, np.multiply(f.ref, 16777216), f.ref);
  const bits = bitcastConvertType(scaled, "int32");
  const field = np.bitwiseAnd(np.rightShift(bits.ref, 23), 255);
  const special = np.logicalOr(np.equal(f.ref, 0), np.logicalNot(np.isfinite(f.ref)));
  let e = np.subtract(field, np.where(sub, 150, 126));
  e = np.where(special.ref, 0, np.astype(e, DType.Int32));
  const mbits = np.bitwiseOr(np.bitwiseAnd(bits, -2139095041), 1056964608); // 0x807fffff, 0x3f000000
  let m = np.where(special, f, bitcastConvertType(mbits, "float32"));
  if (dtype !== "float32") m = np.astype(m, dtype);
  return [m, np.astype(e, DType.Int32)];
}

// float64 has no integer type wide enough to read its bits in kiln: estimate the exponent
// from log2 and correct it by one either way, scaling by exact powers of two.
function frexpByScaling(a: Array): [Array, Array] {
  const special = np.logicalOr(np.equal(a.ref, 0), np.logicalNot(np.isfinite(a.ref)));
  const safe = np.where(special.ref, 1, a.ref);
  let e = np.add(np.floor(np.log2(np.abs(safe.ref))), 1);
  let m = np.divide(safe.ref, np.power(2, e.ref));
  for (const [test, de] of [[(v: Array) => np.greaterEqual(np.abs(v), 1), 1], [(v: Array) => np.less(np.abs(v), 0.5), -1]] as const) {
    const fix = test(m);
    e = np.add(e, np.where(fix, de, 0));
    m = np.divide(safe.ref, np.power(2, e.ref));
  }
  safe.dispose();
  m = np.where(special.ref, a, m);
  e = np.where(special, 0, e);
  return [m, np.astype(e, DType.Int32)];
}

/** Number of 1 bits of |x| (bool gives int32; int32 and uint32 keep their dtype), as jnp. */
function bitwiseCount_(x: ArrayLike): Array {
  const a = asArray(x, "bitwiseCount");
  if (a.dtype === "bool") return np.astype(a, DType.Int32);
  if (a.dtype !== "int32" && a.dtype !== "uint32") {
    const d = a.dtype;
    a.dispose();
    throw new TypeError(`bitwiseCount: unsupported dtype ${d}, expected bool, int32 or uint32`);
  }
  const dtype = a.dtype;
  // SWAR popcount on the unsigned bits; the byte sums stay below 256, so nothing overflows.
  let v = bitcastConvertType(dtype === "int32" ? np.abs(a) : a, "uint32");
  // JS numbers meeting a uint32 Array become exact uint32 scalars (weak typing).
  const u = (n: number) => n;
  v = np.subtract(v.ref, np.bitwiseAnd(np.rightShift(v, u(1)), u(0x55555555)));
  v = np.add(np.bitwiseAnd(v.ref, u(0x33333333)), np.bitwiseAnd(np.rightShift(v, u(2)), u(0x33333333)));
  v = np.bitwiseAnd(np.add(v.ref, np.rightShift(v, u(4))), u(0x0f0f0f0f));
  let c = np.bitwiseAnd(v.ref, u(255));
  for (const s of [8, 16, 24]) c = np.add(c, np.bitwiseAnd(np.rightShift(v.ref, u(s)), u(255)));
  v.dispose();
  return np.astype(c, dtype);
}

// Errors name these functions first (array.ts, named): they are composed of other kiln functions.
/** Elementwise `sqrt(x1² + x2²)`. */
export const hypot = named("hypot", hypot_);
/** Elementwise `log2(2^x1 + 2^x2)` without overflow. */
export const logaddexp2 = named("logaddexp2", logaddexp2_);
/** Elementwise cube root (negative for negative x). */
export const cbrt = named("cbrt", cbrt_);
/** Elementwise normalized sinc, `sin(πx) / (πx)` (1 at 0). */
export const sinc = named("sinc", sinc_);
/** Elementwise Heaviside step: 0 below 0, 1 above, `x2` at 0. */
export const heaviside = named("heaviside", heaviside_);
/** Elementwise test of the sign bit (true for -0); a bool array. */
export const signbit = named("signbit", signbit_);
/** Elementwise `|x|` with the sign of `y`. */
export const copysign = named("copysign", copysign_);
/** Elementwise maximum that ignores NaN (NaN only when both are). */
export const fmax = named("fmax", fmax_);
/** Elementwise minimum that ignores NaN (NaN only when both are). */
export const fmin = named("fmin", fmin_);
/** Elementwise remainder with the sign of the dividend (C's fmod). */
export const fmod = named("fmod", fmod_);
/** Elementwise `x1 * 2^x2`. */
export const ldexp = named("ldexp", ldexp_);
/** Peak to peak: max - min over `axis` (all by default). */
export const ptp = named("ptp", ptp_);
/** The number of nonzero elements over `axis` (all by default), int32. */
export const countNonzero = named("countNonzero", countNonzero_);
/** {@link mean} over the non-NaN elements. */
export const nanmean = named("nanmean", nanmean_);
/**
 * `x` with NaN replaced by `nan` (default 0) and ±inf by `posinf`/`neginf` (default: the dtype's largest finite values).
 */
export const nanToNum = named("nanToNum", nanToNum_);
/**
 * The mean over `axis`, weighted by `opts.weights` when given (broadcast along that axis).
 *
 * @throws Error when the weights sum to zero shape-wise or do not match the axis.
 */
export const average = named("average", average_);
/** An n × m matrix (m defaults to n) with ones on and below diagonal k, zeros above. */
export const tri = named("tri", tri_);
/** `a` with the elements above diagonal k set to zero (the last two axes). */
export const tril = named("tril", tril_);
/** `a` with the elements below diagonal k set to zero (the last two axes). */
export const triu = named("triu", triu_);
/**
 * `a` shifted by `shift` along `axis` (the flattened array when undefined), elements wrapping around.
 */
export const roll = named("roll", roll_);
/** The dot product of vectors along `opts.axis` (default -1), batched over the other axes. */
export const vecdot = named("vecdot", vecdot_);
/** Matrix-vector product over the last axes, batched over the others. */
export const matvec = named("matvec", matvec_);
/** Vector-matrix product over the last axes, batched over the others. */
export const vecmat = named("vecmat", vecmat_);
/** Stacks arrays vertically: 1-D arrays become rows, then {@link concatenate} along axis 0. */
export const vstack = named("vstack", vstack_);
/** Stacks 1-D arrays as columns of a 2-D array (2-D arrays join along axis 1). */
export const columnStack = named("columnStack", columnStack_);
/** Stacks arrays along a third axis (1-D and 2-D arrays are expanded first). */
export const dstack = named("dstack", dstack_);
/** The slices of `x` along `axis` (default 0), as a list; the inverse of {@link stack}. */
export const unstack = named("unstack", unstack_);
/**
 * {@link split} that allows sections which do not divide the axis (the first ones get one element more).
 */
export const arraySplit = named("arraySplit", arraySplit_);
/** `values` appended to `arr` along `axis` (both flattened when axis is null, the default). */
export const append = named("append", append_);
/** `num` values evenly spaced on a log scale: `base ** linspace(start, stop)`. */
export const logspace = named("logspace", logspace_);
/**
 * `num` values from `start` to `stop` in a geometric progression.
 *
 * @throws RangeError when start or stop is 0, or they differ in sign (as jax-js).
 */
export const geomspace = named("geomspace", geomspace_);
/** The k-th diagonal of a 2-D array, or a 2-D array with a 1-D `v` on its k-th diagonal. */
export const diag = named("diag", diag_);
/** The sum along the diagonal of `a` with the given offset, over axes `axis1` and `axis2` (default 0 and 1). */
export const trace = named("trace", trace_);
/**
 * Elementwise: the choice of the first condition that holds, `defaultValue` (default 0) where none does.
 */
export const select = named("select", select_);
/**
 * Coordinate matrices from coordinate vectors; `indexing` is "xy" (default, Cartesian) or "ij" (matrix).
 */
export const meshgrid = named("meshgrid", meshgrid_);
/**
 * Whether the arrays have one shape and equal elements (NaNs equal with `equalNaN`); a bool scalar Array.
 */
export const arrayEqual = named("arrayEqual", arrayEqual_);
/** Whether the arrays are equal elementwise after broadcasting; a bool scalar Array. */
export const arrayEquiv = named("arrayEquiv", arrayEquiv_);
/** Whether `element` is a JS number or boolean, or a 0-d Array. */
export const isscalar = named("isscalar", isscalar_);
/** The dtype that an elementwise op on strong operands of these dtypes gives (JAX's promotion). */
export const promoteTypes = named("promoteTypes", promoteTypes_);
/**
 * The dtype of an elementwise op on these operands (dtypes, Arrays, numbers), weak types included.
 */
export const resultType = named("resultType", resultType_);
/** Stacks arrays horizontally: along axis 1 (axis 0 for 1-D arrays). */
export const hstack = named("hstack", hstack_);
/** A 2-D array with the flattened `v` on its k-th diagonal. */
export const diagflat = named("diagflat", diagflat_);
/** Elementwise `[floorDivide(x1, x2), remainder(x1, x2)]`. */
export const divmod = named("divmod", divmod_);
/** Elementwise `[fractional part, integral part]`, both with the sign of x. */
export const modf = named("modf", modf_);
/** {@link var_} over the non-NaN elements. */
export const nanvar = named("nanvar", nanvar_);
/**
 * `m` rotated by 90° k times in the plane of `axes` (default [0, 1]), from the first axis toward the second.
 */
export const rot90 = named("rot90", rot90_);
/**
 * The Vandermonde matrix of `x`: columns are powers of x (decreasing unless `increasing`), `n` columns (default: x's length).
 */
export const vander = named("vander", vander_);
/**
 * Machine limits of a float dtype (bits, eps, min, max, tiny), as numpy.finfo.
 *
 * @throws Error for a non-float dtype.
 */
export const finfo = named("finfo", finfo_);
/**
 * Limits of an integer dtype (bits, min, max), as numpy.iinfo.
 *
 * @throws Error for a non-integer dtype.
 */
export const iinfo = named("iinfo", iinfo_);
/**
 * Whether each element of `element` occurs in `testElements` (or does not, with `invert`); a bool array.
 */
export const isin = named("isin", isin_);
/** The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule. */
export const polyval = named("polyval", polyval_);
/** The sum of two polynomials (coefficient arrays, highest power first). */
export const polyadd = named("polyadd", polyadd_);
/** The difference of two polynomials (coefficient arrays, highest power first). */
export const polysub = named("polysub", polysub_);
/** The m-th derivative (default 1) of the polynomial `p` (highest power first). */
export const polyder = named("polyder", polyder_);
/**
 * Elementwise `[mantissa, exponent]` with `x = mantissa * 2^exponent`, mantissa in ±[0.5, 1), exponent int32.
 */
export const frexp = named("frexp", frexp_);
/** Elementwise number of 1 bits of |x| (bool gives int32; integers keep their dtype). */
export const bitwiseCount = named("bitwiseCount", bitwiseCount_);
