// optax's learning-rate schedules for kiln/optax, written with numpy ops in optax 0.2.8's
// order (as src/library/optax_schedules.cpp) so they run inside jit. Each accepts the step
// count as an Array (not consumed; the optimizers pass their int32 count) and returns a
// float32 Array, or a plain number and returns a number (computed the same way, in float32).
import { Array, DType } from "../array.js";
import * as np from "../numpy.js";
import type { Schedule } from "./base.js";

const f32 = DType.Float32;

/** Wraps an Array formula of the float32 count into a Schedule taking numbers or Arrays. */
function schedule(f: (count: Array) => Array): Schedule {
  return (count: number | Array) => {
    if (typeof count === "number") return f(np.array(count, { dtype: f32 })).item();
    if (!(count instanceof Array)) throw new Error(`schedule: got a count of type ${typeof count}, expected a number or an Array`);
    return f(count.ref.astype(f32));
  };
}

/** The schedule that is `value` at every step. */
export function constantSchedule(value: number): Schedule {
  return schedule((count) => {
    count.dispose();
    return np.array(value, { dtype: f32 });
  });
}

/** init → end along (1 - t/steps)^power, starting at transitionBegin. */
export function polynomialSchedule(initValue: number, endValue: number, power: number, transitionSteps: number, transitionBegin = 0): Schedule {
  // optax: a non-positive transition gives a constant, a negative begin counts from 0.
  if (transitionSteps <= 0) return constantSchedule(initValue);
  const begin = Math.max(transitionBegin, 0);
  return schedule((count) => {
    const c = np.clip(count.sub(begin), 0, transitionSteps);
    const frac = np.subtract(1, c.div(transitionSteps));
    // optax raises frac to an int power 1 as frac itself (linear_schedule).
    const shaped = power === 1 ? frac : np.power(frac, power);
    return shaped.mul(initValue - endValue).add(endValue);
  });
}

/** From `initValue` to `endValue` linearly over `transitionSteps` steps after `transitionBegin`, then constant. */
export function linearSchedule(initValue: number, endValue: number, transitionSteps: number, transitionBegin = 0): Schedule {
  return polynomialSchedule(initValue, endValue, 1, transitionSteps, transitionBegin);
}

/** init * ((1 - alpha) * (0.5 * (1 + cos(pi * min(t, steps) / steps)))^exponent + alpha). */
export function cosineDecaySchedule(initValue: number, decaySteps: number, alpha = 0.0, exponent = 1.0): Schedule {
  if (!(decaySteps > 0)) throw new Error(`cosineDecaySchedule: got decaySteps = ${decaySteps}, expected > 0`);
  return schedule((count) => {
    const c = np.minimum(count, decaySteps);
    const cosine = np.cos(c.mul(Math.PI).div(decaySteps)).add(1).mul(0.5);
    const shaped = exponent === 1 ? cosine : np.power(cosine, exponent);
    return shaped.mul(1 - alpha).add(alpha).mul(initValue);
  });
}

/** Options of {@link exponentialDecay}: `transitionBegin`, `staircase` (decay in whole steps) and an `endValue` bound. */
export type ExponentialDecayOptions = { transitionBegin?: number; staircase?: boolean; endValue?: number | null };

/** init * rate^((t - begin) / steps), floored with staircase, bounded by endValue. */
export function exponentialDecay(initValue: number, transitionSteps: number, decayRate: number, { transitionBegin = 0, staircase = false, endValue = null }: ExponentialDecayOptions = {}): Schedule {
  if (transitionSteps <= 0 || decayRate === 0) return constantSchedule(initValue);
  const begin = Math.max(transitionBegin, 0);
  return schedule((count) => {
    const decreased = count.sub(begin);
    let p = decreased.ref.div(transitionSteps);
    if (staircase) p = np.floor(p);
    const init = np.array(initValue, { dtype: f32 });
    let v = np.where(decreased.lessEqual(0), init.ref, init.mul(np.power(np.array(decayRate, { dtype: f32 }), p)));
    if (endValue !== null && endValue !== undefined) v = decayRate < 1 ? np.maximum(v, endValue) : np.minimum(v, endValue);
    return v;
  });
}

/** init, multiplied by scale s at each boundary b once t reaches b ({ b: s }, as optax). */
export function piecewiseConstantSchedule(initValue: number, boundariesAndScales: Record<number, number> = {}): Schedule {
  const entries = Object.entries(boundariesAndScales).map(([b, s]) => [Number(b), s] as [number, number]).sort((a, b) => a[0] - b[0]);
  for (const [b, s] of entries) if (s < 0) throw new Error(`piecewiseConstantSchedule: got scale ${s} at boundary ${b}, expected non-negative scales`);
  return schedule((count) => {
    let v = np.array(initValue, { dtype: f32 });
    for (const [threshold, s] of entries) {
      const indicator = np.maximum(0, np.sign(np.subtract(threshold, count.ref)));
      v = v.ref.mul(indicator.ref).add(np.subtract(1, indicator).mul(s).mul(v));
    }
    count.dispose();
    return v;
  });
}

/** schedules[i] from boundaries[i-1] on, each started at its own count 0 (optax.join_schedules). */
export function joinSchedules(schedules: Schedule[], boundaries: number[]): Schedule {
  if (schedules.length === 0 || boundaries.length + 1 !== schedules.length)
    throw new Error(`joinSchedules: got ${schedules.length} schedules and ${boundaries.length} boundaries, expected one boundary fewer than schedules`);
  const joined = (count: Array): Array => {
    let out = np.array(schedules[0](count), { dtype: f32 });
    boundaries.forEach((b, i) => {
      const shifted = count.ref.sub(b);
      const next = np.array(schedules[i + 1](shifted), { dtype: f32 });
      shifted.dispose();
      out = np.where(count.ref.less(b), out, next);
    });
    return out;
  };
  return (count: number | Array) => {
    if (typeof count === "number") {
      const c = np.array(count, { dtype: DType.Int32 });
      const v = joined(c).item();
      c.dispose();
      return v;
    }
    return joined(count);
  };
}

/** Linear warmup from init to peak over warmupSteps, then cosine decay to endValue at decaySteps. */
export function warmupCosineDecaySchedule(initValue: number, peakValue: number, warmupSteps: number, decaySteps: number, endValue = 0.0, exponent = 1.0): Schedule {
  // The decay runs from warmupSteps to decaySteps (cosineDecaySchedule would report it under its own name).
  if (!(decaySteps > warmupSteps)) throw new Error(`warmupCosineDecaySchedule: got decaySteps = ${decaySteps} and warmupSteps = ${warmupSteps}, expected decaySteps > warmupSteps`);
  const alpha = peakValue === 0 ? 0.0 : endValue / peakValue;
  return joinSchedules([linearSchedule(initValue, peakValue, warmupSteps), cosineDecaySchedule(peakValue, decaySteps - warmupSteps, alpha, exponent)], [warmupSteps]);
}
