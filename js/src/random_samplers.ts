// The samplers of jax-js's `random` that are formulas over uniform and normal, transcribed
// from @jax-js/jax 0.1 (where they differ from JAX's, jax-js wins in JS: DESIGN.md); kiln's
// uniform and normal are JAX's bit for bit, so these equal jax-js's formulas on JAX's draws.
// C++ users get JAX's own algorithms (src/library/random_samplers.cpp). categorical lives
// here too, since its replace=false path is the Gumbel top-k trick. Each consumes its key.
import { Array, DType, asArray, checkArray, checkOperands, checkShape, freeOnError, run, type ArrayLike, named } from "./array.js";
import { topK } from "./lax.js";
import { cholesky } from "./lax_linalg.js";
import * as np from "./numpy_ops.js";
import { normal, uniform, split, randint, permutation } from "./random_ops.js";

const keys2 = (key: Array): [Array, Array] => {
  const [k1, k2] = [...split(key, 2)];
  return [k1, k2];
};

/**
 * A composed sampler: its errors name it first (named), and its key is checked before
 * anything is drawn or converted, so a bad key is reported under its name and leaks nothing.
 * Samplers with operands check those first too (checkOperands), before converting any.
 */
function sampler<F extends (key: Array, ...rest: any[]) => Array>(name: string, f: F): F {
  const checked = (key: Array, ...rest: any[]) => {
    checkArray(name, key, "a key Array (random.key)");
    return f(key, ...rest);
  };
  return named(name, checked as F);
}

