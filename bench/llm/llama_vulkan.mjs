// llama.cpp's Vulkan backend (npm node-llama-cpp 3.21.1 with @node-llama-cpp/linux-x64-vulkan,
// every layer on the GPU) on a GGUF file: the reference for kiln `webgpu` on the same GPU
// (bench/llm/llm_js.mjs). The same prompt as llm_js.mjs, or one of about PROMPT tokens made
// of it repeated; prefill to the first token, then decode with the end-of-text token yielded
// (random weights would stop early); the second of two runs, after the first call's time
// (model load and shader compilation).
//   node bench/llm/llama_vulkan.mjs MODEL.gguf [tokens=128] [promptTokens=0: the short prompt]
//   NLC_DIR: the node-llama-cpp package folder (default ./node_modules/node-llama-cpp)
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [file, tokens = "128", promptTokens = "0"] = process.argv.slice(2);
const nlc = resolve(process.env.NLC_DIR ?? join("node_modules", "node-llama-cpp"));
const { getLlama } = await import(pathToFileURL(join(nlc, "dist", "index.js")).href);
const t0 = performance.now();
const llama = await getLlama({ gpu: "vulkan", build: "never", usePrebuiltBinaries: true, skipDownload: true, progressLogs: false, logLevel: "error" });
const model = await llama.loadModel({ modelPath: file, gpuLayers: "max" });
const base = "The history of the printing press begins in the fifteenth century, when";
let ids = model.tokenize(base);
if (Number(promptTokens) > 0) {
  while (ids.length < Number(promptTokens)) ids = ids.concat(model.tokenize(" " + base));
  ids = ids.slice(0, Number(promptTokens));
}
const context = await model.createContext({ contextSize: ids.length + Number(tokens) + 8, batchSize: Math.max(512, ids.length) });
console.log(`llama.cpp vulkan: ${llama.gpu}, ${(await llama.getGpuDeviceNames()).join(", ")}; load ${(performance.now() - t0).toFixed(0)} ms`);
for (const run of ["first", "measured"]) {
  const seq = context.getSequence();
  let n = 0, tFirst = 0;
  const t = performance.now();
  for await (const _ of seq.evaluate(ids, { temperature: 0, yieldEogToken: true })) {
    if (++n === 1) tFirst = performance.now();
    if (n === Number(tokens)) break;
  }
  const t1 = performance.now();
  seq.dispose();
  console.log(`${run}: ${ids.length} prompt tokens, prefill ${((1000 * ids.length) / (tFirst - t)).toFixed(1)} tok/s (${(tFirst - t).toFixed(0)} ms); ` +
    `${n} tokens, decode ${((1000 * (n - 1)) / (t1 - tFirst)).toFixed(2)} tok/s`);
}
await context.dispose();
await model.dispose();
await llama.dispose();
