// kiln alone on issue 23's ExecuTorch models, without ExecuTorch's venv: each committed model
// program (tests/fixtures/pte) loaded on `wasm` with its weights from the seeded formula
// (js/test/pte_formula.mjs, the same values as the exporter's .ptd) and the first input set of
// its fixture case in models.txt; one warm-up call, then --reps calls, each creating its inputs
// and reading every output back (as kiln.mjs). Prints { ms: median, min, first_ms } per model;
// --prof adds the kernels grouped by shape (the least total of 3 traced calls). ROOT selects
// the checkout whose js/dist is timed (alternate two builds in one sitting to compare).
//
//   ROOT=$PWD KILN_NUM_THREADS=1 node --experimental-wasm-relaxed-simd bench/executorch/kiln_alone.mjs [--reps 30] [--only lstm,...] [--prof] [--top 20]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
const ROOT = process.env.ROOT || new URL("../..", import.meta.url).pathname;
const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const ONLY = opt("--only", null)?.split(",");
const REPS = Number(opt("--reps", 10));
const TOP = Number(opt("--top", 20));
const PROF = args.includes("--prof");
const { executorch, numpy: np, profiler } = await import(join(ROOT, "js/dist/index.js"));
const { formulaValues } = await import(join(ROOT, "js/test/pte_formula.mjs"));
const shapes = { whisper_encoder_block: [1, 16, 40], vit_small: [1, 3, 32, 32], mobilenet_v3_small: [1, 3, 224, 224], resnet18: [1, 3, 64, 64] };
// models.txt: the first case of each model
const txt = readFileSync(join(ROOT, "tests/fixtures/pte/models.txt"), "utf8").split("\n");
const cases = [];
let cur = null;
for (const l of txt) {
  const t = l.split(" ");
  if (t[0] === "case") { cur = { id: t[1], op: t[2], inputs: [], formula: [] }; cases.push(cur); }
  else if (t[0] === "param" && t[1] === "formula_inputs") cur.formula = t.slice(2).map(Number);
  else if (t[0] === "input") {
    const [dt, , ...rest] = t.slice(1);
    const colon = rest.indexOf(":");
    const shape = rest.slice(0, colon).map(Number), vals = rest.slice(colon + 1).map(Number);
    cur.inputs.push({ dtype: dt, shape, data: dt === "float32" ? Float32Array.from(vals) : Int32Array.from(vals) });
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const seen = new Set();
const res = {};
for (const c of cases) {
  if (seen.has(c.op) || (ONLY && !ONLY.includes(c.op))) continue;
  seen.add(c.op);
  const bytes = readFileSync(join(ROOT, "tests/fixtures/pte", c.op + ".pte"));
  const p = await executorch.load(new Uint8Array(bytes), { device: "wasm",
    namedData: (name, { dtype, shape }) => dtype === "float32" ? np.array(formulaValues(name, shape), { shape, device: "wasm" }) : np.zeros(shape, { dtype, device: "wasm" }) });
  const specs = [];
  for (let k = 0, w = 0; k < c.formula.length + c.inputs.length; k++) {
    if (c.formula.includes(k)) { const s = shapes[c.op]; specs.push({ dtype: "float32", shape: s, data: formulaValues(`input${k}`, s) }); }
    else specs.push(c.inputs[w++]);
  }
  const call = async () => {
    const t0 = performance.now();
    const ins = specs.map((s) => np.array(s.data, { shape: s.shape, dtype: s.dtype, device: "wasm" }));
    const outs = await p.run("forward", ins);
    for (const o of outs) await o.data();
    return performance.now() - t0;
  };
  const first = await call();
  const ts = [];
  for (let r = 0; r < REPS; ++r) ts.push(await call());
  res[c.op] = { ms: +median(ts).toFixed(3), min: +Math.min(...ts).toFixed(3), first_ms: +first.toFixed(1) };
  console.log(c.op, JSON.stringify(res[c.op]));
  if (PROF) {
    const traces = [];
    for (let i = 0; i < 3; ++i) { profiler.startTrace(); await call(); traces.push(profiler.stopTrace()); }
    const groups = new Map();
    const ev = traces.reduce((a, b) => (b.reduce((s, e) => s + e.duration, 0) < a.reduce((s, e) => s + e.duration, 0) ? b : a));
    for (const e of ev) { const k = e.name.replace(/^kiln \w+ kernel /, ""); const g = groups.get(k) ?? { n: 0, ms: 0 }; g.n++; g.ms += e.duration; groups.set(k, g); }
    const tot = ev.reduce((s, e) => s + e.duration, 0);
    console.log(`  ${ev.length} dispatches, ${tot.toFixed(3)} ms in kernels`);
    for (const [k, g] of [...groups].sort((a, b) => b[1].ms - a[1].ms).slice(0, TOP)) console.log(`  ${k.padEnd(40)} x${g.n}  ${g.ms.toFixed(3)} ms ${(100 * g.ms / tot).toFixed(1)}%`);
  }
  p.dispose();
}