function exponential_(key: Array, shape: number[] = []): Array {
  return np.negative(np.log1p(np.negative(uniform(key, shape))));
}
function gumbel_(key: Array, shape: number[] = []): Array {
  return np.negative(np.log(np.negative(np.log1p(np.negative(uniform(key, shape))))));
}
function laplace_(key: Array, shape: number[] = []): Array {
  const c = np.subtract(uniform(key, shape), 0.5);
  return np.multiply(np.sign(c.ref), np.multiply(np.log1p(np.multiply(np.abs(c), -2)), -1));
}
function logistic_(key: Array, shape: number[] = []): Array {
  const u = uniform(key, shape);
  return np.subtract(np.log(u.ref), np.log1p(np.negative(u)));
}
function cauchy_(key: Array, shape: number[] = []): Array {
  return np.tan(np.multiply(np.subtract(uniform(key, shape), 0.5), Math.PI));
}
function lognormal_(key: Array, sigma: ArrayLike = 1, shape: number[] = []): Array {
  checkOperands("lognormal", sigma);
  return np.exp(np.multiply(normal(key, shape), sigma));
}
function rayleigh_(key: Array, scale: ArrayLike = 1, shape: number[] = []): Array {
  checkOperands("rayleigh", scale);
  return np.multiply(np.sqrt(np.multiply(exponential(key, shape), 2)), scale);
}
function maxwell_(key: Array, shape: number[] = []): Array {
  checkShape("maxwell", shape);
  const z = normal(key, [...shape, 3]);
  return np.sqrt(np.sum(np.multiply(z.ref, z), -1));
}
function doubleSidedMaxwell_(key: Array, loc: ArrayLike, scale: ArrayLike, shape: number[] = []): Array {
  checkOperands("doubleSidedMaxwell", loc, scale);
  const [k1, k2] = keys2(key);
  return np.add(np.multiply(np.multiply(rademacher(k1, { shape, dtype: DType.Float32 }), maxwell(k2, shape)), scale), loc);
}
function pareto_(key: Array, b: ArrayLike, shape: number[] = []): Array {
  checkOperands("pareto", b);
  return np.exp(np.divide(exponential(key, shape), b));
}
function weibullMin_(key: Array, scale: ArrayLike, concentration: ArrayLike, shape: number[] = []): Array {
  checkOperands("weibullMin", scale, concentration);
  return np.multiply(scale, np.exp(np.divide(np.log(exponential(key, shape)), concentration)));
}
function triangular_(key: Array, left: ArrayLike, mode: ArrayLike, right: ArrayLike, shape: number[] = []): Array {
  checkOperands("triangular", left, mode, right);
  // Drawn first: a draw that fails (a bad shape) then leaves no converted bound behind.
  const u = uniform(key, shape);
  const l = asArray(left), m = asArray(mode), r = asArray(right);
  const width = np.subtract(r.ref, l.ref), leftSpan = np.subtract(m.ref, l.ref), rightSpan = np.subtract(r.ref, m);
  const cutoff = np.divide(leftSpan.ref, width.ref);
  return np.where(
    np.less(u.ref, cutoff),
    np.add(l, np.sqrt(np.multiply(np.multiply(u.ref, width.ref), leftSpan))),
    np.subtract(r, np.sqrt(np.multiply(np.multiply(np.add(np.negative(u), 1), width), rightSpan))),
  );
}
function geometric_(key: Array, p: ArrayLike, { shape = [], dtype = DType.Int32 }: { shape?: number[]; dtype?: DType } = {}): Array {
  checkOperands("geometric", p);
  return np.astype(np.add(np.floor(np.divide(np.log1p(np.negative(uniform(key, shape))), np.log1p(np.negative(p)))), 1), dtype);
}
function rademacher_(key: Array, { shape = [], dtype = DType.Int32 }: { shape?: number[]; dtype?: DType } = {}): Array {
  if (dtype === DType.Uint32 || dtype === DType.Bool) throw new Error(`rademacher: unsupported dtype ${dtype}`);
  return np.where(np.less(uniform(key, shape), 0.5), np.array(1, { dtype }), np.array(-1, { dtype }));
}
/** mean + cholesky(cov) z, z normal of shape [...shape, n] (the shapes broadcast as jax-js). */
function multivariateNormal_(key: Array, mean: ArrayLike, cov: ArrayLike, shape: number[] = []): Array {
  // Shapes are checked on the arguments as given, before anything is converted or drawn.
  checkOperands("multivariateNormal", mean, cov);
  const ms = np.shape(mean), cs = np.shape(cov);
  const n = ms[ms.length - 1];
  if (ms.length === 0) throw new Error("multivariateNormal: got a scalar mean, expected an array of rank 1 or more");
  if (cs[cs.length - 1] !== n || cs[cs.length - 2] !== n)
    throw new Error(`multivariateNormal: got cov of shape [${cs}], expected its last two dimensions to be [${n}, ${n}]`);
  const out = np.broadcastShapes(np.broadcastShapes(shape, ms.slice(0, -1)), cs.slice(0, -2)).concat(n);
  return np.add(np.einsum("...ij,...j->...i", cholesky(cov), normal(key, out)), mean);
}
/** Points uniform in the unit ball of dimension d (p = 2 only, as jax-js). */
function ball_(key: Array, d: number, { p = 2, shape = [] }: { p?: number; shape?: number[] } = {}): Array {
  if (!Number.isInteger(d) || d <= 0) throw new Error(`ball: dimension must be a positive integer, got ${d}`);
  if (p !== 2) throw new Error("ball: only the Euclidean p=2 case is supported");
  checkShape("ball", shape);
  const [k1, k2] = keys2(key);
  const z = normal(k1, [...shape, d]);
  const norm = np.sqrt(np.sum(np.multiply(z.ref, z.ref), -1, { keepdims: true }));
  const radius = np.exp(np.multiply(np.log(uniform(k2, [...shape, 1])), 1 / d));
  return np.multiply(np.divide(z, norm), radius);
}
/** Categorical without replacement: the Gumbel top-k trick (jax-js's path for replace=false). */
function categoricalWithoutReplacement_(key: Array, logits: Array, axis: number, shape: number[]): Array {
  const nd = logits.ndim;
  const ax = (axis + nd) % nd;
  const batch = logits.shape.filter((_, i) => i !== ax);
  const k = shape.slice(0, shape.length - batch.length).reduce((a, b) => a * b, 1);
  if (k > logits.shape[ax]) throw new Error(`categorical: ${k} samples without replacement exceed the ${logits.shape[ax]} categories`);
  const [values, indices] = topK(np.add(gumbel(key, logits.shape), logits), k, ax);
  values.dispose();
  return indices.reshape(shape);
}
/** Samples of category indices from logits along `axis` (replace=false: the Gumbel top-k trick). */
function categorical_(key: ArrayLike, logits: ArrayLike, { axis = -1, shape, replace = true }: { axis?: number; shape?: number[]; replace?: boolean } = {}): Array {
  if (!replace) {
    const l = asArray(logits, "categorical");
    const ax = (axis + l.ndim) % l.ndim;
    return categoricalWithoutReplacement(key as Array, l, axis, shape ?? l.shape.filter((_, i) => i !== ax));
  }
  return run("random_categorical", [key, logits], { axis, shape });
}
/** Samples from arange(a) or from a's slices along `axis`, with replacement or not, or by p. */
function choice_(key: Array, a: number | ArrayLike, { shape = [], replace = true, p, axis = 0 }: { shape?: number[]; replace?: boolean; p?: ArrayLike; axis?: number } = {}): Array {
  if (typeof a === "number" && (!Number.isInteger(a) || a < 0)) throw new Error(`choice: a must be a non-negative integer, got ${a}`);
  checkOperands("choice", ...(typeof a === "number" ? [] : [a]), ...(p === undefined ? [] : [p]));
  let n: number;
  let values: Array | null = null;
  if (typeof a === "number") n = a;
  else {
    values = asArray(a);
    axis = (axis + values.ndim) % values.ndim;
    n = values.shape[axis];
  }
  let indices: Array;
  if (p !== undefined) {
    const logits = np.log(p);
    indices = freeOnError([logits], () => categorical(key, logits, { axis: -1, shape, replace }));
  } else if (replace) indices = randint(key, { minval: 0, maxval: n, shape });
  else {
    const k = shape.reduce((acc, x) => acc * x, 1);
    if (k > n) throw new Error(`choice: ${k} samples without replacement exceed the population size ${n}`);
    indices = permutation(key, n).slice([0, k]).reshape(shape);
  }
  if (values === null) return indices;
  return freeOnError([indices], () => np.take(values!, indices, axis));
}

