// kiln's `lax` namespace (jax-js names): convolutions, windowed reductions, erf and
// stopGradient, each a call into the core's op table.
/**
 * JAX's lax-level operations (jax-js names): convolutions, windowed reductions, top-k, general
 * dot products, erf and stopGradient, and the {@link linalg} factorizations. Each consumes its
 * Array arguments.
 * @module
 */
import { Array, checkOperands, describeValue, run, type ArrayLike, type Pair, named } from "./array.js";
import { vmap } from "./transforms.js";

export * as linalg from "./lax_linalg.js";
export { scan, whileLoop, foriLoop, cond, switch_ as switch, map } from "./lax_control.js";

/** The k largest values along `axis` and their int32 indices; equal values by lower index first. */
function topK_(x: ArrayLike, k: number, axis = -1): [Array, Array] {
  return run("top_k", [x], { k, axis });
}

/**
 * Convolution padding: "VALID" (none), "SAME" (output size ceil(in / stride), extra at the end), "SAME_LOWER" (extra at the start), or one [low, high] pair per spatial axis.
 */
export type PaddingType = "VALID" | "SAME" | "SAME_LOWER" | Pair[];

function convGeneralDilated_(
  lhs: Array,
  rhs: Array,
  windowStrides: number[],
  padding: PaddingType,
  { lhsDilation, rhsDilation, featureGroupCount }: { lhsDilation?: number[]; rhsDilation?: number[]; featureGroupCount?: number } = {},
): Array {
  return run("conv_general_dilated", [lhs, rhs], { strides: windowStrides, padding, lhsDilation, rhsDilation, featureGroupCount });
}
function conv_(lhs: Array, rhs: Array, windowStrides: number[], padding: PaddingType): Array {
  return convGeneralDilated(lhs, rhs, windowStrides, padding);
}
function convWithGeneralPadding_(lhs: Array, rhs: Array, windowStrides: number[], padding: PaddingType, lhsDilation?: number[], rhsDilation?: number[]): Array {
  return convGeneralDilated(lhs, rhs, windowStrides, padding, { lhsDilation, rhsDilation });
}
/**
 * Transposed convolution (the input gradient of a strided conv). "SAME"/"VALID" as JAX's
 * conv_transpose; explicit pairs [p0, p1] as jax-js's, which pad the stride-dilated input
 * by k - 1 - p (k the dilated kernel size), where JAX pads by p itself.
 * `transposeKernel` flips the kernel and swaps its first two axes.
 */
function convTranspose_(
  lhs: Array,
  rhs: Array,
  strides: number[],
  padding: PaddingType,
  { rhsDilation, transposeKernel = false }: { rhsDilation?: number[]; transposeKernel?: boolean } = {},
): Array {
  checkOperands("convTranspose", lhs, rhs);
  if (typeof padding !== "string") {
    if (!globalThis.Array.isArray(padding))
      throw new TypeError(`convTranspose: got padding ${describeValue(padding)}, expected 'SAME', 'VALID', 'SAME_LOWER' or one [low, high] pair per spatial axis`);
    const ks = (rhs instanceof Array ? rhs.shape : []).slice(2);
    if (padding.length !== ks.length) throw new Error(`convTranspose: got ${padding.length} padding pairs, expected ${ks.length}`);
    padding = padding.map(([p0, p1], i) => {
      const k = (ks[i] - 1) * (rhsDilation?.[i] ?? 1) + 1;
      return [k - 1 - p0, k - 1 - p1] as Pair;
    });
  }
  return run("conv_transpose", [lhs, rhs], { strides, padding, rhsDilation, transposeKernel });
}
/**
 * The windows of the last windowDimensions.length axes (no padding), each reduced by
 * `computation` (a function of one window, of shape windowDimensions, to a scalar): the
 * windows are gathered into an array [...leading axes, ...window positions, ...window] and
 * the computation is vmapped over all but the window axes, as jax-js does. np.sum, np.max,
 * np.min and np.prod run as the core's reduce_window instead (one fused kernel).
 */
