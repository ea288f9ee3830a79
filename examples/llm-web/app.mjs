// The chat page: loads a GGUF model (a picked file, or the one served with the page), streams
// each reply with kiln's llm namespace, and shows tok/s. webgpu when the browser has an
// adapter, else wasm; a model that fails on webgpu is loaded again on wasm. window.llmPage
// exposes progress for the headless test (js/test/browser/llm.mjs).
import * as kiln from "../../js/dist/index.js";

const q = new URLSearchParams(location.search);
const o = {
  prompt: q.get("prompt") ?? "",
  system: q.get("system") ?? "",
  maxTokens: Number(q.get("maxTokens") ?? 128),
  temperature: Number(q.get("temperature") ?? 0),
  bucket: Number(q.get("bucket") ?? 32),
  device: q.get("device"),
};
const $ = (id) => document.getElementById(id);
const state = (window.llmPage = { device: null, loaded: false, error: null, replies: [], stats: [], fallback: null, done: false });
const status = (s) => ($("status").textContent = s);

let model = null;
let bytes = null; // kept to load the model again on wasm if webgpu fails
let messages = o.system ? [{ role: "system", content: o.system }] : [];
let controller = null;

async function load(source, name) {
  status(`reading ${name}…`);
  bytes = source instanceof Uint8Array ? source : new Uint8Array(await source.arrayBuffer());
  await loadOn(state.device);
  status(`${name}: ${model.architecture}, ${(bytes.length / 1e6).toFixed(0)} MB, on ${model.device}`);
}

async function loadOn(device) {
  model?.dispose();
  model = null;
  state.loaded = false;
  const t0 = performance.now();
  model = await kiln.llm.load(bytes, { device, nCtx: 512, prefillBucket: o.bucket });
  state.device = model.device;
  state.loaded = true;
  console.log(`[llm-web] loaded on ${device} in ${(performance.now() - t0).toFixed(0)} ms`);
  for (const id of ["input", "send"]) $(id).disabled = false;
}

function addLine(role, text) {
  const span = document.createElement("div");
  span.className = role;
  span.textContent = (role === "user" ? "> " : "") + text;
  $("log").append(span);
  return span;
}

const rate = (x) => (x > 0 ? x.toFixed(2) : "–");

// One assistant turn; on webgpu, an error moves the model to wasm and the turn is retried.
async function reply() {
  const span = addLine("assistant", "");
  controller = new AbortController();
  $("stop").disabled = false;
  $("send").disabled = true;
  const t0 = performance.now();
  let text = "";
  let n = 0;
  try {
    const g = model.chat(messages, { maxTokens: o.maxTokens, temperature: o.temperature, signal: controller.signal });
    status(`prefill on ${model.device}…`);
    for await (const piece of g) {
      text += piece;
      span.textContent = text;
      n++;
      status(`generating on ${model.device}: ${n} tokens, ${((1000 * n) / (performance.now() - t0)).toFixed(2)} tok/s overall`);
    }
    const s = g.stats();
    state.stats.push(s);
    $("stats").textContent = `prefill ${s.promptTokens} tokens: ${rate(s.prefillTokensPerSecond)} tok/s · decode ${s.generatedTokens} tokens: ${rate(s.decodeTokensPerSecond)} tok/s · stop: ${s.stopReason} · ${model.device}`;
    status("ready");
  } catch (e) {
    if (model.device !== "webgpu") throw e;
    state.fallback = String(e?.message ?? e);
    span.remove();
    status(`webgpu failed (${state.fallback}); loading the model on wasm…`);
    await loadOn("wasm");
    return await reply();
  } finally {
    $("stop").disabled = true;
    $("send").disabled = false;
  }
  messages.push({ role: "assistant", content: text });
  state.replies.push(text);
}

async function send(text) {
  messages.push({ role: "user", content: text });
  addLine("user", text);
  await reply();
}

function fail(e) {
  state.error = String(e?.stack ?? e);
  status(`error: ${e?.message ?? e}`);
}

$("file").addEventListener("change", (ev) => {
  const f = ev.target.files[0];
  if (f) load(f, f.name).catch(fail);
});
$("served").addEventListener("click", () => loadServed().catch(fail));
$("stop").addEventListener("click", () => controller?.abort());
$("form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("input").value.trim();
  if (!text || !model) return;
  $("input").value = "";
  send(text).catch(fail);
});

async function loadServed() {
  const url = "../../data/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  status("downloading the served model…");
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} (run \`make models\`)`);
  await load(new Uint8Array(await r.arrayBuffer()), "SmolLM2-135M-Instruct Q4_1");
}

async function main() {
  const devices = await kiln.init();
  state.device = o.device ?? (devices.includes("webgpu") ? "webgpu" : "wasm");
  status(`kiln ready (${state.device}): pick a model file or load the served one`);
  if (q.has("autoload")) await loadServed();
  if (o.prompt) await send(o.prompt);
  state.done = true;
}
main().catch(fail);
