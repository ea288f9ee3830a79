// checkpoint (JAX's jax.checkpoint / remat) against the committed JAX fixtures
// (tools/gen_remat_fixtures.py, float32 cases) on cpu and wasm: a checkpoint per layer under
// valueAndGrad, jit(grad), vmap(grad) and jvp with both policies, and nested checkpoints
// under grad and hessian. Then what it is for, measured on wasm: the peak live bytes of a
// 32-layer MLP's gradient with and without a checkpoint per layer (as tests/remat_test.cpp).
import { describe, expect, test } from "vitest";
import {
  checkpoint, checkpointPolicies, defaultDevice, grad, hessian, jit, jvp, memory, resetPeakMemory, valueAndGrad, vmap,
  numpy as np, random, type CheckpointPolicy,
} from "../dist/index.js";
import text from "../../tests/fixtures/remat_jax.txt?raw";
import { compare, namedExpects, parseFixtures, type Case, type FixArray } from "./fixtures.js";

const cases = parseFixtures(text, true).filter((c) => c.id.endsWith("float32"));
const arr = (a: FixArray) => np.array(a.values, { shape: a.shape, dtype: a.dtype as np.DType });
const ins = (c: Case) => Object.fromEntries(c.inputs.map((i) => [i.name!, arr(i.arr)])) as Record<string, np.Array>;

const layer = (w: np.Array, b: np.Array, h: np.Array) => {
  const z = np.matmul(h, w);
  return np.tanh(z.ref.add(b)).mul(np.sin(z));
};

/** The fixtures' MLP: ws, bs lists of three; each layer checkpointed with `policy` (null: plain). */
function mlp(ws: np.Array[], bs: np.Array[], x: np.Array, policy: CheckpointPolicy | null) {
  const f = policy === null ? layer : checkpoint(layer, { policy });
  let h = x;
  for (let i = 0; i < ws.length; i++) h = f(ws[i], bs[i], h);
  return np.sum(h.ref.mul(h));
}

const list = (v: Record<string, np.Array>, p: string) => [0, 1, 2].map((i) => v[p + i]);

function grads(c: Case, policy: CheckpointPolicy): Record<string, np.Array> {
  const v = ins(c);
  const loss = (ws: np.Array[], bs: np.Array[], x: np.Array) => mlp(ws, bs, x, policy);
  const ws = list(v, "w"), bs = list(v, "b");
  const [l, [gw, gb, gx]] = valueAndGrad(loss, { argnums: [0, 1, 2] })(ws.map((w) => w.ref), bs.map((b) => b.ref), v.x.ref);
  const [jw, jx] = jit(grad(loss, { argnums: [0, 2] }))(ws, bs, v.x);
  const out: Record<string, np.Array> = { loss: l, g_x: gx, jit_g_x: jx };
  for (let i = 0; i < 3; i++) Object.assign(out, { [`g_w${i}`]: gw[i], [`g_b${i}`]: gb[i], [`jit_g_w${i}`]: jw[i] });
  return out;
}

function nested(ws: np.Array[], bs: np.Array[], x: np.Array) {
  const inner = checkpoint(layer, { policy: checkpointPolicies.nothingSaveable });
  const two = checkpoint((w0: np.Array, b0: np.Array, w1: np.Array, b1: np.Array, h: np.Array) => inner(w1, b1, inner(w0, b0, h)), {
    policy: checkpointPolicies.dotsSaveable,
  });
  const h = layer(ws[2], bs[2], two(ws[0], bs[0], ws[1], bs[1], x));
  return np.sum(h.ref.mul(h));
}

const RUN: Record<string, (c: Case) => Record<string, np.Array>> = {
  remat_nothing: (c) => grads(c, "nothing_saveable"),
  remat_dots: (c) => grads(c, "dots_saveable"),
  remat_vmap_jvp: (c) => {
    const v = ins(c);
    const ws = list(v, "w"), bs = list(v, "b");
    const f = (x: np.Array) => mlp(ws.map((w) => w.ref), bs.map((b) => b.ref), x, "nothing_saveable");
    const [y, t] = jvp(f, [v.x], [v.dx]);
    const out = { vmap_grad: vmap(grad(f))(v.xb), jvp_y: y, jvp_t: t };
    [...ws, ...bs].forEach((a) => a.dispose());
    return out;
  },
  remat_nested: (c) => {
    const v = ins(c);
    const ws = list(v, "w"), bs = list(v, "b");
    const [gw, gx] = grad((w: np.Array[], x: np.Array) => nested(w, bs.map((b) => b.ref), x), { argnums: [0, 1] })(
      ws.map((w) => w.ref),
      v.x,
    );
    const h = hessian((x: np.Array) => nested(ws.map((w) => w.ref), bs.map((b) => b.ref), x))(v.x0).reshape([4, 4]);
    [...ws, ...bs].forEach((a) => a.dispose());
    return { g_x: gx, g_w0: gw[0], g_w1: gw[1], g_w2: gw[2], hess_x: h };
  },
};

