// kiln's JS Array: jax-js's ownership model (reference counts, .ref, calls that consume
// their arguments, dispose, UseAfterFreeError) over one C++ kiln::Array handle.
import { check, core, type Handle } from "./core.js";
import { webGpuRuntime } from "./webgpu/attach.js";

/** Element types, with jax-js's names and values. */
export enum DType {
  Float32 = "float32",
  Int32 = "int32",
  Uint32 = "uint32",
  Bool = "bool",
  Float16 = "float16",
  Float64 = "float64",
}

/**
 * A device name: `cpu` (the reference interpreter), `wasm` (Wasm SIMD kernels, the default), `webgpu` (WGSL kernels, after `await init("webgpu")`); `webgl` is jax-js's name, which kiln does not have.
 */
export type Device = "cpu" | "wasm" | "webgpu" | "webgl";
/**
 * The TypedArray that reads return: Float32Array (float32, and float16 widened), Int32Array, Uint32Array, Float64Array, or Uint8Array-backed bools.
 */
export type DataArray = Float32Array | Int32Array | Uint32Array | Float64Array | Uint16Array;
/** What array arguments accept: an Array, or a JS number or boolean (a weakly typed scalar). */
export type ArrayLike = Array | number | boolean;
/** An axis, a list of axes, or null (all axes); negative axes count from the end. */
export type Axis = number | number[] | null;
/** Options of reductions: `keepdims` keeps the reduced axes with size 1. */
export type ReduceOpts = { keepdims?: boolean };
/** A [before, after] or [start, stop] pair of numbers. */
export type Pair = [number, number];

/** Thrown on any use of an Array whose reference count has reached zero (as jax-js). */
export class UseAfterFreeError extends ReferenceError {
  constructor(what: string) {
    super(`Referenced tracer ${what} freed, please use .ref move semantics`);
    this.name = "UseAfterFreeError";
  }
}

/**
 * float16 bits as float32 values, where the runtime has no Float16Array (Node 20, older
 * browsers): reads return numbers, never raw bits. Exact: every half is a float32.
 */
function widenHalves(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    out[i] = exp === 0 ? sign * frac * 2 ** -24 : exp === 31 ? (frac ? NaN : sign * Infinity) : sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  return out;
}

/** Copies the bytes that the core returned into the typed array of `dtype` (bool: Int32Array, as jax-js). */
function typedFromBytes(bytes: Uint8Array, dtype: string): DataArray {
  // The core's reads return a Uint8Array over a fresh ArrayBuffer of its own, which the typed
  // array can take as is; a view into a larger or shared buffer is copied out first.
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  const buf = own ? bytes.buffer : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  switch (dtype) {
    case "float32":
      return new Float32Array(buf);
    case "float64":
      return new Float64Array(buf);
    case "int32":
      return new Int32Array(buf);
    case "uint32":
      return new Uint32Array(buf);
    case "float16": {
      const F16 = (globalThis as any).Float16Array;
      return F16 ? new F16(buf) : widenHalves(new Uint16Array(buf));
    }
    case "bool":
      return Int32Array.from(bytes);
  }
  throw new Error(`kiln: unknown dtype ${dtype}`);
}

/**
 * @ignore Reads a handle's bytes on any device. Throws now when the read cannot start (so
 * callers consume nothing); the Promise rejects when the device fails later.
 */
export function readBytes(h: Handle): Promise<Uint8Array> {
  let settle: (r: Uint8Array | Error) => void = () => {};
  const p = new Promise<Uint8Array>((resolve, reject) => {
    settle = (r) => (r instanceof Error ? reject(new Error(r.message)) : resolve(r));
  });
  check(core.readAsync(h, (r: Uint8Array | Error) => settle(r)));
  return p;
}

