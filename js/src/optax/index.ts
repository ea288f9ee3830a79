// `kiln/optax`: optimizers, gradient transformations and schedules with the API of the npm
// package @jax-js/optax (a port of optax), written in TypeScript over kiln's numpy.
export { adam, type AdamOptions, adamw, type AdamWOptions, rmsprop, type RmspropOptions, sgd, type SgdOptions } from "./alias.js";
export { applyUpdates, type GradientTransformation, identity, type OptState, type ScalarOrSchedule, type Schedule, setToZero } from "./base.js";
export { chain } from "./combine.js";
export { l2Loss, squaredError } from "./losses.js";
export {
  addDecayedWeights,
  type AddDecayedWeightsOptions,
  clip,
  clipByGlobalNorm,
  globalNorm,
  type MaskFn,
  scale,
  scaleByAdam,
  type ScaleByAdamOptions,
  scaleByLearningRate,
  scaleByRms,
  scaleByStddev,
  scaleBySchedule,
  trace,
  type TraceOptions,
} from "./transform.js";
export {
  constantSchedule,
  cosineDecaySchedule,
  exponentialDecay,
  type ExponentialDecayOptions,
  joinSchedules,
  linearSchedule,
  piecewiseConstantSchedule,
  polynomialSchedule,
  warmupCosineDecaySchedule,
} from "./schedule.js";
