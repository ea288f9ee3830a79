import { kilnInit, kilnOptax, loadSplit, makeTrainer } from "../wasm/mnist_common.mjs";
import { loadKilnWebgpu, setupGpu } from "./mnist_gpu.mjs";
console.log(await setupGpu());
const train = loadSplit("train"); const init = kilnInit(0);
const { lib } = await loadKilnWebgpu();
const { webGpuRuntime } = await import("../../js/dist/webgpu/attach.js");
const rt = webGpuRuntime(); const dev = rt.device;
const c = { bg: 0, buf: 0, scope: 0, alloc: 0, free: 0, write: 0 };
for (const [obj, m, k] of [[dev, "createBindGroup", "bg"], [dev, "createBuffer", "buf"], [dev, "pushErrorScope", "scope"], [rt, "alloc", "alloc"], [rt, "free", "free"], [rt, "write", "write"]]) {
  const o = obj[m].bind(obj); obj[m] = (...a) => { c[k]++; return o(...a); };
}
const trainer = makeTrainer(lib, kilnOptax, init.host, { lr: 1e-3, totalSteps: 5000 });
const order = Array.from({ length: train.n }, (_, i) => i);
const B = 64;
for (let i = 0; i < 30; i++) {
  for (const k in c) c[k] = 0;
  const t = performance.now();
  const l = await trainer.enqueue(train, order, i * B, i * B + B);
  const e = performance.now() - t;
  if (i >= 20) console.log(`step ${i}: enqueue ${e.toFixed(2)} ms ${JSON.stringify(c)}`);
  await l.jsAsync();
}
process.exit(0);