/** The C++ suite's tolerance: rtol 1e-5 of each value, floored by the output's largest magnitude. */
const close = (got: np.Array, want: FixArray) => compare(got, want, [1e-5, 1e-5 * Math.max(...want.values.map(Math.abs))]);

for (const device of ["cpu", "wasm"] as const) {
  describe(`checkpoint JAX fixtures on ${device}`, () => {
    test("there is a case per function", () => expect(cases.filter((c) => RUN[c.op]).length).toBe(Object.keys(RUN).length));
    test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      defaultDevice(device);
      const out = RUN[c.op](c);
      for (const [k, w] of Object.entries(namedExpects(c, text))) {
        expect(out[k], `output ${k}`).toBeDefined();
        expect(close(out[k], w), `${c.id} ${k}`).toBeNull();
      }
    });
  });
}

describe("checkpoint lowers the peak memory of a deep MLP's gradient (wasm)", () => {
  // As tests/remat_test.cpp: activations outweigh the weights, one checkpoint per 4 layers.
  const L = 32, W = 64, B = 256, K = 4;
  const deepLayer = (w: np.Array, b: np.Array, h: np.Array) => {
    const z = np.matmul(h.ref, w).add(b);
    return np.tanh(z.ref).mul(np.sin(z)).add(h);
  };
  const segment = (ws: np.Array[], bs: np.Array[], h: np.Array) => {
    for (let i = 0; i < ws.length; i++) h = deepLayer(ws[i], bs[i], h);
    return h;
  };
  const lossOf = (ckpt: boolean) => (ws: np.Array[], bs: np.Array[], x: np.Array) => {
    const f = ckpt ? checkpoint(segment) : segment;
    let h = x;
    for (let i = 0; i < L; i += K) h = f(ws.slice(i, i + K), bs.slice(i, i + K), h);
    return np.mean(np.square(h));
  };
  /** [peak bytes above those live before the call, the gradients]. */
  function measure(g: (...a: any[]) => any, ws: np.Array[], bs: np.Array[], x: np.Array): [number, Float32Array[]] {
    resetPeakMemory();
    const before = memory().devices.wasm!.numBytes;
    const r: np.Array[] = g(ws.map((w) => w.ref), bs.map((b) => b.ref), x.ref).flat();
    const data = r.map((a) => a.dataSync() as Float32Array);  // realizes every gradient
    return [memory().devices.wasm!.peakBytes - before, data];
  }

  test.each([false, true])("jit: %s", (useJit) => {
    defaultDevice("wasm");
    const keys = random.split(random.key(7), L + 1);
    const ws = [...Array(L).keys()].map((i) => random.normal(keys.ref.slice(i), [W, W]).mul(1 / Math.sqrt(W)));
    const bs = [...Array(L).keys()].map(() => np.full([W], 0.01));
    const x = random.normal(keys.slice(L), [B, W]);
    let plain: any = grad(lossOf(false), { argnums: [0, 1, 2] }), ckpt: any = grad(lossOf(true), { argnums: [0, 1, 2] });
    if (useJit) {
      plain = jit(plain);
      ckpt = jit(ckpt);
      measure(plain, ws, bs, x);  // compile outside the measured calls
      measure(ckpt, ws, bs, x);
    }
    const [a, ga] = measure(plain, ws, bs, x), [b, gb] = measure(ckpt, ws, bs, x);
    console.log(`${useJit ? "jit" : "eager"} grad of a ${L}-layer MLP (width ${W}, batch ${B}) on wasm: peak ${a} bytes plain, ${b} with a checkpoint per ${K} layers: ${(a / b).toFixed(2)}x`);
    expect(a).toBeGreaterThanOrEqual(3 * b);
    for (let i = 0; i < ga.length; i++)
      for (let k = 0; k < ga[i].length; k++) expect(Math.abs(ga[i][k] - gb[i][k])).toBeLessThanOrEqual(1e-5 * (Math.abs(ga[i][k]) + 1e-3));
    [...ws, ...bs, x].forEach((v) => v.dispose());
    if (useJit) [plain, ckpt].forEach((f) => f.dispose());
  });
});
