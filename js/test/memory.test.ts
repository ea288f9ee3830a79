// memory() and leaks: the counters follow Arrays and buffers exactly, and training the MNIST
// CNN of examples/mnist-node (jitted and eager) keeps every counter flat once warm, on wasm.
// (Not on webgpu here: on SwiftShader 20 jitted steps took over a minute.) bench/leaks.mjs
// runs the same loops for 10 000 steps.
import { describe, expect, test } from "vitest";
import * as kiln from "../dist/index.js";
import * as optax from "../dist/optax/index.js";
// @ts-ignore: plain JS shared with the Node example and the page
import { batch, makeCnn } from "../../examples/mnist-node/cnn.mjs";

const { numpy: np, memory } = kiln;

// 512 MNIST-shaped examples from a fixed LCG: the suite also runs in Chromium, where the IDX
// files cannot be read (bench/leaks.mjs trains on the real set). Each label brightens one
// band of rows, so the loss has something to learn and moves.
function syntheticSplit(n: number) {
  let s = 12345;
  const rnd = () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const images = new Float32Array(n * 784), labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = Math.floor(rnd() * 10);
    for (let p = 0; p < 784; p++) images[i * 784 + p] = rnd() * 0.5 + (Math.floor(p / 28 / 3) === labels[i] ? 0.5 : 0);
  }
  return { n, images, labels };
}
const train = syntheticSplit(512);

// What must stay exactly flat: every count, per device too, and the Wasm heap's size. The
// bytes malloc has handed out (wasmHeapUsedBytes) wobble by a few hundred bytes from step to
// step (the JS glue's transient allocations), so expectFlat bounds their drift instead.
function flat(m: kiln.MemoryInfo) {
  const { devices, webgpu, wasmHeapUsedBytes, ...rest } = m;
  const perDevice = Object.fromEntries(
    Object.entries(devices).map(([k, d]) => [k, { ...d!, peakBytes: undefined, numAllocations: undefined }]),
  );
  const gpu = webgpu && { ...webgpu, numPendingBuffers: undefined };
  return { ...rest, perDevice, gpu };
}

/** The leaf paths whose values differ between two snapshots, as "path: before -> after". */
function changedCounters(before: unknown, after: unknown, path = ""): string[] {
  if (typeof before === "object" && before && typeof after === "object" && after) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((k) => changedCounters((before as any)[k], (after as any)[k], path ? `${path}.${k}` : k));
  }
  return before === after ? [] : [`${path}: ${before} -> ${after}`];
}

/**
 * Runs `warmup` steps of the CNN with Adam at batch 8 on `device`, then `steps` more, and
 * expects the counters after each to equal those after the warm-up. Returns the first and
 * last losses of the measured steps.
 */
async function expectFlat(device: "wasm", jitted: boolean, warmup: number, steps: number) {
  const saved = kiln.defaultDevice();
  kiln.defaultDevice(device);
  try {
    const cnn = makeCnn({ kiln, optax });
    const { params: p0, shuffleKey } = cnn.init(0);
    shuffleKey.dispose();
    const opt = cnn.optimizer(1e-3, 1000);
    const stepFn = cnn.makeStep(opt, { jit: jitted });
    let params = p0;
    let state = opt.init(kiln.tree.ref(params));
    const order = Array.from({ length: 512 }, (_, i) => i);
    let next = 0;
    const step = async () => {
      const { x, y } = batch(np, train, order, next, next + 8);
      next = (next + 8) % order.length;
      let l;
      [params, state, l] = stepFn(params, state, x, y);
      // Eager updates stay lazy expressions over the last step's buffers until computed.
      if (!jitted) await kiln.blockUntilReady([params, state]);
      return (await l.data())[0];
    };
    for (let i = 0; i < warmup; i++) await step();
    const warm = flat(memory());
    let first = NaN, last = NaN;
    const used: number[] = [];
    for (let i = 0; i < steps; i++) {
      last = await step();
      if (i === 0) first = last;
      const m = memory();
      used.push(m.wasmHeapUsedBytes);
      const now = flat(m);
      const changed = changedCounters(warm, now);
      expect(changed, `after ${warmup} + ${i + 1} ${jitted ? "jitted" : "eager"} steps on ${device}`).toEqual([]);
    }
    // Heap in use: the second half's peak within 1 KiB of the first half's. A C++ object of
    // 16 bytes or more left behind per step would add more than that over the half.
    const half = Math.floor(steps / 2);
    const peak = (a: number[]) => Math.max(...a);
    expect(peak(used.slice(half)) - peak(used.slice(0, half)), "wasm heap in use: growth between the halves").toBeLessThanOrEqual(1024);
    kiln.tree.dispose([params, state]);
    if (jitted) stepFn.dispose();
    // The loop trained: finite losses that moved.
    expect(Number.isFinite(last)).toBe(true);
    expect(last).not.toBe(first);
  } finally {
    kiln.defaultDevice(saved);
  }
}

