// optax's gradient transformations (scale, scaleByAdam, scaleByRms, scaleByStddev, trace,
// addDecayedWeights, clipByGlobalNorm, ...) in kiln/optax, following optax 0.2.8's formulas
// operation by operation (as src/library/optax.cpp does) so results match it step for step.
// Everything stays in the graph (no count.item()), so an update runs inside jit.
import { Array, DType, checkArray, run } from "../array.js";
import * as np from "../numpy.js";
import * as tree from "../tree.js";
import type { JsTree } from "../tree.js";
import { type GradientTransformation, identity, initEmptyState, named, type OptState, safeIncrement, type ScalarOrSchedule, type Schedule, zeroCount } from "./base.js";

type Tree = JsTree<Array>;
const f32 = DType.Float32;

function zerosLike(params: Tree): Tree {
  return tree.map((p: Array) => np.zerosLike(p), params);
}
function fullLike(params: Tree, v: number): Tree {
  return tree.map((p: Array) => np.fullLike(p, v), params);
}

/** (1 - decay) * g^order + decay * t (optax update_moment / update_moment_per_elem_norm). */
function updateMoment(updates: Tree, moments: Tree, decay: number, order: 1 | 2): Tree {
  return tree.map((g: Array, t: Array) => {
    const p = order === 1 ? g.ref : g.ref.mul(g.ref);
    return p.mul(1 - decay).add(t.mul(decay));
  }, updates, moments);
}

/**
 * moment / (1 - decay^count), with decay in float32 raised to the float32 count as JAX does
 * (`decay ** count` promotes the int32 count to the weak float's float32). Consumes moments.
 */
function biasCorrection(moments: Tree, decay: number, count: Array): Tree {
  const power = np.power(np.array(decay, { dtype: f32 }), count.ref.astype(f32));
  const denom = np.subtract(1, power);
  const out = tree.map((t: Array) => t.div(denom.ref), moments);
  denom.dispose();
  return out;
}

/** The value of a ScalarOrSchedule's schedule at `count` (not consumed), as a number or Array. */
function scheduleAt(fn: Schedule, count: Array): number | Array {
  const v = fn(count);
  if (typeof v !== "number" && !(v instanceof Array)) throw new Error(`schedule: returned ${typeof v}, expected a number or an Array`);
  return v;
}

/** Multiplies every leaf by `step` (a number or an Array, consumed). */
function scaleTree(updates: Tree, step: number | Array): Tree {
  if (typeof step === "number") return tree.map((g: Array) => g.mul(step), updates);
  const out = tree.map((g: Array) => g.mul(step.ref.astype(g.dtype)), updates);
  step.dispose();
  return out;
}

/** Multiplies updates by a constant. */
export function scale(stepSize: number): GradientTransformation {
  return named("scale", {
    init: initEmptyState,
    update(updates, state, params) {
      tree.dispose(params);
      return [scaleTree(updates, stepSize) as typeof updates, state];
    },
  });
}

/** Multiplies updates by `stepSizeFn(count)`; state `{ count }` (int32). */
export function scaleBySchedule(stepSizeFn: Schedule): GradientTransformation {
  return named("scaleBySchedule", {
    init(params) {
      tree.dispose(params);
      return { count: zeroCount() };
    },
    update(updates, state, params) {
      tree.dispose(params);
      const { count } = state as { count: Array };
      const step = scheduleAt(stepSizeFn, count);
      return [scaleTree(updates, step) as typeof updates, { count: safeIncrement(count) }];
    },
  });
}

/** Scales by -learningRate (flipSign) for a number or a schedule; identity when undefined. */
export function scaleByLearningRate(learningRate: ScalarOrSchedule, flipSign = true): GradientTransformation {
  if (learningRate === undefined) return identity();
  const m = flipSign ? -1 : 1;
  if (typeof learningRate === "function") {
    return scaleBySchedule((count) => {
      const v = scheduleAt(learningRate, count);
      return typeof v === "number" ? m * v : v.mul(m);
    });
  }
  return named("scaleByLearningRate", scale(m * learningRate));
}

