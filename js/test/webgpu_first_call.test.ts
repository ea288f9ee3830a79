// The first call's pipelines (issue 20's first-call latency). Fewer: tiled contractions that
// differ only in the offset they read a buffer at (a prefill's attention over each layer's
// rows of the KV cache) share one WGSL text, the offsets being uniform words. Created
// asynchronously: the pipelines requested
// before a first dispatch (a jit program's kernels, prepared before it runs) are created
// together with createComputePipelineAsync, and the commands that need them are held in
// order (js/src/webgpu/command_log.ts) until they exist. Checked here on the runtime
// directly (held dispatches, writes and copies keep their order; a WGSL error in a batch still
// names the kernel and spoils only its outputs) and through jit (a program's pipelines are all
// created before its first dispatch is encoded, and the results equal the cpu device's).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { init, jit, numpy as np } from "../dist/index.js";
import { webGpuRuntime } from "../dist/webgpu/attach.js";

const env = (globalThis as any).process?.env ?? {};
const gpu = (await init("webgpu")).includes("webgpu");

// A kernel in the runtime's binding layout: 0 the output size, 1 the output, 2.. inputs.
const kernel = (body: string, salt: string) =>
  `// ${salt}\n@group(0) @binding(0) var<uniform> n: vec4<u32>;\n@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n` +
  `@group(0) @binding(2) var<storage, read> a: array<f32>;\n` +
  `@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) g: vec3<u32>) {\n  let i = g.x;\n  if (i >= n.x) { return; }\n  ${body}\n}\n`;
const f32 = (xs: number[]) => new Uint8Array(new Float32Array(xs).buffer);
const floats = (b: Uint8Array) => Array.from(new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4));

