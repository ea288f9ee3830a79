// One jit'd padded convolution on kiln's `wasm` device, as PP-OCR det and rec run them (issue 24):
// least process CPU ms per call (inputs uploaded beforehand, output read back) over --reps calls
// after --warmup calls, per case. Compares builds with --dist (another js/dist), e.g. whether a
// padded copy of the input (jit_fusion.cpp, kMinUnmaskedReads) pays for a conv's windows.
//
//   KILN_NUM_THREADS=1 node --experimental-wasm-relaxed-simd bench/onnx/conv.mjs [--reps 60] [--warmup 100] [--only dense3] [--dist DIR]
import { join, resolve } from "node:path";
import { ROOT } from "../../tools/onnx_models.mjs";

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const REPS = Number(opt("--reps", 60));
const WARMUP = Number(opt("--warmup", 100));
const ONLY = opt("--only", null)?.split(",");

const kiln = await import(join(resolve(opt("--dist", join(ROOT, "js/dist"))), "index.js"));
const { numpy: np, lax, jit, profiler } = kiln;
kiln.defaultDevice?.("wasm");

// [name, input NCHW, weights OIHW, feature groups]: det's 96 -> 24 3x3 (its heaviest kernel),
// a 3x3 and a 5x5 depthwise conv at rec's sizes (the 3x3 must not move; the 5x5 is copied already).
const CASES = [
  ["dense3", [1, 96, 24, 80], [24, 96, 3, 3], 1],
  ["dense3_in24", [1, 24, 24, 80], [24, 24, 3, 3], 1],
  ["dw3", [1, 120, 12, 80], [120, 1, 3, 3], 120],
  ["dw5", [1, 240, 12, 80], [240, 1, 5, 5], 240],
];

function random(shape, seed) {
  let s = seed;
  const n = shape.reduce((a, b) => a * b, 1), v = new Float32Array(n);
  for (let i = 0; i < n; ++i) v[i] = ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
  return np.array(v, { shape, device: "wasm" });
}

for (const [name, xs, ws, groups] of CASES) {
  if (ONLY && !ONLY.includes(name)) continue;
  const k = ws[2], pad = (k - 1) / 2;
  const f = jit((x, w) => lax.convGeneralDilated(x, w, [1, 1], [[pad, pad], [pad, pad]], { featureGroupCount: groups }));
  const x = random(xs, 1), w = random(ws, 2);
  const call = async () => {
    const y = f(x.ref, w.ref);
    await y.data();
  };
  for (let i = 0; i < WARMUP; ++i) await call();
  let best = Infinity;
  for (let i = 0; i < REPS; ++i) {
    const c0 = process.cpuUsage();
    await call();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  // Each kernel's least time over --reps traced calls (the padded copy apart from the conv).
  const kernels = [];
  for (let i = 0; i < REPS; ++i) {
    profiler.startTrace();
    await call();
    profiler.stopTrace().filter((e) => / kernel /.test(e.name)).forEach((e, j) => (kernels[j] = Math.min(kernels[j] ?? Infinity, e.duration)));
  }
  console.log(`${name.padEnd(12)} x ${JSON.stringify(xs)} w ${JSON.stringify(ws)}: least CPU ${best.toFixed(3)} ms per call;` +
    ` kernels ${kernels.map((k) => k.toFixed(3)).join(" + ")} ms`);
}
