// lax.scan / whileLoop / foriLoop / cond / switch / map under jit, grad, vmap and jvp against
// the committed JAX fixtures (tools/gen_control_flow_fixtures.py, float32 cases), on cpu,
// wasm and webgpu where the page has an adapter (float64 cases: WebGPU has no float64).
import { describe, expect, test } from "vitest";
import { defaultDevice, grad, hessian, init, jit, jvp, lax, numpy as np, vmap } from "../dist/index.js";
import text from "../../tests/fixtures/control_flow_jax.txt?raw";
import { webGpuRuntime } from "../dist/webgpu/attach.js";
import { namedExpects, parseFixtures, type Case, type FixArray } from "./fixtures.js";

const cases = parseFixtures(text, true).filter((c) => c.id.endsWith("float32"));
const named = (c: Case) => namedExpects(c, text);
const arr = (a: FixArray) => np.array(a.values, { shape: a.shape, dtype: a.dtype as np.DType });
const ins = (c: Case) => Object.fromEntries(c.inputs.map((i) => [i.name!, arr(i.arr)])) as Record<string, np.Array>;

// The functions of tools/gen_control_flow_fixtures.py as jax-js programs (.ref where a value
// is used again; closures over w and u are captured by the bodies).
function rnn(w: np.Array, u: np.Array, h0: np.Array, xs: np.Array, reverse = false): [np.Array, np.Array] {
  const r = lax.scan(
    (h: np.Array, x: np.Array) => {
      const h2 = np.tanh(np.matmul(h, w.ref).add(np.matmul(x, u.ref)));
      return [h2.ref, np.sum(h2.ref.mul(h2))];
    },
    h0,
    xs,
    { reverse },
  );
  w.dispose();
  u.dispose();
  return r;
}
function rnnLoss(w: np.Array, u: np.Array, h0: np.Array, xs: np.Array) {
  const [h, ys] = rnn(w, u, h0, xs);
  return np.sum(ys).add(np.sum(h));
}
function grow(x: np.Array, limit: np.Array) {
  return lax.whileLoop(
    ([v, _n]: [np.Array, np.Array]) => v.less(limit.ref),
    ([v, n]: [np.Array, np.Array]) => [v.mul(1.5).add(0.25), n.add(1)],
    [x, np.array(0, { dtype: "int32" as np.DType })],
  );
}
const foriBody = (w: np.Array) => (i: np.Array, x: np.Array) =>
  np.tanh(np.matmul(x.ref, w.ref)).mul(0.5).add(x.mul(i.astype("float32" as np.DType).mul(0.1)));
const BRANCHES = [
  (x: np.Array, y: np.Array) => np.sin(x).mul(y),
  (x: np.Array, y: np.Array) => x.ref.mul(x).add(y),
  (x: np.Array, y: np.Array) => np.exp(x.neg()).mul(np.cos(y)),
];
const switchF = (i: np.Array, x: np.Array, y: np.Array) => lax.switch(i, BRANCHES, x, y);
const condPred = (x: np.Array) =>
  lax.cond(np.sum(x.ref).greater(0), (v: np.Array) => np.sin(v).mul(2), (v: np.Array) => v.ref.mul(v).sub(1), x);
function condScan(a: np.Array, xs: np.Array): [np.Array, np.Array] {
  const r = lax.scan(
    (c: np.Array, x: np.Array) => {
      const c2 = lax.cond(
        np.sum(c.ref).greater(0),
        (c_: np.Array, x_: np.Array) => c_.mul(x_).sub(a.ref),
        (c_: np.Array, x_: np.Array) => np.sin(c_).add(x_.mul(a.ref)),
        c,
        x,
      );
      return [c2.ref, np.sum(c2)];
    },
    np.onesLike(a.ref),
    xs,
  );
  a.dispose();
  return r;
}
const i32 = (v: number) => np.array(v, { dtype: "int32" as np.DType });