function reduceWindow_(operand: Array, computation: (x: Array) => Array, windowDimensions: number[], windowStrides?: number[]): Array {
  checkOperands("reduceWindow", operand);
  if (typeof computation !== "function") throw new TypeError(`reduceWindow: got computation ${describeValue(computation)}, expected a function`);
  const strides = windowStrides ?? windowDimensions.map(() => 1);
  const nd = operand.ndim, k = windowDimensions.length;
  if (k > nd || strides.length !== k) throw new Error(`reduceWindow: got ${k} window dimensions and ${strides.length} strides for an array of rank ${nd}`);
  const op = { sum: "sum", max: "max", min: "min", prod: "prod" }[((computation as any).kilnReduce ?? computation.name) as string];
  if (op !== undefined) return run("reduce_window", [operand], { op, window: windowDimensions, strides, padding: "VALID" });
  const device = operand.device, shape = operand.shape;
  let x = operand;
  // From the last window axis to the first, so the axes not yet gathered keep their numbers.
  for (let j = k - 1; j >= 0; j--) {
    const axis = nd - k + j, w = windowDimensions[j];
    const count = Math.max(0, Math.floor((shape[axis] - w) / strides[j]) + 1);
    const starts = run("reshape", [run("arange", [], { start: 0, stop: count * strides[j], step: strides[j], dtype: "int32", device })], { shape: [count, 1] });
    const offsets = run("arange", [], { start: 0, stop: w, step: 1, dtype: "int32", device });
    x = run("take", [x, run("add", [starts, offsets])], { axis });
  }
  // [...lead, o0, w0, o1, w1, ...] -> [...lead, o0, o1, ..., w0, w1, ...]
  const lead = [...globalThis.Array(nd - k).keys()];
  const perm = [...lead, ...windowDimensions.map((_, j) => nd - k + 2 * j), ...windowDimensions.map((_, j) => nd - k + 2 * j + 1)];
  let f = computation;
  for (let i = 0; i < nd; i++) f = vmap(f, 0);
  return f(run("transpose", [x], { perm }));
}
/** The error function, elementwise. */
export const erf = named("erf", (x: ArrayLike): Array => run("erf", [x]));
/** The complementary error function `1 - erf(x)`, elementwise. */
export const erfc = named("erfc", (x: ArrayLike): Array => run("subtract", [1, run("erf", [x])]));
/** The inverse error function, elementwise (±inf at ±1, NaN outside [-1, 1]). */
export const erfInv = named("erfInv", (x: ArrayLike): Array => run("erf_inv", [x]));
/** The identity, with a zero derivative: grad, jvp and vjp see a constant. */
export const stopGradient = named("stopGradient", (x: ArrayLike): Array => run("stop_gradient", [x]));

/**
 * The axes {@link dot} contracts and batches, per operand (JAX's dimension_numbers as named lists).
 */
export type DotDimensionNumbers = {
  lhsContractingDims?: number[];
  rhsContractingDims?: number[];
  lhsBatchDims?: number[];
  rhsBatchDims?: number[];
};

/**
 * General contraction (lax.dot_general), as one einsum: output axes are the batch axes,
 * then lhs free axes, then rhs free axes. Default: contract lhs's last with rhs's first.
 */
function dot_(lhs: Array, rhs: Array, dims: DotDimensionNumbers = {}): Array {
  const ln = lhs.ndim, rn = rhs.ndim;
  const norm = (d: number[], n: number) => d.map((x) => (x + n) % n);
  const lc = norm(dims.lhsContractingDims ?? [ln - 1], ln), rc = norm(dims.rhsContractingDims ?? [0], rn);
  const lb = norm(dims.lhsBatchDims ?? [], ln), rb = norm(dims.rhsBatchDims ?? [], rn);
  if (lc.length !== rc.length || lb.length !== rb.length)
    throw new Error(`dot: got ${lc.length}/${rc.length} contracting and ${lb.length}/${rb.length} batch dims, expected equal counts`);
  const letters = "abcdefghijklmnopqrstuvwxyz";
  let next = 0;
  const l: string[] = new globalThis.Array(ln), r: string[] = new globalThis.Array(rn);
  lb.forEach((d, i) => (l[d] = r[rb[i]] = letters[next++]));
  lc.forEach((d, i) => (l[d] = r[rc[i]] = letters[next++]));
  for (let i = 0; i < ln; i++) if (l[i] === undefined) l[i] = letters[next++];
  for (let i = 0; i < rn; i++) if (r[i] === undefined) r[i] = letters[next++];
  const out = [...lb.map((d) => l[d]), ...l.filter((_, i) => !lb.includes(i) && !lc.includes(i)), ...r.filter((_, i) => !rb.includes(i) && !rc.includes(i))];
  return run("einsum", [lhs, rhs], { subscripts: `${l.join("")},${r.join("")}->${out.join("")}` });
}
/** The same bits reinterpreted as `dtype` (of the same item size: float32, int32, uint32). */
export const bitcastConvertType = named("bitcastConvertType", (x: ArrayLike, dtype: string): Array => run("bitcast_convert_type", [x], { dtype }));

