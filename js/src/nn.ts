// kiln's `nn` namespace (jax-js names and options): activations, softmax family,
// standardize, oneHot and attention; the rest of jax.nn arrives with issue 7's JS part.
import { Array, asArray, run, type ArrayLike, type Axis, type ReduceOpts, named } from "./array.js";

export const relu = named("relu", (x: ArrayLike): Array => run("relu", [x]));
export const relu6 = named("relu6", (x: ArrayLike): Array => run("relu6", [x]));
export const sigmoid = named("sigmoid", (x: ArrayLike): Array => run("sigmoid", [x]));
export const logSigmoid = named("logSigmoid", (x: ArrayLike): Array => run("log_sigmoid", [x]));
export const silu = named("silu", (x: ArrayLike): Array => run("silu", [x]));
export const swish = silu;
export const softplus = named("softplus", (x: ArrayLike): Array => run("softplus", [x]));
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
export const selu = named("selu", (x: ArrayLike): Array => run("multiply", [elu(x, SELU_ALPHA), SELU_SCALE]));
function softSign_(x: ArrayLike): Array {
  const a = asArray(x, "softSign");
  return run("divide", [a.ref, run("add", [run("abs", [a]), 1])]);
}
export const hardTanh = named("hardTanh", (x: ArrayLike): Array => run("clip", [x, -1, 1], { hasMin: true, hasMax: true }));
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
export const elu = named("elu", elu_);
export const leakyRelu = named("leakyRelu", leakyRelu_);
export const gelu = named("gelu", gelu_);
export const softmax = named("softmax", softmax_);
export const logSoftmax = named("logSoftmax", logSoftmax_);
export const logsumexp = named("logsumexp", logsumexp_);
export const standardize = named("standardize", standardize_);
export const oneHot = named("oneHot", oneHot_);
export const dotProductAttention = named("dotProductAttention", dotProductAttention_);
export const celu = named("celu", celu_);
export const softSign = named("softSign", softSign_);
export const hardSilu = named("hardSilu", hardSilu_);
export const hardSwish = hardSilu;
export const mish = named("mish", mish_);
export const glu = named("glu", glu_);
export const squareplus = named("squareplus", squareplus_);
export const logmeanexp = named("logmeanexp", logmeanexp_);
export const log1mexp = named("log1mexp", log1mexp_);
export const sparsePlus = named("sparsePlus", sparsePlus_);
export const sparseSigmoid = named("sparseSigmoid", sparseSigmoid_);