/** Options of {@link scaleByAdam} (as {@link AdamOptions}). */
export type ScaleByAdamOptions = { b1?: number; b2?: number; eps?: number; epsRoot?: number; nesterov?: boolean };

/** Adam's rescaling; state `{ count, mu, nu }` as optax's ScaleByAdamState. */
export function scaleByAdam({ b1 = 0.9, b2 = 0.999, eps = 1e-8, epsRoot = 0.0, nesterov = false }: ScaleByAdamOptions = {}): GradientTransformation {
  return named("scaleByAdam", {
    init(params) {
      const mu = zerosLike(tree.ref(params));
      return { count: zeroCount(), mu, nu: zerosLike(params) };
    },
    update(updates, state, params) {
      tree.dispose(params);
      const s = state as { count: Array; mu: Tree; nu: Tree };
      const mu = updateMoment(updates, s.mu, b1, 1);
      const nu = updateMoment(updates, s.nu, b2, 2);
      const count = safeIncrement(s.count);
      let muHat: Tree;
      if (nesterov) {
        // optax: b1 * bias_correction(mu, count + 1) + (1 - b1) * bias_correction(g, count).
        const next = safeIncrement(count.ref);
        const a = biasCorrection(tree.ref(mu), b1, next);
        next.dispose();
        const b = biasCorrection(updates, b1, count);
        muHat = tree.map((m: Array, g: Array) => m.mul(b1).add(g.mul(1 - b1)), a, b);
      } else {
        tree.dispose(updates);
        muHat = biasCorrection(tree.ref(mu), b1, count);
      }
      const nuHat = biasCorrection(tree.ref(nu), b2, count);
      const out = tree.map((m: Array, v: Array) => m.div(np.sqrt(v.add(epsRoot)).add(eps)), muHat, nuHat);
      return [out as any, { count, mu, nu }];
    },
  });
}

export type ScaleByRmsOptions = { decay?: number; eps?: number; initialScale?: number; epsInSqrt?: boolean };

/** RMSProp's rescaling g / sqrt(nu + eps) (or / (sqrt(nu) + eps)); state `{ nu }`. */
export function scaleByRms({ decay = 0.9, eps = 1e-8, initialScale = 0.0, epsInSqrt = true }: ScaleByRmsOptions = {}): GradientTransformation {
  return named("scaleByRms", {
    init(params) {
      return { nu: fullLike(params, initialScale) };
    },
    update(updates, state, params) {
      tree.dispose(params);
      const nu = updateMoment(updates, (state as { nu: Tree }).nu, decay, 2);
      const out = tree.map((n: Array, g: Array) => {
        const scaling = epsInSqrt ? run("rsqrt", [n.ref.add(eps)]) : np.divide(1, np.sqrt(n.ref).add(eps));
        return scaling.mul(g);
      }, nu, updates);
      return [out as any, { nu }];
    },
  });
}

export type ScaleByStddevOptions = { decay?: number; eps?: number; initialScale?: number };

/** Centered RMSProp's rescaling g / sqrt(nu - mu^2 + eps); state `{ mu, nu }`. */
export function scaleByStddev({ decay = 0.9, eps = 1e-8, initialScale = 0.0 }: ScaleByStddevOptions = {}): GradientTransformation {
  return named("scaleByStddev", {
    init(params) {
      return { mu: zerosLike(tree.ref(params)), nu: fullLike(params, initialScale) };
    },
    update(updates, state, params) {
      tree.dispose(params);
      const s = state as { mu: Tree; nu: Tree };
      const mu = updateMoment(updates, s.mu, decay, 1);
      const nu = updateMoment(updates, s.nu, decay, 2);
      const [mus, def] = tree.flatten(mu);
      const [nus] = tree.flatten(nu);
      const [gs, gdef] = tree.flatten(updates);
      if (!gdef.equals(def)) throw new Error(`scaleByStddev: updates ${gdef.toString()} differ from state ${def.toString()}`);
      const out = gs.map((g, i) => run("rsqrt", [nus[i].ref.sub(np.square(mus[i].ref)).add(eps)]).mul(g));
      return [tree.unflatten(def, out) as any, { mu, nu }];
    },
  });
}

