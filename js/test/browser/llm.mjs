// Headless Chromium check of examples/llm-web: the page (served as by `make serve-llm`)
// loads the served SmolLM2, answers one short chat turn with a few tokens, and shows tok/s.
// Without an adapter (the default here: --disable-gpu) the page must pick wasm; LLM_WEBGPU=1
// gives Chromium WebGPU on SwiftShader, where the page picks webgpu (and falls back to wasm if
// the model fails there: reported, not failed).
import { launchChromium, openExample } from "./chromium.mjs";
import { startServer } from "../../../examples/llm-web/serve.mjs";

// A few tokens of a short turn (a system message instead of SmolLM2's longer default one): on
// the 2-core CI machine the prefill takes seconds on wasm, and so does each token.
const TOKENS = Number(process.env.LLM_TOKENS ?? 3);
const WEBGPU = process.env.LLM_WEBGPU === "1";
const server = await startServer();
const params = new URLSearchParams({ autoload: "1", system: "Answer in one word.", prompt: "Capital of France?", maxTokens: String(TOKENS), bucket: "8" });
const url = `http://127.0.0.1:${server.address().port}/examples/llm-web/?${params}`;
const { context, close } = await launchChromium(WEBGPU);
let ok = false;
const t0 = Date.now();
try {
  const tab = await openExample(context, url, { prefix: "llm-web", global: "llmPage", timeout: 480_000, polling: 1000 });
  const r = await tab.evaluate(() => ({ ...window.llmPage, shown: document.getElementById("log").textContent, statsText: document.getElementById("stats").textContent, isolated: crossOriginIsolated }));
  const s = r.stats[0];
  ok = !r.error && r.device === (WEBGPU && !r.fallback ? "webgpu" : "wasm") && r.replies.length === 1 && r.replies[0].length > 0 && r.shown.includes(r.replies[0]) &&
    s?.generatedTokens >= 1 && s.generatedTokens <= TOKENS && s.decodeTokensPerSecond >= 0 && s.prefillTokensPerSecond > 0 && r.statsText.includes("tok/s") && r.isolated;
  console.log(`[kiln] examples/llm-web: ${ok ? "ok" : "WRONG"}: device ${r.device}${r.fallback ? ` (webgpu failed: ${r.fallback})` : ""}, reply ${JSON.stringify(r.replies[0])}, ${r.statsText}, crossOriginIsolated ${r.isolated}, ${((Date.now() - t0) / 1000).toFixed(0)} s${r.error ? `\n${r.error}` : ""}`);
} finally {
  await close();
  server.close();
}
process.exit(ok ? 0 : 1);
