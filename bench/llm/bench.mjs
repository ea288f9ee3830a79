// LLM speed benchmark (issue 19): prefill and decode tok/s of one GGUF file on kiln `native`
// and kiln `wasm` (Node) against llama.cpp (npm node-llama-cpp 3.21.1, prebuilt CPU binary)
// at the same thread counts, in one run, and the ratios kiln / llama.cpp. `make bench-llm`.
//
//   node bench/llm/bench.mjs [--model FILE.gguf] [--threads 1,2] [--reps 5] [--wasm-reps N]
//        [--prompt-tokens 256] [--gen 128] [--only llama,native,wasm] [--json OUT.json]
//
// The prompt: bench/llm/prompt.txt tokenized by llama.cpp (no BOS, as SmolLM2's file says),
// cut to --prompt-tokens ids; kiln gets the same ids (a file), so both prefill the same tokens.
// Each runtime decodes exactly --gen tokens greedily, ignoring end-of-generation (kiln:
// GenerateOptions::ignore_eos; llama.cpp: yieldEogToken), with a context of prompt + gen.
// Prefill: from the start to the first token's logits (llama.cpp: to the first token); decode:
// the other gen - 1 steps, so decode tok/s = (gen - 1) / decode time, for both. One warm-up run
// per runtime and thread count (kiln compiles its kernels there), then --reps runs; the table
// shows medians. kiln runs in child processes (build/native/kiln_llm_bench and Node on
// build/wasm/kiln_llm_bench.js, $KILN_NUM_THREADS threads); llama.cpp runs in this process.
// Pin the whole run with taskset to compare with a machine of that many cores.
process.env.NODE_LLAMA_CPP_SKIP_DOWNLOAD = "true";
process.env.NODE_LLAMA_CPP_GPU = "false";

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function parseArgs(argv) {
  const a = {
    model: join(ROOT, "data", "models", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    threads: [1, 2], reps: 5, wasmReps: null, promptTokens: 256, gen: 128,
    only: ["llama", "native", "wasm"], json: null,
    nativeBin: join(ROOT, "build", "native", "kiln_llm_bench"),
    wasmJs: join(ROOT, "build", "wasm", "kiln_llm_bench.js"),
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = () => argv[++i];
    if (k === "--model") a.model = v();
    else if (k === "--threads") a.threads = v().split(",").map(Number);
    else if (k === "--reps") a.reps = Number(v());
    else if (k === "--wasm-reps") a.wasmReps = Number(v());
    else if (k === "--prompt-tokens") a.promptTokens = Number(v());
    else if (k === "--gen") a.gen = Number(v());
    else if (k === "--only") a.only = v().split(",");
    else if (k === "--json") a.json = v();
    else if (k === "--native-bin") a.nativeBin = v();
    else if (k === "--wasm-js") a.wasmJs = v();
    else throw new Error(`unknown argument ${k} (see the header of bench/llm/bench.mjs)`);
  }
  a.wasmReps ??= a.reps;
  return a;
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// What the numbers depend on: the CPU, its SIMD level, the cores this process may use, load.
function machine() {
  const info = readFileSync("/proc/cpuinfo", "utf8");
  const name = info.match(/^model name\s*:\s*(.*)$/m)?.[1].trim() ?? "unknown";
  const flags = new Set((info.match(/^flags\s*:\s*(.*)$/m)?.[1] ?? "").split(/\s+/));
  const simd = ["avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile"].filter((f) => flags.has(f));
  let allowed = cpus().length;
  try {
    allowed = execFileSync("nproc", { encoding: "utf8" }).trim();
  } catch {}
  return { cpu: name, simd: simd.join(" "), logicalCpus: cpus().length, allowedCpus: Number(allowed) };
}

function kilnCommit() {
  if (process.env.KILN_COMMIT) return process.env.KILN_COMMIT;  // a packed copy (device.sh)
  try {
    return execFileSync("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return process.env.KILN_COMMIT ?? "unknown";
  }
}

// Which CPU-specific ggml library llama.cpp loaded (it picks one by the CPU's features).
function llamaCpuVariant() {
  const m = readFileSync("/proc/self/maps", "utf8").match(/libggml-cpu-([a-z0-9_]+)\.so/);
  return m ? m[1] : "unknown";
}

async function loadLlama(threads) {
  const nlcDir = join(ROOT, "tools", "llm-oracle", "node_modules", "node-llama-cpp");
  if (!existsSync(nlcDir)) throw new Error("node-llama-cpp is missing: cd tools/llm-oracle && npm ci --omit=optional --ignore-scripts");
  const version = JSON.parse(readFileSync(join(nlcDir, "package.json"), "utf8")).version;
  const { getLlama } = await import(pathToFileURL(join(nlcDir, "dist", "index.js")).href);
  const llama = await getLlama({
    gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
    maxThreads: Math.max(...threads), progressLogs: false, logLevel: "error",
  });
  return { llama, version };
}

// One llama.cpp generation: prefill until the first token, then gen - 1 decode steps.
async function llamaRun(context, ids, gen) {
  const seq = context.getSequence();
  try {
    let n = 0, tFirst = 0;
    const t0 = performance.now();
    for await (const _ of seq.evaluate(ids, { temperature: 0, yieldEogToken: true })) {
      if (++n === 1) tFirst = performance.now();
      if (n === gen) break;
    }
    const t1 = performance.now();
    return { prompt_tokens: ids.length, generated: n, prefill_ms: tFirst - t0, decode_ms: t1 - tFirst };
  } finally {
    seq.dispose();
  }
}

function kilnRun(kind, args, idsFile, threads) {
  const reps = kind === "wasm" ? args.wasmReps : args.reps;
  const common = ["--model", args.model, "--ids", idsFile, "--gen", String(args.gen), "--reps", String(reps)];
  const [cmd, argv] = kind === "native"
    ? [args.nativeBin, [...common, "--device", "native"]]
    // Relaxed SIMD: Chrome ships it; Node 20 has it behind this flag (kiln uses its FMA).
    : [process.execPath, ["--experimental-wasm-relaxed-simd", args.wasmJs, ...common, "--device", "wasm"]];
  const r = spawnSync(cmd, argv, { env: { ...process.env, KILN_NUM_THREADS: String(threads) }, encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`kiln ${kind} failed (${r.status}): ${r.stderr}`);
  const lines = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return lines.filter((l) => "run" in l && !l.warmup);
}

function summarize(runs) {
  for (const r of runs) if (r.generated < 2) throw new Error(`a run generated ${r.generated} tokens`);
  return {
    prefill: median(runs.map((r) => (1000 * r.prompt_tokens) / r.prefill_ms)),
    decode: median(runs.map((r) => (1000 * (r.generated - 1)) / r.decode_ms)),
    runs,
  };
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function table(results, threads) {
  const rows = ["| runtime | threads | prefill tok/s | decode tok/s | prefill / llama.cpp | decode / llama.cpp |",
    "| --- | --- | --- | --- | --- | --- |"];
  for (const t of threads) {
    const base = results[`llama@${t}`];
    for (const kind of ["llama", "native", "wasm"]) {
      const r = results[`${kind}@${t}`];
      if (!r) continue;
      if (r.error) {
        rows.push(`| kiln ${kind} | ${t} | failed: ${r.error} | | | |`);
        continue;
      }
      const name = { llama: "llama.cpp (node-llama-cpp, CPU)", native: "kiln native", wasm: "kiln wasm (Node)" }[kind];
      const ratio = (k) => (base && kind !== "llama" ? (r[k] / base[k]).toFixed(2) : "");
      rows.push(`| ${name} | ${t} | ${fmt(r.prefill)} | ${fmt(r.decode)} | ${ratio("prefill")} | ${ratio("decode")} |`);
    }
  }
  return rows.join("\n");
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const m = machine();
  const load0 = loadavg();
  const started = new Date().toISOString();
  const { llama, version } = await loadLlama(args.threads);
  const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0, useMmap: true });
  const ids = model.tokenize(readFileSync(join(ROOT, "bench", "llm", "prompt.txt"), "utf8"), false).slice(0, args.promptTokens);
  if (ids.length < args.promptTokens) throw new Error(`prompt.txt is only ${ids.length} tokens`);
  const idsFile = join(mkdtempSync(join(tmpdir(), "kiln-llm-bench-")), "ids.txt");
  writeFileSync(idsFile, ids.join(" ") + "\n");
  const results = {};
  const log = (s) => console.error(`[bench-llm] ${s}`);
  for (const t of args.threads) {
    if (args.only.includes("llama")) {
      const context = await model.createContext({
        contextSize: args.promptTokens + args.gen, batchSize: 512, threads: t, sequences: 1,
      });
      await llamaRun(context, ids, args.gen);  // warm-up
      const runs = [];
      for (let r = 0; r < args.reps; r++) runs.push(await llamaRun(context, ids, args.gen));
      await context.dispose();
      results[`llama@${t}`] = summarize(runs);
      log(`llama.cpp ${t} thread(s): prefill ${fmt(results[`llama@${t}`].prefill)} decode ${fmt(results[`llama@${t}`].decode)} tok/s`);
    }
    for (const kind of ["native", "wasm"]) {
      if (!args.only.includes(kind)) continue;
      try {
        results[`${kind}@${t}`] = summarize(kilnRun(kind, args, idsFile, t));
      } catch (e) {  // e.g. no C++ compiler for the native kernels: keep the other numbers
        results[`${kind}@${t}`] = { error: String(e.message).split("\n")[0] };
        log(`kiln ${kind} ${t} thread(s) failed: ${e.message}`);
        continue;
      }
      log(`kiln ${kind} ${t} thread(s): prefill ${fmt(results[`${kind}@${t}`].prefill)} decode ${fmt(results[`${kind}@${t}`].decode)} tok/s`);
    }
  }
  const variant = llamaCpuVariant();
  await model.dispose();
  await llama.dispose();
  const load1 = loadavg();
  const header = [
    `machine: ${m.cpu}; SIMD: ${m.simd || "none of avx2/avx512f"}; ${m.allowedCpus} of ${m.logicalCpus} logical CPUs usable by this run`,
    `date: ${started}; load average (1/5/15 min) before ${load0.map((x) => x.toFixed(2)).join(" ")}, after ${load1.map((x) => x.toFixed(2)).join(" ")}`,
    `model: ${args.model.split("/").pop()}; prompt ${ids.length} tokens, ${args.gen} generated (greedy, EOS ignored), context ${args.promptTokens + args.gen}`,
    `kiln ${kilnCommit()}; llama.cpp via node-llama-cpp ${version} (${llama.llamaCppRelease?.release ?? "?"}, cpu variant ${variant}); node ${process.version}`,
    `medians of ${args.reps} runs (wasm: ${args.wasmReps}) after a warm-up; decode tok/s = (generated - 1) / decode time`,
  ];
  // Other runnable threads take cores from the runtimes' workers; llama.cpp's spin-waiting
  // threads suffer most, so multi-thread ratios then measure the contention.
  if (Math.max(load0[0], load1[0]) > m.allowedCpus / 2)
    header.push(`warning: the load average exceeded ${m.allowedCpus / 2} (half of the usable CPUs): other processes shared the cores`);
  console.log(header.join("\n") + "\n\n" + table(results, args.threads));
  if (args.json) writeFileSync(args.json, JSON.stringify({ machine: m, started, load0, load1, args, ids, header, results }, null, 1));
}

await main();
