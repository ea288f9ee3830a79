// Where the time of a real ONNX model goes on kiln's `wasm` device (issue 24): runs each model
// of tools/onnx_models.mjs as bench.mjs does, then once more under kiln's profiler, and prints
//   - the best call's wall time, and the time outside kernels measured within one call: each
//     traced call's session.run minus that call's own kernel dispatches (jit cache lookup,
//     buffer binding, the bindings' conversions), least over the traced calls, next to the
//     least feed upload and output read-back. (Until 2026-12-07 "outside" was the best call
//     minus each kernel group's least time over other calls, which on a loaded machine also
//     counted every kernel's slowdown between calls: cls showed ~3 ms outside, against
//     ~0.3 ms of session.run outside its kernels within a call.)
//   - the kernels grouped by shape ("[outputs x reduced]"), heaviest first, with their count,
//     total and share, so a gap points at an op family (a conv's kernel reduces over
//     Cin*kh*kw, a depthwise one over kh*kw, an elementwise epilogue over nothing).
// KILN_DEBUG=3 in the environment additionally logs each kernel's expression (to stderr).
//
// --dispatches N also lists the N heaviest single dispatches (least time over the traced calls,
// by position in the call: #i is the i-th kernel; KILN_DEBUG=3's "jit kernels" list is in the
// same order), which tells apart kernels of one shape that cost very differently.
//
// --warmup N runs N more untimed calls first: V8 runs new kernel modules as baseline (Liftoff)
// code until its optimizing tier has recompiled them in the background, which for a small
// model's kernels took 80-200 calls on the loaded 2-vCPU machine (onnx_models.md, 2026-12-07).
//
//   KILN_NUM_THREADS=1 node --experimental-wasm-relaxed-simd bench/onnx/profile.mjs [--only ocr_det] [--reps 5] [--top 25] [--dispatches 0] [--warmup 0] [--dist DIR]
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { MODELS_DIR, ROOT, realModels, namedFeeds } from "../../tools/onnx_models.mjs";

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const ONLY = opt("--only", null)?.split(",");
const REPS = Number(opt("--reps", 5));
const TOP = Number(opt("--top", 25));
const DISPATCHES = Number(opt("--dispatches", 0));
const WARMUP = Number(opt("--warmup", 0));

const kiln = await import(join(resolve(opt("--dist", join(ROOT, "js/dist"))), "index.js"));  // --dist: another build
const { numpy: np, onnx, profiler } = kiln;
kiln.defaultDevice?.("wasm");

async function runOnce(session, feeds) {
  const t0 = performance.now();
  const inputs = Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, np.array(f.data, { shape: f.dims, device: "wasm" })]));
  const t1 = performance.now();
  const out = await session.run(inputs);
  const t2 = performance.now();
  for (const v of Object.values(out)) await v.data();
  const t3 = performance.now();
  return { total: t3 - t0, upload: t1 - t0, run: t2 - t1, read: t3 - t2 };
}

function groupKernels(events) {
  const groups = new Map();
  for (const e of events) {
    const key = e.name.replace(/^kiln \w+ kernel /, "");
    const g = groups.get(key) ?? { count: 0, ms: 0 };
    g.count += 1;
    g.ms += e.duration;
    groups.set(key, g);
  }
  return groups;
}

for (const m of realModels()) {
  if (ONLY && !ONLY.includes(m.name)) continue;
  const bytes = new Uint8Array(readFileSync(join(MODELS_DIR, m.file)));
  const session = await onnx.load(bytes, { device: "wasm" });
  const feeds = namedFeeds(m, session.inputNames);
  await runOnce(session, feeds);  // traces and compiles
  for (let i = 0; i < WARMUP; ++i) await runOnce(session, feeds);
  // Each traced call's kernels grouped by shape; a group's time is its least over the calls,
  // which filters out the calls where the thread was descheduled (a loaded machine).
  const runs = [], traces = [], perDispatch = [], within = [];
  for (let i = 0; i < REPS; ++i) runs.push(await runOnce(session, feeds));  // untraced: wall time
  for (let i = 0; i < REPS; ++i) {
    profiler.startTrace();
    const t = await runOnce(session, feeds);
    const events = profiler.stopTrace();
    const own = events.filter((e) => / kernel /.test(e.name)).reduce((a, e) => a + e.duration, 0);
    within.push({ ...t, gap: t.run - own });
    traces.push(groupKernels(events));
    events.forEach((e, j) => (perDispatch[j] = { name: e.name, ms: Math.min(perDispatch[j]?.ms ?? Infinity, e.duration) }));
  }
  const best = runs.reduce((a, b) => (b.total < a.total ? b : a));
  const groups = new Map();
  for (const [k, g] of traces[0]) groups.set(k, { count: g.count, ms: Math.min(...traces.map((t) => t.get(k)?.ms ?? Infinity)) });
  const kernelMs = [...groups.values()].reduce((s, g) => s + g.ms, 0);
  const kernels = [...groups.values()].reduce((s, g) => s + g.count, 0);
  const w = within.reduce((a, b) => (b.gap < a.gap ? b : a));
  const least = (k) => Math.min(...within.map((x) => x[k]));
  console.log(`\n${m.name}: best of ${REPS} ${best.total.toFixed(3)} ms (upload ${best.upload.toFixed(3)}, run ${best.run.toFixed(3)}, read ${best.read.toFixed(3)});` +
    ` ${kernels} kernels, ${kernelMs.toFixed(3)} ms in kernels (least per group); outside kernels within one call:` +
    ` run ${w.gap.toFixed(3)} ms (+ upload ${least("upload").toFixed(3)}, read ${least("read").toFixed(3)}: least over the traced calls)`);
  const sorted = [...groups.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, TOP);
  for (const [k, g] of sorted)
    console.log(`  ${k.padEnd(28)} x${String(g.count).padStart(3)}  ${g.ms.toFixed(3).padStart(9)} ms  ${((100 * g.ms) / kernelMs).toFixed(1).padStart(5)}%`);
  if (DISPATCHES > 0) {
    console.log(`  heaviest dispatches:`);
    const heavy = perDispatch.map((d, j) => ({ ...d, j })).sort((a, b) => b.ms - a.ms).slice(0, DISPATCHES);
    for (const d of heavy) console.log(`    #${String(d.j).padEnd(4)} ${d.name.replace(/^kiln \w+ kernel /, "").padEnd(24)} ${d.ms.toFixed(3).padStart(9)} ms`);
  }
  session.release();
}