describe.skipIf(!gpu && !env.KILN_REQUIRE_WEBGPU)("webgpu: the first call's pipelines", () => {
  // Asynchronous creation is off by default on SwiftShader (slower there: runtime.ts), so
  // these tests turn it on, whatever the adapter.
  let was = false;
  beforeAll(async () => {
    // In the browser suite's page an earlier file may have lost the device (webgpu_faults):
    // a new one, as that file's runtime() makes.
    if (webGpuRuntime()?.lost) expect(await init("webgpu")).toEqual(["webgpu"]);
    was = webGpuRuntime()!.asyncPipelines;
    webGpuRuntime()!.asyncPipelines = true;
  });
  afterAll(() => void (webGpuRuntime()!.asyncPipelines = was));
  test("a batch is created at its first dispatch; held dispatches, writes and copies keep their order", async () => {
    const rt = webGpuRuntime()!;
    const salt = `batch ${Math.random()}`;
    const before = rt.stats();
    const double = rt.pipeline(kernel("out[i] = a[i] * 2.0 + 1.0;", salt), 1);
    const plus3 = rt.pipeline(kernel("out[i] = a[i] + 3.0;", salt), 1);
    // Requested only: nothing is created before a dispatch.
    expect(rt.stats().asyncPipelines).toBe(before.asyncPipelines);
    const x = rt.alloc(16), y = rt.alloc(16), z = rt.alloc(16), w = rt.alloc(16);
    expect(rt.write(x, 0, f32([1, 2, 3, 4]))).toBe(0);
    expect(rt.dispatch(double, new Int32Array([x]), y, 4, 1, 1)).toBe(0);
    const held = rt.stats();
    expect(held.asyncPipelines - before.asyncPipelines).toBe(2); // both, at the first dispatch
    expect(held.holds - before.holds).toBe(1);
    // While held: a write into x after the dispatch that reads it, a dispatch reading the new
    // x, a copy, and a dispatch of the other pipeline; each must see what came before it.
    expect(rt.write(x, 0, f32([10, 20, 30, 40]))).toBe(0);
    expect(rt.dispatch(plus3, new Int32Array([x]), z, 4, 1, 1)).toBe(0);
    expect(rt.copy(y, 0, w, 0, 8)).toBe(0);
    expect(rt.dispatch(plus3, new Int32Array([z]), x, 4, 1, 1)).toBe(0); // x = z + 3
    const reads = [rt.read(y, 0, 16)!, rt.read(z, 0, 16)!, rt.read(w, 0, 8)!, rt.read(x, 0, 16)!];
    const [ys, zs, ws, xs] = (await Promise.all(reads)).map(floats);
    expect(ys).toEqual([3, 5, 7, 9]);
    expect(zs).toEqual([13, 23, 33, 43]);
    expect(ws).toEqual([3, 5]);
    expect(xs).toEqual([16, 26, 36, 46]);
    // Created now: later dispatches are encoded at once (no new hold).
    expect(rt.dispatch(double, new Int32Array([x]), y, 4, 1, 1)).toBe(0);
    expect(floats(await rt.read(y, 0, 16)!)).toEqual([33, 53, 73, 93]);
    expect(rt.stats().holds - before.holds).toBe(1);
    for (const h of [x, y, z, w]) rt.free(h);
  });

  // Browsers only (a canvas copy): a blocking read cannot wait, so it creates the batch's
  // pipelines synchronously and runs the held commands first.
  test.runIf(!!webGpuRuntime()?.canReadSync())("a blocking read while commands are held creates their pipelines now", () => {
    const rt = webGpuRuntime()!;
    const salt = `sync ${Math.random()}`;
    const times4 = rt.pipeline(kernel("out[i] = a[i] * 4.0;", salt), 1);
    const minus = rt.pipeline(kernel("out[i] = -a[i];", salt), 1);
    const holds = rt.stats().holds;
    const x = rt.alloc(16), y = rt.alloc(16), z = rt.alloc(16);
    rt.write(x, 0, f32([1, 2, 3, 4]));
    expect(rt.dispatch(times4, new Int32Array([x]), y, 4, 1, 1)).toBe(0);
    expect(rt.dispatch(minus, new Int32Array([y]), z, 4, 1, 1)).toBe(0);
    expect(rt.stats().holds - holds).toBe(1);
    expect(floats(rt.readSync(z, 0, 16)!)).toEqual([-4, -8, -12, -16]);
    for (const h of [x, y, z]) rt.free(h);
  });

  test("a WGSL error in a batch names the kernel and spoils only its outputs", async () => {
    const rt = webGpuRuntime()!;
    const salt = `error ${Math.random()}`;
    const good = rt.pipeline(kernel("out[i] = a[i] - 1.0;", salt), 1);
    const bad = rt.pipeline(kernel("out[i] = undefined_thing;", salt), 1);
    const before = rt.stats().asyncPipelines;
    const x = rt.alloc(16), y = rt.alloc(16), z = rt.alloc(16);
    rt.write(x, 0, f32([1, 2, 3, 4]));
    expect(rt.dispatch(bad, new Int32Array([x]), y, 4, 1, 1)).toBe(0); // not known to fail yet
    expect(rt.dispatch(good, new Int32Array([x]), z, 4, 1, 1)).toBe(0);
    expect(rt.stats().asyncPipelines - before).toBe(2);
    await expect(rt.read(y, 0, 16)!).rejects.toThrow(/did not compile: \d+:\d+: .*undefined_thing.*KILN_WEBGPU_DEBUG/s);
    expect(floats(await rt.read(z, 0, 16)!)).toEqual([0, 1, 2, 3]);
    expect(rt.dispatch(bad, new Int32Array([x]), y, 4, 1, 1)).toBe(-1);
    expect(rt.lastError).toMatch(/did not compile/);
    for (const h of [x, y, z]) rt.free(h);
  });

  test("a jit program's pipelines are all created before its first dispatch; results equal cpu's", async () => {
    const rt = webGpuRuntime()!;
    // Constants no other test uses, so that this program's kernels are new pipelines.
    const c = 1.0 + Math.random();
    const f = (a: np.Array, b: np.Array) => {
      const m = np.matmul(a, b.ref).mul(c);
      return np.tanh(m.ref).add(m.sum(1, { keepdims: true })).sub(np.max(b, 0));
    };
    const xs = Array.from({ length: 48 }, (_, i) => Math.sin(i) * 2);
    const ws = Array.from({ length: 48 }, (_, i) => Math.cos(i * 0.7));
    const want = await f(np.array(xs, { shape: [6, 8], device: "cpu" }), np.array(ws, { shape: [8, 6], device: "cpu" })).data();
    const before = rt.stats();
    const out = jit(f)(np.array(xs, { shape: [6, 8], device: "webgpu" }), np.array(ws, { shape: [8, 6], device: "webgpu" }));
    const after = rt.stats();
    const created = after.asyncPipelines - before.asyncPipelines;
    expect(created).toBeGreaterThan(1);
    expect(created).toBe(after.pipelines - before.pipelines); // every new pipeline of the program, at once
    expect(after.holds - before.holds).toBe(1);
    const got = await out.data();
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i], 4);
  });

  test("matmuls reading a buffer at different offsets share one pipeline (offsets in the uniform)", async () => {
    const rt = webGpuRuntime()!;
    const c = 1.0 + Math.random(); // a constant no other test has: new kernels
    const qs = Array.from({ length: 64 * 64 }, (_, i) => Math.sin(i * 0.37));
    const ks = Array.from({ length: 3 * 64 * 96 }, (_, i) => Math.cos(i * 0.11));
    // Layers 1 and 2 of a [3, 64, 96] "cache" in two programs: the same tiled contraction
    // at offsets 6144 and 12288, one WGSL text with the offset in the uniform.
    const layer = (i: number) => (q: np.Array, k: np.Array) => np.matmul(q, k.slice(i)).mul(c);
    const want = [1, 2].map((i) => layer(i)(np.array(qs, { shape: [64, 64], device: "cpu" }), np.array(ks, { shape: [3, 64, 96], device: "cpu" })));
    const q = np.array(qs, { shape: [64, 64], device: "webgpu" }), k = np.array(ks, { shape: [3, 64, 96], device: "webgpu" });
    const before = rt.stats().pipelines;
    const got = [jit(layer(1))(q.ref, k.ref), jit(layer(2))(q, k)];
    expect(rt.stats().pipelines - before).toBe(1);
    for (let l = 0; l < 2; l++) {
      const [g, w] = await Promise.all([got[l].data(), want[l].data()]);
      for (let i = 0; i < w.length; i++) expect(g[i], `layer ${l + 1}, element ${i}`).toBeCloseTo(w[i], 3);
    }
  });
});
