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
