// The functions of kiln's `numpy` namespace that are one call into the core's op table each
// (jax-js's names and argument forms: option objects for keyword arguments), the dtype
// constants and array creation. Every function consumes its Arrays. The modules that compose
// numpy functions import this one; `numpy.ts` re-exports it as part of the namespace.
import { Array, DType, describeValue, run, type ArrayLike, type Axis, type Device, type Pair, type ReduceOpts, named } from "./array.js";
import { check, core } from "./core.js";

/** The 32-bit float dtype, the default for numbers. */
export const float32 = DType.Float32;
/** The 32-bit signed integer dtype (arange's and argmax's results). */
export const int32 = DType.Int32;
/** The 32-bit unsigned integer dtype (random bits). */
export const uint32 = DType.Uint32;
/** The boolean dtype (comparisons' results). */
export const bool = DType.Bool;
/** The 16-bit IEEE half dtype (stored as half bits on devices that have them). */
export const float16 = DType.Float16;
/** The 64-bit float dtype (cpu and wasm; webgpu has no float64). */
export const float64 = DType.Float64;
/** The constant π. */
export const pi = Math.PI;
/** Euler's number e. */
export const e = Math.E;
/** Positive infinity. */
export const inf = Infinity;
/** Not a number (NaN). */
export const nan = NaN;
/** The Euler–Mascheroni constant γ. */
export const eulerGamma = 0.5772156649015329;

type DTypeAndDevice = { dtype?: DType; device?: Device };

const typedCtor: Record<string, any> = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  uint32: Uint32Array,
  bool: Uint8Array,
};

const DTYPES: ReadonlySet<DType> = new Set(Object.values(DType));

function dtypeOfTyped(x: any): DType {
  if (x instanceof Float32Array) return DType.Float32;
  if (x instanceof Float64Array) return DType.Float64;
  if (x instanceof Int32Array) return DType.Int32;
  if (x instanceof Uint32Array) return DType.Uint32;
  if (x instanceof Uint8Array) return DType.Bool;
  throw new TypeError(`array: got a ${x?.constructor?.name}, expected a Float32Array, Float64Array, Int32Array, Uint32Array or Uint8Array`);
}

function deviceOr(d?: Device): string {
  return d ?? core.defaultDevice();
}

