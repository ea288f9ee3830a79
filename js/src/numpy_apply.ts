// jax-js's numpy functions that map a user function over indices or axes (fromfunction,
// applyAlongAxis, applyOverAxes, through vmap as jax-js does) and the diagonal index helpers.
import { Array, DType, asArray, checkOperands, checkShape, describeValue, type ArrayLike, type Device } from "./array.js";
import * as np from "./numpy_ops.js";
import { vmap } from "./transforms.js";
import * as tree from "./tree.js";

const range = (a: number, b?: number) => (b === undefined ? [...globalThis.Array(a).keys()] : [...globalThis.Array(b - a).keys()].map((i) => i + a));

/** `ndim` int32 index arrays [0..n) that select the main diagonal of an n^ndim array. */
export function diagIndices(n: number, ndim = 2): Array[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`diagIndices: n must be a nonnegative integer, got ${n}`);
  if (!Number.isInteger(ndim) || ndim < 0) throw new Error(`diagIndices: ndim must be a nonnegative integer, got ${ndim}`);
  if (ndim === 0) return [];
  const index = np.arange(n);
  return [index, ...range(ndim - 1).map(() => index.ref)];
}

/** diagIndices for an array whose axes all have one length (at least 2D); consumes it. */
export function diagIndicesFrom(arr: ArrayLike): Array[] {
  const a = asArray(arr, "diagIndicesFrom");
  const s = a.shape;
  a.dispose();
  if (s.length < 2) throw new Error(`diagIndicesFrom: input array must be at least 2D, got ${s.length}D`);
  if (!s.every((d) => d === s[0])) throw new Error(`diagIndicesFrom: all dimensions of input must be equal, got shape ${JSON.stringify(s)}`);
  return diagIndices(s[0], s.length);
}

/** func applied to the index grids of `shape` (vmapped over each axis, as jax-js). */
export function fromfunction(func: (...indices: Array[]) => any, shape: number[], { dtype = DType.Float32, device }: { dtype?: DType; device?: Device } = {}): any {
  checkShape("fromfunction", shape);
  let f: (...a: any[]) => any = func;
  for (let i = 0; i < shape.length; i++) {
    const mapped = shape.length - 1 - i;
    f = vmap(f, shape.map((_, d) => (d === mapped ? 0 : null)));
  }
  const out = f(...shape.map((s) => np.arange(0, s, 1, { dtype, device })));
  return tree.map((leaf: any) => asArray(leaf, "fromfunction"), out);
}

/** func1d applied to the 1D slices along `axis` (vmap over the other axes, as jax-js). */
export function applyAlongAxis(func1d: (x: Array) => Array, axis: number, x: ArrayLike): Array {
  const a = asArray(x, "applyAlongAxis");
  const nd = a.ndim;
  if (axis < -nd || axis >= nd) {
    a.dispose();
    throw new Error(`applyAlongAxis: axis ${axis} is out of bounds for an array of rank ${nd}`);
  }
  axis = (axis + nd) % nd;
  let f: (v: Array) => Array = func1d;
  for (let i = 1; i < nd - axis; i++) f = vmap(f, i);
  for (let i = 0; i < axis; i++) f = vmap(f, 0);
  const y = f(a);
  const post = nd - axis - 1;
  return np.transpose(y, [...range(axis), ...range(axis + post, y.ndim), ...range(axis, axis + post).reverse()]);
}

/** func(a, axis) for each axis in turn; results that lose the axis get it back (size 1). */
export function applyOverAxes(func: (x: Array, axis: number) => Array, a: ArrayLike, axes: number[]): Array {
  checkOperands("applyOverAxes", a);
  // func keeps the rank (a lost axis comes back), so every axis is checked against a's rank.
  const nd = np.ndim(a);
  if (!globalThis.Array.isArray(axes) || axes.some((ax) => !Number.isInteger(ax) || ax < -nd || ax >= nd))
    throw new Error(`applyOverAxes: got axes ${globalThis.Array.isArray(axes) ? `[${axes}]` : describeValue(axes)}, expected integers in [${-nd}, ${nd})`);
  let x = asArray(a, "applyOverAxes");
  for (const axis of axes) {
    const nd = x.ndim;
    const b = func(x, axis);
    if (b.ndim === nd) x = b;
    else if (b.ndim === nd - 1) x = np.expandDims(b, axis);
    else {
      const got = b.ndim;
      b.dispose();
      throw new Error(`applyOverAxes: func returned an array of rank ${got}, expected ${nd} or ${nd - 1}`);
    }
  }
  return x;
}
