// The numpy functions of jax-js that kiln composes from core ops in TypeScript (no C++
// primitive of their own). Each consumes its Array arguments once, with .ref for reuse.
import { Array, DType, run, type ArrayLike, type Axis, type ReduceOpts } from "./array.js";

/** x as an Array (JS numbers become weak scalars), so it can be referenced. */
const A = (x: ArrayLike): Array => (x instanceof Array ? x : run("positive", [x]));
const axisTerms = (nd: number, axis: number, term: any) => {
  const t: any[] = globalThis.Array.from({ length: nd }, () => []);
  t[(axis + nd) % nd] = term;
  return t;
};

export function hypot(x1: ArrayLike, x2: ArrayLike): Array {
  return run("sqrt", [run("add", [run("square", [x1]), run("square", [x2])])]);
}
export function logaddexp(x1: ArrayLike, x2: ArrayLike): Array {
  const a = A(x1), b = A(x2);
  const m = run("maximum", [a.ref, b.ref]);
  const d = run("abs", [run("subtract", [a, b])]);
  return run("add", [m, run("log1p", [run("exp", [run("negative", [d])])])]);
}
export function logaddexp2(x1: ArrayLike, x2: ArrayLike): Array {
  const a = A(x1), b = A(x2);
  const m = run("maximum", [a.ref, b.ref]);
  const d = run("abs", [run("subtract", [a, b])]);
  return run("add", [m, run("divide", [run("log1p", [run("exp2", [run("negative", [d])])]), Math.LN2])]);
}
export function cbrt(x: ArrayLike): Array {
  const a = A(x);
  return run("multiply", [run("sign", [a.ref]), run("power", [run("abs", [a]), 1 / 3])]);
}
export const deg2rad = (x: ArrayLike): Array => run("multiply", [x, Math.PI / 180]);
export const rad2deg = (x: ArrayLike): Array => run("multiply", [x, 180 / Math.PI]);
export const radians = deg2rad;
export const degrees = rad2deg;
export function sinc(x: ArrayLike): Array {
  const a = A(x);
  const px = run("multiply", [a.ref, Math.PI]);
  const q = run("divide", [run("sin", [px.ref]), px]);
  return run("where", [run("equal", [a, 0]), 1, q]);
}
export function heaviside(x1: ArrayLike, x2: ArrayLike): Array {
  const a = A(x1);
  return run("where", [run("less", [a.ref, 0]), 0, run("where", [run("greater", [a, 0]), 1, x2])]);
}
export function signbit(x: ArrayLike): Array {
  const a = A(x);
  // -0.0 has its sign bit set: 1 / -0 is -inf.
  const zeroNeg = run("logical_and", [run("equal", [a.ref, 0]), run("less", [run("divide", [1, a.ref]), 0])]);
  return run("logical_or", [run("less", [a, 0]), zeroNeg]);
}
export function copysign(x: ArrayLike, y: ArrayLike): Array {
  const m = run("abs", [x]);
  return run("where", [signbit(y), run("negative", [m.ref]), m]);
}
export function fmax(x1: ArrayLike, x2: ArrayLike): Array {
  const a = A(x1), b = A(x2);
  const m = run("maximum", [a.ref, b.ref]);
  return run("where", [run("isnan", [b.ref]), a.ref, run("where", [run("isnan", [a]), b, m])]);
}
export function fmin(x1: ArrayLike, x2: ArrayLike): Array {
  const a = A(x1), b = A(x2);
  const m = run("minimum", [a.ref, b.ref]);
  return run("where", [run("isnan", [b.ref]), a.ref, run("where", [run("isnan", [a]), b, m])]);
}
/** C's fmod (the sign of the dividend), from the exact floor-mod (the sign of the divisor). */
export function fmod(x: ArrayLike, y: ArrayLike): Array {
  const a = A(x), b = A(y);
  const r = run("mod", [a.ref, b.ref]);
  const fix = run("logical_and", [run("not_equal", [r.ref, 0]), run("not_equal", [run("less", [r.ref, 0]), run("less", [a, 0])])]);
  return run("where", [fix, run("subtract", [r.ref, b]), r]);
}
export function ldexp(x1: ArrayLike, x2: ArrayLike): Array {
  return run("multiply", [x1, run("exp2", [run("astype", [x2], { dtype: "float32" })])]);
}
export const isposinf = (x: ArrayLike): Array => run("equal", [x, Infinity]);
export const isneginf = (x: ArrayLike): Array => run("equal", [x, -Infinity]);

