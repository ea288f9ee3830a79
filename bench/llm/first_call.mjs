// The first call's latency on webgpu (issue 20): one fresh process loads a GGUF and runs one
// greedy generation, and prints where the time went: load, the prefill (up to the first
// piece), each of the first decode steps, the pipelines each phase created, and the time spent
// inside the GPUDevice's createShaderModule / createComputePipeline(Async) calls (wrapped here;
// an async creation is timed from its call to its settling, so those overlap and their sum can
// exceed the wall time: the "span" is the wall time some creation was in flight).
//   node bench/llm/first_call.mjs MODEL.gguf [tokens=8] [nCtx=256]
//   KILN_DIST=DIR: another build's js/dist; LLM_PROMPT_REPEAT=n: the prompt n times over
//   KILN_WEBGPU_ASYNC_PIPELINES=0|1: a program's pipelines one after another, or together
//     asynchronously (default: asynchronously, except on SwiftShader)
// On the GPU machine, each case in a fresh process with an empty driver cache, e.g.
//   for d in MAIN_DIST js/dist; do for a in 0 1; do
//     __GL_SHADER_DISK_CACHE_PATH=$(mktemp -d) KILN_DIST=$d KILN_WEBGPU_ASYNC_PIPELINES=$a \
//       node bench/llm/first_call.mjs MODEL.gguf 8 512; done; done
// Run it in a fresh process each time: a second call in the same process finds every pipeline
// cached. On a GPU, the driver's on-disk shader cache also survives the process: the cold
// number needs that cache cleared or pointed at an empty folder (NVIDIA:
// __GL_SHADER_DISK_CACHE_PATH=$(mktemp -d); Mesa: MESA_SHADER_CACHE_DIR).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const t00 = performance.now();
const dist = process.env.KILN_DIST ? pathToFileURL(resolve(process.env.KILN_DIST)).href : new URL("../../js/dist", import.meta.url).href;
const { init, llm, profiler, getWebGPUDevice } = await import(`${dist}/index.js`);
const [file, tokens = "8", nCtx = "256"] = process.argv.slice(2);
const cpu0 = process.cpuUsage();
let t = performance.now();
await init("webgpu");
const initMs = performance.now() - t;

// Wrap the device's creation calls: count, time inside the call, time until settled.
const device = getWebGPUDevice();
const calls = { modules: 0, moduleMs: 0, sync: 0, syncMs: 0, async: 0, asyncCallMs: 0, asyncSettleMs: 0, inFlight: 0, spanMs: 0, spanStart: 0 };
const kinds = [];
// Batches: pipelines created with no dispatch between them (a jit program's, created at its
// first dispatch; the prefill bucket's program, then the decode step's, ...).
const batches = [];
let lastDispatches = -1;
const batchOf = (kind, ms) => {
  const d = profiler.webgpuCounters()?.dispatches ?? 0;
  if (d !== lastDispatches || !batches.length) batches.push({ n: 0, kinds: {}, syncMs: 0, start: performance.now(), settled: 0 });
  lastDispatches = d;
  const b = batches[batches.length - 1];
  b.n++;
  b.kinds[kind] = (b.kinds[kind] ?? 0) + 1;
  b.syncMs += ms;
  return b;
};
const kindOf = (wgsl) =>
  /var<workgroup> sq:/.test(wgsl) ? "attention" : /var<workgroup> As:/.test(wgsl) ? "tiled" : /var<workgroup> sh:/.test(wgsl) ? "tree" : "other";