function nest(flat: { readonly length: number; readonly [i: number]: any }, shape: number[], dtype: string): any {
  const conv = dtype === "bool" ? (x: number) => x !== 0 : (x: number) => x;
  if (shape.length === 0) return conv(flat[0]);
  const rec = (offset: number, axis: number): any => {
    const n = shape[axis];
    const out: any[] = [];
    if (axis === shape.length - 1) {
      for (let i = 0; i < n; i++) out.push(conv(flat[offset + i]));
      return out;
    }
    const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
    for (let i = 0; i < n; i++) out.push(rec(offset + i * stride, axis + 1));
    return out;
  };
  return rec(0, 0);
}

// Live Arrays (reference count above zero), for memory().
let liveArrays = 0;
/** @ignore The number of live Arrays (memory().numArrays). */
export function liveArrayCount(): number {
  return liveArrays;
}

/**
 * An n-dimensional array on a device: a handle to kiln's C++ array, with jax-js's ownership rules.
 *
 * Arrays are lazy (operations build expressions that run as fused kernels when read) and
 * reference counted: every function and method *consumes* its Array arguments (one reference
 * each), so pass `x.ref` to keep using `x`, and call `dispose()` on an Array you no longer need.
 * Using an Array after its count reached zero throws a `UseAfterFreeError` (a ReferenceError).
 *
 * @example
 * ```ts
 * import { numpy as np } from "kiln";
 * const x = np.array([1, 2, 3]);
 * const y = x.ref.mul(2).add(x);   // x.ref keeps x alive for the second use
 * console.log(await y.data());     // Float32Array [3, 6, 9]
 * ```
 */
export class Array {
  #handle: Handle | null;
  #rc = 1;
  #desc: string;

  /** @ignore Takes ownership of a core handle. */
  constructor(handle: Handle) {
    this.#handle = handle;
    this.#desc = "";
    liveArrays++;
  }

