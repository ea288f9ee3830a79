// One benchmark run in the page, chosen by the query: ?runtime=kiln|wllama&threads=N&gen=128
// &ctx=384. Both runtimes load the same served GGUF, complete the same prompt text (tokenized
// by each runtime's own tokenizer; the counts are reported) greedily with end-of-generation
// ignored, once to warm up (kiln compiles its kernels there) and once measured. The result lands
// in window.bench for the runner.
const q = new URLSearchParams(location.search);
const runtime = q.get("runtime");
const threads = Number(q.get("threads"));
const gen = Number(q.get("gen") ?? 128);
const ctx = Number(q.get("ctx") ?? 384);
const MODEL = "/data/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const log = (s) => (document.getElementById("log").textContent += s + "\n");

async function runKiln(prompt) {
  globalThis.KILN_NUM_THREADS = threads; // read when the core loads
  const kiln = await import("/js/dist/index.js");
  const bytes = new Uint8Array(await (await fetch(MODEL)).arrayBuffer());
  const model = await kiln.llm.load(bytes, { device: "wasm", nCtx: ctx });
  const runs = [];
  for (let r = 0; r < 2; r++) {
    const g = model.generate(prompt, { maxTokens: gen, temperature: 0, ignoreEos: true });
    for await (const _ of g);
    const s = g.stats();
    runs.push({ promptTokens: s.promptTokens, generated: s.generatedTokens, prefillTps: s.prefillTokensPerSecond, decodeTps: s.decodeTokensPerSecond });
  }
  model.dispose();
  // Which core ran (threaded or not, threads) and whether its kernels use Relaxed SIMD FMA.
  const { coreInfo } = await import("/js/dist/core.js");
  runs[1].core = coreInfo();
  return runs;
}

async function runWllama(prompt) {
  const { Wllama } = await import("./node_modules/@wllama/wllama/esm/index.js");
  const w = new Wllama({ default: "./node_modules/@wllama/wllama/esm/wasm/wllama.wasm" }, { suppressNativeLog: true });
  await w.loadModelFromUrl(new URL(MODEL, location.href).href, { n_threads: threads, n_ctx: ctx, n_batch: 512, n_gpu_layers: 0 });
  const runs = [];
  for (let r = 0; r < 2; r++) {
    // cache_prompt off: the measured run must prefill the whole prompt again.
    const res = await w.createCompletion({ prompt, max_tokens: gen, temperature: 0, ignore_eos: true, cache_prompt: false });
    const t = res.timings;
    if (!t || t.cache_n) throw new Error(`wllama reused ${t?.cache_n} cached prompt tokens (or gave no timings)`);
    // Decode tok/s over the generated tokens after the first, as kiln counts them.
    runs.push({ promptTokens: t.prompt_n, generated: t.predicted_n, prefillTps: t.prompt_per_second, decodeTps: t.predicted_per_second });
  }
  await w.exit();
  return runs;
}

try {
  const prompt = window.BENCH_PROMPT; // set by the runner: the same text for both runtimes
  const runs = runtime === "kiln" ? await runKiln(prompt) : await runWllama(prompt);
  window.bench = { runtime, threads, isolated: crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency, warmup: runs[0], measured: runs[1] };
  log(JSON.stringify(window.bench));
} catch (e) {
  window.bench = { error: String(e?.stack ?? e) };
  log(window.bench.error);
}
