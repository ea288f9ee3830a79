// The functions of kiln's `random` namespace that are one call into the core each (jax-js
// names): threefry2x32 keys (uint32, shape [2]), split/foldIn, bits and the samplers the
// core has, bit for bit JAX's. Functions consume their key, as in jax-js. The composed
// samplers (random_samplers.ts) import this module; `random.ts` re-exports both.
import { Array, DType, checkArray, checkOperands, describeValue, freeOnError, run, type ArrayLike } from "./array.js";

/**
 * A PRNG key (uint32, shape [2], threefry2x32) from an integer seed, bit for bit JAX's `random.key`/`PRNGKey`.
 *
 * @throws TypeError when the seed is not an integer.
 * @example
 * ```ts
 * import { random } from "kiln";
 * const [k1, k2] = random.split(random.key(0));
 * const x = random.normal(k1, [3]);
 * ```
 */
export function key(seed: ArrayLike): Array {
  // Number({}) is NaN and Number("abc") too: a seed that is not an integer is an Error.
  const s = seed instanceof Array ? seed.item() : typeof seed === "number" || typeof seed === "boolean" ? Number(seed) : NaN;
  if (!Number.isInteger(s)) throw new TypeError(`key: got seed ${seed instanceof Array ? s : describeValue(seed)}, expected an integer`);
  return run("random_key", [], { seed: s });
}
/**
 * Splits `key` into `num` new keys (default 2; a shape gives keys of that shape): an array of shape [num, 2]. Consumes `key`.
 */
export function split(key: Array, num: number | number[] = 2): Array {
  return run("random_split", [key], { num });
}
/** A new key from `key` and an integer `data` (JAX's fold_in). Consumes `key`. */
export function foldIn(key: Array, data: ArrayLike): Array {
  const d = typeof data === "number" ? run("astype", [data], { dtype: "uint32" }) : data;
  // The uint32 copy made here must not leak with a bad key.
  return freeOnError(d === data ? [] : [d as Array], () => run("random_fold_in", [key, d]));
}
/** Random uint32 bits of the given shape (JAX's random.bits). Consumes `key`. */
export function bits(key: Array, shape: number[] = []): Array {
  return run("random_bits", [key], { shape });
}
/** Uniform samples in [minval, maxval) of a float dtype (default float32; JAX rejects others). */
export function uniform(key: ArrayLike, shape: number[] = [], { minval = 0, maxval = 1, dtype }: { minval?: number; maxval?: number; dtype?: DType } = {}): Array {
  return run("random_uniform", [key], { shape, minval, maxval, dtype });
}
/** Standard normal float32 samples of the given shape. Consumes `key`. */
export function normal(key: ArrayLike, shape: number[] = []): Array {
  return run("random_normal", [key], { shape });
}
/**
 * Boolean samples that are true with probability `p` (default 0.5; broadcast to `shape`). Consumes `key`.
 */
export function bernoulli(key: Array, p: ArrayLike = 0.5, shape?: number[]): Array {
  return run("random_bernoulli", [key, p], { shape });
}
/**
 * Integer samples in [minval, maxval) of `shape` (dtype int32 or uint32).
 *
 * @throws TypeError for another dtype or a key that is not an Array. Consumes `key`.
 */
export function randint(key: ArrayLike, opts: { minval: ArrayLike; maxval: ArrayLike; shape?: number[]; dtype?: DType }): Array {
  // Everything is checked before the bounds are cast (so the casts cannot fail), and the casts
  // are freed when the draw fails: the caller's Arrays keep their references, nothing is left.
  checkArray("randint", key, "a key Array (random.key)");
  const { minval, maxval, shape = [], dtype = DType.Int32 } = opts ?? ({} as typeof opts);
  checkOperands("randint", minval, maxval);
  if (dtype !== DType.Int32 && dtype !== DType.Uint32) throw new TypeError(`randint: got dtype ${describeValue(dtype)}, expected int32 or uint32`);
  const bounds = [minval, maxval].map((b) => run("astype", [b instanceof Array ? b.ref : b], { dtype }));
  const r = freeOnError(bounds, () => run("random_randint", [key, ...bounds], { shape, dtype }));
  for (const b of [minval, maxval]) if (b instanceof Array) b.dispose();
  return r;
}
/**
 * A random permutation of arange(x) (x a number), or of `x`'s slices along `axis`. Consumes `key`.
 */
export function permutation(key: Array, x: number | ArrayLike, axis = 0): Array {
  if (typeof x === "number") return run("random_permutation", [key], { n: x });
  return run("random_permutation", [key, x], { axis });
}
/** Normal samples truncated to (lower, upper) (JAX's truncated_normal; issue 7 asks for it in JS). */
export function truncatedNormal(key: Array, lower: ArrayLike, upper: ArrayLike, shape?: number[]): Array {
  return run("random_truncated_normal", [key, lower, upper], { shape });
}
