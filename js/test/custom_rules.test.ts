// customJvp / customVjp (JAX's custom_jvp / custom_vjp with jax-js's naming) against
// analytic values: the rules replace the derivatives under grad, jvp, vmap and jit, and
// the functions follow the ownership rules (arguments consumed), on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { customJvp, customVjp, defaultDevice, grad, jit, jvp, numpy as np, vmap } from "../dist/index.js";

type A = np.Array;

// JAX's documentation example: log(1 + e^x), whose plain derivative is inf/inf = NaN at
// x = 100 in float32 and whose rule, 1 - 1 / (1 + e^x), gives 1.
const log1pexp = customJvp((x: A) => np.log(np.add(1, np.exp(x)))).defjvp(([x], [t]: A[]) => [
  np.log(np.add(1, np.exp(x.ref))),
  np.multiply(t, np.subtract(1, np.divide(1, np.add(1, np.exp(x))))),
]);

// The identity whose cotangent is clipped to [-1, 1] (JAX's clip_gradient example).
const clipGradient = customVjp((x: A) => x).defvjp(
  (x: A) => [x, null],
  (_res: null, g: A) => [np.clip(g, -1, 1)],
);

// Two arguments, a residual tree and a null cotangent: d/dx of x * y with y treated as a constant.
const scaleBy = customVjp((x: A, y: A) => np.multiply(x, y)).defvjp(
  (x: A, y: A) => [np.multiply(x, y.ref), { y }],
  (res: { y: A }, g: A) => [np.multiply(g, res.y), null],
);

for (const device of ["cpu", "wasm"] as const) {
  describe(`custom rules on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });

    test("customJvp: values, grad where the plain rule is NaN, jvp, vmap and jit of grad", () => {
      const v = log1pexp(np.array([0, 1])).js();
      expect(v[0]).toBeCloseTo(Math.log(2), 6);
      expect(v[1]).toBeCloseTo(Math.log1p(Math.E), 6);
      const plain = grad((x: A) => np.log(np.add(1, np.exp(x))));
      expect(Number.isNaN(plain(np.array(100)).js())).toBe(true);
      expect(grad(log1pexp)(np.array(100)).js()).toBe(1);
      expect(grad(log1pexp)(np.array(0)).js()).toBeCloseTo(0.5, 6);
      const [y, t] = jvp(log1pexp, [np.array(100)], [np.array(2)]);
      expect(y.js()).toBe(Infinity); // log(1 + e^100) overflows float32; the tangent does not
      expect(t.js()).toBe(2);
      const xs = np.array([-100, 0, 100]);
      expect(vmap(grad(log1pexp))(xs.ref).js()).toEqual([0, 0.5, 1]);
      const jg = jit(grad(log1pexp));
      expect(jg(np.array(100)).js()).toBe(1);
      jg.dispose();
      expect(() => customJvp((x: A) => x)(np.array(1))).toThrow(/customJvp: call defjvp/);
      xs.dispose();
      expect(xs.refCount).toBe(0);
    });

    test("customVjp: clipped cotangents, residual trees, null cotangents, under jit and vmap", () => {
      const x = np.array([0.5, -2, 3]);
      const loss = (v: A) => np.sum(np.multiply(clipGradient(v), np.array([5, -0.25, -7])));
      expect(grad(loss)(x.ref).js()).toEqual([1, -0.25, -1]);
      const jl = jit(grad(loss));
      expect(jl(x.ref).js()).toEqual([1, -0.25, -1]);
      jl.dispose();
      expect(vmap(grad((v: A) => np.multiply(clipGradient(v), 3)))(x.ref).js()).toEqual([1, 1, 1]);
      expect(clipGradient(x.ref).js()).toEqual([0.5, -2, 3]);
      const y = np.array([2, 3, 4]);
      const g = grad((a: A, b: A) => np.sum(scaleBy(a, b)), { argnums: [0, 1] })(x.ref, y.ref);
      expect(g[0].js()).toEqual([2, 3, 4]);
      expect(g[1].js()).toEqual([0, 0, 0]);
      x.dispose();
      y.dispose();
      expect([x.refCount, y.refCount]).toEqual([0, 0]);
      // Forward mode through a custom_vjp is an error, as in JAX.
      expect(() => jvp(clipGradient, [np.array([1])], [np.ones([1])])).toThrow();
    });

    test("bad rules are Errors naming customJvp / customVjp", () => {
      const bad = customJvp((x: A) => x).defjvp(([x]: A[]) => x as any);
      expect(() => grad(bad)(np.array(1))).toThrow(/customJvp: the rule must return \[out, tangentOut\]/);
      const badBwd = customVjp((x: A) => x).defvjp((x: A) => [x, null], () => [] as any);
      expect(() => grad(badBwd)(np.array(1))).toThrow(/customVjp: bwd must return a JS array of 1 cotangents/);
    });
  });
}