const RUN: Record<string, (c: Case) => Record<string, np.Array>> = {
  scan_rnn: (c) => {
    const { w, u, h0, xs, dw } = ins(c);
    const [h, ys] = jit((a: np.Array, b: np.Array, d: np.Array, e: np.Array) => rnn(a, b, d, e))(w.ref, u.ref, h0.ref, xs.ref);
    const [hr, ysr] = jit((a: np.Array, b: np.Array, d: np.Array, e: np.Array) => rnn(a, b, d, e, true))(w.ref, u.ref, h0.ref, xs.ref);
    const g = grad(rnnLoss, { argnums: [0, 1, 2, 3] })(w.ref, u.ref, h0.ref, xs.ref);
    const [, t] = jvp((w_: np.Array) => rnn(w_, u.ref, h0.ref, xs.ref), [w], [dw]);
    return { h, ys, h_rev: hr, ys_rev: ysr, g_w: g[0], g_u: g[1], g_h0: g[2], g_xs: g[3], jvp_h: t[0], jvp_ys: t[1] };
  },
  scan_vmap: (c) => {
    const { w, u, h0, xs } = ins(c);
    const [h, ys] = vmap(rnn, [null, null, 0, 0])(w.ref, u.ref, h0.ref, xs.ref);
    return { h, ys, g_w: vmap(grad(rnnLoss), [null, null, 0, 0])(w, u, h0, xs) };
  },
  scan_hessian: (c) => {
    const { v, w, xs } = ins(c);
    const f = (v_: np.Array) => {
      const [cf] = lax.scan((cc: np.Array, x: np.Array) => [np.sin(cc.ref).mul(w.ref).add(cc.mul(x)), null], v_, xs.ref);
      return np.sum(np.square(cf));
    };
    return { hessian: hessian(f)(v.ref), grad: grad(f)(v) };
  },
  while_vmap: (c) => {
    const { xs, limit, limits } = ins(c);
    const [x, n] = jit(vmap(grow, [0, null]))(xs.ref, limit.ref);
    const [x2, n2] = vmap(grow)(xs.ref, limits);
    const [, tx] = jvp((a: np.Array) => vmap(grow, [0, null])(a, limit.ref)[0], [xs.ref], [np.onesLike(xs)]);
    return { x, n, x2, n2, jvp_x: tx };
  },
  fori: (c) => {
    const { w, x0, n } = ins(c);
    const f = (w_: np.Array, x_: np.Array) => {
      const r = lax.foriLoop(0, 4, foriBody(w_), x_);
      w_.dispose();
      return r;
    };
    const y = jit(f)(w.ref, x0.ref);
    const [gw, gx] = grad((a: np.Array, b: np.Array) => np.sum(np.square(f(a, b))), { argnums: [0, 1] })(w.ref, x0.ref);
    const dyn = (w_: np.Array, x_: np.Array, n_: np.Array) => {
      const r = lax.foriLoop(i32(1), n_, foriBody(w_), x_);
      w_.dispose();
      return r;
    };
    const yd = jit(dyn)(w.ref, x0.ref, n.ref);
    const [, td] = jvp((x_: np.Array) => dyn(w.ref, x_, n.ref), [x0.ref], [np.onesLike(x0)]);
    return { y, g_w: gw, g_x0: gx, y_dyn: yd, jvp_dyn: td };
  },
  cond_scan: (c) => {
    const { a, xs } = ins(c);
    const [cc, ys] = jit(condScan)(a.ref, xs.ref);
    const [ga, gxs] = grad((a_: np.Array, x_: np.Array) => np.sum(np.square(condScan(a_, x_)[1])), { argnums: [0, 1] })(a, xs);
    return { c: cc, ys, g_a: ga, g_xs: gxs };
  },
  switch: (c) => {
    const { x, y, idx, xb } = ins(c);
    const out: Record<string, np.Array> = {};
    for (const i of [0, 1, 2, 5, -1]) {
      const k = i < 0 ? `m${-i}` : `${i}`;
      out[`f_${k}`] = jit(switchF)(i32(i), x.ref, y.ref);
      out[`g_${k}`] = grad((x_: np.Array) => np.sum(switchF(i32(i), x_, y.ref)))(x.ref);
    }
    out.vmap = vmap(switchF, [0, 0, null])(idx.ref, xb.ref, y.ref);
    out.vmap_grad = vmap(grad((x_: np.Array, i: np.Array) => np.sum(switchF(i, x_, y.ref))), [0, 0])(xb, idx);
    out.jvp = jvp((x_: np.Array) => switchF(i32(1), x_, y.ref), [x], [y])[1];
    return out;
  },
  cond_vmap: (c) => {
    const { xs } = ins(c);
    return { y: vmap(condPred)(xs.ref), grad: grad((a: np.Array) => np.sum(vmap(condPred)(a)))(xs) };
  },
  map: (c) => {
    const { w, xs } = ins(c);
    const f = (w_: np.Array, x_: np.Array) => {
      const r = lax.map((x: np.Array) => np.tanh(np.matmul(x, w_.ref)), x_);
      w_.dispose();
      return r;
    };
    return { y: jit(f)(w.ref, xs.ref), g_w: grad((w_: np.Array) => np.sum(np.square(f(w_, xs.ref))))(w) };
  },
};

