// kiln's `random` namespace (jax-js names), as index.ts exports it: the core's samplers
// (random_ops.ts) and the ones composed from them (random_samplers.ts). Only re-exports, so
// neither of those modules needs to import this one back (docs/ARCHITECTURE.md).
/**
 * Pseudo-random numbers with explicit keys, bit for bit JAX's threefry2x32: make a key with
 * {@link key}, {@link split} it into independent keys, and pass one key to each sampler. Samplers
 * consume their key, as in jax-js.
 *
 * @example
 * ```ts
 * import { random } from "kiln";
 * const [k1, k2] = random.split(random.key(42));
 * const w = random.normal(k1, [784, 10]);
 * const u = random.uniform(k2, [3], { minval: -1, maxval: 1 });
 * ```
 * @module
 */
export * from "./random_ops.js";
export {
  exponential, gumbel, laplace, logistic, cauchy, lognormal, rayleigh, maxwell, doubleSidedMaxwell, pareto,
  weibullMin, triangular, geometric, rademacher, multivariateNormal, ball, choice, categorical,
} from "./random_samplers.js";