export function ptp(a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  const x = A(a);
  return run("subtract", [run("max", [x.ref], { axis, ...opts }), run("min", [x], { axis, ...opts })]);
}
export function countNonzero(a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  return run("astype", [run("sum", [run("astype", [run("not_equal", [a, 0])], { dtype: "int32" })], { axis, ...opts })], { dtype: "int32" });
}
const nanTo = (a: ArrayLike, v: number) => {
  const x = A(a);
  return run("where", [run("isnan", [x.ref]), v, x]);
};
export const nansum = (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => run("sum", [nanTo(a, 0)], { axis, ...opts });
export const nanprod = (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => run("prod", [nanTo(a, 1)], { axis, ...opts });
export const nanmax = (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => run("max", [nanTo(a, -Infinity)], { axis, ...opts });
export const nanmin = (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => run("min", [nanTo(a, Infinity)], { axis, ...opts });
export function nanmean(a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  const x = A(a);
  const n = run("sum", [run("astype", [run("logical_not", [run("isnan", [x.ref])])], { dtype: "float32" })], { axis, ...opts });
  return run("divide", [nansum(x, axis, opts), n]);
}
export function nanToNum(x: ArrayLike, { nan = 0, posinf, neginf }: { nan?: number; posinf?: number; neginf?: number } = {}): Array {
  const a = A(x);
  const big = a.dtype === DType.Float64 ? Number.MAX_VALUE : a.dtype === DType.Float16 ? 65504 : 3.4028234663852886e38;
  const y = run("where", [run("isnan", [a.ref]), nan, a]);
  const z = run("where", [run("equal", [y.ref, Infinity]), posinf ?? big, y]);
  return run("where", [run("equal", [z.ref, -Infinity]), neginf ?? -big, z]);
}
export function average(a: ArrayLike, axis?: Axis, opts: { weights?: ArrayLike } & ReduceOpts = {}): Array {
  if (opts.weights === undefined) return run("mean", [a], { axis, keepdims: opts.keepdims });
  const x = A(a);
  let w = A(opts.weights);
  if (w.ndim === 1 && x.ndim > 1 && typeof axis === "number") {
    // 1-d weights lie along `axis`, as NumPy's average takes them.
    const shape = x.shape.map((_, i) => (i === (axis + x.ndim) % x.ndim ? -1 : 1));
    w = run("broadcast_to", [run("reshape", [w], { shape })], { shape: x.shape });
  }
  const num = run("sum", [run("multiply", [x, w.ref])], { axis, keepdims: opts.keepdims });
  return run("divide", [num, run("sum", [w], { axis, keepdims: opts.keepdims })]);
}

export function diff(a: ArrayLike, n = 1, axis = -1): Array {
  let x = A(a);
  for (let i = 0; i < n; i++) {
    const nd = x.ndim;
    const hi = x.ref.slice(...axisTerms(nd, axis, [1]));
    const lo = x.slice(...axisTerms(nd, axis, [0, -1]));
    x = run("subtract", [hi, lo]);
  }
  return x;
}
/** Ones on and below diagonal k of an n x m matrix. */
export function tri(n: number, m?: number, k = 0, { dtype = DType.Float32 }: { dtype?: DType } = {}): Array {
  const i = run("reshape", [run("arange", [], { start: 0, stop: n })], { shape: [n, 1] });
  const j = run("reshape", [run("arange", [], { start: 0, stop: m ?? n })], { shape: [1, m ?? n] });
  return run("astype", [run("greater_equal", [run("add", [i, k]), j])], { dtype });
}
function triMask(a: Array, k: number): Array {
  const s = a.shape;
  return tri(s[s.length - 2], s[s.length - 1], k, { dtype: DType.Bool });
}
export function tril(a: ArrayLike, k = 0): Array {
  const x = A(a);
  return run("where", [triMask(x, k), x, 0]);
}
export function triu(a: ArrayLike, k = 0): Array {
  const x = A(a);
  return run("where", [triMask(x, k - 1), 0, x]);
}
export function roll(a: ArrayLike, shift: number | number[], axis?: Axis): Array {
  let x = A(a);
  if (axis === undefined || axis === null) {
    const shape = x.shape;
    return run("reshape", [roll(run("ravel", [x]), shift, 0)], { shape });
  }
  const axes = typeof axis === "number" ? [axis] : axis;
  const shifts = typeof shift === "number" ? axes.map(() => shift) : shift;
  axes.forEach((ax, i) => {
    const n = x.shape[(ax + x.ndim) % x.ndim];
    const s = ((shifts[i] % n) + n) % n;
    if (s === 0 || n === 0) return;
    const tail = x.ref.slice(...axisTerms(x.ndim, ax, [n - s, n]));
    const head = x.slice(...axisTerms(x.ndim, ax, [0, n - s]));
    x = run("concatenate", [tail, head], { axis: ax });
  });
  return x;
}
export function vecdot(x: ArrayLike, y: ArrayLike, { axis = -1 }: { axis?: number } = {}): Array {
  return run("sum", [run("multiply", [x, y])], { axis });
}
export function matvec(x1: ArrayLike, x2: ArrayLike): Array {
  return run("squeeze", [run("matmul", [x1, run("expand_dims", [x2], { axis: -1 })])], { axis: -1 });
}
export function vecmat(x1: ArrayLike, x2: ArrayLike): Array {
  return run("squeeze", [run("matmul", [run("expand_dims", [x1], { axis: -2 }), x2])], { axis: -2 });
}
export function columnStack(xs: ArrayLike[]): Array {
  return run("concatenate", xs.map((x) => (A(x).ndim < 2 ? run("reshape", [x], { shape: [-1, 1] }) : x)), { axis: 1 });
}
export function dstack(xs: ArrayLike[]): Array {
  const up = (x: Array) => (x.ndim === 0 ? run("reshape", [x], { shape: [1, 1, 1] }) : x.ndim === 1 ? run("reshape", [x], { shape: [1, -1, 1] }) : x.ndim === 2 ? run("expand_dims", [x], { axis: 2 }) : x);
  return run("concatenate", xs.map((x) => up(A(x))), { axis: 2 });
}
export function unstack(x: ArrayLike, axis = 0): Array[] {
  const a = A(x);
  const n = a.shape[(axis + a.ndim) % a.ndim];
  const out: Array[] = [];
  for (let i = 0; i < n; i++) out.push(a.ref.slice(...axisTerms(a.ndim, axis, i)));
  a.dispose();
  return out;
}
export function arraySplit(a: ArrayLike, indicesOrSections: number | number[], axis = 0): Array[] {
  if (typeof indicesOrSections !== "number") return run("split", [a], { indices: indicesOrSections, axis });
  const x = A(a);
  const n = x.shape[(axis + x.ndim) % x.ndim];
  const s = indicesOrSections;
  const idx: number[] = [];
  let at = 0;
  for (let i = 0; i < s - 1; i++) idx.push((at += Math.floor(n / s) + (i < n % s ? 1 : 0)));
  return run("split", [x], { indices: idx, axis });
}
export function append(arr: ArrayLike, values: ArrayLike, axis: number | null = null): Array {
  if (axis === null) return run("concatenate", [run("ravel", [arr]), run("ravel", [values])], { axis: 0 });
  return run("concatenate", [arr, values], { axis });
}
export function logspace(start: number, stop: number, num = 50, endpoint = true, base = 10, { dtype = DType.Float32 }: { dtype?: DType } = {}): Array {
  const e = run("linspace", [], { start, stop, num, endpoint, dtype: "float32" });
  return run("astype", [run("power", [base, e])], { dtype });
}
export function geomspace(start: number, stop: number, num = 50, endpoint = true, { dtype = DType.Float32 }: { dtype?: DType } = {}): Array {
  if (start === 0 || stop === 0 || Math.sign(start) !== Math.sign(stop)) throw new Error(`geomspace: got start ${start}, stop ${stop}, expected nonzero values of one sign`);
  const sgn = Math.sign(start);
  const e = run("linspace", [], { start: Math.log10(Math.abs(start)), stop: Math.log10(Math.abs(stop)), num, endpoint, dtype: "float64" });
  return run("astype", [run("multiply", [run("power", [10, e]), sgn])], { dtype });
}
export function diag(v: ArrayLike, k = 0): Array {
  const x = A(v);
  if (x.ndim === 1) {
    const n = x.shape[0] + Math.abs(k);
    const dtype = x.dtype;
    const padded = run("pad", [x], { width: [[0, Math.abs(k)]] });
    const e = run("eye", [], { n, m: n, k, dtype });
    return run("multiply", [e, run("reshape", [padded], { shape: k >= 0 ? [n, 1] : [1, n] })]);
  }
  if (x.ndim !== 2) throw new Error(`diag: got an array of rank ${x.ndim}, expected 1 or 2`);
  const sub = k >= 0 ? x.slice([], [k, x.shape[1]]) : x.slice([-k, x.shape[0]], []);
  const m = Math.min(sub.shape[0], sub.shape[1]);
  return sub.slice([0, m], [0, m]).diagonal();
}
export function select(condlist: ArrayLike[], choicelist: ArrayLike[], defaultValue: ArrayLike = 0): Array {
  if (condlist.length !== choicelist.length) throw new Error(`select: got ${condlist.length} conditions and ${choicelist.length} choices, expected as many`);
  let out: ArrayLike = defaultValue;
  for (let i = condlist.length - 1; i >= 0; i--) out = run("where", [condlist[i], choicelist[i], out]);
  return A(out);
}
export function meshgrid(xs: Array[], { indexing = "xy" }: { indexing?: "xy" | "ij" } = {}): Array[] {
  const n = xs.length;
  const sizes = xs.map((x) => x.size);
  if (indexing === "xy" && n >= 2) [sizes[0], sizes[1]] = [sizes[1], sizes[0]];
  return xs.map((x, i) => {
    const shape = globalThis.Array.from({ length: n }, () => 1);
    let pos = i;
    if (indexing === "xy" && n >= 2 && i < 2) pos = 1 - i;
    shape[pos] = x.size;
    return run("broadcast_to", [run("reshape", [x], { shape })], { shape: sizes });
  });
}

// ---- more of jax-js's numpy, composed ----
export function arrayEqual(a1: ArrayLike, a2: ArrayLike, { equalNaN = false }: { equalNaN?: boolean } = {}): Array {
  const a = A(a1), b = A(a2);
  if (a.shape.join(",") !== b.shape.join(",")) {
    a.dispose();
    b.dispose();
    return run("positive", [false]);
  }
  let eq = run("equal", [a.ref, b.ref]);
  if (equalNaN) eq = run("logical_or", [eq, run("logical_and", [run("isnan", [a.ref]), run("isnan", [b.ref])])]);
  a.dispose();
  b.dispose();
  return run("all", [eq]);
}
/** Equal after broadcasting. */
export function arrayEquiv(a1: ArrayLike, a2: ArrayLike): Array {
  return run("all", [run("equal", [a1, a2])]);
}
export function isscalar(element: unknown): boolean {
  return typeof element === "number" || typeof element === "boolean" || (element instanceof Array && element.ndim === 0);
}
/** The dtype of a binary op on strong operands of these dtypes (the core's promotion). */
export function promoteTypes(dtype1: DType, dtype2: DType): DType {
  const z = run("add", [run("zeros", [], { shape: [], dtype: dtype1 }), run("zeros", [], { shape: [], dtype: dtype2 })]);
  const d = z.dtype;
  z.dispose();
  return d;
}
export function resultType(...dtypes: DType[]): DType {
  return dtypes.reduce((a, b) => promoteTypes(a, b));
}
export function diagflat(v: ArrayLike, k = 0): Array {
  return diag(run("ravel", [v]), k);
}
export function divmod(x1: ArrayLike, x2: ArrayLike): [Array, Array] {
  const a = A(x1), b = A(x2);
  return [run("floor_divide", [a.ref, b.ref]), run("mod", [a, b])];
}
export function modf(x: ArrayLike): [Array, Array] {
  const a = A(x);
  const whole = run("trunc", [a.ref]);
  return [run("subtract", [a, whole.ref]), whole];
}
export const hsplit = (a: ArrayLike, s: number | number[]): Array[] => {
  const x = A(a);
  return run("split", [x], typeof s === "number" ? { sections: s, axis: x.ndim === 1 ? 0 : 1 } : { indices: s, axis: x.ndim === 1 ? 0 : 1 });
};
export const vsplit = (a: ArrayLike, s: number | number[]): Array[] =>
  run("split", [a], typeof s === "number" ? { sections: s, axis: 0 } : { indices: s, axis: 0 });
export const dsplit = (a: ArrayLike, s: number | number[]): Array[] =>
  run("split", [a], typeof s === "number" ? { sections: s, axis: 2 } : { indices: s, axis: 2 });
export function ediff1d(ary: ArrayLike): Array {
  return diff(run("ravel", [ary]), 1, 0);
}
export const nancumsum = (a: ArrayLike, axis?: number): Array => run("cumsum", [nanTo(a, 0)], { axis });
export const nancumprod = (a: ArrayLike, axis?: number): Array => run("cumprod", [nanTo(a, 1)], { axis });
export function nanvar(a: ArrayLike, axis?: Axis, opts: ReduceOpts & { correction?: number } = {}): Array {
  const x = A(a);
  const valid = run("logical_not", [run("isnan", [x.ref])]);
  const n = run("sum", [run("astype", [valid], { dtype: "float32" })], { axis, keepdims: true });
  const mean = run("divide", [nansum(x.ref, axis, { keepdims: true }), n.ref]);
  const dev = nansum(run("square", [run("subtract", [x, mean])]), axis, opts);
  const denom = run("subtract", [opts.keepdims ? n : run("squeeze", [n], { axis: axis ?? undefined }), opts.correction ?? 0]);
  return run("divide", [dev, denom]);
}
export const nanstd = (a: ArrayLike, axis?: Axis, opts: ReduceOpts & { correction?: number } = {}): Array => run("sqrt", [nanvar(a, axis, opts)]);
/** The trapezoidal rule along `axis`, with unit spacing or dx (x samples: not supported yet). */
export function trapezoid(y: ArrayLike, x: ArrayLike | null = null, { dx = 1, axis = -1 }: { dx?: number; axis?: number } = {}): Array {
  if (x !== null) throw new Error("trapezoid: sample points x are not supported by kiln yet; pass dx");
  const a = A(y);
  const nd = a.ndim;
  const hi = a.ref.slice(...axisTerms(nd, axis, [1]));
  const lo = a.slice(...axisTerms(nd, axis, [0, -1]));
  return run("multiply", [run("sum", [run("add", [hi, lo])], { axis }), dx / 2]);
}
export function rot90(m: ArrayLike, k = 1, axes: [number, number] = [0, 1]): Array {
  let x = A(m);
  const kk = ((k % 4) + 4) % 4;
  const [a0, a1] = axes;
  if (kk === 0) return x;
  if (kk === 2) return run("flip", [x], { axis: [a0, a1] });
  if (kk === 1) return run("swapaxes", [run("flip", [x], { axis: a1 })], { a: a0, b: a1 });
  x = run("swapaxes", [x], { a: a0, b: a1 });
  return run("flip", [x], { axis: a1 });
}
/** Cross product of 3-vectors along `axis` (default the last). */
export function cross(x1: ArrayLike, x2: ArrayLike, axis = -1): Array {
  const a = unstack(x1, axis), b = unstack(x2, axis);
  if (a.length !== 3 || b.length !== 3) throw new Error(`cross: got vectors of length ${a.length} and ${b.length}, expected 3`);
  const c = (i: number, j: number) => run("subtract", [run("multiply", [a[i].ref, b[j].ref]), run("multiply", [a[j].ref, b[i].ref])]);
  const out = [c(1, 2), c(2, 0), c(0, 1)];
  for (const t of [...a, ...b]) t.dispose();
  return run("stack", out, { axis: axis < 0 ? axis + out[0].ndim + 1 : axis });
}
export function vander(x: ArrayLike, { n: N, increasing = false }: { n?: number; increasing?: boolean } = {}): Array {
  const a = A(x);
  const n = N ?? a.shape[0];
  let p = run("arange", [], { start: 0, stop: n, dtype: a.dtype });
  if (!increasing) p = run("flip", [p], { axis: 0 });
  return run("power", [run("expand_dims", [a], { axis: 1 }), p]);
}
export function indices(dimensions: number[], { dtype = DType.Int32 }: { dtype?: DType } = {}): Array {
  const grids = dimensions.map((d, i) => {
    const shape = dimensions.map((_, j) => (j === i ? d : 1));
    return run("broadcast_to", [run("reshape", [run("arange", [], { start: 0, stop: d, dtype })], { shape })], { shape: dimensions });
  });
  return run("stack", grids, { axis: 0 });
}
export const floatPower = (x1: ArrayLike, x2: ArrayLike): Array =>
  run("power", [run("astype", [x1], { dtype: "float32" }), x2]);
const window = (M: number, f: (n: Array) => Array): Array => {
  if (M <= 1) return run("ones", [], { shape: [Math.max(M, 0)] });
  return f(run("arange", [], { start: 0, stop: M, dtype: "float32" }));
};
export const hann = (M: number): Array => window(M, (n) => run("subtract", [0.5, run("multiply", [run("cos", [run("multiply", [n, (2 * Math.PI) / (M - 1)])]), 0.5])]));
export const bartlett = (M: number): Array =>
  window(M, (n) => run("subtract", [1, run("abs", [run("subtract", [run("multiply", [n, 2 / (M - 1)]), 1])])]));
export const blackman = (M: number): Array =>
  window(M, (n) => {
    const t = run("multiply", [n, (2 * Math.PI) / (M - 1)]);
    return run("add", [run("subtract", [0.42, run("multiply", [run("cos", [t.ref]), 0.5])]), run("multiply", [run("cos", [run("multiply", [t, 2])]), 0.08])]);
  });
/** Machine limits of a float dtype (eps, min, max, tiny, bits), as numpy.finfo. */
export function finfo(dtype: DType) {
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
export function iinfo(dtype: DType) {
  if (dtype === DType.Int32) return { dtype, bits: 32, min: -(2 ** 31), max: 2 ** 31 - 1 };
  if (dtype === DType.Uint32) return { dtype, bits: 32, min: 0, max: 2 ** 32 - 1 };
  throw new Error(`iinfo: got dtype ${dtype}, expected int32 or uint32`);
}

// ---- membership, NaN-aware argmax/argmin and polynomials (jax-js's compositions) ----
/** Whether each element of `element` occurs in `testElements` (invert: does not). */
export function isin(element: ArrayLike, testElements: ArrayLike, { invert = false }: { invert?: boolean } = {}): Array {
  const e = A(element);
  const s = e.shape;
  const hit = run("any", [run("equal", [run("expand_dims", [run("ravel", [e])], { axis: 1 }), run("ravel", [testElements])])], { axis: 1 });
  return run("reshape", [invert ? run("logical_not", [hit]) : hit], { shape: s });
}
function nanArg(op: "argmax" | "argmin", a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array {
  const x = A(a);
  if (!x.dtype.startsWith("float")) return run(op, [x], { axis, keepdims: opts.keepdims });
  const nan = run("isnan", [x.ref]);
  const r = run(op, [run("where", [nan.ref, op === "argmax" ? -Infinity : Infinity, x])], { axis, keepdims: opts.keepdims });
  // All-NaN slices give -1, as jax.numpy.
  return run("where", [run("all", [nan], { axis, keepdims: opts.keepdims }), run("astype", [-1], { dtype: "int32" }), r]);
}
export const nanargmax = (a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array => nanArg("argmax", a, axis, opts);
export const nanargmin = (a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array => nanArg("argmin", a, axis, opts);
/** p[0] x^(n-1) + ... + p[n-1], by Horner's rule. */
export function polyval(p: ArrayLike, x: ArrayLike): Array {
  const c = A(p), xx = A(x);
  if (c.ndim === 0) throw new Error(`polyval: coefficients must have at least one dimension, got 0D`);
  const terms = unstack(c, 0);
  let acc = terms[0];
  for (let i = 1; i < terms.length; i++) acc = run("add", [run("multiply", [acc, xx.ref]), terms[i]]);
  xx.dispose();
  return acc;
}
function polyAlign(a1: ArrayLike, a2: ArrayLike): [Array, Array] {
  const a = A(a1), b = A(a2);
  const n = Math.max(a.shape[0], b.shape[0]);
  const lead = (v: Array) => (v.shape[0] === n ? v : run("pad", [v], { width: [[n - v.shape[0], 0]], mode: "constant", value: 0 }));
  return [lead(a), lead(b)];
}
export function polyadd(a1: ArrayLike, a2: ArrayLike): Array {
  return run("add", polyAlign(a1, a2));
}
export function polysub(a1: ArrayLike, a2: ArrayLike): Array {
  return run("subtract", polyAlign(a1, a2));
}
/** The m-th derivative of the polynomial p (highest power first). */
export function polyder(p: ArrayLike, m = 1): Array {
  if (!Number.isInteger(m) || m < 0) throw new Error(`polyder: order of derivative must be a non-negative integer, got ${m}`);
  let c = A(p);
  if (!c.dtype.startsWith("float")) c = run("astype", [c], { dtype: "float32" });
  for (let k = 0; k < m; k++) {
    const n = c.shape[0];
    if (n <= 1) {
      // NumPy: the derivative of a constant is the empty polynomial.
      const dtype = c.dtype, device = c.device;
      c.dispose();
      return run("zeros", [], { shape: [0], dtype, device });
    }
    const powers = run("arange", [], { start: n - 1, stop: 0, step: -1, dtype: c.dtype });
    c = run("multiply", [c.slice([0, n - 1]), powers]);
  }
  return c;
}

/** Mantissa in ±[0.5, 1) and int32 exponent with x = m 2^e (0, inf and NaN: exponent 0). */
export function frexp(x: ArrayLike): [Array, Array] {
  let a = x instanceof Array ? x : run("positive", [x]);
  if (a.dtype !== "float32" && a.dtype !== "float16" && a.dtype !== "float64") a = run("astype", [a], { dtype: "float32" });
  const dtype = a.dtype;
  if (dtype === "float64") return frexpByScaling(a);
  // float32 (float16 through float32): the exponent field read from the bits, exactly;
  // subnormals are scaled by 2^24 first.
  const f = dtype === "float32" ? a : run("astype", [a], { dtype: "float32" });
  const sub = run("less", [run("abs", [f.ref]), 1.1754943508222875e-38]);
  const scaled = run("where", [sub.ref, run("multiply", [f.ref, 16777216]), f.ref]);
  const bits = run("bitcast_convert_type", [scaled], { dtype: "int32" });
  const field = run("bitwise_and", [run("right_shift", [bits.ref, 23]), 255]);
  const special = run("logical_or", [run("equal", [f.ref, 0]), run("logical_not", [run("isfinite", [f.ref])])]);
  let e = run("subtract", [field, run("where", [sub, 150, 126])]);
  e = run("where", [special.ref, 0, run("astype", [e], { dtype: "int32" })]);
  const mbits = run("bitwise_or", [run("bitwise_and", [bits, -2139095041]), 1056964608]); // 0x807fffff, 0x3f000000
  let m = run("where", [special, f, run("bitcast_convert_type", [mbits], { dtype: "float32" })]);
  if (dtype !== "float32") m = run("astype", [m], { dtype });
  return [m, run("astype", [e], { dtype: "int32" })];
}

// float64 has no integer type wide enough to read its bits in kiln: estimate the exponent
// from log2 and correct it by one either way, scaling by exact powers of two.
function frexpByScaling(a: Array): [Array, Array] {
  const special = run("logical_or", [run("equal", [a.ref, 0]), run("logical_not", [run("isfinite", [a.ref])])]);
  const safe = run("where", [special.ref, 1, a.ref]);
  let e = run("add", [run("floor", [run("log2", [run("abs", [safe.ref])])]), 1]);
  let m = run("divide", [safe.ref, run("power", [2, e.ref])]);
  for (const [test, de] of [[(v: Array) => run("greater_equal", [run("abs", [v]), 1]), 1], [(v: Array) => run("less", [run("abs", [v]), 0.5]), -1]] as const) {
    const fix = test(m);
    e = run("add", [e, run("where", [fix, de, 0])]);
    m = run("divide", [safe.ref, run("power", [2, e.ref])]);
  }
  safe.dispose();
  m = run("where", [special.ref, a, m]);
  e = run("where", [special, 0, e]);
  return [m, run("astype", [e], { dtype: "int32" })];
}

/** Number of 1 bits of |x| (bool gives int32; int32 and uint32 keep their dtype), as jnp. */
export function bitwiseCount(x: ArrayLike): Array {
  const a = x instanceof Array ? x : run("positive", [x]);
  if (a.dtype === "bool") return run("astype", [a], { dtype: "int32" });
  if (a.dtype !== "int32" && a.dtype !== "uint32") {
    const d = a.dtype;
    a.dispose();
    throw new TypeError(`bitwiseCount: unsupported dtype ${d}, expected bool, int32 or uint32`);
  }
  const dtype = a.dtype;
  // SWAR popcount on the unsigned bits; the byte sums stay below 256, so nothing overflows.
  let v = run("bitcast_convert_type", [dtype === "int32" ? run("abs", [a]) : a], { dtype: "uint32" });
  // JS numbers meeting a uint32 Array become exact uint32 scalars (weak typing).
  const u = (n: number) => n;
  v = run("subtract", [v.ref, run("bitwise_and", [run("right_shift", [v, u(1)]), u(0x55555555)])]);
  v = run("add", [run("bitwise_and", [v.ref, u(0x33333333)]), run("bitwise_and", [run("right_shift", [v, u(2)]), u(0x33333333)])]);
  v = run("bitwise_and", [run("add", [v.ref, run("right_shift", [v, u(4)])]), u(0x0f0f0f0f)]);
  let c = run("bitwise_and", [v.ref, u(255)]);
  for (const s of [8, 16, 24]) c = run("add", [c, run("bitwise_and", [run("right_shift", [v.ref, u(s)]), u(255)])]);
  v.dispose();
  return run("astype", [c], { dtype });
}
