// The two losses @jax-js/optax exports: elementwise squared error and half of it (l2Loss).
import { Array, checkOperands, named, type ArrayLike } from "../array.js";
import * as np from "../numpy.js";

/** predictions - targets, or predictions without targets; both checked first, under the loss's name. */
function errors(op: string, predictions: Array, targets?: ArrayLike): Array {
  checkOperands(op, predictions, ...(targets === undefined ? [] : [targets]));
  return targets === undefined ? predictions : np.subtract(predictions, targets);
}

/** (predictions - targets)^2 elementwise, or predictions^2 without targets. */
export const squaredError = named("squaredError", (predictions: Array, targets?: ArrayLike): Array => np.square(errors("squaredError", predictions, targets)));

/** 0.5 * squaredError (optax.l2_loss). */
export const l2Loss = named("l2Loss", (predictions: Array, targets?: ArrayLike): Array => np.multiply(np.square(errors("l2Loss", predictions, targets)), 0.5));
