// The JS llm API's speed: prefill and decode tok/s of a GGUF on one device, the second run
// reported (the first compiles the programs). On webgpu also the work per decode step from
// profiler.webgpuCounters(): kernels dispatched, command buffers submitted, pipelines and
// GPUBuffers created (the steady state creates none), and the host's share of a decode step
// (GenerationStats.decodeHostMs: sampling, detokenizing, recording the next step's kernels).
//   node bench/llm/llm_js.mjs MODEL.gguf [device=wasm] [tokens=32] [nCtx=256]
//   KILN_DIST=DIR: another build's js/dist (before/after of two commits in one call)
//   LLM_GREEDY=1: greedy decoding (end-of-text ignored) instead of seeded top-k sampling
//   LLM_FUSED_ATTENTION=1: load with fusedAttention (webgpu: the decode_attention kernels)
//   LLM_BUSY_MS=x: the consumer keeps the main thread busy x ms per piece (what a page does
//     with a token): on webgpu, whether that time adds to a token's or hides behind the GPU
//     running the step dispatched ahead says which of host and GPU bounds decode
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dist = process.env.KILN_DIST ? pathToFileURL(resolve(process.env.KILN_DIST)).href : new URL("../../js/dist", import.meta.url).href;
const { init, llm, profiler } = await import(`${dist}/index.js`);

const [file, device = "wasm", tokens = "32", nCtx = "256"] = process.argv.slice(2);
if (device === "webgpu") await init("webgpu");
const t0 = performance.now();
const fused = process.env.LLM_FUSED_ATTENTION === "1" ? { fusedAttention: true } : {};
const model = await llm.load(file, { device, nCtx: Number(nCtx), ...fused });
console.log(`load ${(performance.now() - t0).toFixed(0)} ms on ${model.device}`);
// LLM_PROMPT_REPEAT=n: the prompt n times over (a long prefill; 40 gives ~520 tokens on SmolLM2's vocabulary).
const base = "The history of the printing press begins in the fifteenth century, when";
const prompt = Array(Number(process.env.LLM_PROMPT_REPEAT || 1)).fill(base).join(" ");
for (const run of ["warm-up", "measured"]) {
  // Sampled with a seed (random weights would end at an EOS early under greedy decoding), or
  // with LLM_GREEDY=1 greedy with end-of-text ignored: the token is picked on the device.
  const options = process.env.LLM_GREEDY === "1" ? { maxTokens: Number(tokens), ignoreEos: true } : { maxTokens: Number(tokens), temperature: 1, topK: 40, seed: 1 };
  const g = model.generate(prompt, options);
  const t = performance.now();
  let n = 0;
  const counters = [];
  const busy = Number(process.env.LLM_BUSY_MS || 0);
  for await (const _ of g) {
    n++;
    for (const until = performance.now() + busy; performance.now() < until; );
    const c = profiler.webgpuCounters();
    if (c) counters.push(c);
  }
  const s = g.stats();
  if (counters.length > 4) {
    // Pieces 3.. (each iteration dispatches the next decode step): per-step means.
    const a = counters[2], b = counters[counters.length - 1], steps = counters.length - 3;
    const per = (k) => ((b[k] - a[k]) / steps).toFixed(2);
    console.log(`${run}: per decode step (last ${steps}): ${per("dispatches")} kernels, ${per("submits")} submits, ` +
      `${per("pipelines")} new pipelines, ${per("createdBuffers")} new GPUBuffers` +
      (b.bindGroups === undefined ? "" : `, ${per("bindGroups")} new bind groups, ${per("readBytes")} bytes read`));
  }
  console.log(`${run}: ${s.promptTokens} prompt tokens, prefill ${s.prefillTokensPerSecond.toFixed(1)} tok/s (${s.prefillMs.toFixed(0)} ms); ` +
    `${s.generatedTokens} tokens, decode ${s.decodeTokensPerSecond.toFixed(2)} tok/s` +
    (s.decodeHostMs === undefined || s.generatedTokens < 2 ? "" : ` (host ${(s.decodeHostMs / (s.generatedTokens - 1)).toFixed(2)} of ${(s.decodeMs / (s.generatedTokens - 1)).toFixed(2)} ms per token)`) +
    `; ${((performance.now() - t) / 1000).toFixed(1)} s, stop ${s.stopReason}`);
}
model.dispose();