/** The C++ suite's tolerance: rtol 1e-5 of each value, floored by the output's largest magnitude; ints exactly. */
function close(got: np.Array, want: FixArray): string | null {
  const scale = Math.max(...want.values.map(Math.abs));
  if (got.shape.join(",") !== want.shape.join(",")) return `shape [${got.shape}] vs [${want.shape}]`;
  if (got.dtype !== want.dtype) return `dtype ${got.dtype} vs ${want.dtype}`;
  const g = got.dataSync();
  const tol = want.dtype === "int32" ? 0 : 1e-5;
  for (let i = 0; i < g.length; i++) {
    const w = want.values[i];
    if (!(Math.abs(g[i] - w) <= tol * (Math.abs(w) + scale))) return `element ${i}: ${g[i]} vs ${w}`;
  }
  return null;
}

/** close() for devices whose reads may be asynchronous only (webgpu in Node.js). */
async function closeAsync(got: np.Array, want: FixArray): Promise<string | null> {
  const shape = got.shape, dtype = got.dtype;
  return close(np.array(await got.data(), { shape, dtype, device: "cpu" }), want);
}

function check(c: Case) {
  const out = RUN[c.op](c);
  for (const [k, w] of Object.entries(named(c))) {
    expect(out[k], `output ${k}`).toBeDefined();
    expect(close(out[k], w), `${c.id} ${k}`).toBeNull();
  }
}

for (const device of ["cpu", "wasm"] as const) {
  describe(`control flow JAX fixtures on ${device}`, () => {
    test("there is a case per function", () => expect(cases.filter((c) => RUN[c.op]).length).toBe(Object.keys(RUN).length));
    test.each(cases.filter((c) => RUN[c.op]).map((c) => [c.id, c] as const))("%s", (_id, c) => {
      defaultDevice(device);
      check(c);
    });
    test("errors name the mismatch", () => {
      defaultDevice(device);
      expect(() => lax.scan((h: np.Array) => [np.sum(h), null], np.ones([3]), null, { length: 2 })).toThrow(/scan: the body's carry output 0 is float32\[\]/);
      expect(() => grad((x: np.Array) => np.sum(lax.whileLoop((v: np.Array) => np.sum(v.ref).less(10), (v: np.Array) => v.mul(2), x)))(np.ones([3]))).toThrow(
        /while_loop: reverse-mode differentiation/,
      );
    });
  });
}

// webgpu: scan and map never read back (their loop counter lives on the device); cond and
// switch run every branch and select on the device; a while loop reads its predicate back
// each iteration, which webgpu does only in browsers (a blocking canvas copy). In Node.js
// (Dawn) while_loop refuses with an error that names the alternatives.
const haveGpu = (await init("webgpu")).includes("webgpu");
const syncGpu = haveGpu && webGpuRuntime()!.canReadSync();
const NEEDS_SYNC = new Set(["while_vmap", "fori"]); // fori with dynamic bounds is a while loop
describe.runIf(haveGpu)("control flow JAX fixtures on webgpu", () => {
  test.each(cases.filter((c) => RUN[c.op] && (syncGpu || !NEEDS_SYNC.has(c.op))).map((c) => [c.id, c] as const))("%s", async (_id, c) => {
    defaultDevice("webgpu");
    try {
      const rt = webGpuRuntime()!;
      const before = rt.stats();
      const out = RUN[c.op](c);
      // Nothing is read back while the function runs, except a while loop's predicate.
      const reads = rt.stats().syncReads - before.syncReads;
      expect(rt.stats().reads, "asynchronous reads").toBe(before.reads);
      if (NEEDS_SYNC.has(c.op)) expect(reads, "predicate reads").toBeGreaterThan(0);
      else expect(reads, "synchronous reads").toBe(0);
      for (const [k, w] of Object.entries(named(c))) {
        expect(out[k], `output ${k}`).toBeDefined();
        expect(await closeAsync(out[k], w), `${c.id} ${k}`).toBeNull();
      }
    } finally {
      defaultDevice("cpu");
    }
  });
  // A browser must have the blocking path: a broken canvas copy (its probe fails) must not
  // quietly turn the while cases into the Node.js error test.
  test.runIf(typeof OffscreenCanvas !== "undefined")("a browser reads webgpu synchronously", () => expect(syncGpu).toBe(true));
  test.runIf(!syncGpu)("while_loop without synchronous reads names the alternatives", () => {
    defaultDevice("webgpu");
    try {
      const c = cases.find((x) => x.op === "while_vmap")!;
      expect(() => RUN.while_vmap(c)).toThrow(/while_loop: .*cannot read synchronously here.*scan or fori_loop with static bounds, or the wasm device/);
    } finally {
      defaultDevice("cpu");
    }
  });
});