const moduleKind = new WeakMap();
const wrap = (name, body) => {
  const f = device[name].bind(device);
  device[name] = (...a) => body(f, ...a);
};
wrap("createShaderModule", (f, d) => {
  const s = performance.now();
  const m = f(d);
  calls.modules++;
  calls.moduleMs += performance.now() - s;
  moduleKind.set(m, kindOf(d.code));
  return m;
});
wrap("createComputePipeline", (f, d) => {
  const s = performance.now();
  const p = f(d);
  calls.sync++;
  calls.syncMs += performance.now() - s;
  kinds.push(moduleKind.get(d.compute.module));
  batchOf(moduleKind.get(d.compute.module), performance.now() - s);
  return p;
});
if (device.createComputePipelineAsync)
  wrap("createComputePipelineAsync", (f, d) => {
    const s = performance.now();
    if (calls.inFlight++ === 0) calls.spanStart = s;
    const p = f(d);
    calls.async++;
    calls.asyncCallMs += performance.now() - s;
    kinds.push(moduleKind.get(d.compute.module));
    const batch = batchOf(moduleKind.get(d.compute.module), 0);
    const settle = () => {
      const e = performance.now();
      batch.settled = Math.max(batch.settled, e - batch.start);
      calls.asyncSettleMs += e - s;
      if (--calls.inFlight === 0) calls.spanMs += e - calls.spanStart;
    };
    p.then(settle, settle);
    return p;
  });

t = performance.now();
const model = await llm.load(file, { device: "webgpu", nCtx: Number(nCtx) });
const loadMs = performance.now() - t;
const base = "The history of the printing press begins in the fifteenth century, when";
const prompt = Array(Number(process.env.LLM_PROMPT_REPEAT || 1)).fill(base).join(" ");

const snap = () => ({ t: performance.now(), c: profiler.webgpuCounters(), k: kinds.length, ...calls });
const phases = [];
let prev = snap();
const g = model.generate(prompt, { maxTokens: Number(tokens), ignoreEos: true });
for await (const _ of g) {
  const now = snap();
  phases.push({ name: phases.length === 0 ? "prefill" : `decode ${phases.length}`, a: prev, b: now });
  prev = now;
  const p = phases[phases.length - 1];
  console.log(`(${p.name} done after ${(now.t - t00).toFixed(0)} ms, ${kinds.length} pipelines so far)`); // progress, for slow adapters
}
const s = g.stats();
const totalMs = performance.now() - t00;
const cpu = process.cpuUsage(cpu0);
console.log(`${file.split("/").pop()} on ${model.device}, ${s.promptTokens} prompt tokens (nCtx ${nCtx}), ${s.generatedTokens} greedy tokens`);
console.log(`init ${initMs.toFixed(0)} ms, load ${loadMs.toFixed(0)} ms`);
for (const { name, a, b } of phases) {
  const d = (k) => b[k] - a[k];
  const byKind = {};
  for (const k of kinds.slice(a.k, b.k)) byKind[k] = (byKind[k] ?? 0) + 1;
  console.log(
    `${name}: ${d("t").toFixed(0)} ms; ${d("k")} pipelines ${JSON.stringify(byKind)}; ${b.c.dispatches - a.c.dispatches} dispatches; ` +
      `createShaderModule ${d("moduleMs").toFixed(0)} ms, createComputePipeline ${d("syncMs").toFixed(0)} ms (${d("sync")} sync), ` +
      `async ${d("async")} (calls ${d("asyncCallMs").toFixed(0)} ms, settled after ${d("asyncSettleMs").toFixed(0)} ms summed, in flight ${d("spanMs").toFixed(0)} ms)`,
  );
}
batches.forEach((b, i) =>
  console.log(`pipeline batch ${i + 1}: ${b.n} pipelines ${JSON.stringify(b.kinds)}, ${b.syncMs.toFixed(0)} ms in createComputePipeline` + (b.settled ? `, async ones all created ${b.settled.toFixed(0)} ms after the first was asked for` : "")),
);
const first = phases.slice(0, 4).reduce((x, p) => x + p.b.t - p.a.t, 0);
console.log(
  `first call (prefill + first ${Math.min(3, phases.length - 1)} decode steps): ${first.toFixed(0)} ms; process from start to end: ${totalMs.toFixed(0)} ms ` +
    `(process CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms); pipelines ${kinds.length}, of which ${calls.sync} sync; ` +
    `inside createShaderModule ${calls.moduleMs.toFixed(0)} ms, createComputePipeline ${calls.syncMs.toFixed(0)} ms, async creations in flight ${calls.spanMs.toFixed(0)} ms`,
);
model.dispose();
process.exit(0);
