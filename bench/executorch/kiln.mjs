// kiln's side of bench/executorch/bench.py: each model of the manifest (the .pte, the .ptd
// ExecuTorch's exporter wrote, raw inputs) loaded with executorch.load on the `wasm` device
// and timed: one warm-up call (trace and compile), then --reps calls, each creating its
// inputs and reading every output back. Prints one JSON line: { model: { ms, first_ms } }.
// The thread count is KILN_NUM_THREADS (read when kiln's core loads).
//
//   KILN_NUM_THREADS=2 node --experimental-wasm-relaxed-simd bench/executorch/kiln.mjs MANIFEST [--reps 20]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

const ROOT = new URL("../..", import.meta.url).pathname;
const args = process.argv.slice(2);
const REPS = Number(args.includes("--reps") ? args[args.indexOf("--reps") + 1] : 20);
const { executorch, numpy: np } = await import(join(ROOT, "js/dist/index.js"));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const typed = { float32: Float32Array, int32: Int32Array };

const result = {};
for (const m of JSON.parse(readFileSync(args[0], "utf8"))) {
  const program = await executorch.load(m.pte, { device: "wasm", namedData: m.ptd });
  const data = m.inputs.map((i) => {
    const b = readFileSync(i.file);
    return new typed[i.dtype](b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  });
  const call = async () => {
    const t0 = performance.now();
    const inputs = m.inputs.map((i, k) => np.array(data[k], { shape: i.shape, dtype: i.dtype, device: "wasm" }));
    const outs = await program.run("forward", inputs);
    for (const o of outs) await o.data(); // reads back and frees the output
    return performance.now() - t0;
  };
  const first = await call();
  const ts = [];
  for (let r = 0; r < REPS; ++r) ts.push(await call());
  result[m.name] = { ms: median(ts), first_ms: first };
  program.dispose();
}
console.log(JSON.stringify(result));
