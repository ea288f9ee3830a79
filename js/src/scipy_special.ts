// kiln's `scipySpecial` namespace (jax-js names): erf, erfc, logit, and the softmax family
// shared with nn.
/**
 * Special functions (jax.scipy.special): erf, erfc, logit and the softmax family shared with
 * {@link nn}.
 * @module
 */
import { Array, asArray, run, type ArrayLike } from "./array.js";
export { erf, erfc } from "./lax.js";
export { logSoftmax, logsumexp, softmax } from "./nn.js";

/** log(p / (1 - p)). */
export function logit(x: ArrayLike): Array {
  const a = asArray(x, "logit");
  return run("log", [run("divide", [a.ref, run("subtract", [1, a])])]);
}