/** Options of {@link trace}: the momentum `decay` (0.9) and `nesterov`. */
export type TraceOptions = { decay?: number; nesterov?: boolean };

/** Momentum: trace = g + decay * trace; updates are the trace (or g + decay * trace, nesterov). */
export function trace({ decay = 0.9, nesterov = false }: TraceOptions = {}): GradientTransformation {
  return named("trace", {
    init(params) {
      return { trace: zerosLike(params) };
    },
    update(updates, state, params) {
      tree.dispose(params);
      const prev = (state as { trace: Tree }).trace;
      const newTrace = tree.map((g: Array, t: Array) => g.ref.add(t.mul(decay)), updates, prev);
      let out: Tree;
      if (nesterov) out = tree.map((g: Array, t: Array) => g.add(t.ref.mul(decay)), updates, newTrace);
      else {
        tree.dispose(updates);
        out = tree.ref(newTrace);
      }
      return [out as any, { trace: newTrace }];
    },
  });
}

/** A function from the parameters to a mask tree (true where a transformation applies). */
export type MaskFn = (params: Tree) => Tree;
/** Options of {@link addDecayedWeights}: `weightDecay` and a `mask` (a tree or a {@link MaskFn}). */
export type AddDecayedWeightsOptions = { weightDecay?: number; mask?: Tree | MaskFn | null };

/**
 * updates + weightDecay * params. `mask` (as @jax-js/optax): a tree of Arrays multiplied into
 * the params first (1 decays a leaf, 0 leaves it), or a function of the params giving one.
 */
export function addDecayedWeights({ weightDecay = 0.0, mask = null }: AddDecayedWeightsOptions = {}): GradientTransformation {
  return named("addDecayedWeights", {
    init: initEmptyState,
    update(updates, state, params) {
      if (params === undefined) throw new Error("addDecayedWeights: got no params, expected the parameters as update's third argument");
      let p: Tree = params;
      if (mask !== null) {
        const m = typeof mask === "function" ? mask(tree.ref(params)) : tree.ref(mask);
        p = tree.map((x: Array, k: Array) => x.mul(k), params, m);
      }
      const out = tree.map((g: Array, x: Array) => g.add(x.mul(weightDecay)), updates, p);
      return [out as any, state];
    },
  });
}

/** sqrt of the sum of squares of every leaf (optax.global_norm); consumes the tree. */
export function globalNorm(updates: Tree): Array {
  // Every leaf is checked before the first is consumed.
  const leaves = tree.leaves(updates);
  for (const x of leaves) checkArray("globalNorm", x, "Array leaves");
  let total: Array | null = null;
  for (const x of leaves) {
    const s = np.sum(x.ref.mul(x));
    total = total === null ? s : total.add(s);
  }
  return np.sqrt(total ?? np.array(0, { dtype: f32 }));
}

/** Rescales all updates by maxNorm / globalNorm when the global norm exceeds maxNorm. */
export function clipByGlobalNorm(maxNorm: number): GradientTransformation {
  return named("clipByGlobalNorm", {
    init: initEmptyState,
    update(updates, state, params) {
      tree.dispose(params);
      const norm = globalNorm(tree.ref(updates));
      const trigger = norm.ref.less(maxNorm);
      const out = tree.map((t: Array) => np.where(trigger.ref, t.ref, t.div(norm.ref.astype(t.dtype)).mul(maxNorm)), updates);
      trigger.dispose();
      norm.dispose();
      return [out as any, state];
    },
  });
}

/** Clips every update to [-maxDelta, maxDelta]. */
export function clip(maxDelta: number): GradientTransformation {
  return named("clip", {
    init: initEmptyState,
    update(updates, state, params) {
      tree.dispose(params);
      return [tree.map((g: Array) => np.clip(g, -maxDelta, maxDelta), updates) as any, state];
    },
  });
}

export type { OptState };
