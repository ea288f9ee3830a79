// kiln's `nn` namespace (jax-js names and options): activations, softmax family,
// standardize, oneHot and attention; the rest of jax.nn arrives with issue 7's JS part.
import { Array, run, type ArrayLike, type Axis, type ReduceOpts } from "./array.js";

export const relu = (x: ArrayLike): Array => run("relu", [x]);
export const relu6 = (x: ArrayLike): Array => run("relu6", [x]);
export const sigmoid = (x: ArrayLike): Array => run("sigmoid", [x]);
export const logSigmoid = (x: ArrayLike): Array => run("log_sigmoid", [x]);
export const silu = (x: ArrayLike): Array => run("silu", [x]);
export const swish = silu;
export const softplus = (x: ArrayLike): Array => run("softplus", [x]);
export const identity = (x: ArrayLike): Array => (x instanceof Array ? x : run("positive", [x]));
export function elu(x: ArrayLike, alpha: number = 1.0): Array {
  return run("elu", [x], { alpha });
}
export function leakyRelu(x: ArrayLike, negativeSlope: number = 0.01): Array {
  return run("leaky_relu", [x], { negativeSlope });
}
export function gelu(x: ArrayLike, opts: { approximate?: boolean } = {}): Array {
  return run("gelu", [x], { approximate: opts.approximate ?? true });
}
export function softmax(x: ArrayLike, axis: Axis = -1): Array {
  return run("softmax", [x], { axis });
}
export function logSoftmax(x: ArrayLike, axis: Axis = -1): Array {
  return run("log_softmax", [x], { axis });
}
export function logsumexp(x: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  return run("logsumexp", [x], { axis, keepdims: opts.keepdims });
}
export function standardize(x: ArrayLike, axis: Axis = -1, opts: { epsilon?: number } = {}): Array {
  return run("standardize", [x], { axis, epsilon: opts.epsilon });
}
export function oneHot(x: Array, numClasses: number): Array {
  return run("one_hot", [x], { numClasses });
}
export function dotProductAttention(query: ArrayLike, key: ArrayLike, value: ArrayLike, opts: { scale?: number; isCausal?: boolean } = {}): Array {
  return run("dot_product_attention", [query, key, value], { scale: opts.scale, isCausal: opts.isCausal });
}
