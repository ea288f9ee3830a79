// Where a kiln webgpu MNIST training step's time goes (examples/mnist-node CNN, batch BATCH):
// the step's wall time with one step in flight, the host time in the jitted call and in the
// runtime's methods, and each kernel's GPU time, found by dispatching that kernel alone
// REPEAT extra times in one step (kernels write a fresh output from their inputs, so a repeat
// changes no result) and dividing the extra time by REPEAT.
import { kilnInit, kilnOptax, loadSplit, makeTrainer } from "../wasm/mnist_common.mjs";
import { loadKilnWebgpu, setupGpu } from "./mnist_gpu.mjs";

const B = Number(process.env.BATCH || 64), STEPS = Number(process.env.STEPS || 50), REPEAT = Number(process.env.REPEAT || 20);
console.log(await setupGpu());
const train = loadSplit("train");
const init = kilnInit(0);
const { lib } = await loadKilnWebgpu();
const { webGpuRuntime } = await import("../../js/dist/webgpu/attach.js");
const rt = webGpuRuntime();
const host = { dispatch: 0, flush: 0, write: 0, alloc: 0, pipeline: 0, read: 0 };
let index = 0, target = -1;
const kernels = [];
const wgslOf = new Map();
for (const m of Object.keys(host)) {
  const orig = rt[m].bind(rt);
  rt[m] = (...a) => {
    const t = performance.now();
    let r = orig(...a);
    if (m === "pipeline") wgslOf.set(r, a[0]);
    if (m === "dispatch") {
      if (index === target) for (let i = 0; i < REPEAT; i++) orig(...a);
      kernels[index] ??= { pipeline: a[0], gx: a[4], gy: a[5], size: a[3] };
      index++;
    }
    host[m] += performance.now() - t;
    return r;
  };
}
const trainer = makeTrainer(lib, kilnOptax, init.host, { lr: 1e-3, totalSteps: 5000 });
const order = Array.from({ length: train.n }, (_, i) => i);
let at = 0;
const run = async (n) => {
  for (const k in host) host[k] = 0;
  const s0 = rt.stats();
  let enq = 0, prev = null;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    index = 0;
    const h = performance.now();
    const l = await trainer.enqueue(train, order, at, at + B);
    at = (at + B) % (train.n - B);
    enq += performance.now() - h;
    const p = l.jsAsync();
    if (prev) await prev;
    prev = p;
  }
  await prev;
  const s1 = rt.stats();
  return { ms: (performance.now() - t) / n, enq: enq / n, host: Object.fromEntries(Object.entries(host).map(([k, v]) => [k, +(v / n).toFixed(3)])), dispatches: (s1.dispatches - s0.dispatches) / n, submits: (s1.submits - s0.submits) / n, pipelines: s1.pipelines };
};
let t = performance.now();
const first = await run(1);
console.log(`first step: ${(performance.now() - t).toFixed(0)} ms; host in runtime methods ${JSON.stringify(first.host)}, ${first.pipelines} pipelines`);
await run(5);
const r = await run(STEPS);
console.log(`batch ${B}: ${r.ms.toFixed(2)} ms/step (one step in flight, loss read every step); host ${r.enq.toFixed(2)} ms in the jitted call, runtime methods ${JSON.stringify(r.host)}; ${r.dispatches} dispatches, ${r.submits.toFixed(2)} submits/step`);
// Per-kernel GPU time: a step with kernel k repeated, minus a plain step (each the best of 3, a
// step's loss read before the next starts).
const one = async () => { const s = performance.now(); const l = await trainer.enqueue(train, order, 0, B); await l.jsAsync(); return performance.now() - s; };
const best = async () => Math.min(await one(), await one(), await one());
target = -1;
const base = await best();
const rows = [];
const nk = Math.min(kernels.length, Number(process.env.KERNELS || kernels.length));
for (let k = 0; k < nk; k++) {
  if (k % 10 === 0) console.log(`timing kernel ${k} of ${nk}...`);
  target = k;
  rows.push({ k, us: (1000 * (await best() - base)) / REPEAT, ...kernels[k] });
}
target = -1;
const total = rows.reduce((s, x) => s + Math.max(0, x.us), 0);
console.log(`serial step ${base.toFixed(2)} ms; kernels' GPU time ${(total / 1000).toFixed(2)} ms in ${rows.length} dispatches`);
rows.sort((a, b) => b.us - a.us);
for (const x of rows.slice(0, Number(process.env.TOP || 15))) {
  const w = wgslOf.get(x.pipeline) ?? "";
  console.log(`${x.us.toFixed(1).padStart(8)} us  #${x.k} groups ${x.gx}x${x.gy} size ${x.size}  ${w.length} chars: ${w.slice(Math.max(0, w.lastIndexOf("@compute"))).replace(/\s+/g, " ").slice(0, 200)}`);
}
if (process.env.DUMP) for (const x of rows.slice(0, 4)) console.log(`\n--- #${x.k} ---\n${wgslOf.get(x.pipeline)}`);
process.exit(0);