describe("memory()", () => {
  test("counts Arrays, buffers and bytes", () => {
    const before = memory();
    const a = np.array(new Float32Array(1000));
    const during = memory();
    expect(during.numArrays).toBe(before.numArrays + 1);
    expect(during.numCoreArrays).toBe(before.numCoreArrays + 1);
    expect(during.numBuffers).toBe(before.numBuffers + 1);
    expect(during.numBytes).toBe(before.numBytes + 4000);
    const d = during.devices[a.device]!;
    expect(d.numBuffers).toBe(before.devices[a.device]!.numBuffers + 1);
    expect(d.numBackendBuffers).toBe(d.numBuffers);
    expect(d.peakBytes).toBeGreaterThanOrEqual(d.numBytes);
    expect(during.wasmHeapBytes).toBeGreaterThanOrEqual(during.wasmHeapUsedBytes);
    const b = a.ref; // another reference to the same Array: nothing new
    expect(memory().numArrays).toBe(during.numArrays);
    b.dispose();
    expect(memory().numArrays).toBe(during.numArrays);
    a.dispose();
    expect(flat(memory())).toEqual(flat(before));
  });

  test("the flatness check catches an Array kept per step", () => {
    const warm = flat(memory());
    const kept = [0, 1, 2].map((i) => np.ones([16]).mul(i));
    expect(kept.map((k) => k.ref.js()[0])).toEqual([0, 1, 2]); // realized: each holds a buffer
    const now = memory();
    expect(now.numArrays).toBe(warm.numArrays + 3);
    expect(now.numBuffers).toBe(warm.numBuffers + 3);
    expect(flat(now)).not.toEqual(warm);
    for (const k of kept) k.dispose();
    expect(flat(memory())).toEqual(warm);
  });

  // Six warm-up steps: the heap's size is a high-water mark, and since the core grew (the
  // ONNX and ExecuTorch code) it settles at the fifth jitted step (20.2 -> 24.2 MB once, with
  // 11.3 MB in use before and after: a transient peak, not a leak), then stays flat.
  test("200 jitted MNIST CNN steps on wasm leave every counter flat", async () => {
    await expectFlat("wasm", true, 6, 200);
  });

  test("100 eager MNIST CNN steps on wasm leave every counter flat", async () => {
    await expectFlat("wasm", false, 3, 100);
  });
});


// webgpu: the runtime's GPUBuffers behind the C++ backend's counts, and a small jitted loop
// (a dense layer's SGD step) whose GPU pools, staging buffers and pipelines stay flat.
const gpu = (await kiln.init("webgpu")).includes("webgpu");
if (gpu) describe("memory() on webgpu", () => {
  test("counts GPUBuffers and keeps them in step with the core's buffers", async () => {
    const before = memory();
    const a = np.array(new Float32Array(1000), { device: "webgpu" });
    const during = memory();
    expect(during.devices.webgpu!.numBuffers).toBe(before.devices.webgpu!.numBuffers + 1);
    expect(during.devices.webgpu!.numBackendBuffers).toBe(during.devices.webgpu!.numBuffers);
    expect(during.webgpu!.numBuffers).toBe(during.devices.webgpu!.numBuffers);
    expect(during.webgpu!.numBytes).toBeGreaterThanOrEqual(4000);
    await a.data(); // consumes a
    const after = memory();
    expect(after.devices.webgpu!.numBuffers).toBe(before.devices.webgpu!.numBuffers);
    expect(after.webgpu!.numBuffers).toBe(before.webgpu!.numBuffers);
  });

  test("50 jitted SGD steps of a dense layer on webgpu leave every counter flat", async () => {
    const saved = kiln.defaultDevice();
    kiln.defaultDevice("webgpu");
    try {
      const loss = (w: kiln.Array, x: kiln.Array) => np.sum(np.square(np.tanh(np.matmul(x, w)).sub(0.5)));
      const step = kiln.jit((w: kiln.Array, x: kiln.Array) => w.ref.sub(kiln.grad(loss)(w, x).mul(0.1)));
      const xs = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i));
      let w = np.array(Float32Array.from({ length: 64 }, (_, i) => Math.cos(i) / 8)).reshape([8, 8]);
      const run = async () => {
        w = step(w, np.array(xs).reshape([8, 8]));
        await w.blockUntilReady();
        await w.ref.data(); // a readback each step, as a training loop's loss
      };
      for (let i = 0; i < 3; i++) await run();
      const warm = flat(memory());
      for (let i = 0; i < 50; i++) {
        await run();
        expect(flat(memory()), `after 3 + ${i + 1} steps`).toEqual(warm);
      }
      w.dispose();
      step.dispose();
    } finally {
      kiln.defaultDevice(saved);
    }
  });
});
