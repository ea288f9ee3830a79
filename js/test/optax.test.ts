// kiln/optax against real optax, step for step: the committed trajectories of
// tools/gen_optax_fixtures.py (tests/fixtures/optax.txt, shared with the C++ suite, and
// optax_js.txt for the options only the JS package has), eagerly and under jit.
import { describe, expect, test } from "vitest";
import * as kiln from "../dist/index.js";
import { jit, numpy as np, tree } from "../dist/index.js";
import { makeCnn } from "../../examples/mnist-node/cnn.mjs";
import * as optax from "../dist/optax/index.js";
import optaxText from "../../tests/fixtures/optax.txt?raw";
import optaxJsText from "../../tests/fixtures/optax_js.txt?raw";
import { compare, parseFixtures, type Case, type FixArray } from "./fixtures.js";

const all = [...parseFixtures(optaxText), ...parseFixtures(optaxJsText)];
const real = (c: Case, k: string) => Number(c.params[k][0]);
const has = (c: Case, k: string) => c.params[k] !== undefined;
const realOr = (c: Case, k: string, d: number) => (has(c, k) ? real(c, k) : d);
const arr = (a: FixArray) => np.array(a.values, { shape: a.shape, dtype: a.dtype as np.DType });

function schedule(c: Case): optax.Schedule {
  const name = c.params.name[0];
  switch (name) {
    case "constant":
      return optax.constantSchedule(real(c, "value"));
    case "linear":
      return optax.linearSchedule(real(c, "init"), real(c, "end"), real(c, "steps"), real(c, "begin"));
    case "polynomial":
      return optax.polynomialSchedule(real(c, "init"), real(c, "end"), real(c, "power"), real(c, "steps"), real(c, "begin"));
    case "cosine":
    case "cosine_exp":
      return optax.cosineDecaySchedule(real(c, "init"), real(c, "steps"), real(c, "alpha"), real(c, "exponent"));
    case "exponential":
    case "exponential_stair":
      return optax.exponentialDecay(real(c, "init"), real(c, "steps"), real(c, "rate"), {
        transitionBegin: real(c, "begin"),
        staircase: real(c, "staircase") !== 0,
        endValue: c.params.end[0] === "none" ? null : real(c, "end"),
      });
    case "warmup_cosine":
      return optax.warmupCosineDecaySchedule(real(c, "init"), real(c, "peak"), real(c, "warmup"), real(c, "steps"), real(c, "end"));
    case "piecewise":
      return optax.piecewiseConstantSchedule(real(c, "init"), { [real(c, "b1")]: real(c, "s1"), [real(c, "b2")]: real(c, "s2") });
  }
  throw new Error(`unknown schedule ${name}`);
}

// An optimizer case's `schedule` param names the schedule case with the same arguments.
function lr(c: Case): optax.ScalarOrSchedule {
  if (!has(c, "schedule")) return real(c, "lr");
  const s = all.find((d) => d.op === "schedule" && d.params.name[0] === c.params.schedule[0]);
  if (!s) throw new Error(`no schedule case ${c.params.schedule[0]}`);
  return schedule(s);
}

function optimizer(c: Case): optax.GradientTransformation {
  const n = c.id;
  const momentum = has(c, "momentum") ? real(c, "momentum") : null;
  switch (n) {
    case "clip_adam":
      return optax.chain(optax.clipByGlobalNorm(real(c, "max_norm")), optax.adam(real(c, "lr")));
    case "clip_sgd":
      return optax.chain(optax.clipByGlobalNorm(real(c, "max_norm")), optax.sgd(real(c, "lr")));
    case "adam_cosine":
      return optax.adam(optax.cosineDecaySchedule(real(c, "init"), real(c, "steps")));
    case "sgd_exponential":
      return optax.sgd(optax.exponentialDecay(real(c, "init"), real(c, "steps"), real(c, "rate")), { momentum });
    case "adamw_mask":
      return optax.adamw(real(c, "lr"), { weightDecay: real(c, "weight_decay"), mask: { b: np.array(real(c, "mask_b")), w: np.array(real(c, "mask_w")) } });
  }
  if (n.startsWith("sgd")) return optax.sgd(lr(c), { momentum, nesterov: has(c, "nesterov") });
  if (n.startsWith("adamw")) return optax.adamw(lr(c), { weightDecay: real(c, "weight_decay") });
  if (n.startsWith("adam"))
    return optax.adam(lr(c), { b1: realOr(c, "b1", 0.9), b2: realOr(c, "b2", 0.999), eps: realOr(c, "eps", 1e-8), epsRoot: realOr(c, "eps_root", 0), nesterov: has(c, "nesterov") });
  if (n.startsWith("rmsprop"))
    return optax.rmsprop(lr(c), {
      decay: realOr(c, "decay", 0.9),
      eps: realOr(c, "eps", 1e-8),
      initialScale: realOr(c, "initial_scale", 0),
      epsInSqrt: realOr(c, "eps_in_sqrt", 1) !== 0,
      centered: has(c, "centered"),
      momentum,
    });
  throw new Error(`unknown optimizer ${n}`);
}

type Params = { b: np.Array; w: np.Array };
type Step = (p: Params, s: optax.OptState, g: Params) => [Params, optax.OptState];

