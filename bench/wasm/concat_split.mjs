// Concatenations on kiln's `wasm` device (index-set splitting, docs/ARCHITECTURE.md): a
// jitted concatenation of four branches (tanh, exp * 0.5, x * 2 + 1, a constant) of about
// 2^16 elements each, along the outermost axis and along the last axis of rows of 4 x W
// elements for several W; then four plain copies (no arithmetic in any branch). Prints the median CPU ms per call (process CPU, the output read
// back included) of --reps calls after warm-up. --dist times another build of the package
// (js/dist of another checkout), so a before/after pair runs the same script in one sitting.
//
//   KILN_NUM_THREADS=1 node --experimental-wasm-relaxed-simd bench/wasm/concat_split.mjs [--reps 200] [--dist DIR]
import { join } from "node:path";
import { cpus } from "node:os";

const ROOT = new URL("../..", import.meta.url).pathname;
const args = process.argv.slice(2);
const REPS = Number(args.includes("--reps") ? args[args.indexOf("--reps") + 1] : 200);
const DIST = args.includes("--dist") ? args[args.indexOf("--dist") + 1] : join(ROOT, "js/dist");
const { numpy: np, jit } = await import(join(DIST, "index.js"));

const N = 1 << 16;  // elements per branch
const ramp = (n, k) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + k));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

// heavy: the four branches above; else four plain copies (a key/value cache's concatenation).
async function measure(name, shape, axis, heavy = true) {
  const f = heavy
    ? jit((a, b, c) => np.concatenate([np.tanh(a), np.multiply(np.exp(b), 0.5), np.add(np.multiply(c, 2), 1), np.full(shape, 1.25)], axis))
    : jit((a, b, c, d) => np.concatenate([a, b, c, d], axis));
  const n = shape.reduce((a, b) => a * b, 1);
  const xs = [0, 1, 2, 3].slice(0, heavy ? 3 : 4).map((k) => np.array(ramp(n, k), { shape, device: "wasm" }));
  const once = async () => { const y = f(...xs.map((x) => x.ref)); await y.data(); };  // data() consumes y
  for (let i = 0; i < 10; i++) await once();
  const cpu = [];
  for (let i = 0; i < REPS; i++) {
    const c0 = process.cpuUsage();
    await once();
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  console.log(`| ${name} | ${median(cpu).toFixed(3)} |`);
  xs.forEach((x) => x.dispose());
}

console.log(`machine: ${cpus()[0]?.model ?? "?"}; Node ${process.version}; ${DIST}; ${REPS} calls`);
console.log("| concatenation (4 x 2^16 elements) | median CPU ms per call |\n|---|---|");
await measure("outermost axis", [N], 0);
for (const w of [4, 5, 8, 9, 13, 16, 64, 256]) await measure(`last axis, rows of 4 x ${w}`, [Math.floor(N / w), w], 1);
await measure("copies, outermost axis", [N], 0, false);
for (const w of [4, 8, 64]) await measure(`copies, last axis, rows of 4 x ${w}`, [Math.floor(N / w), w], 1, false);