/** Creates an array from a nested JS array, a TypedArray, a number or an Array. */
function array_(
  values: Array | ArrayLike | any[] | Float32Array | Float64Array | Int32Array | Uint32Array | Uint8Array,
  { shape, dtype, device }: { shape?: number[] } & DTypeAndDevice = {},
): Array {
  if (values instanceof Array) {
    let a = values;
    if (dtype !== undefined && dtype !== a.dtype) a = a.astype(dtype);
    if (shape !== undefined) a = a.reshape(shape);
    return a;
  }
  let flat: { readonly length: number; readonly [i: number]: any };
  let inferred: DType;
  let inferredShape: number[];
  if (ArrayBuffer.isView(values)) {
    flat = values as any;
    inferred = dtypeOfTyped(values);
    inferredShape = [(values as any).length];
  } else if (typeof values === "number" || typeof values === "boolean") {
    if (dtype === undefined && shape === undefined) {
      // A JS scalar is weakly typed (float32 for numbers), as in jax-js.
      return new Array(check(core.weakScalar(values ? Number(values) : 0, typeof values === "boolean" ? "bool" : "", deviceOr(device))));
    }
    flat = [values];
    inferred = typeof values === "boolean" ? DType.Bool : DType.Float32;
    inferredShape = [];
  } else {
    inferredShape = [];
    let level: any = values;
    while (globalThis.Array.isArray(level)) {
      inferredShape.push(level.length);
      level = level[0];
    }
    const out: any[] = [];
    const rec = (x: any, axis: number) => {
      if (axis === inferredShape.length) {
        if (globalThis.Array.isArray(x)) throw new Error(`array: ragged nested array (expected shape [${inferredShape}])`);
        // Anything else (an object, a string, a disposed-or-live Array) would become NaN.
        if (typeof x !== "number" && typeof x !== "boolean") {
          if (x instanceof Array) x._h(); // a disposed Array is a ReferenceError, as elsewhere
          throw new TypeError(`array: got ${describeValue(x)} as an element, expected numbers or booleans`);
        }
        out.push(x);
        return;
      }
      if (!globalThis.Array.isArray(x) || x.length !== inferredShape[axis])
        throw new Error(`array: ragged nested array (expected shape [${inferredShape}])`);
      for (const c of x) rec(c, axis + 1);
    };
    rec(values, 0);
    flat = out;
    inferred = out.length > 0 && typeof out[0] === "boolean" ? DType.Bool : DType.Float32;
  }
  const target = dtype ?? inferred;
  if (!DTYPES.has(target as DType))
    throw new TypeError(`array: got dtype '${String(target)}', expected one of ${Object.values(DType).join(", ")}`);
  const storage = target === DType.Float16 ? DType.Float32 : target;
  const Ctor = typedCtor[storage];
  // Typed arrays convert through the constructor: TypedArray.from(typed, fn) first collects
  // every value into a list (out of JS heap for 64M float32 under a 1.5 GB heap).
  let data: ArrayBufferView;
  if (storage === DType.Bool) {
    const d = new Uint8Array(flat.length);
    for (let i = 0; i < flat.length; i++) d[i] = flat[i] ? 1 : 0;
    data = d;
  } else if (flat instanceof Ctor) {
    data = flat as unknown as ArrayBufferView;  // already the storage type: the core copies the bytes
  } else {
    data = ArrayBuffer.isView(flat) ? new Ctor(flat as any) : Ctor.from(flat as any, (x: any) => Number(x));
  }
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const finalShape = shape ?? inferredShape;
  let a = new Array(check(core.fromBytes(bytes, finalShape, storage, deviceOr(device))));
  if (storage !== target) a = a.astype(target);
  return a;
}

function zeros_(shape: number[], opts: DTypeAndDevice = {}): Array {
  return run("zeros", [], { shape, dtype: opts.dtype, device: opts.device });
}
function ones_(shape: number[], opts: DTypeAndDevice = {}): Array {
  return run("ones", [], { shape, dtype: opts.dtype, device: opts.device });
}
function full_(shape: number[], fillValue: number | boolean | Array, { dtype, device }: DTypeAndDevice = {}): Array {
  return run("full", [fillValue], { shape, dtype, device });
}
function eye_(numRows: number, numCols?: number, { dtype, device }: DTypeAndDevice = {}): Array {
  return run("eye", [], { n: numRows, m: numCols, dtype, device });
}
function identity_(n: number, opts: DTypeAndDevice = {}): Array {
  return eye(n, n, opts);
}
/** arange(stop), arange(start, stop), arange(start, stop, step); int32 unless dtype is given. */
function arange_(start: number, stop?: number, step?: number, { dtype, device }: DTypeAndDevice = {}): Array {
  if (stop === undefined) [start, stop] = [0, start];
  return run("arange", [], { start, stop, step: step ?? 1, dtype, device });
}
function linspace_(start: number, stop: number, num = 50, endpoint = true, { dtype, device }: DTypeAndDevice = {}): Array {
  return run("linspace", [], { start, stop, num, endpoint, dtype, device });
}
function zerosLike_(a: ArrayLike, opts: { dtype?: DType; shape?: number[]; device?: Device } = {}): Array {
  return fullLike(a, 0, opts);
}
function onesLike_(a: ArrayLike, opts: { dtype?: DType; shape?: number[]; device?: Device } = {}): Array {
  return fullLike(a, 1, opts);
}
function fullLike_(a: ArrayLike, fillValue: number | boolean | Array, opts: { dtype?: DType; shape?: number[]; device?: Device } = {}): Array {
  const x = a instanceof Array ? a : array(a);
  const shape = opts.shape ?? x.shape;
  const dtype = opts.dtype ?? x.dtype;
  const device = opts.device ?? x.device;
  x.dispose();
  return full(shape, fillValue, { dtype, device });
}

