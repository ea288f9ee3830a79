// kiln/optax's core types (the API of @jax-js/optax): a GradientTransformation is a pair of
// pure functions init/update over pytrees; optimizer state is an ordinary JsTree of Arrays.
import { Array, DType, checkArray, checkOperands, named as namedFunction } from "../array.js";
import * as np from "../numpy.js";
import * as tree from "../tree.js";
import type { JsTree } from "../tree.js";

/** The state of an optimizer: a pytree whose shape depends on the transformation. */
export type OptState = JsTree<Array>;

/**
 * init(params) builds the state; update(updates, state, params?) returns the transformed
 * updates and the next state. Both consume their Array arguments, as in @jax-js/optax
 * (pass `params.ref` to keep using them).
 */
export interface GradientTransformation {
  /** The initial state for `params` (consumed). */
  init<Params extends JsTree<Array>>(params: Params): OptState;
  /** The transformed updates and the next state; consumes `updates`, `state` and `params`. */
  update<Params extends JsTree<Array>>(updates: Params, state: OptState, params?: Params): [Params, OptState];
}

/**
 * A schedule maps the step count to a value. update() calls it with the int32 count Array
 * (a tracer under jit), so a schedule that returns an Array keeps the step jittable. The
 * schedules of kiln/optax accept a plain number too and then return a number; a jax-js-style
 * `(count: number) => number` schedule also works outside jit, where the count converts to
 * a number through Array's Symbol.toPrimitive.
 */
export type Schedule = (count: any) => any;
/** A constant value, or a {@link Schedule} of the step count. */
export type ScalarOrSchedule = number | Schedule;

/**
 * The transformation with errors from its init and update naming `name` first ("adam:
 * tree.map: structures differ ..."): they run long after the factory returned, and would
 * otherwise name only the tree or numpy function that failed inside.
 */
export function named(name: string, gt: GradientTransformation): GradientTransformation {
  const prefix = (e: unknown) => {
    if (e instanceof Error && !(e instanceof ReferenceError) && !e.message.startsWith(`${name}:`)) e.message = `${name}: ${e.message}`;
    return e;
  };
  return {
    init(params) {
      try {
        return gt.init(params);
      } catch (e) {
        throw prefix(e);
      }
    },
    update(updates, state, params) {
      try {
        return gt.update(updates, state, params);
      } catch (e) {
        throw prefix(e);
      }
    },
  };
}

/** The empty state of stateless transformations (optax: EmptyState()). */
export function initEmptyState(params: JsTree<Array>): OptState {
  tree.dispose(params);
  return [];
}

/** Leaves the updates unchanged. */
export function identity(): GradientTransformation {
  return named("identity", {
    init: initEmptyState,
    update(updates, state, params) {
      tree.dispose(params);
      return [updates, state];
    },
  });
}

/** Maps every update to zero. */
export function setToZero(): GradientTransformation {
  return named("setToZero", {
    init: initEmptyState,
    update(updates, state, params) {
      tree.dispose(params);
      return [tree.map((g: Array) => np.zerosLike(g), updates) as typeof updates, state];
    },
  });
}

/** params + updates, leaf by leaf, cast back to each parameter's dtype; consumes both. */
export const applyUpdates = namedFunction("applyUpdates", <Params extends JsTree<Array>>(params: Params, updates: Params): Params => {
  checkUpdates(params, updates);
  return tree.map((p: Array, u: Array) => {
    const dtype = p.dtype;
    const sum = p.add(u);
    return sum.dtype === dtype ? sum : sum.astype(dtype as DType);
  }, params, updates) as Params;
});

/**
 * Checks every leaf pair before the first is consumed: the sums are made leaf by leaf, and a
 * bad later leaf would leave the earlier ones consumed and their sums leaked.
 */
function checkUpdates(params: JsTree<Array>, updates: JsTree<Array>) {
  const [ps, def] = tree.flatten(params);
  const [us, udef] = tree.flatten(updates);
  if (!udef.equals(def)) throw new Error(`applyUpdates: the updates' structure ${udef.toString()} is not the params' ${def.toString()}`);
  ps.forEach((p, i) => {
    checkArray("applyUpdates", p, "an Array parameter");
    checkOperands("applyUpdates", us[i]);
    np.broadcastShapes(p.shape, np.shape(us[i]));
  });
}

/** The optax step counter: an int32 scalar (optax's dtype; @jax-js/optax uses uint32). */
export function zeroCount(): Array {
  return np.array(0, { dtype: DType.Int32 });
}

/** count + 1, stopping at the largest int32 instead of wrapping (optax safe_increment). */
export function safeIncrement(count: Array): Array {
  return np.where(count.ref.less(2147483647), count.ref.add(1), count);
}
