// The optimizers of kiln/optax (sgd, adam, adamw, rmsprop), each a chain of transformations
// exactly as optax 0.2.8 builds it; argument forms as @jax-js/optax (options objects).
import type { GradientTransformation, ScalarOrSchedule } from "./base.js";
import { identity, named } from "./base.js";
import { chain } from "./combine.js";
import { addDecayedWeights, type MaskFn, scaleByAdam, scaleByLearningRate, scaleByRms, scaleByStddev, trace } from "./transform.js";
import type { Array } from "../array.js";
import type { JsTree } from "../tree.js";

/** Options of {@link sgd}: `momentum` (null: none) and `nesterov`. */
export type SgdOptions = { momentum?: number | null; nesterov?: boolean };

/** Stochastic gradient descent, with optional (Nesterov) momentum. */
export function sgd(learningRate: ScalarOrSchedule, { momentum = null, nesterov = false }: SgdOptions = {}): GradientTransformation {
  return named("sgd", chain(momentum !== null && momentum !== undefined ? trace({ decay: momentum, nesterov }) : identity(), scaleByLearningRate(learningRate)));
}

/** Options of {@link adam}: the moment decays `b1` (0.9) and `b2` (0.999), `eps` (1e-8) and `epsRoot` (0) of the denominator, `nesterov`. */
export type AdamOptions = { b1?: number; b2?: number; eps?: number; epsRoot?: number; nesterov?: boolean };

/**
 * Adam (NAdam with `nesterov`), built as optax builds it: scaleByAdam then the learning rate.
 *
 * @param learningRate - a number or a {@link Schedule} of the step count.
 * @example
 * ```ts
 * import { tree } from "kiln";
 * import * as optax from "kiln/optax";
 * const opt = optax.adam(1e-3);
 * let state = opt.init(tree.ref(params));
 * const [updates, next] = opt.update(grads, state);
 * params = optax.applyUpdates(params, updates);
 * state = next;
 * ```
 */
export function adam(learningRate: ScalarOrSchedule, { b1 = 0.9, b2 = 0.999, eps = 1e-8, epsRoot = 0.0, nesterov = false }: AdamOptions = {}): GradientTransformation {
  return named("adam", chain(scaleByAdam({ b1, b2, eps, epsRoot, nesterov }), scaleByLearningRate(learningRate)));
}

/** Options of {@link adamw}: Adam's, `weightDecay` (1e-4) and a `mask` of the parameters to decay. */
export type AdamWOptions = AdamOptions & { weightDecay?: number; mask?: JsTree<Array> | MaskFn | null };

/** Adam with decoupled weight decay (default 1e-4, as optax). */
export function adamw(learningRate: ScalarOrSchedule, { b1 = 0.9, b2 = 0.999, eps = 1e-8, epsRoot = 0.0, weightDecay = 1e-4, mask = null, nesterov = false }: AdamWOptions = {}): GradientTransformation {
  return named("adamw", chain(scaleByAdam({ b1, b2, eps, epsRoot, nesterov }), addDecayedWeights({ weightDecay, mask }), scaleByLearningRate(learningRate)));
}

/** Options of {@link rmsprop}: `decay`, `eps`, `initialScale`, `epsInSqrt`, `centered`, `momentum`, `nesterov` (optax's defaults). */
export type RmspropOptions = {
  decay?: number;
  eps?: number;
  initialScale?: number;
  epsInSqrt?: boolean;
  centered?: boolean;
  momentum?: number | null;
  nesterov?: boolean;
};

/** RMSProp (centered: divides by the running standard deviation), optional momentum after the step. */
export function rmsprop(learningRate: ScalarOrSchedule, { decay = 0.9, eps = 1e-8, initialScale = 0.0, epsInSqrt = true, centered = false, momentum = null, nesterov = false }: RmspropOptions = {}): GradientTransformation {
  const pre = centered ? scaleByStddev({ decay, eps, initialScale }) : scaleByRms({ decay, eps, initialScale, epsInSqrt });
  return named("rmsprop", chain(pre, scaleByLearningRate(learningRate), momentum !== null && momentum !== undefined ? trace({ decay: momentum, nesterov }) : identity()));
}
