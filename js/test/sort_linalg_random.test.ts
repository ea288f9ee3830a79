// sort/argsort/topK, numpy.linalg and lax.linalg against JAX (tests/fixtures/sort_linalg.txt,
// tools/gen_sort_linalg_fixtures.py), and the random samplers against jax-js's formulas on
// JAX's draws (the js_ cases of tests/fixtures/random_samplers.txt), on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, grad, lax, numpy as np, random, vmap } from "../dist/index.js";
import sortText from "../../tests/fixtures/sort_linalg.txt?raw";
import randomText from "../../tests/fixtures/random_samplers.txt?raw";
import { compare, hostDevices, parseFixtures, toArray, type Case } from "./fixtures.js";

const num = (c: Case, k: string) => Number(c.params[k][0]);
const flag = (c: Case, k: string) => c.params[k][0] === "1";
const axis = (c: Case) => (c.params.axis[0] === "none" ? null : num(c, "axis"));

const FORWARD: Record<string, (c: Case, x: any[]) => np.Array | np.Array[]> = {
  sort: (c, x) => np.sort(x[0], axis(c)),
  argsort: (c, x) => np.argsort(x[0], axis(c)),
  top_k: (c, x) => lax.topK(x[0], num(c, "k")),
  cholesky: (c, x) => np.linalg.cholesky(x[0], { upper: flag(c, "upper") }),
  triangular_solve: (c, x) =>
    lax.linalg.triangularSolve(x[0], x[1], { leftSide: flag(c, "left_side"), lower: flag(c, "lower"), transposeA: flag(c, "transpose_a"), unitDiagonal: flag(c, "unit_diagonal") }),
  lu: (_, x) => lax.linalg.lu(x[0]),
  solve: (_, x) => np.linalg.solve(x[0], x[1]),
  inv: (_, x) => np.linalg.inv(x[0]),
  det: (_, x) => np.linalg.det(x[0]),
  slogdet: (_, x) => np.linalg.slogdet(x[0]),
};
// jax-js's sort and argsort have no descending option (the C++ suite checks it).
const jsCase = (c: Case) => !((c.op === "sort" || c.op === "argsort") && flag(c, "descending"));

// The differentiated output of each grad_<op> case (first output, slogdet's log|det|).
const GRAD_OUT: Record<string, (c: Case, x: any[]) => np.Array> = {
  sort: (_, x) => np.sort(x[0]),
  top_k: (c, x) => { const [v, i] = lax.topK(x[0], num(c, "k")); i.dispose(); return v; },
  cholesky: (_, x) => lax.linalg.cholesky(np.divide(np.add(x[0].ref, np.matrixTranspose(x[0])), 2)),
  triangular_solve: (c, x) => FORWARD.triangular_solve(c, x) as np.Array,
  solve: (_, x) => np.linalg.solve(x[0], x[1]),
  inv: (_, x) => np.linalg.inv(x[0]),
  det: (_, x) => np.linalg.det(x[0]),
  slogdet: (_, x) => { const [s, l] = np.linalg.slogdet(x[0]); s.dispose(); return l; },
};

const SAMPLERS: Record<string, (k: np.Array, s: number[]) => np.Array> = {
  exponential: (k, s) => random.exponential(k, s),
  gumbel: (k, s) => random.gumbel(k, s),
  laplace: (k, s) => random.laplace(k, s),
  logistic: (k, s) => random.logistic(k, s),
  cauchy: (k, s) => random.cauchy(k, s),
  lognormal: (k, s) => random.lognormal(k, 0.5, s),
  rayleigh: (k, s) => random.rayleigh(k, 2, s),
  maxwell: (k, s) => random.maxwell(k, s),
  pareto: (k, s) => random.pareto(k, 3, s),
  weibull_min: (k, s) => random.weibullMin(k, 2, 1.5, s),
  triangular: (k, s) => random.triangular(k, -1, 0.5, 2, s),
  geometric: (k, s) => random.geometric(k, 0.3, { shape: s }),
  rademacher: (k, s) => random.rademacher(k, { shape: s }),
  double_sided_maxwell: (k, s) => random.doubleSidedMaxwell(k, 1, 2, s),
  multivariate_normal: (k, s) =>
    random.multivariateNormal(k, np.array([1, -2, 0.5]), np.array([[2, 0.3, 0.1], [0.3, 1, -0.2], [0.1, -0.2, 0.5]]), s),
  ball: (k, s) => random.ball(k, 3, { shape: s }),
};

