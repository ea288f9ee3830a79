// Latency of the real ONNX models (tools/onnx_models.mjs: openWakeWord's melspectrogram,
// embedding and heads; PaddleOCR's det, cls and rec) on kiln's `wasm` device (the npm package
// in js/dist) against npm onnxruntime-web's wasm EP (pinned in data/onnx-models), both in
// this Node process at the same thread count and on the same inputs. `make bench-onnx` runs
// it once per thread count (kiln's core reads KILN_NUM_THREADS when it loads, so a process
// holds one thread count; onnxruntime-web gets ort.env.wasm.numThreads to match).
//
//   KILN_NUM_THREADS=2 node --experimental-wasm-relaxed-simd bench/onnx/bench.mjs [--reps 20] [--warmup 1] [--only ocr_det,...] [--json OUT] [--dist DIR]
//
// --dist DIR loads kiln from another build of the JS package (default js/dist), so a before/after
// comparison can alternate two builds in one sitting: keep a copy of the baseline's js/dist aside.
//
// Each model: one warm-up run per runtime (kiln traces and compiles there; onnxruntime builds
// its session plan), then --reps runs alternating kiln and onnxruntime-web; the table shows
// medians of the wall time and of the process's CPU time, and the ratios onnxruntime-web / kiln
// (above 1: kiln is faster).
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { MODELS_DIR, ROOT, realModels, namedFeeds } from "../../tools/onnx_models.mjs";

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const REPS = Number(opt("--reps", 20));
// Calls of each runtime before the timed ones (kiln traces and compiles in the first). V8 starts
// every wasm function in its baseline compiler (Liftoff) and recompiles the hot ones with
// TurboFan on background threads, which the process CPU time of the first few hundred calls
// includes: --warmup 300 measures the settled calls (bench/results/onnx_models.md, 2026-12-07).
const WARMUP = Math.max(1, Number(opt("--warmup", 1)));
const ONLY = opt("--only", null)?.split(",");
const THREADS = Number(process.env.KILN_NUM_THREADS ?? 1);

const ort = createRequire(join(ROOT, "data/onnx-models/package.json"))("onnxruntime-web");
ort.env.wasm.numThreads = THREADS;
ort.env.wasm.simd = true;
const DIST = resolve(opt("--dist", join(ROOT, "js/dist")));
const kiln = await import(join(DIST, "index.js"));
console.log(`kiln from ${DIST}`);
const { numpy: np, onnx } = kiln;
kiln.defaultDevice?.("wasm");

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Each timing is [wall ms, process CPU ms]. On a loaded machine the wall time mostly measures
// how long the process waited for a core; the CPU time (user + system of the whole process,
// so every thread's) is the work done, and at 1 thread the comparison that survives load.
const cpuMs = (c) => (c.user + c.system) / 1000;

async function timeKiln(session, feeds) {
  const t0 = performance.now(), c0 = process.cpuUsage();
  const inputs = Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, np.array(f.data, { shape: f.dims, device: "wasm" })]));
  const out = await session.run(inputs);
  // Reading the outputs back is part of the latency, as it is for onnxruntime.
  for (const v of Object.values(out)) await v.data();
  return [performance.now() - t0, cpuMs(process.cpuUsage(c0))];
}

async function timeOrt(session, feeds) {
  const t0 = performance.now(), c0 = process.cpuUsage();
  const inputs = Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, new ort.Tensor("float32", f.data, f.dims)]));
  const out = await session.run(inputs);
  for (const v of Object.values(out)) v.data;
  return [performance.now() - t0, cpuMs(process.cpuUsage(c0))];
}

const rows = [];
for (const m of realModels()) {
  if (ONLY && !ONLY.includes(m.name)) continue;
  const bytes = readFileSync(join(MODELS_DIR, m.file));
  const ks = await onnx.load(new Uint8Array(bytes), { device: "wasm" });
  const os = await ort.InferenceSession.create(new Uint8Array(bytes), { executionProviders: ["wasm"], graphOptimizationLevel: "all" });
  const feeds = namedFeeds(m, os.inputNames);
  const kilnFirst = (await timeKiln(ks, feeds))[0];
  await timeOrt(os, feeds);
  for (let i = 1; i < WARMUP; ++i) {
    await timeKiln(ks, feeds);
    await timeOrt(os, feeds);
  }
  const tk = [], to = [];
  for (let i = 0; i < REPS; ++i) {
    tk.push(await timeKiln(ks, feeds));
    to.push(await timeOrt(os, feeds));
  }
  const col = (xs, i) => median(xs.map((x) => x[i]));
  const row = { model: m.name, threads: THREADS, warmup: WARMUP, kiln_ms: col(tk, 0), ort_ms: col(to, 0), kiln_cpu_ms: col(tk, 1), ort_cpu_ms: col(to, 1), kiln_first_ms: kilnFirst };
  row.ratio = row.ort_ms / row.kiln_ms;
  row.cpu_ratio = row.ort_cpu_ms / row.kiln_cpu_ms;
  rows.push(row);
  console.log(`${m.name.padEnd(15)} ${THREADS}t  kiln ${row.kiln_ms.toFixed(2).padStart(8)} ms  onnxruntime-web ${row.ort_ms.toFixed(2).padStart(8)} ms  ratio ${row.ratio.toFixed(2)}x  |  CPU kiln ${row.kiln_cpu_ms.toFixed(2).padStart(8)} ms  onnxruntime-web ${row.ort_cpu_ms.toFixed(2).padStart(8)} ms  ratio ${row.cpu_ratio.toFixed(2)}x  (kiln first call ${kilnFirst.toFixed(0)} ms)`);
  ks.release();
  await os.release();
}
const machine = { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version, relaxedSimd: process.execArgv.includes("--experimental-wasm-relaxed-simd"), ortVersion: ort.env.versions?.web };
console.log(JSON.stringify(machine));
const out = opt("--json", null);
if (out) writeFileSync(out, JSON.stringify({ machine, rows }, null, 1));
