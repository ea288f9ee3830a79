// kiln's `nn` namespace (jax-js names and options): activations, softmax family,
// standardize, oneHot and attention; the rest of jax.nn arrives with issue 7's JS part.
/**
 * Neural-network functions (jax.nn): activations, the softmax family, standardize, oneHot and
 * dot-product attention. Each consumes its Array arguments and is differentiable.
 *
 * @example
 * ```ts
 * import { numpy as np, nn } from "kiln";
 * const h = nn.relu(np.matmul(x, w));
 * const p = nn.softmax(h, -1);
 * ```
 * @module
 */
import { Array, asArray, run, type ArrayLike, type Axis, type ReduceOpts, named } from "./array.js";

/** Rectified linear unit, `max(x, 0)`, elementwise. */
export const relu = named("relu", (x: ArrayLike): Array => run("relu", [x]));
/** `min(max(x, 0), 6)`, elementwise. */
export const relu6 = named("relu6", (x: ArrayLike): Array => run("relu6", [x]));
/** The logistic sigmoid `1 / (1 + exp(-x))`, elementwise. */
export const sigmoid = named("sigmoid", (x: ArrayLike): Array => run("sigmoid", [x]));
/** `log(sigmoid(x))`, computed stably, elementwise. */
export const logSigmoid = named("logSigmoid", (x: ArrayLike): Array => run("log_sigmoid", [x]));
/** SiLU (swish), `x * sigmoid(x)`, elementwise. */
export const silu = named("silu", (x: ArrayLike): Array => run("silu", [x]));
/** Alias of {@link silu}. */
export const swish = silu;
/** `log(1 + exp(x))`, computed stably, elementwise. */
export const softplus = named("softplus", (x: ArrayLike): Array => run("softplus", [x]));
/** Returns x (an Array; a number becomes one). */
export const identity = named("identity", (x: ArrayLike): Array => asArray(x, "identity"));
function elu_(x: ArrayLike, alpha: number = 1.0): Array {
  return run("elu", [x], { alpha });
}
function leakyRelu_(x: ArrayLike, negativeSlope: number = 0.01): Array {
  return run("leaky_relu", [x], { negativeSlope });
}
function gelu_(x: ArrayLike, opts: { approximate?: boolean } = {}): Array {
  return run("gelu", [x], { approximate: opts.approximate ?? true });
}
function softmax_(x: ArrayLike, axis: Axis = -1): Array {
  return run("softmax", [x], { axis });
}
function logSoftmax_(x: ArrayLike, axis: Axis = -1): Array {
  return run("log_softmax", [x], { axis });
}
function logsumexp_(x: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  return run("logsumexp", [x], { axis, keepdims: opts.keepdims });
}
function standardize_(x: ArrayLike, axis: Axis = -1, opts: { epsilon?: number } = {}): Array {
  return run("standardize", [x], { axis, epsilon: opts.epsilon });
}
function oneHot_(x: Array, numClasses: number): Array {
  return run("one_hot", [x], { numClasses });
}
function dotProductAttention_(query: ArrayLike, key: ArrayLike, value: ArrayLike, opts: { scale?: number; isCausal?: boolean } = {}): Array {
  return run("dot_product_attention", [query, key, value], { scale: opts.scale, isCausal: opts.isCausal });
}