// Errors name these functions first (array.ts, named), also where they are composed of others.
/**
 * The `k` largest values along `axis` (default -1) and their int32 indices, largest first; equal values by lower index first, NaN counts as largest.
 */
export const topK = named("topK", topK_);
/**
 * N-d convolution (cross-correlation, as JAX) of `lhs` [N, C, ...spatial] by the kernel `rhs` [O, C / groups, ...window], with strides, padding, input and kernel dilation and feature groups.
 *
 * @throws Error on mismatched ranks or channel counts, or a bad padding.
 * @example
 * ```ts
 * const y = lax.convGeneralDilated(x, w, [1, 1], "SAME"); // x [N, C, H, W], w [O, C, 3, 3]
 * ```
 */
export const convGeneralDilated = named("convGeneralDilated", convGeneralDilated_);
/** {@link convGeneralDilated} without dilation or groups. */
export const conv = named("conv", conv_);
/**
 * {@link convGeneralDilated} with explicit padding and optional dilations as positional arguments.
 */
export const convWithGeneralPadding = named("convWithGeneralPadding", convWithGeneralPadding_);
/**
 * Transposed convolution (the input gradient of a strided convolution). "SAME"/"VALID" as JAX's conv_transpose; explicit [p0, p1] pairs as jax-js's (the stride-dilated input is padded by k - 1 - p); `transposeKernel` flips the kernel and swaps its first two axes.
 *
 * @throws TypeError on a padding of another form; Error when the pairs do not match the spatial axes.
 */
export const convTranspose = named("convTranspose", convTranspose_);
/**
 * Reduces the windows of the last `windowDimensions.length` axes (no padding) with `computation`, a function of one window to a scalar; np.sum, np.max, np.min and np.prod run as one fused kernel, other functions are vmapped over the gathered windows (as jax-js).
 *
 * @throws Error when there are more window axes than array axes or the strides do not match.
 */
export const reduceWindow = named("reduceWindow", reduceWindow_);
/**
 * General contraction (lax.dot_general) as one einsum: output axes are the batch axes, then lhs's free axes, then rhs's. By default lhs's last axis is contracted with rhs's first.
 *
 * @throws Error when the contracting or batch axis counts differ.
 */
export const dot = named("dot", dot_);
/**
 * One new token's grouped-query attention over a KV cache: q [heads, headDim] against the cache's keys/values [nCtx, kvHeads, headDim] at rows before `start` (int32 scalar; within the last `slidingWindow` positions when > 0) and the token's own k, v [kvHeads, headDim], scores scaled by `scale`. Query head h reads kv head h / (heads / kvHeads). Returns [heads, headDim]. With T rows (a prefill chunk, causal): q [T, heads, headDim], k, v [T, kvHeads, headDim], row t at position start + t attending the cache rows before `start` and the new rows j <= t (each within the window), returning [T, heads, headDim]. The `webgpu` device runs one row as a split-K kernel pair and `cpu` any T as the C++ reference; `wasm`, which has no routine, webgpu for T > 1 and `unfused: true` compute the same formula with ordinary operations. Differentiable in q, keys, values, k and v.
 *
 * @throws Error on mismatched shapes or dtypes.
 */
export const decodeAttention = named(
  "decodeAttention",
  (q: Array, keys: Array, values: Array, k: Array, v: Array, start: ArrayLike, { scale = 1, slidingWindow = 0, unfused = false }: { scale?: number; slidingWindow?: number; unfused?: boolean } = {}): Array =>
    run("decode_attention", [q, keys, values, k, v, start], { scale, slidingWindow, unfused }),
);
