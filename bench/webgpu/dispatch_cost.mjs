// Host cost per dispatch of kiln's webgpu runtime: a jitted chain of `n` dependent small
// kernels (a row sum feeding the next elementwise step, so nothing fuses across them) called
// repeatedly; ms per call and us per dispatch, the GPU's part included (tiny kernels, so on a
// GPU this is mostly the host: the runtime's JS, Dawn's encoding, the submit). Runs on
// SwiftShader too, where the kernels cost more; the host's recording time is printed apart. usage: node dispatch_cost.mjs [DIST] [n=300] [calls=20]
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { create, globals } from "webgpu";

Object.assign(globalThis, globals);
globalThis.navigator = { gpu: create([]) };
const dist = pathToFileURL(path.resolve(process.argv[2] ?? "../../js/dist")).href;
const n = Number(process.argv[3] ?? 300), calls = Number(process.argv[4] ?? 20);
const lib = await import(`${dist}/index.js`);
await lib.init("webgpu");
lib.defaultDevice("webgpu");
const { numpy: np, jit, profiler } = lib;
const f = jit((x) => {
  for (let i = 0; i < n; i++) {
    const s = np.sum(x.ref, 1, { keepdims: true }).mul(0.001);
    x = x.mul(0.5).add(s);
  }
  return np.sum(x, 1);
});
const x = np.ones([8, 64]);
// The call records its dispatches synchronously (the submit waits for the next event-loop
// turn), so the time until it returns is the host's part alone.
// And its CPU time on the main thread (Linux: schedstat's nanoseconds), which leaves out the
// threads that run the kernels on SwiftShader and compete with it for the cores.
const stat = `/proc/self/task/${process.pid}/schedstat`;
const cpuMs = existsSync(stat) ? () => Number(readFileSync(stat, "utf8").split(" ")[0]) / 1e6 : () => NaN;
const host = [], hostCpu = [];
const once = async () => {
  const c0 = cpuMs(), t0 = performance.now();
  const y = f(x.ref);
  host.push(performance.now() - t0);
  hostCpu.push(cpuMs() - c0);
  await y.data();
};
await once(); await once();
host.length = hostCpu.length = 0;
const before = profiler.webgpuCounters();
const times = [];
for (let i = 0; i < calls; i++) { const t0 = performance.now(); await once(); times.push(performance.now() - t0); }
const after = profiler.webgpuCounters();
times.sort((a, b) => a - b);
host.sort((a, b) => a - b);
hostCpu.sort((a, b) => a - b);
const per = (after.dispatches - before.dispatches) / calls;
const ms = times[times.length >> 1];
const hostMs = host[host.length >> 1], hostMin = host[0];
console.log(`${per} dispatches per call, ${(after.submits - before.submits) / calls} submits; median ${ms.toFixed(2)} ms per call ` +
  `(${(ms * 1000 / per).toFixed(2)} us per dispatch), of which recording on the host ${hostMs.toFixed(2)} ms (${(hostMs * 1000 / per).toFixed(2)} us per dispatch; fastest call ${(hostMin * 1000 / per).toFixed(2)}); ` +
  `main-thread CPU while recording ${(hostCpu[hostCpu.length >> 1] * 1000 / per).toFixed(2)} us per dispatch (median)`);
process.exit(0);
