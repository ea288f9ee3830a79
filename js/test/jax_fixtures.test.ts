// Transformations of JS closures over JsTrees, and random, against the committed JAX
// fixtures (tools/gen_jax_fixtures.py, tools/gen_random_fixtures.py), on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, grad, hessian, jit, lax, nn, numpy as np, random, tree, valueAndGrad, vmap } from "../dist/index.js";
import transformsText from "../../tests/fixtures/transforms_jax.txt?raw";
import randomText from "../../tests/fixtures/random.txt?raw";
import { compare, hostDevices, namedExpects, parseFixtures, ulps, type Case, type FixArray } from "./fixtures.js";

const cases = parseFixtures(transformsText, true).filter((c) => c.params === undefined || true);
// The generator writes outputs as named `expect` lines; re-read the names for lookup.
const named = namedExpects;
const arr = (a: FixArray) => np.array(a.values, { shape: a.shape, dtype: a.dtype as np.DType });
const ins = (c: Case) => Object.fromEntries(c.inputs.map((i) => [i.name!, arr(i.arr)]));

// The functions of tools/gen_jax_fixtures.py written as jax-js programs (with .ref where a
// value is used twice), so the closures run through kiln's tracers.
function mlpLoss(p: any, x: np.Array, y: np.Array) {
  const h = np.tanh(np.matmul(x, p.w1).add(p.b1));
  const out = np.matmul(h, p.w2).add(p.b2);
  return np.mean(np.square(out.sub(y)));
}
function xent(logits: np.Array, labels: np.Array) {
  const logp = nn.logSoftmax(logits, -1);
  return np.mean(np.takeAlongAxis(logp, np.expandDims(labels, 1), 1)).neg();
}
function rosenbrock(v: np.Array) {
  const a = v.ref.slice([1]);
  const b = v.slice([0, -1]);
  const t = a.sub(np.square(b.ref));
  return np.sum(np.square(t).mul(100).add(np.square(np.subtract(1, b))));
}
function exampleLoss(w: np.Array, x: np.Array, y: np.Array) {
  return np.square(np.tanh(np.dot(x, w)).sub(y));
}

const RUN: Record<string, (c: Case) => Record<string, np.Array>> = {
  mlp: (c) => {
    const { w1, b1, w2, b2, x, y } = ins(c);
    const [loss, g] = valueAndGrad(mlpLoss)({ w1, b1, w2, b2 }, x, y);
    return { loss, g_w1: g.w1, g_b1: g.b1, g_w2: g.w2, g_b2: g.b2 };
  },
  xent: (c) => {
    const { logits, labels } = ins(c);
    const [loss, g] = valueAndGrad(xent)(logits, labels);
    return { loss, g_logits: g };
  },
  rosenbrock: (c) => {
    const { v } = ins(c);
    return { grad: grad(rosenbrock)(v.ref), hessian: hessian(rosenbrock)(v) };
  },
  per_example: (c) => {
    const { w, xs, ys } = ins(c);
    return { grads: vmap(grad(exampleLoss), [null, 0, 0])(w, xs, ys) };
  },
  sin3: (c) => {
    const { xs } = ins(c);
    return { d3: vmap(grad(grad(grad((x: np.Array) => np.sin(x)))))(xs) };
  },
};

/** The C++ suite's tolerance: rtol 1e-5 of each value, floored by the output's largest magnitude. */
function close(got: np.Array, want: FixArray): string | null {
  const scale = Math.max(...want.values.map(Math.abs));
  if (got.shape.join(",") !== want.shape.join(",")) return `shape [${got.shape}] vs [${want.shape}]`;
  const g = got.dataSync();
  for (let i = 0; i < g.length; i++) {
    const w = want.values[i];
    if (!(Math.abs(g[i] - w) <= 1e-5 * (Math.abs(w) + scale))) return `element ${i}: ${g[i]} vs ${w}`;
  }
  return null;
}

const runnable = cases.filter((c) => RUN[c.op] && c.inputs.every((i) => i.arr.dtype !== "float64" || true) && c.id.endsWith("float32"));