// Errors name these functions first and their keys are checked first (sampler, above).
/** Exponential(1) samples of the given shape. Consumes `key`. */
export const exponential = sampler("exponential", exponential_);
/** Standard Gumbel samples of the given shape. Consumes `key`. */
export const gumbel = sampler("gumbel", gumbel_);
/** Standard Laplace samples of the given shape. Consumes `key`. */
export const laplace = sampler("laplace", laplace_);
/** Standard logistic samples of the given shape. Consumes `key`. */
export const logistic = sampler("logistic", logistic_);
/** Standard Cauchy samples of the given shape. Consumes `key`. */
export const cauchy = sampler("cauchy", cauchy_);
/** Log-normal samples, `exp(sigma * normal)` (sigma default 1). Consumes `key`. */
export const lognormal = sampler("lognormal", lognormal_);
/** Rayleigh samples with the given scale (default 1). Consumes `key`. */
export const rayleigh = sampler("rayleigh", rayleigh_);
/** Maxwell samples (the norm of three standard normals). Consumes `key`. */
export const maxwell = sampler("maxwell", maxwell_);
/** Double-sided Maxwell samples with location `loc` and scale `scale`. Consumes `key`. */
export const doubleSidedMaxwell = sampler("doubleSidedMaxwell", doubleSidedMaxwell_);
/** Pareto samples with shape parameter `b`. Consumes `key`. */
export const pareto = sampler("pareto", pareto_);
/** Weibull samples with the given scale and concentration. Consumes `key`. */
export const weibullMin = sampler("weibullMin", weibullMin_);
/** Triangular samples on [left, right] with the given mode. Consumes `key`. */
export const triangular = sampler("triangular", triangular_);
/**
 * Geometric samples (trials until the first success, p the success probability), int32 by default. Consumes `key`.
 */
export const geometric = sampler("geometric", geometric_);
/** Samples of -1 and 1 with equal probability (int32 by default). Consumes `key`. */
export const rademacher = sampler("rademacher", rademacher_);
/** Multivariate normal samples `mean + cholesky(cov) z`, of shape [...shape, n]. Consumes `key`. */
export const multivariateNormal = sampler("multivariateNormal", multivariateNormal_);
/** Points uniform in the d-dimensional unit ball (p = 2 only, as jax-js). Consumes `key`. */
export const ball = sampler("ball", ball_);
export const categoricalWithoutReplacement = named("categoricalWithoutReplacement", categoricalWithoutReplacement_);
/**
 * Category indices drawn from `logits` along `axis` (default -1); `replace: false` samples without replacement. Consumes `key`.
 */
export const categorical = sampler("categorical", categorical_);
/**
 * Samples from arange(a) (a number) or from `a`'s slices along `axis`, with or without replacement, optionally weighted by `p`.
 *
 * @throws Error when more samples than the population are drawn without replacement. Consumes `key`.
 */
export const choice = sampler("choice", choice_);
