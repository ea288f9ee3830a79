// WebGPU faults in the middle of jitted programs (issue 17, item 5): out of memory (a buffer
// above the device's limit, found at once; one the device cannot back, found later by an
// error scope) and device loss (forced with device.destroy()). Each must give the caller an
// Error naming what happened, leave no promise pending, leave arrays on other devices (and,
// for out of memory, the other webgpu arrays) intact, and, after a loss, init("webgpu") must
// give a new working device on which jitted functions made before the loss run again.
import { describe, expect, test } from "vitest";
import { blockUntilReady, defaultDevice, getWebGPUDevice, init, jit, numpy as np } from "../dist/index.js";
import { webGpuRuntime, webGpuUnavailableReason } from "../dist/webgpu/attach.js";

const gpu = (await init("webgpu")).includes("webgpu");
const isNode = typeof (globalThis as any).process?.versions?.node === "string";

/** The webgpu runtime, made again first if an earlier test (or file) lost the device. */
async function runtime() {
  if (webGpuRuntime()?.lost) expect(await init("webgpu")).toEqual(["webgpu"]);
  defaultDevice("wasm");
  return webGpuRuntime()!;
}

/** Settles `p` or fails after `ms`: a promise that never settles must fail the test, not time it out. */
function settled<T>(p: Promise<T>, what: string, ms = 20000): Promise<T> {
  let timer: any;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

const range = (n: number, scale = 1) => Array.from({ length: n }, (_, i) => (i % 13) * scale - 3);

// A jitted program of five kernels (KILN_DEBUG=5 shows them) whose second writes an
// intermediate of n * m float32s that the later ones read: `big` is a reduction's output (x's
// outer product with y's pairs, summed), and a kernel carries one reduction, so it is
// materialized, not fused into the reductions that read it. y has 2 * m elements. `first`
// takes an abs (a select) so that webgpu does not recompute it inside the reduction instead
// of writing it first (jit_fusion.cpp, is_recomputed_operand): the first kernel is its own.
const program = jit((x: np.Array, y: np.Array) => {
  const first = np.abs(x.ref).mul(2);
  const big = np.multiply(first.ref.reshape([-1, 1, 1]), y.reshape([1, -1, 2])).sum(2);
  return [first, np.exp(big.ref).sum(1), big.max(0)];
});

/**
 * Runs the program on webgpu and on cpu (inputs of n and 2m elements); the returned check
 * compares them later, so other work can be recorded in between.
 */
function runProgram(n: number, m: number): () => Promise<void> {
  const x = range(n, 0.01), y = range(2 * m, 0.02);
  const got = program(np.array(x, { device: "webgpu" }), np.array(y, { device: "webgpu" }));
  const want = program(np.array(x, { device: "cpu" }), np.array(y, { device: "cpu" }));
  return async () => {
    expect(await got[0].data()).toEqual(want[0].dataSync());
    for (const k of [1, 2]) {
      const g = (await got[k].data()) as Float32Array, w = want[k].dataSync() as Float32Array;
      w.forEach((v, i) => expect(Math.abs(g[i] - v), `output ${k} element ${i}`).toBeLessThanOrEqual(1e-5 * Math.abs(v)));
    }
  };
}
const expectProgramWorks = (n: number, m: number) => runProgram(n, m)();

if (!gpu) {
  // `make test` sets KILN_REQUIRE_WEBGPU=1: there a missing adapter is a failure, not a skip.
  test("webgpu faults: SKIPPED, no WebGPU adapter", () => {
    const why = webGpuUnavailableReason();
    if ((globalThis as any).process?.env?.KILN_REQUIRE_WEBGPU === "1")
      throw new Error(`webgpu faults: no WebGPU adapter (${why}), and KILN_REQUIRE_WEBGPU=1 requires one`);
    console.warn(`[kiln] webgpu fault tests SKIPPED: ${why}`);
  });
} else {
  describe("webgpu faults", () => {
    test("a buffer above the device's limit in a jitted program: a clear Error, and nothing else changes", async () => {
      const rt = await runtime();
      await expectProgramWorks(64, 32); // compiled and run once at a small size
      const keep = np.array([1, 2, 3], { device: "webgpu" }).mul(2);
      const onWasm = np.array([4, 5, 6], { device: "wasm" });
      const base = rt.stats().buffers;
      const limit = Math.min(getWebGPUDevice().limits.maxStorageBufferBindingSize, getWebGPUDevice().limits.maxBufferSize);
      const n = 4096, m = Math.ceil(limit / 4 / n) + 16; // `big` is above the limit
      const x = np.array(range(n), { device: "webgpu" }), y = np.zeros([2 * m], { device: "webgpu" });
      await blockUntilReady([x, y]); // y's zeros are computed now, not in the program
      const dispatches = rt.stats().dispatches;
      expect(() => program(x.ref, y.ref)).toThrow(/^jit: webgpu\.alloc: webgpu: out of memory: cannot allocate \d+ bytes, above this device's largest storage buffer/);
      // It failed in the middle: the first kernel had run, and its buffer went back to the pool.
      expect(rt.stats().dispatches).toBe(dispatches + 1);
      expect(rt.stats().buffers).toBe(base + 2); // x and y only
      // An error consumes no arguments: the references passed are still held.
      expect([x.refCount, y.refCount]).toEqual([2, 2]);
      for (const arr of [x, y]) while (arr.refCount > 0) arr.dispose();
      expect(await keep.jsAsync()).toEqual([2, 4, 6]);
      expect(onWasm.js()).toEqual([4, 5, 6]);
      await expectProgramWorks(64, 32);
      expect(rt.stats().buffers).toBe(base - 1); // keep was read (consumed)
    });

    // SwiftShader (Dawn in Node.js) accepts a buffer of maxBufferSize (1 GiB) by size, then
    // reports VK_ERROR_OUT_OF_DEVICE_MEMORY through the error scope, without taking memory:
    // a real out-of-memory error found after the program was recorded. Other adapters, and
    // Chromium's own limits, would allocate a gigabyte instead: the case runs on that one only.
    const swiftshader = isNode && /swiftshader/i.test(webGpuRuntime()?.adapter ?? "") && getWebGPUDevice().limits.maxBufferSize === 2 ** 30;
    if (swiftshader)
      test("out of memory found by the device after a jitted program was recorded: reads reject naming it", async () => {
        const rt = await runtime();
        const keep = np.array([1, 2, 3], { device: "webgpu" }).mul(3);
        const n = 1024, m = 2 ** 28 / n; // `big`: exactly 1 GiB
        const y = np.zeros([2 * m], { device: "webgpu" });
        await blockUntilReady(y);
        // Buffers of these sizes are in the pools now, so the work before `big` uses only
        // buffers known to be good and shares its command encoder.
        await expectProgramWorks(n, 32);
        const base = rt.stats().buffers;
        // Work recorded just before, in the same command encoder: it must not fail with the
        // submit of the buffer that the device cannot allocate.
        const checkBefore = runProgram(64, 32);
        const [a, b, c] = program(np.array(range(n), { device: "webgpu" }), y);
        const reads = [a.data(), b.data(), c.data()].map((p, i) => settled(p, `output ${i}`).then((v) => v, (e: Error) => e.message));
        const [va, eb, ec] = await Promise.all(reads);
        // The first kernel's output does not depend on the failed buffer; the others do.
        expect(va).toEqual(new Float32Array(range(n).map((v) => Math.abs(v) * 2)));
        await checkBefore();
        const oom = /^webgpu: out of memory: the device could not allocate a buffer of 1073741824 bytes \(.*OUT_OF_DEVICE_MEMORY/;
        expect(eb).toMatch(oom);
        expect(ec).toMatch(oom);
        // No validation error of the failed submit is left for unrelated reads, every buffer
        // of the program was freed, and the device still works.
        expect(await keep.jsAsync()).toEqual([3, 6, 9]);
        expect(rt.stats().buffers).toBe(base - 2); // keep and y were consumed
        await expectProgramWorks(64, 32);
      });

    test("device loss in the middle of jitted programs: pending reads reject, other devices are untouched, init makes a new device", async () => {
      const rt = await runtime();
      const onWasm = np.array([1, 2, 3], { device: "wasm" }).mul(5);
      const onCpu = np.array([7, 8], { device: "cpu" });
      const wasmJit = jit((v: np.Array) => v.mul(3).add(1));
      expect(wasmJit(np.array([1, 2], { device: "wasm" })).js()).toEqual([4, 7]);
      await expectProgramWorks(64, 32);
      const old = np.array([10, 20], { device: "webgpu" });
      const device = getWebGPUDevice();

      // Programs recorded (not yet submitted) and reads in flight when the device goes.
      const [a, b, c] = program(np.array(range(64), { device: "webgpu" }), np.array(range(64), { device: "webgpu" }));
      const pending = [a.data(), b.jsAsync(), c.ref.blockUntilReady(), old.ref.data()];
      device.destroy();
      const outcomes = await Promise.all(pending.map((p, i) => settled(p as Promise<unknown>, `pending call ${i}`).then(() => "resolved", (e: Error) => e.message)));
      for (const o of outcomes) expect(o).toMatch(/webgpu: the device was lost \(destroyed.*await init\("webgpu"\) creates a new device/);
      expect(rt.lost).toMatch(/the device was lost/);

      // Every later call says so; arrays on other devices read as before, wasm jit still runs.
      expect(() => program(old.ref, old.ref)).toThrow(/the device was lost/);
      expect(() => np.array([1], { device: "webgpu" })).toThrow(/webgpu\.alloc: .*the device was lost/);
      await expect(c.data()).rejects.toThrow(/the device was lost/);
      expect(onWasm.js()).toEqual([5, 10, 15]);
      expect(onCpu.js()).toEqual([7, 8]);
      expect(wasmJit(np.array([3], { device: "wasm" })).js()).toEqual([10]);
      wasmJit.dispose();

      // A new device on request; the program compiled before the loss runs on it.
      expect(await init("webgpu")).toEqual(["webgpu"]);
      expect(getWebGPUDevice()).not.toBe(device);
      const fresh = webGpuRuntime()!;
      expect(fresh).not.toBe(rt);
      expect(fresh.lost).toBeNull();
      await expectProgramWorks(64, 32);
      await expectProgramWorks(100, 7);
      // An array of the lost device says where its contents went.
      await expect(old.ref.data()).rejects.toThrow(/buffer \d+ was on a webgpu device that was lost/);
      // (ops are lazy: the error comes when the result is computed)
      await expect(old.ref.add(1).data()).rejects.toThrow(/webgpu\.dispatch: buffer \d+ was on a webgpu device that was lost/);
      // Failed calls consume nothing (the .ref's above stay taken): release what is left.
      for (const arr of [old, c]) while (arr.refCount > 0) arr.dispose();
      // init on a working device changes nothing.
      await init("webgpu");
      expect(webGpuRuntime()).toBe(fresh);
    });
  });
}
