// kiln `wasm` against wllama (npm @wllama/wllama: llama.cpp compiled to Wasm) in headless
// Chromium on the same GGUF at equal threads (issue 19): prefill and decode tok/s, and kiln /
// wllama. `make bench-llm-browser`.
//
//   node bench/llm/browser.mjs [--threads 1,2] [--gen 128] [--prompt-tokens 256] [--reps 1]
//        [--runtimes wllama,kiln] [--js-flags FLAGS]
//
// The page is cross-origin isolated (COOP/COEP), so both get threads. The prompt: the first
// --prompt-tokens tokens of bench/llm/prompt.txt (kiln's tokenizer, which matches llama.cpp's
// ids on SmolLM2: tests/fixtures/llm), decoded back to text that both runtimes tokenize
// themselves; each page reports its prompt token count. Each runtime and thread count runs in
// a fresh page: a warm-up completion (kiln compiles its kernels there), then the measured one;
// --reps repeats that and the table shows medians. No GPU (--disable-gpu): wllama's layers
// stay on the CPU (n_gpu_layers 0) as kiln's wasm device does. --runtimes kiln runs kiln alone
// (no ratios), e.g. against Node's figure on the same machine; --js-flags passes V8 flags to
// Chromium, a diagnostic only (a page's users cannot pass any).
import { execSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startStaticServer } from "../../examples/static_server.mjs";
import { launchChromium } from "../../js/test/browser/chromium.mjs";
import { llm } from "../../js/dist/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MODEL = join(ROOT, "data", "models", "SmolLM2-135M-Instruct.Q4_1.gguf");
const args = { threads: [1, 2], gen: 128, promptTokens: 256, reps: 1, runtimes: ["wllama", "kiln"], jsFlags: "" };
for (let i = 2; i < process.argv.length; i += 2) {
  const [k, v] = [process.argv[i], process.argv[i + 1]];
  if (k === "--threads") args.threads = v.split(",").map(Number);
  else if (k === "--gen") args.gen = Number(v);
  else if (k === "--prompt-tokens") args.promptTokens = Number(v);
  else if (k === "--reps") args.reps = Number(v);
  else if (k === "--runtimes") args.runtimes = v.split(",");
  else if (k === "--js-flags") args.jsFlags = v;
  else throw new Error(`unknown argument ${k} (see the header of bench/llm/browser.mjs)`);
}
if (!existsSync(join(ROOT, "bench", "llm", "browser", "node_modules", "@wllama", "wllama")))
  execSync("npm ci --no-audit --no-fund --loglevel=error", { cwd: join(ROOT, "bench", "llm", "browser"), stdio: "inherit" });

const model = await llm.load(MODEL, { device: "cpu" });
const ids = model.tokenizer.encode(readFileSync(join(ROOT, "bench", "llm", "prompt.txt"), "utf8"), { addSpecial: false }).slice(0, args.promptTokens);
const prompt = model.tokenizer.decode(ids);
model.dispose();

const allowed = /^\/(bench\/llm\/browser|js\/dist)\/[\w.@\/-]*$|^\/data\/models\/SmolLM2-135M-Instruct\.Q4_1\.gguf$/;
const server = await startStaticServer(allowed, "/bench/llm/browser/");
const base = `http://127.0.0.1:${server.address().port}/bench/llm/browser/`;
const { context, close } = await launchChromium(false, args.jsFlags ? [`--js-flags=${args.jsFlags}`] : []);
const load0 = loadavg();
const results = [];
try {
  for (const threads of args.threads)
    for (let rep = 0; rep < args.reps; rep++)
      for (const runtime of args.runtimes) {
        const tab = await context.newPage();
        await tab.addInitScript((p) => (window.BENCH_PROMPT = p), prompt);
        await tab.goto(`${base}?runtime=${runtime}&threads=${threads}&gen=${args.gen}&ctx=${args.promptTokens + args.gen}`);
        await tab.waitForFunction(() => window.bench, null, { timeout: 900_000, polling: 500 });
        const r = await tab.evaluate(() => window.bench);
        await tab.close();
        if (r.error) throw new Error(`${runtime} at ${threads} threads: ${r.error}`);
        if (!r.isolated) throw new Error("the page is not cross-origin isolated: no threads");
        console.log(`${runtime} ${threads}t: ${JSON.stringify(r.measured)}`);
        results.push({ runtime, threads, ...r.measured });
      }
} finally {
  await close();
  server.close();
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const rows = [];
for (const threads of args.threads) {
  const of = (rt, k) => median(results.filter((r) => r.runtime === rt && r.threads === threads).map((r) => r[k]));
  const w = { p: of("wllama", "prefillTps"), d: of("wllama", "decodeTps"), n: of("wllama", "promptTokens") };
  const k = { p: of("kiln", "prefillTps"), d: of("kiln", "decodeTps"), n: of("kiln", "promptTokens") };
  const ratio = (x, y) => (y === undefined ? "" : (x / y).toFixed(2));
  if (args.runtimes.includes("wllama"))
    rows.push(`| wllama 3.8.1 (llama.cpp, Wasm) | ${threads} | ${w.n} | ${w.p.toFixed(1)} | ${w.d.toFixed(1)} |  |  |`);
  if (args.runtimes.includes("kiln"))
    rows.push(`| kiln wasm | ${threads} | ${k.n} | ${k.p.toFixed(1)} | ${k.d.toFixed(1)} | ${ratio(k.p, w.p)} | ${ratio(k.d, w.d)} |`);
}
const flags = readFileSync("/proc/cpuinfo", "utf8").match(/^flags\s*:(.*)$/m)?.[1].split(" ") ?? [];
console.log(`\nmachine: ${cpus()[0].model}; SIMD: ${["avx2", "fma", "avx512f"].filter((f) => flags.includes(f)).join(" ")}; ${cpus().length} logical CPUs`);
console.log(`date: ${new Date().toISOString()}; load average before ${load0.map((x) => x.toFixed(2)).join(" ")}, after ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log(`Chromium (headless, no GPU), SmolLM2-135M-Instruct Q4_1, prompt ${args.promptTokens} tokens, ${args.gen} generated greedily (EOS ignored); medians of ${args.reps}\n`);
console.log("| runtime | threads | prompt tokens | prefill tok/s | decode tok/s | prefill / wllama | decode / wllama |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(r);
