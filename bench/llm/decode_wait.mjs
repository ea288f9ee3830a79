// Where a greedy webgpu decode token's time goes beyond feed() (issue 20): the latency of the
// pending token's read, the consumer's wait per piece, and a raw 4-byte read round trip on an idle
// GPU.   KILN_DIST=js/dist [LLM_BUSY_MS=x] [TOKENS=200] node bench/llm/decode_wait.mjs MODEL.gguf
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
const dist = pathToFileURL(resolve(process.env.KILN_DIST)).href;
const { init, llm, numpy: np, getWebGPUDevice } = await import(`${dist}/index.js`);
await init("webgpu");
const file = process.argv[2];
const model = await llm.load(file, { device: "webgpu", nCtx: 512 });
const busy = Number(process.env.LLM_BUSY_MS || 0);
for (const run of ["warm", "measured"]) {
  const g = model.generate("The history of", { maxTokens: Number(process.env.TOKENS || 200), ignoreEos: true });
  const lat = [], waits = [];
  const orig = g.readPending.bind(g);
  g.readPending = () => { const r = orig(); const t = performance.now(); r.bytes.then(() => lat.push(performance.now() - t)); return r; };
  let n = 0, tPrev = 0; const gaps = [];
  for await (const _ of g) {
    const now = performance.now(); if (tPrev) gaps.push(now - tPrev);
    for (const until = now + busy; performance.now() < until; );
    tPrev = performance.now(); n++;
  }
  const s = g.stats();
  const med = (a) => { const b = a.slice(20).sort((x, y) => x - y); return b.length ? b[b.length >> 1].toFixed(3) : "-"; };
  console.log(`${run} busy ${busy}: ${s.decodeTokensPerSecond.toFixed(1)} tok/s, host ${(s.decodeHostMs / (s.generatedTokens - 1)).toFixed(2)} ms/token; median read issue->resolve ${med(lat)} ms; median consumer gap (next() to piece) ${med(gaps)} ms`);
}
// Raw: one tiny kernel + 4-byte read, repeated, on an otherwise idle device.
let x = np.array([1, 2, 3, 4], { device: "webgpu" });
const rt = [];
for (let i = 0; i < 300; i++) { const t = performance.now(); const y = x.ref.add(1); await y.data(); rt.push(performance.now() - t); }
rt.sort((a, b) => a - b);
console.log(`raw tiny kernel + read round trip: median ${rt[150].toFixed(3)} ms, p10 ${rt[30].toFixed(3)}, p90 ${rt[270].toFixed(3)}`);
const dev = getWebGPUDevice(); const rq = [];
for (let i = 0; i < 300; i++) { const t = performance.now(); dev.queue.submit([]); await dev.queue.onSubmittedWorkDone(); rq.push(performance.now() - t); }
rq.sort((a, b) => a - b);
console.log(`empty submit + onSubmittedWorkDone: median ${rq[150].toFixed(3)} ms, p10 ${rq[30].toFixed(3)}`);
model.dispose();
