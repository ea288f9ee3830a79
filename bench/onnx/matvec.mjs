// One-row products on kiln's `wasm` device (issue 24: an openWakeWord head's time is one Gemm
// [128 x 3264] with one input row): x[1, K] @ B[K, N], whose SIMD loop reads 4 consecutive
// outputs' weights with one v128.load (contiguous lanes), and x @ W[N, K]^T, the Gemm's transB
// layout, whose 4 lanes lie K floats apart (strided lanes). Prints the least kernel time over
// the traced calls (a loaded machine only adds to a kernel's time).
//
//   KILN_NUM_THREADS=1 node --experimental-wasm-relaxed-simd bench/onnx/matvec.mjs [--k 3264] [--n 128] [--reps 30] [--dist DIR]
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const ROOT = join(fileURLToPath(import.meta.url), "..", "..", "..");
const K = Number(opt("--k", 3264)), N = Number(opt("--n", 128)), REPS = Number(opt("--reps", 30));

const kiln = await import(join(resolve(opt("--dist", join(ROOT, "js/dist"))), "index.js"));  // --dist: another build
const { numpy: np, profiler } = kiln;
kiln.defaultDevice?.("wasm");

const values = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37));
const x = np.array(values(K), { shape: [1, K], device: "wasm" });
const B = np.array(values(K * N), { shape: [K, N], device: "wasm" });
const W = np.array(values(K * N), { shape: [N, K], device: "wasm" });
const cases = [
  ["x @ B[K, N] (contiguous lanes)", () => np.matmul(x.ref, B.ref)],
  ["x @ W[N, K]^T (strided lanes)", () => np.matmul(x.ref, W.ref.transpose())],
];
for (const [name, product] of cases) {
  let best = Infinity;
  for (let i = 0; i < REPS + 3; i++) {
    profiler.startTrace();
    await product().data();
    const ms = profiler.stopTrace().filter((e) => / kernel /.test(e.name)).reduce((s, e) => s + e.duration, 0);
    if (i >= 3) best = Math.min(best, ms);  // the first calls compile
  }
  console.log(`[1 x ${K}] @ [${K} x ${N}], ${name}: ${best.toFixed(4)} ms (least kernel time of ${REPS})`);
}