// Feeds optax's gradients (inputs 2, 3, ...) and checks the params after every step.
function runCase(c: Case, makeStep: (opt: optax.GradientTransformation) => { step: Step; done: () => void }) {
  const opt = optimizer(c);
  let params: Params = { b: arr(c.inputs[0].arr), w: arr(c.inputs[1].arr) };
  let state = opt.init(tree.ref(params));
  const { step, done } = makeStep(opt);
  try {
    for (let k = 0; k < c.expects.length / 2; k++) {
      const g = { b: arr(c.inputs[2 + 2 * k].arr), w: arr(c.inputs[3 + 2 * k].arr) };
      [params, state] = step(params, state, g);
      for (const [i, key] of (["b", "w"] as const).entries()) {
        const msg = compare(params[key].ref, c.expects[2 * k + i], c.tol);
        expect(msg, `${c.id} step ${k + 1} ${key}`).toBeNull();
      }
    }
  } finally {
    tree.dispose(params);
    tree.dispose(state);
    done();
  }
}

const eager = (opt: optax.GradientTransformation) => ({
  step: (p: Params, s: optax.OptState, g: Params): [Params, optax.OptState] => {
    const [u, next] = opt.update(g, s, tree.ref(p));
    return [optax.applyUpdates(p, u), next];
  },
  done: () => {},
});

const jitted = (opt: optax.GradientTransformation) => {
  const f = jit((p: Params, s: optax.OptState, g: Params) => {
    const [u, next] = opt.update(g, s, tree.ref(p));
    return [optax.applyUpdates(p, u), next];
  });
  return { step: f as unknown as Step, done: () => f.dispose() };
};

const optCases = all.filter((c) => c.op === "opt");

describe("optax optimizers step for step", () => {
  test("fixtures are present", () => expect(optCases.length).toBeGreaterThanOrEqual(17));
  test.each(optCases.map((c) => [c.id, c] as [string, Case]))("%s eager", (_id, c) => runCase(c, eager));
  test.each(optCases.map((c) => [c.id, c] as [string, Case]))("%s under jit", (_id, c) => runCase(c, jitted));
});

describe("optax schedules", () => {
  const cases = all.filter((c) => c.op === "schedule");
  test.each(cases.map((c) => [c.id, c] as [string, Case]))("%s at counts 0..11 (Array and number counts)", (_id, c) => {
    const s = schedule(c);
    const want = c.expects[0];
    const fromArrays = want.values.map((_, i) => {
      const count = np.array(i, { dtype: np.int32 });
      const v = s(count) as np.Array;
      count.dispose();
      return v.item();
    });
    expect(compare(np.array(fromArrays), want, c.tol)).toBeNull();
    const fromNumbers = want.values.map((_, i) => s(i) as number);
    expect(compare(np.array(fromNumbers), want, c.tol)).toBeNull();
  });
});

describe("optax API", () => {
  test("chain rejects a state that is not its own", () => {
    const opt = optax.chain(optax.clipByGlobalNorm(1), optax.sgd(0.1));
    const p = np.array([1, 2]);
    expect(() => opt.update(np.array([1, 1]), [], p)).toThrow(/chain: got a state that is not a list of 2 states/);
  });
  test("addDecayedWeights needs params", () => {
    const opt = optax.adamw(0.1);
    const state = opt.init(np.array([1, 2]));
    expect(() => opt.update(np.array([1, 1]), state)).toThrow(/addDecayedWeights: got no params/);
  });
  test("a jax-js-style number schedule works eagerly", () => {
    const opt = optax.sgd((count: number) => 0.5 * Number(count) + 1);
    let p = np.array([0, 0]);
    let s = opt.init(p.ref);
    for (let i = 0; i < 3; i++) {
      const [u, next] = opt.update(np.array([1, 1]), s);
      p = optax.applyUpdates(p, u);
      s = next;
    }
    // steps of -1, -1.5, -2 (lr 1 + 0.5 * count)
    expect(p.js()).toEqual([-4.5, -4.5]);
    tree.dispose(s);
  });
  test("the MNIST example's optimizer: cosine by default, warmup-cosine as an option", () => {
    // adam is replaced by the identity so the schedule it is given can be read at any count.
    const spy = { ...optax, adam: (s: optax.Schedule) => s };
    const cnn = makeCnn({ kiln, optax: spy });
    const cosine = cnn.optimizer(0.01, 100) as unknown as (c: number) => number;
    expect(cosine(0)).toBeCloseTo(0.01, 7);
    expect(cosine(50)).toBeCloseTo(0.005, 7);
    const warm = cnn.optimizer(0.01, 100, { schedule: "warmup-cosine", warmup: 0.2 }) as unknown as (c: number) => number;
    expect(warm(0)).toBe(0);
    expect(warm(10)).toBeCloseTo(0.005, 7);
    expect(warm(20)).toBeCloseTo(0.01, 7);
    expect(warm(60)).toBeCloseTo(0.005, 7);
    expect(warm(100)).toBeCloseTo(0, 7);
    expect(() => cnn.optimizer(0.01, 100, { schedule: "onecycle" })).toThrow(/unknown schedule onecycle/);
    expect(() => cnn.optimizer(0.01, 100, { schedule: "warmup-cosine", warmup: 1 })).toThrow(/got warmup 1, expected a fraction/);
  });
  test("squaredError and l2Loss", () => {
    expect(optax.squaredError(np.array([1, 3]), np.array([2, 1])).js()).toEqual([1, 4]);
    expect(optax.l2Loss(np.array([1, 3]), np.array([2, 1])).js()).toEqual([0.5, 2]);
  });
});
