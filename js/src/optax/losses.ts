// The two losses @jax-js/optax exports: elementwise squared error and half of it (l2Loss).
import { Array, type ArrayLike } from "../array.js";
import * as np from "../numpy.js";

/** (predictions - targets)^2 elementwise, or predictions^2 without targets. */
export function squaredError(predictions: Array, targets?: ArrayLike): Array {
  const errors = targets === undefined ? predictions : predictions.sub(targets);
  return np.square(errors);
}

/** 0.5 * squaredError (optax.l2_loss). */
export function l2Loss(predictions: Array, targets?: ArrayLike): Array {
  return squaredError(predictions, targets).mul(0.5);
}
