// Child process of webgpu_row_outputs.test.ts: tree reductions on webgpu with the outputs per
// lane group the environment sets (KILN_WEBGPU_ROW_OUTPUTS is read once, when the device is
// made), compared with cpu. Prints one JSON line: each case's worst error against its bound,
// the lane-group widths the generated WGSL used, and how many kernels read vec4 views.
import { init, numpy as np } from "../../dist/index.js";
import { webGpuRuntime } from "../../dist/webgpu/attach.js";

const have = await init("webgpu", "cpu");
if (!have.includes("webgpu")) {
  console.log(JSON.stringify({ error: "no webgpu adapter" }));
  process.exit(0);
}
const rt = webGpuRuntime();
const widths = new Set();
let vec4Views = 0; // kernels that read an input through a second, vec4<u32> binding
const pipeline = rt.pipeline.bind(rt);
rt.pipeline = (wgsl, n) => {
  const m = /fn f_rows\(gidx: i32, ridx: i32\) -> array<\w+, (\d+)>/.exec(wgsl);
  if (m) widths.add(Number(m[1]));
  if (/var<storage, read> in\d+v: array<vec4<u32>>/.test(wgsl)) vec4Views++;
  return pipeline(wgsl, n);
};

let seed = 7;
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const floats = (n) => Array.from({ length: n }, () => rnd() * 8 - 4);
const ints = (n) => Array.from({ length: n }, () => Math.floor(rnd() * 200) - 100);
const on = (device, [vals, dtype, shape]) => np.array(vals, { shape, dtype, device });

// A matvec over packed 4-bit codes with a scale and a min per 32 values (kiln's q4_1 layout).
const rows = 40, cols = 576, nb = cols / 32;
const words = Array.from({ length: rows * nb * 4 }, () => Math.floor(rnd() * 2 ** 32));
const qmatvec = (w, s, m, x) => {
  const shifts = np.multiply(np.arange(0, 8, 1, { device: w.device }), 4).astype(np.uint32);
  const q = np.bitwiseAnd(np.rightShift(np.expandDims(w, -1), shifts), 15).astype(np.float32);
  const v = np.add(np.multiply(q, np.reshape(s, [rows, nb, 1, 1])), np.reshape(m, [rows, nb, 1, 1]));
  return np.sum(np.multiply(np.reshape(v, [rows, cols]), x), 1);
};
const M = [floats(24 * 1000), "float32", [24, 1000]];
const cases = [
  // name, f, inputs, rtol, atol (the tree's float sums differ from the serial order by rounding)
  ["sum axis 1 of 24 rows", (x) => np.sum(x, 1), [M], 1000 * 6e-8, 1e-5],
  ["max axis 1 of 24 rows", (x) => np.max(x, 1), [M], 0, 0],
  ["int32 sum axis 1 of 24 rows", (x) => np.sum(x, 1), [[ints(24 * 1000), "int32", [24, 1000]]], 0, 0],
  ["sum axis 1 of 13 rows", (x) => np.sum(x, 1), [[floats(13 * 600), "float32", [13, 600]]], 600 * 6e-8, 1e-5],
  ["q4_1 matvec 40x576", qmatvec, [[words, "uint32", [rows, nb, 4]], [floats(rows * nb).map((v) => Math.abs(v) / 64), "float32", [rows, nb]],
    [floats(rows * nb).map((v) => v / 16), "float32", [rows, nb]], [floats(cols), "float32", [cols]]], cols * 6e-8, cols * 4 * 6e-8],
];
const results = [];
for (const [name, f, inputs, rtol, atol] of cases) {
  const g = await f(...inputs.map((i) => on("webgpu", i))).data();
  const c = await f(...inputs.map((i) => on("cpu", i))).data();
  let worst = 0; // the largest error as a fraction of its bound (exact cases: 1 per mismatch)
  for (let i = 0; i < c.length; i++) {
    const bound = atol + rtol * Math.abs(c[i]);
    const err = Math.abs(g[i] - c[i]);
    worst = Math.max(worst, bound === 0 ? (Object.is(g[i], c[i]) ? 0 : 1 + err) : err / bound);
  }
  results.push({ name, worst });
}
console.log(JSON.stringify({ widths: [...widths].sort(), vec4Views, results }));
process.exit(0);