// ---- composed from core ops (jax.nn's definitions) ----
function celu_(x: ArrayLike, alpha: number = 1.0): Array {
  const a = asArray(x, "celu");
  const neg = run("multiply", [run("expm1", [run("divide", [a.ref, alpha])]), alpha]);
  return run("add", [run("maximum", [a, 0]), run("minimum", [neg, 0])]);
}
// jax.nn.selu's constants.
const SELU_ALPHA = 1.6732632423543772848170429916717;
const SELU_SCALE = 1.0507009873554804934193349852946;
/** Scaled ELU with JAX's constants (α ≈ 1.6733, scale ≈ 1.0507), elementwise. */
export const selu = named("selu", (x: ArrayLike): Array => run("multiply", [elu(x, SELU_ALPHA), SELU_SCALE]));
function softSign_(x: ArrayLike): Array {
  const a = asArray(x, "softSign");
  return run("divide", [a.ref, run("add", [run("abs", [a]), 1])]);
}
/** `clip(x, -1, 1)`, elementwise. */
export const hardTanh = named("hardTanh", (x: ArrayLike): Array => run("clip", [x, -1, 1], { hasMin: true, hasMax: true }));
/** `relu6(x + 3) / 6`, elementwise. */
export const hardSigmoid = named("hardSigmoid", (x: ArrayLike): Array => run("divide", [run("relu6", [run("add", [x, 3])]), 6]));
function hardSilu_(x: ArrayLike): Array {
  const a = asArray(x, "hardSilu");
  return run("multiply", [a.ref, hardSigmoid(a)]);
}
function mish_(x: ArrayLike): Array {
  const a = asArray(x, "mish");
  return run("multiply", [a.ref, run("tanh", [run("softplus", [a])])]);
}
function glu_(x: ArrayLike, axis = -1): Array {
  const [a, b] = run("split", [x], { sections: 2, axis });
  return run("multiply", [a, run("sigmoid", [b])]);
}
function squareplus_(x: ArrayLike, b: number = 4): Array {
  const a = asArray(x, "squareplus");
  return run("divide", [run("add", [a.ref, run("sqrt", [run("add", [run("square", [a]), b])])]), 2]);
}
function logmeanexp_(x: ArrayLike, axis?: Axis, opts: ReduceOpts = {}): Array {
  const a = asArray(x, "logmeanexp");
  const shape = a.shape;
  const axes = axis === undefined || axis === null ? shape.map((_, i) => i) : typeof axis === "number" ? [axis] : axis;
  const n = axes.reduce((p, ax) => p * shape[(ax + shape.length) % shape.length], 1);
  return run("subtract", [logsumexp(a, axis, opts), Math.log(n)]);
}
/** log(1 - exp(-x)), stable on both sides of ln 2. */
function log1mexp_(x: ArrayLike): Array {
  const a = asArray(x, "log1mexp");
  const small = run("log", [run("negative", [run("expm1", [run("negative", [a.ref])])])]);
  const large = run("log1p", [run("negative", [run("exp", [run("negative", [a.ref])])])]);
  return run("where", [run("greater", [a, Math.LN2]), large, small]);
}
function sparsePlus_(x: ArrayLike): Array {
  const a = asArray(x, "sparsePlus");
  const mid = run("divide", [run("square", [run("add", [a.ref, 1])]), 4]);
  return run("where", [run("less_equal", [a.ref, -1]), 0, run("where", [run("greater_equal", [a.ref, 1]), a, mid])]);
}
function sparseSigmoid_(x: ArrayLike): Array {
  return run("divide", [run("add", [run("clip", [x, -1, 1], { hasMin: true, hasMax: true }), 1]), 2]);
}

// Errors name these functions first (array.ts, named): they are composed of other kiln functions.
/** Exponential linear unit: x above 0, `alpha * (exp(x) - 1)` below (alpha default 1). */
export const elu = named("elu", elu_);
/** x above 0, `negativeSlope * x` below (default slope 0.01). */
export const leakyRelu = named("leakyRelu", leakyRelu_);
/**
 * Gaussian error linear unit; the tanh approximation unless `approximate: false` (then exact, with erf).
 */
export const gelu = named("gelu", gelu_);
/**
 * `exp(x) / sum(exp(x))` over `axis` (default -1), computed stably.
 *
 * @example
 * ```ts
 * nn.softmax(np.array([1, 2, 3])); // [0.090, 0.245, 0.665]
 * ```
 */
export const softmax = named("softmax", softmax_);
/** `x - logsumexp(x)` over `axis` (default -1). */
export const logSoftmax = named("logSoftmax", logSoftmax_);
/**
 * `log(sum(exp(x)))` over `axis` (all by default) without overflow; `opts.keepdims` keeps reduced axes.
 */
export const logsumexp = named("logsumexp", logsumexp_);
/** `(x - mean) / sqrt(var + epsilon)` over `axis` (default -1; epsilon default 1e-5). */
export const standardize = named("standardize", standardize_);
/** One-hot float32 encoding of integer class indices: a new last axis of size `numClasses`. */
export const oneHot = named("oneHot", oneHot_);
/**
 * Scaled dot-product attention over query, key and value of shape [batch, seq, heads, dim] (jax.nn's layout): `softmax(q kᵀ * scale) v`; `scale` defaults to 1/√dim, `isCausal` masks future positions.
 */
export const dotProductAttention = named("dotProductAttention", dotProductAttention_);
/** Continuously differentiable ELU: `max(x, 0) + min(alpha * (exp(x / alpha) - 1), 0)`. */
export const celu = named("celu", celu_);
/** `x / (|x| + 1)`, elementwise. */
export const softSign = named("softSign", softSign_);
/** `x * hardSigmoid(x)`, elementwise. */
export const hardSilu = named("hardSilu", hardSilu_);
/** Alias of {@link hardSilu}. */
export const hardSwish = hardSilu;
/** `x * tanh(softplus(x))`, elementwise. */
export const mish = named("mish", mish_);
/** Gated linear unit: splits `x` in two along `axis` (default -1) and returns `a * sigmoid(b)`. */
export const glu = named("glu", glu_);
/** `(x + sqrt(x² + b)) / 2` (b default 4), elementwise. */
export const squareplus = named("squareplus", squareplus_);
/** `log(mean(exp(x)))` over `axis` (all by default), computed stably. */
export const logmeanexp = named("logmeanexp", logmeanexp_);
/** `log(1 - exp(-x))` for x > 0, stable on both sides of ln 2. */
export const log1mexp = named("log1mexp", log1mexp_);
/** 0 below -1, x above 1, `(x + 1)² / 4` between, elementwise. */
export const sparsePlus = named("sparsePlus", sparsePlus_);
/** `(clip(x, -1, 1) + 1) / 2`, elementwise. */
export const sparseSigmoid = named("sparseSigmoid", sparseSigmoid_);