const sortCases = parseFixtures(sortText).filter((c) => c.op.startsWith("grad_") || jsCase(c));
const randomCases = parseFixtures(randomText).filter((c) => c.op.startsWith("js_"));

for (const device of hostDevices /* cpu in Node only */) {
  describe(`sorting and linear algebra on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture files have cases", () => {
      expect(sortCases.length).toBe(68);
      expect(randomCases.length).toBe(64);
    });
    test.each(sortCases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const inputs = c.inputs.map((i) => toArray(i.arr));
      if (c.op.startsWith("grad_")) {
        const op = c.op.slice(5);
        const w = inputs.pop() as np.Array;
        const argnums = inputs.map((_, i) => i);
        const f = (...a: np.Array[]) => np.sum(np.multiply(GRAD_OUT[op](c, a), w.ref));
        const gs = grad(f, { argnums })(...(inputs as np.Array[])) as np.Array[];
        gs.forEach((g, i) => expect(compare(g, c.expects[i], c.tol), `${c.id} grad ${i}`).toBeNull());
        w.dispose();
        return;
      }
      const result = FORWARD[c.op](c, inputs);
      const outs = Array.isArray(result) ? result : [result];
      expect(outs.length).toBe(c.expects.length);
      outs.forEach((o, i) => {
        expect(compare(o, c.expects[i], c.tol), `${c.id} output ${i}`).toBeNull();
        o.dispose();
      });
      for (const x of inputs) if (x instanceof np.Array) expect(x.refCount).toBe(0);
    });
    test.each(randomCases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const s = c.params.shape.map(Number);
      const out = SAMPLERS[c.op.slice(3)](random.key(num(c, "seed")), s);
      expect(compare(out, c.expects[0], c.tol)).toBeNull();
    });
    test("vmap of sort matches a loop, linalg errors name the op", () => {
      const x = random.normal(random.key(3), [3, 9]);
      const b = vmap((r: np.Array) => np.argsort(r))(x.ref).js();
      for (let i = 0; i < 3; i++) expect(np.argsort(x.ref.slice(i)).js()).toEqual(b[i]);
      x.dispose();
      expect(() => np.linalg.det(np.zeros([2, 3]))).toThrow(/det/);
      expect(() => lax.topK(np.zeros([4]), 5)).toThrow(/top_k/);
      expect(() => np.linalg.norm(np.eye(3), { ord: 3 })).toThrow(/norm/);
    });
    test("linalg compositions agree with their definitions", () => {
      const a = np.add(random.normal(random.key(1), [3, 3]), np.multiply(np.eye(3), 3));
      const ai = np.linalg.inv(a.ref);
      expect(np.allclose(np.linalg.matrixPower(a.ref, -1), ai.ref, { atol: 1e-5 })).toBe(true);
      expect(np.allclose(np.linalg.multiDot([a.ref, ai, a.ref]), a.ref, { atol: 1e-4 })).toBe(true);
      const b = random.normal(random.key(2), [3, 2]);
      expect(np.allclose(np.linalg.lstsq(a.ref, b.ref), np.linalg.solve(a.ref, b), { atol: 1e-4 })).toBe(true);
      expect(np.linalg.norm(np.array([3, 4])).item()).toBeCloseTo(5, 6);
      expect(np.linalg.matrixNorm(a.ref, { ord: 1 }).item()).toBeCloseTo(np.max(np.sum(np.abs(a.ref), 0)).item(), 5);
      a.dispose();
      const p = random.categorical(random.key(5), np.zeros([6]), { shape: [6], replace: false });
      expect(np.sort(p).js()).toEqual([0, 1, 2, 3, 4, 5]);
    });
  });
}
