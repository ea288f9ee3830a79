// kiln in Node.js: SmolLM2-135M-Instruct (data/models, `make models`) answers a prompt through
// the llm namespace, streaming the reply as it is generated and printing tok/s.
// `node examples/llm-node/chat.mjs --help` lists the options; `make chat-js` runs it.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { init, llm } from "../../js/dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const usage = `usage: node chat.mjs [options]
  --model FILE        a GGUF file (default: data/models/SmolLM2-135M-Instruct.Q4_1.gguf)
  --prompt TEXT       the user's message (default: "What is the capital of France?")
  --system TEXT       a system message (default: the model's own)
  --max-tokens N      tokens to generate at most (default 64)
  --temperature T     0 (default): greedy; else sampled with --top-k 40 --top-p 0.95 --seed 0
  --device NAME       wasm (default), cpu or webgpu
  --ctx N             KV cache positions (default 512)
  --interactive       keep chatting: each line read from stdin is the next user message
`;
const o = { model: join(here, "../../data/models/SmolLM2-135M-Instruct.Q4_1.gguf"), prompt: "What is the capital of France?", system: "", maxTokens: 64, temperature: 0, device: "wasm", ctx: 512, interactive: false };
const names = { "--model": "model", "--prompt": "prompt", "--system": "system", "--max-tokens": "maxTokens", "--temperature": "temperature", "--device": "device", "--ctx": "ctx" };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--help" || a === "-h") process.stdout.write(usage), process.exit(0);
  if (a === "--interactive") {
    o.interactive = true;
    continue;
  }
  const key = names[a];
  if (key === undefined || i + 1 >= argv.length) {
    process.stderr.write(`chat.mjs: ${key === undefined ? `unknown option ${a}` : `missing value after ${a}`}\n${usage}`);
    process.exit(2);
  }
  const v = argv[++i];
  o[key] = typeof o[key] === "number" ? Number(v) : v;
}

if (o.device === "webgpu") await init("webgpu");
const t0 = performance.now();
const model = await llm.load(o.model, { device: o.device, nCtx: o.ctx });
process.stderr.write(`[loaded ${model.architecture} on ${model.device} in ${((performance.now() - t0) / 1000).toFixed(1)} s]\n`);

const messages = o.system ? [{ role: "system", content: o.system }] : [];
// Ctrl-C stops the reply being generated (the AbortSignal), a second one exits.
let controller = null;
process.on("SIGINT", () => (controller && !controller.signal.aborted ? controller.abort() : process.exit(130)));

async function reply(text) {
  messages.push({ role: "user", content: text });
  controller = new AbortController();
  const g = model.chat(messages, { maxTokens: o.maxTokens, temperature: o.temperature, signal: controller.signal });
  let answer = "";
  for await (const piece of g) {
    process.stdout.write(piece);
    answer += piece;
  }
  messages.push({ role: "assistant", content: answer });
  const s = g.stats();
  process.stderr.write(
    `\n[prefill ${s.promptTokens} tokens ${s.prefillTokensPerSecond.toFixed(1)} tok/s, decode ${s.generatedTokens} tokens ` +
      `${s.decodeTokensPerSecond.toFixed(2)} tok/s, stop: ${s.stopReason}]\n`,
  );
}

await reply(o.prompt);
if (o.interactive) {
  const rl = createInterface({ input: process.stdin, prompt: "> " });
  rl.prompt();
  for await (const line of rl) {
    if (line.trim()) await reply(line);
    rl.prompt();
  }
}
model.dispose();
