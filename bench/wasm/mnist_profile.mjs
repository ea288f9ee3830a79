// Where the MNIST CNN training step's time goes on kiln's wasm device: times BENCH_STEPS
// jitted steps (examples/mnist-node/cnn.mjs, Adam + cosine, batch BATCH), then traces
// PROFILE_STEPS of them with kiln.profiler and prints the kernels by total time, with the time
// spent outside kernels (batch upload, dispatch, loss read-back). A kernel named [N x K] is a
// reduction of K terms per output: counted as 2 N K FLOP (a sum of products; a max or a plain
// sum does half that). Results: bench/results/mnist.md.
import { kiln, kilnOptax, loadSplit } from "./mnist_common.mjs";
import { batch, makeCnn } from "../../examples/mnist-node/cnn.mjs";

const STEPS = Number(process.env.BENCH_STEPS || 20);
const PROFILE_STEPS = Number(process.env.PROFILE_STEPS || 5);
const B = Number(process.env.BATCH || 64);
const TOP = Number(process.env.TOP || 25);
kiln.defaultDevice(process.env.DEVICE || "wasm");

const train = loadSplit("train");
const cnn = makeCnn({ kiln, optax: kilnOptax });
const opt = cnn.optimizer(1e-3, 5 * 937);
const step = cnn.makeStep(opt);
let { params, shuffleKey } = cnn.init(0);
shuffleKey.dispose();
let state = opt.init(kiln.tree.ref(params));
const order = Array.from({ length: train.n }, (_, i) => i);
let at = 0;
function run() {
  const { x, y } = batch(kiln.numpy, train, order, at, at + B);
  at = (at + B) % (train.n - B);
  let l;
  [params, state, l] = step(params, state, x, y);
  return l.item();
}

const t0 = performance.now();
run();
const first = performance.now() - t0;
const times = [];
for (let i = 0; i < STEPS; i++) {
  const t = performance.now();
  run();
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];

kiln.profiler.startTrace();
const tp = performance.now();
for (let i = 0; i < PROFILE_STEPS; i++) run();
const wall = (performance.now() - tp) / PROFILE_STEPS;
const events = kiln.profiler.stopTrace();
const byName = new Map();
for (const e of events) {
  const r = byName.get(e.name) || { ms: 0, n: 0 };
  r.ms += e.duration;
  r.n++;
  byName.set(e.name, r);
}
const rows = [...byName.entries()].sort((a, b) => b[1].ms - a[1].ms);
const inKernels = rows.reduce((s, [, r]) => s + r.ms, 0) / PROFILE_STEPS;
console.log(`kiln ${kiln.defaultDevice()}, batch ${B}: first step ${first.toFixed(0)} ms, median of ${STEPS} steps ${median.toFixed(1)} ms`);
console.log(`traced ${PROFILE_STEPS} steps: ${wall.toFixed(1)} ms/step wall, ${inKernels.toFixed(1)} ms in ${events.length / PROFILE_STEPS} kernels, ${(wall - inKernels).toFixed(1)} ms outside kernels\n`);
console.log("| kernel | ms/step | share | calls/step | MFLOP/call | GFLOP/s |\n| --- | --- | --- | --- | --- | --- |");
for (const [name, r] of rows.slice(0, TOP)) {
  const m = /\[(\d+) x (\d+)\]/.exec(name);
  const mflop = m ? (2 * Number(m[1]) * Number(m[2])) / 1e6 : 0;
  const rate = m ? `${((mflop * r.n) / r.ms).toFixed(1)}` : "-";
  console.log(`| ${name.length > 90 ? name.slice(0, 87) + "..." : name} | ${(r.ms / PROFILE_STEPS).toFixed(2)} | ${((100 * r.ms) / PROFILE_STEPS / wall).toFixed(1)}% | ${r.n / PROFILE_STEPS} | ${m ? mflop.toFixed(1) : "-"} | ${rate} |`);
}
