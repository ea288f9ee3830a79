// kiln's `random` namespace (jax-js names), as index.ts exports it: the core's samplers
// (random_ops.ts) and the ones composed from them (random_samplers.ts). Only re-exports, so
// neither of those modules needs to import this one back (docs/ARCHITECTURE.md).
export * from "./random_ops.js";
export {
  exponential, gumbel, laplace, logistic, cauchy, lognormal, rayleigh, maxwell, doubleSidedMaxwell, pareto,
  weibullMin, triangular, geometric, rademacher, multivariateNormal, ball, choice, categorical,
} from "./random_samplers.js";