// The elementwise functions are a table of their own (numpy_elementwise.ts), re-exported here so
// that the modules composing numpy functions keep importing this one.
export * from "./numpy_elementwise.js";

function where_(cond: ArrayLike, x: ArrayLike, y: ArrayLike): Array {
  return run("where", [cond, x, y]);
}
function clip_(a: ArrayLike, min?: ArrayLike, max?: ArrayLike): Array {
  const args: ArrayLike[] = [a];
  if (min !== undefined && min !== null) args.push(min);
  if (max !== undefined && max !== null) args.push(max);
  return run("clip", args, { hasMin: min !== undefined && min !== null, hasMax: max !== undefined && max !== null });
}
function astype_(a: ArrayLike, dtype: DType): Array {
  return run("astype", [a], { dtype });
}

// ---- reductions ----
const red = (op: string) => (a: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array => run(op, [a], { axis, keepdims: opts.keepdims });
/**
 * Sum of the elements over `axis` (all axes by default).
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 *
 * @example
 * ```ts
 * np.sum(np.array([[1, 2], [3, 4]]), 0); // [4, 6]
 * ```
 */
export const sum = red("sum");
/**
 * Product of the elements over `axis` (all by default).
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 */
export const prod = red("prod");
/**
 * Maximum over `axis` (all by default); NaN propagates.
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 */
export const max = red("max");
/**
 * Minimum over `axis` (all by default); NaN propagates.
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 */
export const min = red("min");
/**
 * Arithmetic mean over `axis` (all by default); integers give float32.
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 */
export const mean = red("mean");
/**
 * Whether any element over `axis` is nonzero; a bool array.
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 */
export const any = red("any");
/**
 * Whether every element over `axis` is nonzero; a bool array.
 * `axis`: one, a list, or all when undefined (negative counts from the end); `opts.keepdims` keeps them with size 1.
 */
export const all = red("all");
type VarOpts = { mean?: ArrayLike; correction?: number } & ReduceOpts;
function var__(x: ArrayLike, axis?: Axis, opts: VarOpts = {}): Array {
  if (opts.mean !== undefined) throw new Error("var: the mean option is not supported by kiln yet");
  return run("var", [x], { axis, keepdims: opts.keepdims, ddof: opts.correction ?? 0 });
}
function std_(x: ArrayLike, axis?: Axis, opts: VarOpts = {}): Array {
  if (opts.mean !== undefined) throw new Error("std: the mean option is not supported by kiln yet");
  return run("std", [x], { axis, keepdims: opts.keepdims, ddof: opts.correction ?? 0 });
}
function argmax_(a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array {
  return run("argmax", [a], { axis, keepdims: opts.keepdims });
}
function argmin_(a: ArrayLike, axis?: number, opts: ReduceOpts = {}): Array {
  return run("argmin", [a], { axis, keepdims: opts.keepdims });
}
/** Sorted along `axis` (null: flattened); stable, NaN last (src/library/numpy_sort.cpp). */
function sort_(a: ArrayLike, axis: number | null = -1): Array {
  return run("sort", [a], { axis });
}
/** The int32 indices that sort `a` along `axis`, stably (equal values keep their order). */
function argsort_(a: ArrayLike, axis: number | null = -1): Array {
  return run("argsort", [a], { axis });
}
function cumsum_(a: ArrayLike, axis?: number): Array {
  return run("cumsum", [a], { axis });
}
function cumprod_(a: ArrayLike, axis?: number): Array {
  return run("cumprod", [a], { axis });
}
/** The array API's cumulative sums: `axis` may be left out only for 0-d and 1-d arrays (as JAX, jax-js). */
function cumulativeAxis(op: string, x: ArrayLike, axis: number | undefined): number | undefined {
  const nd = x instanceof Array ? x.ndim : 0;
  if (axis === undefined && nd > 1) throw new Error(`${op}: got an array of rank ${nd} and no axis, expected an axis for arrays of rank above 1`);
  return axis;
}
/**
 * Cumulative sum along `opts.axis` (the array API's form): the axis may be left out only for 0-d and 1-d input.
 *
 * @throws Error when `x` has rank above 1 and no axis is given.
 */
export const cumulativeSum = named("cumulativeSum", (x: ArrayLike, opts: { axis?: number } = {}) => cumsum(x, cumulativeAxis("cumulativeSum", x, opts.axis)));
/**
 * Cumulative product along `opts.axis` (the array API's form): the axis may be left out only for 0-d and 1-d input.
 *
 * @throws Error when `x` has rank above 1 and no axis is given.
 */
export const cumulativeProd = named("cumulativeProd", (x: ArrayLike, opts: { axis?: number } = {}) => cumprod(x, cumulativeAxis("cumulativeProd", x, opts.axis)));

// ---- movement ----
function reshape_(x: ArrayLike, shape: number[]): Array {
  return run("reshape", [x], { shape });
}
function transpose_(x: ArrayLike, perm?: number[]): Array {
  return run("transpose", [x], { perm });
}
function matrixTranspose_(x: ArrayLike): Array {
  return run("swapaxes", [x], { a: -1, b: -2 });
}
function swapaxes_(x: ArrayLike, axis1: number, axis2: number): Array {
  return run("swapaxes", [x], { a: axis1, b: axis2 });
}
function moveaxis_(x: ArrayLike, src: number, dst: number): Array {
  return run("moveaxis", [x], { src, dst });
}
function broadcastTo_(a: ArrayLike, shape: number[]): Array {
  return run("broadcast_to", [a], { shape });
}
function broadcastShapes_(...shapes: number[][]): number[] {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let d = 1;
    for (const s of shapes) {
      const e = s[s.length - n + i] ?? 1;
      if (e !== 1 && d !== 1 && e !== d) throw new TypeError(`broadcastShapes: shapes ${shapes.map((s) => `[${s}]`).join(" ")} cannot be broadcast together`);
      if (e !== 1) d = e;
    }
    out.push(d);
  }
  return out;
}
function broadcastArrays_(...arrays: Array[]): Array[] {
  const shape = broadcastShapes(...arrays.map((a) => a.shape));
  return arrays.map((a) => broadcastTo(a, shape));
}
function expandDims_(a: ArrayLike, axis: number | number[]): Array {
  return run("expand_dims", [a], { axis });
}
function squeeze_(a: ArrayLike, axis?: Axis): Array {
  return run("squeeze", [a], { axis });
}
function flip_(x: ArrayLike, axis?: Axis): Array {
  return run("flip", [x], { axis });
}
/** Reverses axis 1 (left/right). */
export const fliplr = named("fliplr", (x: ArrayLike) => flip(x, 1));
/** Reverses axis 0 (up/down). */
export const flipud = named("flipud", (x: ArrayLike) => flip(x, 0));
function repeat_(a: ArrayLike, repeats: number, axis?: number): Array {
  return run("repeat", [a], { repeats, axis });
}
function tile_(a: ArrayLike, reps: number | number[]): Array {
  return run("tile", [a], { reps: typeof reps === "number" ? [reps] : reps });
}
/** pad(x, width): width is n, [before, after], one pair per axis, or {axis: pair}. */
function pad_(x: ArrayLike, width: number | Pair | Pair[] | Record<number, Pair>): Array {
  const nd = x instanceof Array ? x.ndim : 0;
  let pairs: Pair[];
  if (typeof width === "number") pairs = globalThis.Array.from({ length: nd }, () => [width, width] as Pair);
  else if (globalThis.Array.isArray(width) && typeof width[0] === "number") pairs = globalThis.Array.from({ length: nd }, () => width as Pair);
  else if (globalThis.Array.isArray(width)) pairs = width as Pair[];
  else {
    pairs = globalThis.Array.from({ length: nd }, () => [0, 0] as Pair);
    for (const [k, v] of Object.entries(width)) pairs[(Number(k) + nd) % nd] = v as Pair;
  }
  return run("pad", [x], { width: pairs });
}
function concatenate_(xs: Array[], axis = 0): Array {
  return run("concatenate", xs, { axis });
}
function stack_(xs: ArrayLike[], axis = 0): Array {
  return run("stack", xs, { axis });
}
function split_(a: ArrayLike, indicesOrSections: number | number[], axis = 0): Array[] {
  return typeof indicesOrSections === "number"
    ? run("split", [a], { sections: indicesOrSections, axis })
    : run("split", [a], { indices: indicesOrSections, axis });
}
function take_(a: ArrayLike, indices: ArrayLike, axis?: number | null): Array {
  return run("take", [a, integerIndices(indices)], { axis: axis ?? undefined });
}
/** Float index Arrays truncate to int32, as jax-js takes them (JAX refuses them). */
function integerIndices(indices: ArrayLike): ArrayLike {
  return indices instanceof Array && indices.dtype.startsWith("float") ? astype(indices, DType.Int32) : indices;
}
function takeAlongAxis_(a: ArrayLike, indices: ArrayLike, axis: number): Array {
  return run("take_along_axis", [a, integerIndices(indices)], { axis });
}
function tensordot_(x: ArrayLike, y: ArrayLike, axes: number | [number[], number[]] = 2): Array {
  return run("tensordot", [x, y], { axes });
}
function einsum_(...args: (string | ArrayLike | number[])[]): Array {
  if (typeof args[0] === "string") return run("einsum", args.slice(1) as ArrayLike[], { subscripts: args[0] });
  // The sublist form: operand, its axis labels (integers), ..., and the output's labels last
  // when the count is odd; labels become subscript letters.
  const letter = (i: unknown) => {
    if (!Number.isInteger(i) || (i as number) < 0 || (i as number) >= 52) throw new Error(`einsum: got axis label ${String(i)}, expected an integer in [0, 52)`);
    return "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[i as number];
  };
  const labels = (l: unknown) => {
    if (!globalThis.Array.isArray(l)) throw new TypeError(`einsum: got ${describeValue(l)} where a JS array of axis labels was expected`);
    return l.map(letter).join("");
  };
  const operands: ArrayLike[] = [], terms: string[] = [];
  for (let i = 0; i + 1 < args.length; i += 2) {
    operands.push(args[i] as ArrayLike);
    terms.push(labels(args[i + 1]));
  }
  const out = args.length % 2 === 1 ? `->${labels(args[args.length - 1])}` : "";
  return run("einsum", operands, { subscripts: terms.join(",") + out });
}
function diagonal_(a: Array, offset = 0, axis1 = 0, axis2 = 1): Array {
  return a.diagonal(offset, axis1, axis2);
}

function shape_(a: ArrayLike): number[] {
  return a instanceof Array ? a.shape : [];
}
function ndim_(a: ArrayLike): number {
  return a instanceof Array ? a.ndim : 0;
}
function size_(a: ArrayLike, axis?: number): number {
  const shape = a instanceof Array ? a.shape : [];
  if (axis === undefined || axis === null) return shape.reduce((p, d) => p * d, 1);
  if (!Number.isInteger(axis) || axis < -shape.length || axis >= shape.length) throw new Error(`size: axis ${axis} is out of bounds for an array of rank ${shape.length}`);
  return shape[(axis + shape.length) % shape.length];
}

/** Whether all |actual - expected| <= atol + rtol * |expected| (consumes Array arguments). */
function allclose_(actual: any, expected: any, options: { rtol?: number; atol?: number; equalNaN?: boolean } = {}): boolean {
  const { rtol = 1e-5, atol = 1e-8, equalNaN = false } = options;
  const read = (x: any) => (x instanceof Array ? [x.shape, x.dataSync()] : (() => { const a = array(x); return [a.shape, a.dataSync()]; })());
  const [sa, da] = read(actual) as [number[], Float32Array];
  const [sb, db] = read(expected) as [number[], Float32Array];
  const shapeOut = broadcastShapes(sa, sb);
  if (shapeOut.reduce((p, q) => p * q, 1) !== Math.max(da.length, db.length) && da.length !== db.length) return false;
  const n = Math.max(da.length, db.length);
  for (let i = 0; i < n; i++) {
    const a = Number(da[da.length === 1 ? 0 : i]);
    const b = Number(db[db.length === 1 ? 0 : i]);
    if (Number.isNaN(a) || Number.isNaN(b)) {
      if (!(equalNaN && Number.isNaN(a) && Number.isNaN(b))) return false;
      continue;
    }
    if (a === b) continue;
    if (!(Math.abs(a - b) <= atol + rtol * Math.abs(b))) return false;
  }
  return true;
}

// Errors name these functions first (array.ts, named), also where they are composed of others.
/**
 * Creates an array from a nested JS array, a TypedArray, a number or boolean, or an Array.
 *
 * @param values - the data: a rectangular nested array of numbers or booleans, a Float32Array, Float64Array, Int32Array, Uint32Array or Uint8Array (bool), a scalar, or an Array (consumed; converted by `dtype` and `shape`).
 * @param options - `shape` (reshapes the flat data), `dtype` (default: float32 for numbers, bool for booleans, the TypedArray's own type), `device` (default: the default device).
 * @returns a new Array. A bare number gives a weakly typed scalar, as a Python scalar in JAX.
 * @throws Error on a ragged nested array; TypeError on a non-numeric element, an unsupported TypedArray, or an unknown dtype.
 * @example
 * ```ts
 * import { numpy as np } from "kiln";
 * const x = np.array([[1, 2], [3, 4]]);                 // float32, shape [2, 2]
 * const i = np.array([1, 2, 3], { dtype: np.int32 });
 * const t = np.array(new Float32Array(6), { shape: [2, 3] });
 * console.log(await x.data());                          // Float32Array [1, 2, 3, 4]
 * ```
 */
export const array = named("array", array_);
/**
 * An array of zeros.
 *
 * @param shape - the output shape.
 * @param opts - `dtype` (default float32) and `device` (default: the default device).
 * @throws Error on a negative size or an array too large for the device.
 * @example
 * ```ts
 * const z = np.zeros([2, 3], { dtype: np.int32 });
 * ```
 */
export const zeros = named("zeros", zeros_);
/** An array of ones; options as {@link zeros}. */
export const ones = named("ones", ones_);
/**
 * An array filled with `fillValue` (a number, boolean, or a scalar Array, consumed); the dtype defaults to the fill value's. Options as {@link zeros}.
 */
export const full = named("full", full_);
/**
 * A 2-D array with ones on the diagonal and zeros elsewhere.
 *
 * @param numRows - the number of rows.
 * @param numCols - the number of columns (default: numRows).
 * @param opts - `dtype` (default float32) and `device`.
 */
export const eye = named("eye", eye_);
/** The n × n identity matrix (eye(n, n)). */
export const identity = named("identity", identity_);
/**
 * Evenly spaced values in [start, stop): `arange(stop)`, `arange(start, stop)` or `arange(start, stop, step)`.
 *
 * @param opts - `dtype` (default int32, as jax-js; pass float32 for fractional steps) and `device`.
 * @throws Error on a zero step.
 * @example
 * ```ts
 * np.arange(5);                                 // int32 [0, 1, 2, 3, 4]
 * np.arange(0, 1, 0.25, { dtype: np.float32 }); // [0, 0.25, 0.5, 0.75]
 * ```
 */
export const arange = named("arange", arange_);
/**
 * `num` evenly spaced values from `start` to `stop` (included unless `endpoint` is false).
 *
 * @param num - how many values (default 50).
 * @param endpoint - whether `stop` is the last value (default true).
 * @param opts - `dtype` (default float32) and `device`.
 * @example
 * ```ts
 * np.linspace(0, 1, 5); // [0, 0.25, 0.5, 0.75, 1]
 * ```
 */
export const linspace = named("linspace", linspace_);
/** Zeros with the shape, dtype and device of `a` (consumed); `opts` overrides any of them. */
export const zerosLike = named("zerosLike", zerosLike_);
/** Ones with the shape, dtype and device of `a` (consumed); `opts` overrides any of them. */
export const onesLike = named("onesLike", onesLike_);
/** `fillValue` with the shape, dtype and device of `a` (consumed); `opts` overrides any of them. */
export const fullLike = named("fullLike", fullLike_);
/**
 * Elementwise choice: `x` where `cond` is true, `y` elsewhere (all three broadcast and are consumed).
 *
 * @example
 * ```ts
 * np.where(np.array([true, false]), 1, 0); // [1, 0]
 * ```
 */
export const where = named("where", where_);
/**
 * Limits the values of `a` to [min, max]; either bound may be left out (undefined or null). Consumes its Arrays.
 */
export const clip = named("clip", clip_);
/** `a` converted to `dtype` (floats to integers truncate toward zero, as NumPy). */
export const astype = named("astype", astype_);
/**
 * Variance over `axis` (all by default). `opts.correction` is the delta degrees of freedom (default 0), `opts.keepdims` keeps reduced axes.
 *
 * @throws Error when `opts.mean` is given (not supported yet).
 */
export const var_ = named("var_", var__);
/**
 * Standard deviation over `axis` (all by default); options as {@link var_}.
 *
 * @throws Error when `opts.mean` is given (not supported yet).
 */
export const std = named("std", std_);
/**
 * The int32 index of the maximum along `axis` (of the flattened array when undefined); the first one on ties.
 */
export const argmax = named("argmax", argmax_);
/**
 * The int32 index of the minimum along `axis` (of the flattened array when undefined); the first one on ties.
 */
export const argmin = named("argmin", argmin_);
/**
 * Sorted along `axis` (default -1; null sorts the flattened array). Stable; NaN sorts last; differentiable.
 */
export const sort = named("sort", sort_);
/**
 * The int32 indices that sort `a` along `axis` (default -1), stably: equal values keep their order.
 */
export const argsort = named("argsort", argsort_);
/** Cumulative sum along `axis` (of the flattened array when undefined). */
export const cumsum = named("cumsum", cumsum_);
/** Cumulative product along `axis` (of the flattened array when undefined). */
export const cumprod = named("cumprod", cumprod_);
/**
 * `x` with a new shape of the same size; one entry may be -1 (inferred).
 *
 * @throws Error when the sizes differ.
 * @example
 * ```ts
 * np.reshape(np.arange(6), [2, -1]); // shape [2, 3]
 * ```
 */
export const reshape = named("reshape", reshape_);
/** `x` with its axes permuted by `perm` (default: reversed). */
export const transpose = named("transpose", transpose_);
/** Swaps the last two axes (a batch of matrices transposed). */
export const matrixTranspose = named("matrixTranspose", matrixTranspose_);
/** Swaps two axes of `x`. */
export const swapaxes = named("swapaxes", swapaxes_);
/** Moves axis `src` of `x` to position `dst`, keeping the others in order. */
export const moveaxis = named("moveaxis", moveaxis_);
/**
 * `a` broadcast to `shape` (NumPy rules; no copy).
 *
 * @throws Error when `a`'s shape cannot be broadcast to `shape`.
 */
export const broadcastTo = named("broadcastTo", broadcastTo_);
/**
 * The shape that the given shapes broadcast to.
 *
 * @throws TypeError when they cannot be broadcast together (as jax-js and the core for operands).
 */
export const broadcastShapes = named("broadcastShapes", broadcastShapes_);
/** The arrays broadcast to their common shape (consumed). */
export const broadcastArrays = named("broadcastArrays", broadcastArrays_);
/** `a` with new axes of size 1 inserted at `axis` (one or several). */
export const expandDims = named("expandDims", expandDims_);
/**
 * `a` without its axes of size 1 (only those in `axis` when given).
 *
 * @throws Error when a named axis is not of size 1.
 */
export const squeeze = named("squeeze", squeeze_);
/** `x` with the order of elements reversed along `axis` (all axes by default). */
export const flip = named("flip", flip_);
/**
 * Each element of `a` repeated `repeats` times along `axis` (of the flattened array when undefined).
 */
export const repeat = named("repeat", repeat_);
/** `a` repeated `reps` times along each axis (NumPy's tile). */
export const tile = named("tile", tile_);
/**
 * `x` padded with zeros: `width` is n (every side of every axis), [before, after] (every axis), one pair per axis, or {axis: pair}.
 */
export const pad = named("pad", pad_);
/**
 * The arrays joined along an existing axis (default 0); all are consumed.
 *
 * @throws Error when their other dimensions differ.
 */
export const concatenate = named("concatenate", concatenate_);
/**
 * The arrays joined along a new axis (default 0); all must have one shape.
 *
 * @throws Error when their shapes differ.
 */
export const stack = named("stack", stack_);
/**
 * Splits `a` along `axis` into `n` equal parts (a number) or at the given indices (a list).
 *
 * @throws Error when a number of sections does not divide the axis.
 */
export const split = named("split", split_);
/**
 * Elements of `a` at `indices` along `axis` (of the flattened array when undefined or null). Negative indices wrap once; out-of-range indices are clamped, as JAX's default gather.
 */
export const take = named("take", take_);
/**
 * Elements of `a` picked along `axis` by `indices` of the same rank (as NumPy's take_along_axis, e.g. with argsort).
 */
export const takeAlongAxis = named("takeAlongAxis", takeAlongAxis_);
/**
 * Tensor contraction: over the last `axes` axes of x and the first of y (a number, default 2) or over the listed pairs of axes.
 */
export const tensordot = named("tensordot", tensordot_);
/**
 * Einstein summation: `einsum("ij,jk->ik", a, b)`, or the sublist form `einsum(a, [0, 1], b, [1, 2], [0, 2])`.
 *
 * @throws Error on malformed subscripts or mismatched dimensions.
 * @example
 * ```ts
 * const c = np.einsum("ij,jk->ik", a, b); // a matrix product
 * ```
 */
export const einsum = named("einsum", einsum_);
/** The diagonal of `a` over axes (axis1, axis2) with the given offset, as the last axis. */
export const diagonal = named("diagonal", diagonal_);
/** The shape of `a` ([] for a number); does not consume it. */
export const shape = named("shape", shape_);
/** The number of axes of `a` (0 for a number); does not consume it. */
export const ndim = named("ndim", ndim_);
/** The number of elements of `a` (1 for a number), or its length along `axis`; does not consume it. */
export const size = named("size", size_);
/**
 * Whether every `|actual - expected| <= atol + rtol * |expected|` (defaults rtol 1e-5, atol 1e-8; NaNs equal only with `equalNaN`). Reads synchronously and consumes its Arrays.
 */
export const allclose = named("allclose", allclose_);
/** Alias of {@link transpose} (the array API's name). */
export const permuteDims = transpose;