// random.txt: keys from key(seed) and a chain of split:<num>:<index> / fold:<data> steps.
function derive(c: Case): np.Array {
  let k = random.key(Number(c.params.seed[0]));
  if (c.params.chain[0] === "none") return k;
  for (const step of c.params.chain) {
    const [op, a, b] = step.split(":");
    if (op === "split") k = random.split(k, Number(a)).slice(Number(b));
    else k = random.foldIn(k, Number(a));
  }
  return k;
}
const shapeOf = (c: Case) => (c.params.shape ?? []).map(Number);
const RANDOM: Record<string, (k: np.Array, c: Case) => np.Array | null> = {
  key: (k) => k,
  split: (k, c) => random.split(k, shapeOf(c)),
  bits: (k, c) => random.bits(k, shapeOf(c)),
  uniform: (k, c) =>
    c.params.dtype[0] === "float32" ? random.uniform(k, shapeOf(c), { minval: Number(c.params.min[0]), maxval: Number(c.params.max[0]) }) : null,
  normal: (k, c) => (c.params.dtype?.[0] ?? "float32") === "float32" ? random.normal(k, shapeOf(c)) : null,
  fold_in: (k, c) => random.foldIn(k, Number(c.params.data[0])),
  bernoulli: (k, c) => random.bernoulli(k, Number(c.params.p[0]), shapeOf(c)),
  categorical: (k, c) => {
    // The C++ suite's logits: log(1..20) as 4 x 5.
    const logits = np.log(np.arange(1, 21).astype(np.float32).reshape([4, 5]));
    return random.categorical(k, logits, { axis: Number(c.params.axis[0]), shape: c.params.shape[0] === "none" ? undefined : shapeOf(c) });
  },
  randint: (k, c) => random.randint(k, { minval: Number(c.params.min[0]), maxval: Number(c.params.max[0]), shape: shapeOf(c) }),
  permutation: (k, c) => random.permutation(k, Number(c.params.n[0])),
  // jax-js's permutation has no `independent` flag.
  permutation_x: (k, c) => (c.params.independent[0] === "0" ? random.permutation(k, np.arange(12).reshape([3, 4]), Number(c.params.axis[0])) : null),
  truncated_normal: (k, c) => random.truncatedNormal(k, Number(c.params.lower[0]), Number(c.params.upper[0]), shapeOf(c)),
};
const randomCases = parseFixtures(randomText).filter((c) => RANDOM[c.op]);

for (const device of hostDevices /* cpu in Node only */) {
  describe(`JAX fixtures on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("there are transformation cases", () => expect(runnable.length).toBeGreaterThanOrEqual(5));
    test.each(runnable.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const out = RUN[c.op](c);
      const want = named(c, transformsText);
      for (const [k, w] of Object.entries(want)) {
        expect(out[k], `output ${k}`).toBeDefined();
        expect(close(out[k], w), `${c.id} ${k}`).toBeNull();
      }
    });
    test("jit of the MLP loss and gradient matches JAX too, and traces once", () => {
      const c = runnable.find((x) => x.op === "mlp")!;
      let traces = 0;
      const step = jit((p: any, x: np.Array, y: np.Array) => {
        traces++;
        return valueAndGrad(mlpLoss)(p, x, y);
      });
      const want = named(c, transformsText);
      for (let i = 0; i < 3; i++) {
        const { w1, b1, w2, b2, x, y } = ins(c);
        const [loss, g] = step({ w1, b1, w2, b2 }, x, y);
        expect(close(loss, want.loss)).toBeNull();
        expect(close(g.w1, want.g_w1)).toBeNull();
        tree.dispose([g.b1, g.w2, g.b2]);
      }
      expect(traces).toBe(1);
      step.dispose();
    });
    test.each(randomCases.map((c) => [c.id, c] as const))("random %s", (_id, c) => {
      const got = RANDOM[c.op](derive(c), c);
      if (got === null) return;
      if (c.op === "normal") {
        // As tests/random_test.cpp: normal goes through erf_inv, where XLA's log1p differs
        // from kiln's by up to 2 ulp, so normal is compared within 3 ulp, the rest bit for bit.
        const g = got.ref.dataSync();
        const w = c.expects[0].values;
        expect(g.length).toBe(w.length);
        let worst = 0;
        for (let i = 0; i < g.length; i++) worst = Math.max(worst, ulps(g[i], w[i]));
        expect(worst).toBeLessThanOrEqual(3);
      } else if (c.op === "truncated_normal") {
        // As tests/random_test.cpp: JAX uses XLA's float32 erf of the bounds, kiln its own.
        const g = got.ref.dataSync();
        c.expects[0].values.forEach((w, i) => expect(Math.abs(g[i] - w)).toBeLessThanOrEqual(1e-7 + 1e-6 * Math.abs(w)));
      } else expect(compare(got, c.expects[0], c.tol)).toBeNull();
      got.dispose();
    });
  });
}
// lax is part of the API surface exercised above through conv-free programs; conv is in numpy_fixtures.
void lax;