  /** @ignore The live handle, or UseAfterFreeError. */
  _h(): Handle {
    if (this.#handle === null) throw new UseAfterFreeError(this.#desc);
    return this.#handle;
  }
  /** @ignore Whether the array still holds references. */
  get _alive(): boolean {
    return this.#handle !== null;
  }

  /** The size of each axis (does not consume the array). */
  get shape(): number[] {
    return this._h().shape();
  }
  /** The element type. */
  get dtype(): DType {
    return this._h().dtype() as DType;
  }
  /**
   * Whether the array is weakly typed (made from a JS number), so that it takes the dtype of the array it meets.
   */
  get weakType(): boolean {
    return this._h().weak();
  }
  /** The device holding the array. */
  get device(): Device {
    return this._h().device() as Device;
  }
  /** The number of axes. */
  get ndim(): number {
    return this.shape.length;
  }
  /** The number of elements. */
  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  /** A short description, `Array:float32[2,3]` (no values; does not consume the array). */
  toString(): string {
    return `Array:${this._h().describe()}`;
  }

  /** Returns this array with its reference count increased by one. */
  get ref(): this {
    this._h();
    this.#rc++;
    return this;
  }
  /** The current reference count (1 for a new array). */
  get refCount(): number {
    return this.#rc;
  }
  /** Decreases the reference count; at zero the array is freed. */
  dispose(): void {
    const h = this._h();
    if (--this.#rc === 0) {
      this.#desc = this.toString();
      h.delete();
      this.#handle = null;
      liveArrays--;
    }
  }

  // ---- readback: each consumes one reference, as in jax-js ----
  /**
   * Reads the values synchronously into a TypedArray (C order) and consumes one reference.
   * On webgpu in browsers this blocks until the GPU is done (through a canvas copy: slow, a
   * GPU round trip per call); prefer {@link Array.data} there.
   *
   * @throws Error on webgpu in Node.js, which has no synchronous GPU reads: use {@link Array.data}.
   */
  dataSync(): DataArray {
    const h = this._h();
    if (h.device() === "webgpu" && !webGpuRuntime()?.canReadSync())
      throw new Error(
        "dataSync: the webgpu device has no synchronous reads here (kiln reads GPU buffers synchronously only in " +
          "browsers, through an OffscreenCanvas copy; Node.js's Dawn has no blocking read); " +
          "use the async API: await x.data() or await x.jsAsync(), or devicePut(x, \"wasm\") first",
      );
    const out = typedFromBytes(check(h.bytes()), h.dtype());
    this.dispose();
    return out;
  }
  /**
   * Reads the values into a TypedArray (C order) without blocking the caller; consumes one reference.
   *
   * @example
   * ```ts
   * const values = await np.arange(4).data(); // Int32Array [0, 1, 2, 3]
   * ```
   */
  async data(): Promise<DataArray> {
    const h = this._h();
    const dtype = h.dtype();
    const read = readBytes(h); // starts now; the core keeps the buffer alive until it settles
    this.dispose();
    return typedFromBytes(await read, dtype);
  }
  /**
   * The values as nested JS arrays (numbers or booleans), read synchronously; consumes one reference.
   *
   * @throws Error on webgpu in Node.js (use {@link Array.jsAsync}); slow on webgpu in browsers.
   */
  js(): any {
    const h = this._h();
    const shape = h.shape();
    const dtype = h.dtype();
    return nest(this.dataSync(), shape, dtype);
  }
  /** The values as nested JS arrays, read without blocking; consumes one reference. */
  async jsAsync(): Promise<any> {
    const h = this._h();
    const shape = h.shape();
    const dtype = h.dtype();
    return nest(await this.data(), shape, dtype);
  }
  /**
   * The value of a one-element array as a number, read synchronously; consumes one reference.
   *
   * @throws Error when the array has more than one element, or on webgpu in Node.js.
   */
  item(): number {
    if (this.size !== 1) throw new Error(`item: got an array of shape [${this.shape}], expected one element`);
    const v = this.dataSync()[0];
    return v as number;
  }
  /**
   * Waits until the array is computed (does not consume it). On every device it computes a
   * lazy array into its own buffer, so the buffers its expression read can be freed (an eager
   * training loop that does not keeps each parameter's chain of old updates alive).
   */
  async blockUntilReady(): Promise<Array> {
    const h = this._h();
    check(core.realize(h));
    if (h.device() === "webgpu") await webGpuRuntime()?.idle();
    return this;
  }
  /** A 0-d array converts to its number (read synchronously, consuming nothing); others throw an Error. */
  [Symbol.toPrimitive](): any {
    if (this.ndim === 0) return this.ref.item();
    throw new Error(`Cannot convert non-scalar array to primitive: ${this.toString()}`);
  }

  // ---- methods (each consumes `this` and its array arguments) ----
  /** `-this`, elementwise. */
  neg(): this { return run("negative", [this]) as this; }
  /** `this + other`, elementwise with broadcasting. Consumes `this` and `other`. */
  add(other: ArrayLike): this { return run("add", [this, other]) as this; }
  /** `this - other`, elementwise with broadcasting. Consumes `this` and `other`. */
  sub(other: ArrayLike): this { return run("subtract", [this, other]) as this; }
  /** `this * other`, elementwise with broadcasting. Consumes `this` and `other`. */
  mul(other: ArrayLike): this { return run("multiply", [this, other]) as this; }
  /**
   * jax-js's Array.div: lax.div, so integer Arrays divide rounding toward zero (np.divide
   * gives floats): floor division, plus one where the remainder is nonzero and its sign
   * (the divisor's) differs from the dividend's; x / 0 is 0, as floor_divide's. Floats: np.divide.
   */
  div(other: ArrayLike): this {
    if (this.dtype !== DType.Int32 && this.dtype !== DType.Uint32) return run("divide", [this, other]) as this;
    const hold = () => (other instanceof Array ? other.ref : other);
    const floor = run("floor_divide", [this.ref, hold()]);
    const rem = run("mod", [this.ref, hold()]);
    const signsDiffer = run("not_equal", [run("less", [rem.ref, 0]), run("less", [this, 0])]);
    const fix = run("logical_and", [run("not_equal", [rem, 0]), signsDiffer]);
    if (other instanceof Array) other.dispose();
    return run("add", [floor, run("astype", [fix], { dtype: floor.dtype })]) as this;
  }
  /**
   * `this mod other` with the sign of the divisor (NumPy's remainder). Consumes `this` and `other`.
   */
  mod(other: ArrayLike): this { return run("mod", [this, other]) as this; }
  /** `this > other`, elementwise; a bool array. Consumes `this` and `other`. */
  greater(other: ArrayLike): this { return run("greater", [this, other]) as this; }
  /** `this < other`, elementwise; a bool array. Consumes `this` and `other`. */
  less(other: ArrayLike): this { return run("less", [this, other]) as this; }
  /** `this == other`, elementwise; a bool array. Consumes `this` and `other`. */
  equal(other: ArrayLike): this { return run("equal", [this, other]) as this; }
  /** `this != other`, elementwise; a bool array. Consumes `this` and `other`. */
  notEqual(other: ArrayLike): this { return run("not_equal", [this, other]) as this; }
  /** `this >= other`, elementwise; a bool array. Consumes `this` and `other`. */
  greaterEqual(other: ArrayLike): this { return run("greater_equal", [this, other]) as this; }
  /** `this <= other`, elementwise; a bool array. Consumes `this` and `other`. */
  lessEqual(other: ArrayLike): this { return run("less_equal", [this, other]) as this; }
  /** The sum over `axis` (all axes by default); see {@link numpy.sum}. Consumes `this`. */
  sum(axis?: Axis, opts?: ReduceOpts): this { return run("sum", [this], { axis, ...opts }) as this; }
  /** The product over `axis` (all axes by default). Consumes `this`. */
  prod(axis?: Axis, opts?: ReduceOpts): this { return run("prod", [this], { axis, ...opts }) as this; }
  /** The mean over `axis` (all axes by default). Consumes `this`. */
  mean(axis?: Axis, opts?: ReduceOpts): this { return run("mean", [this], { axis, ...opts }) as this; }
  /** The minimum over `axis` (all axes by default). Consumes `this`. */
  min(axis?: Axis, opts?: ReduceOpts): this { return run("min", [this], { axis, ...opts }) as this; }
  /** The maximum over `axis` (all axes by default). Consumes `this`. */
  max(axis?: Axis, opts?: ReduceOpts): this { return run("max", [this], { axis, ...opts }) as this; }
  /** Whether every element over `axis` is nonzero. Consumes `this`. */
  all(axis?: Axis, opts?: ReduceOpts): this { return run("all", [this], { axis, ...opts }) as this; }
  /** Whether any element over `axis` is nonzero. Consumes `this`. */
  any(axis?: Axis, opts?: ReduceOpts): this { return run("any", [this], { axis, ...opts }) as this; }
  /** The axes permuted by `perm` (default: reversed). Consumes `this`. */
  transpose(perm?: number[]): this { return run("transpose", [this], { perm }) as this; }
  /**
   * The same elements in a new shape (one entry may be -1). Consumes `this`.
   *
   * @throws Error when the sizes differ.
   */
  reshape(shape: number | number[]): this {
    return run("reshape", [this], { shape: typeof shape === "number" ? [shape] : shape }) as this;
  }
  /** The elements converted to `dtype`. Consumes `this`. */
  astype(dtype: DType): this { return run("astype", [this], { dtype }) as this; }
  /**
   * The same bits reinterpreted as `dtype` of the same item size (lax.bitcastConvertType); `this` when no dtype is given.
   */
  view(dtype?: DType): this {
    if (dtype === undefined) return this;
    return run("bitcast_convert_type", [this], { dtype }) as this;
  }
  /** The elements as a 1-D array in C order. Consumes `this`. */
  flatten(): this { return run("ravel", [this]) as this; }
  /** The elements as a 1-D array in C order. Consumes `this`. */
  ravel(): this { return run("ravel", [this]) as this; }
  /**
   * The diagonal over axes (axis1, axis2) with the given offset, as a new last axis. Consumes `this`.
   *
   * @throws Error unless axis1 and axis2 are two distinct axes.
   */
  diagonal(offset = 0, axis1 = 0, axis2 = 1): this {
    const nd = this.ndim;
    const [a1, a2] = [axis1, axis2].map((ax) => (ax < 0 ? ax + nd : ax));
    if (nd < 2 || a1 === a2 || ![a1, a2].every((ax) => ax >= 0 && ax < nd))
      throw new Error(`diagonal: got axes ${axis1} and ${axis2} of an array of rank ${nd}, expected two distinct axes`);
    // axis1 and axis2 last, the offset diagonal's square block cut out, then its diagonal.
    const rest = [...globalThis.Array(nd).keys()].filter((i) => i !== a1 && i !== a2);
    const [n, m] = [this.shape[a1], this.shape[a2]];
    const moved = run("transpose", [this], { perm: [...rest, a1, a2] }) as Array;
    const len = Math.max(0, offset >= 0 ? Math.min(n, m - offset) : Math.min(n + offset, m));
    const [r0, c0] = offset >= 0 ? [0, offset] : [-offset, 0];
    const whole = rest.map(() => ({}));
    const block = run("index", [moved], { index: [...whole, { start: r0, stop: r0 + len }, { start: c0, stop: c0 + len }] });
    const letters = "abcdefghijklmnopqrstuvwxyz".slice(0, rest.length);
    return run("einsum", [block], { subscripts: `${letters}zz->${letters}z` }) as this;
  }
  /**
   * Indexing: numbers, [] (all), [start], [start, stop], null (new axis), and integer index
   * Arrays with NumPy's advanced-indexing rules (numbers beside index Arrays count as ones).
   */
  slice(...index: IndexTerm[]): this {
    const arrays = index.filter((t): t is Array => t instanceof Array);
    if (arrays.length > 1 || (arrays.length === 1 && index.some((t) => typeof t === "number"))) return advancedIndex(this, index) as this;
    if (arrays.length === 1) {
      // Advanced indexing by one integer array: basic indexing with `[]` in its place, then
      // a gather (take) along the axis that term maps to.
      const at = index.indexOf(arrays[0]);
      const axis = index.slice(0, at).filter((t) => typeof t !== "number").length;
      const basic = this.slice(...(index.map((t) => (t instanceof Array ? [] : t)) as any));
      return run("take", [basic, arrays[0]], { axis }) as this;
    }
    const terms = index.map((t) => {
      if (t === null) return { newaxis: true };
      if (typeof t === "number") return { i: t };
      if (globalThis.Array.isArray(t)) return { start: t[0], stop: t[1] };
      throw new Error(`slice: got ${String(t)}, expected a number, [], [start], [start, stop] or null`);
    });
    return run("index", [this], { index: terms }) as this;
  }
  /**
   * JAX's `x.at[idx]`: `x.at(...index).set(v)` (or add, multiply, min, max, get) returns a
   * new Array, x with x[index] replaced, accumulated into (duplicate indices all apply) or
   * read. Terms: numbers, [] (all), [start], [start, stop], [start, stop, step], "..." and
   * integer index Arrays (broadcast together, NumPy's advanced indexing). `at` itself takes
   * nothing; the method consumes x, the index Arrays and the updates. Options: `mode`
   * ("promise_in_bounds", the default: reads clamp, updates drop out-of-bounds indices;
   * "clip", "drop", "fill") and, for get, `fillValue`.
   */
  at(...index: AtTerm[]): IndexUpdate<this> {
    return new IndexUpdate(this, index);
  }
  /** Iterates over the slices along the first axis (`for (const row of x)`); consumes `this`. */
  *[Symbol.iterator](): IterableIterator<this> {
    const n = this.shape[0];
    for (let i = 0; i < n; i++) yield this.ref.slice(i);
    this.dispose();
  }
}

type IndexTerm = number | [] | [number] | Pair | null | Array;

/** One index term of `x.at(...)`: see `Array.at`. */
export type AtTerm = number | [] | [number | null] | [number | null, number | null] | [number | null, number | null, number | null] | "..." | Array;
/** The out-of-bounds mode of `x.at(...)` methods, as JAX's `mode`. */
export type AtOpts = { mode?: "promise_in_bounds" | "clip" | "drop" | "fill" };

/** What `x.at(...index)` returns: the update methods of JAX's `x.at[index]`. */
export class IndexUpdate<A extends Array> {
  #x: A;
  #index: AtTerm[];
  constructor(x: A, index: AtTerm[]) {
    this.#x = x;
    this.#index = index;
  }
  #run(method: string, u: ArrayLike[], opts: AtOpts & { fillValue?: number }): A {
    const arrays: Array[] = [];
    const terms = this.#index.map((t) => {
      if (t instanceof Array) return { array: arrays.push(t) - 1 };
      if (typeof t === "number") return { i: t };
      if (t === "...") return { ellipsis: true };
      if (globalThis.Array.isArray(t) && t.length <= 3) return { start: t[0] ?? undefined, stop: t[1] ?? undefined, step: t[2] ?? undefined };
      throw new Error(`at: got ${describeValue(t)} as an index term, expected a number, [], [start], [start, stop], [start, stop, step], "..." or an index Array`);
    });
    const params: Record<string, any> = { index: terms, method, mode: opts.mode ?? "" };
    if (opts.fillValue !== undefined) params.fillValue = opts.fillValue;
    return run("at", [this.#x, ...arrays, ...u], params) as A;
  }
  /** x[index] (`mode: "fill"` reads `fillValue` out of bounds). */
  get(opts: AtOpts & { fillValue?: number } = {}): A { return this.#run("get", [], opts); }
  /** x with x[index] = values (the last of duplicate indices wins). */
  set(values: ArrayLike, opts: AtOpts = {}): A { return this.#run("set", [values], opts); }
  /** x with values added at index (duplicates accumulate). */
  add(values: ArrayLike, opts: AtOpts = {}): A { return this.#run("add", [values], opts); }
  /** x with x[index] multiplied by values (duplicates accumulate). */
  multiply(values: ArrayLike, opts: AtOpts = {}): A { return this.#run("multiply", [values], opts); }
  /** x with x[index] = minimum(x[index], values) (duplicates accumulate). */
  min(values: ArrayLike, opts: AtOpts = {}): A { return this.#run("min", [values], opts); }
  /** x with x[index] = maximum(x[index], values) (duplicates accumulate). */
  max(values: ArrayLike, opts: AtOpts = {}): A { return this.#run("max", [values], opts); }
}

/**
 * NumPy's advanced indexing with several index terms (index Arrays, and numbers beside them):
 * basic indexing with `[]` for each of them, the advanced axes moved to the front and merged
 * into one, one gather with the flat index (the terms broadcast together, negative ones
 * wrapped); the gathered axes stay where the first advanced term was when the advanced terms
 * are adjacent, else they come first.
 */
function advancedIndex(x: Array, index: IndexTerm[]): Array {
  const advanced = index.map((t, i) => (t instanceof Array || typeof t === "number" ? i : -1)).filter((i) => i >= 0);
  const adjacent = advanced[advanced.length - 1] - advanced[0] === advanced.length - 1;
  // After basic indexing, index term i is axis i (a number became [], null a new axis).
  const basic = x.slice(...(index.map((t, i) => (advanced.includes(i) ? [] : t)) as any));
  const rest = [...globalThis.Array(basic.ndim).keys()].filter((i) => !advanced.includes(i));
  const sizes = advanced.map((i) => basic.shape[i]);
  const restShape = rest.map((i) => basic.shape[i]);
  let stride = sizes.reduce((a, b) => a * b, 1);
  const merged = run("reshape", [run("transpose", [basic], { perm: [...advanced, ...rest] })], { shape: [stride, ...restShape] });
  let offset = 0;
  let flat: Array | null = null;
  advanced.forEach((p, k) => {
    stride /= sizes[k];
    const t = index[p] as Array | number;
    if (typeof t === "number") {
      offset += (t < 0 ? t + sizes[k] : t) * stride;
      return;
    }
    const wrapped = run("where", [run("less", [t.ref, 0]), run("add", [t.ref, sizes[k]]), t]);
    const term = run("multiply", [wrapped, stride]);
    flat = flat === null ? term : run("add", [flat, term]);
  });
  const gathered: Array = run("take", [merged, run("add", [flat!, offset])], { axis: 0 });
  const p0 = advanced[0];
  if (!adjacent || p0 === 0) return gathered;
  const bnd = gathered.ndim - restShape.length;
  const range = (a: number, b: number) => globalThis.Array.from({ length: b - a }, (_, i) => a + i);
  return run("transpose", [gathered], { perm: [...range(bnd, bnd + p0), ...range(0, bnd), ...range(bnd + p0, gathered.ndim)] });
}

// Ops whose operands jax-js promotes by its weak-type rule: a JS number, or a weakly typed
// Array, takes the dtype of the first strongly typed non-bool Array operand (so int32 + 1.5
// and int32 + np.array(1.5) are int32, where JAX gives float32). Other ops (random, creation)
// see numbers as weak float32 scalars.
const WEAK_CASTING = new Set([
  "add", "subtract", "multiply", "divide", "floor_divide", "mod", "power", "maximum", "minimum",
  "arctan2", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
  "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
  "left_shift", "right_shift", "where", "clip",
]);

/**
 * @ignore Runs a core op on arguments and consumes the Array arguments, but only when it
 * succeeds: on an error nothing held changes (arguments keep their references).
 */
export function run(op: string, args: ArrayLike[], params: Record<string, any> = {}): any {
  const counts = new Map<Array, number>();
  for (const a of args) if (a instanceof Array) counts.set(a, (counts.get(a) ?? 0) + 1);
  for (const [a, n] of counts) {
    a._h();
    if (a.refCount < n) throw new UseAfterFreeError(a.toString());
  }
  const like = WEAK_CASTING.has(op)
    ? args.find((a): a is Array => a instanceof Array && !a.weakType && a.dtype !== "bool")
    : undefined;
  const temps: Handle[] = [];
  const hs = args.map((a) => {
    if (like !== undefined && typeof a === "number") {
      const t = check(core.weakScalar(a, like.dtype, like.device));
      temps.push(t);
      return t;
    }
    if (like !== undefined && a instanceof Array && a.weakType && a.dtype !== like.dtype) {
      const t = check(core.op("astype", [a._h()], { dtype: like.dtype }));
      temps.push(t);
      return t;
    }
    if (a instanceof Array) return a._h();
    if (typeof a === "number" || typeof a === "boolean") return a;
    throw new TypeError(`${op}: got ${describeValue(a)} where an Array or a number was expected`);
  });
  let r: any;
  try {
    r = check(core.op(op, hs, params));
  } finally {
    for (const t of temps) t.delete();
  }
  for (const [a, n] of counts) for (let i = 0; i < n; i++) a.dispose();
  return wrapResult(r);
}

/**
 * @ignore Calls `f` with the handles of `arrays` (each an Array, else a TypeError naming `what(i)`)
 * and consumes them, as a jitted function's call does, only when it succeeds. Returns
 * the core's result as Arrays.
 */
export function callConsuming(arrays: unknown[], what: (i: number) => string, f: (handles: Handle[]) => any): any {
  const counts = new Map<Array, number>();
  arrays.forEach((a, i) => {
    if (!(a instanceof Array)) throw new TypeError(`${what(i)} got ${describeValue(a)}, expected an Array`);
    counts.set(a, (counts.get(a) ?? 0) + 1);
  });
  for (const [a, n] of counts) {
    a._h();
    if (a.refCount < n) throw new UseAfterFreeError(a.toString());
  }
  const r = check(f((arrays as Array[]).map((a) => a._h())));
  for (const [a, n] of counts) for (let i = 0; i < n; i++) a.dispose();
  return wrapResult(r);
}

/** @ignore Handles from the core as Arrays (JS arrays of handles as JS arrays of Arrays). */
export function wrapResult(r: any): any {
  if (globalThis.Array.isArray(r)) return r.map(wrapResult);
  if (r === null || r === undefined) return r;
  return new Array(r);
}

/** @ignore Index terms for slice(): `term` along `axis`, everything along the other axes. */
export function axisTerms(nd: number, axis: number, term: any): any[] {
  const t: any[] = globalThis.Array.from({ length: nd }, () => []);
  t[(axis + nd) % nd] = term;
  return t;
}

/**
 * @ignore `x` itself when it is an Array, else the JS number or boolean as a weakly typed
 * scalar Array (what the core makes of a number operand), so that composed functions can
 * take `.ref` of any operand. Ownership passes through: an Array argument is not copied.
 */
export function asArray(x: ArrayLike, op = "asarray"): Array {
  checkOperands(op, x);
  return x instanceof Array ? x : run("positive", [x]);
}

/**
 * @ignore Checks operands the way asArray does, converting none: a disposed Array is a
 * ReferenceError, anything but an Array, a number or a boolean a TypeError naming `op` (the
 * public function, not the core op that would have met it). A composed function checks all
 * of its operands first, so that no Array it converted or made leaks when a later one is bad.
 */
export function checkOperands(op: string, ...xs: unknown[]): void {
  for (const x of xs) {
    if (x instanceof Array) x._h();
    else if (typeof x !== "number" && typeof x !== "boolean") throw new TypeError(`${op}: got ${describeValue(x)}, expected an Array or a number`);
  }
}

/**
 * @ignore Checks an argument that must be a live Array (a number cannot stand for it: a
 * random key, a parameter): a disposed one is a ReferenceError, anything else a TypeError
 * naming `op` and what was expected.
 */
export function checkArray(op: string, x: unknown, expected = "an Array"): asserts x is Array {
  if (!(x instanceof Array)) throw new TypeError(`${op}: got ${describeValue(x)}, expected ${expected}`);
  x._h();
}

/** @ignore Checks a shape argument: a JS array of non-negative integers. */
export function checkShape(op: string, shape: unknown, what = "shape"): asserts shape is number[] {
  if (!globalThis.Array.isArray(shape) || shape.some((d) => !Number.isInteger(d) || d < 0))
    throw new TypeError(`${op}: ${what} must be a JS array of non-negative integers, got ${globalThis.Array.isArray(shape) ? JSON.stringify(shape) : describeValue(shape)}`);
}

/**
 * @ignore f(), or, when it throws, the Arrays in `made` (those the caller made for this call,
 * never the user's) disposed before the error passes on: a failed call leaves no new Array.
 * `made` is read when f throws, so f may still be filling it.
 */
export function freeOnError<T>(made: Array[], f: () => T): T {
  try {
    return f();
  } catch (e) {
    for (const a of made) if (a._alive) a.dispose();
    throw e;
  }
}

/**
 * @ignore `f` with its errors naming `name` first, for functions composed in TypeScript of
 * other kiln functions: "deg2rad: multiply: got ...", not only the part that failed. A
 * ReferenceError (a disposed Array) passes unchanged, as jax-js's; errors that already
 * start with the name are left alone.
 */
export function named<F extends (...args: any[]) => any>(name: string, f: F): F {
  const g = function (this: unknown, ...args: any[]) {
    try {
      return f.apply(this, args);
    } catch (e) {
      if (e instanceof Error && !(e instanceof ReferenceError) && !e.message.startsWith(`${name}:`)) e.message = `${name}: ${e.message}`;
      throw e;
    }
  };
  Object.defineProperty(g, "name", { value: name });
  return g as unknown as F;
}

/** A short description of a JS value for error messages: "a string 'abc'", "an object". */
export function describeValue(x: unknown): string {
  if (x === null) return "null";
  if (x === undefined) return "undefined";
  if (typeof x === "string") return `the string '${x.length > 20 ? x.slice(0, 20) + "..." : x}'`;
  if (globalThis.Array.isArray(x)) return "a JS array";
  if (typeof x === "object") return `a ${(x as object).constructor?.name ?? "plain"} object`;
  return `a ${typeof x}`;
}
