// The fixed cost of one call of a small program on kiln's `wasm` device (issues 23 and 24):
// where the kernels take microseconds, a call's time is creating the inputs from typed
// arrays, the jit cache lookup and dispatch, and reading every output back. Times, per call
// (median of --reps calls after warm-up calls that trace and compile):
//   - add16: a jitted add of two 16-element float32 arrays,
//   - the lstm and gpt2_kv_decoder ExecuTorch programs of tests/fixtures/pte,
//   - one openWakeWord head (hey_jarvis, tools/onnx_models.mjs; skipped when
//     `make onnx-models` has not fetched it),
// each as three phases: inputs (np.array from the typed arrays), run (the call), read
// (data() of every output), and their total. Also prints process CPU time per call (all
// threads: a worker spinning on an idle pool shows up there).
//
//   KILN_NUM_THREADS=1 node --experimental-wasm-relaxed-simd bench/wasm/call_cost.mjs [--reps 2000] [--dist DIR]
// --dist times another build of the package (a copy of js/dist made before a change), so a
// before/after pair runs the same script in the same sitting.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { cpus } from "node:os";

const ROOT = new URL("../..", import.meta.url).pathname;
const args = process.argv.slice(2);
const REPS = Number(args.includes("--reps") ? args[args.indexOf("--reps") + 1] : 2000);
const DIST = args.includes("--dist") ? args[args.indexOf("--dist") + 1] : join(ROOT, "js/dist");
const kiln = await import(join(DIST, "index.js"));
const { numpy: np, executorch, onnx, jit } = kiln;
const PTE = join(ROOT, "tests/fixtures/pte");

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// One case: specs of its inputs ({ shape, dtype, data }) and run(arrays) -> Promise<Array[]>.
async function measure(name, specs, run) {
  const phase = { inputs: [], run: [], read: [], total: [] };
  const once = async (record) => {
    const t0 = performance.now();
    const xs = specs.map((s) => np.array(s.data, { shape: s.shape, dtype: s.dtype, device: "wasm" }));
    const t1 = performance.now();
    const outs = await run(xs);
    const t2 = performance.now();
    for (const o of outs) await o.data();
    const t3 = performance.now();
    if (record) {
      phase.inputs.push(t1 - t0), phase.run.push(t2 - t1), phase.read.push(t3 - t2), phase.total.push(t3 - t0);
    }
  };
  for (let i = 0; i < 20; ++i) await once(false);  // traces, compiles, warms the JIT of V8
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < REPS; ++i) await once(true);
  const wall = (performance.now() - w0) / REPS;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1000 / REPS;
  const f = (x) => x.toFixed(4);
  console.log(`| ${name} | ${process.env.KILN_NUM_THREADS ?? "default"} | ${f(median(phase.total))} | ${f(median(phase.inputs))} | ${f(median(phase.run))} | ${f(median(phase.read))} | ${f(wall)} | ${f(cpu)} |`);
}

const ramp = (n, k) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + k));

console.log(`machine: ${cpus()[0]?.model ?? "?"}, ${cpus().length} cores visible; Node ${process.version}; ${REPS} calls per row`);
console.log("| program | threads | median ms/call | inputs | run | read | mean wall | mean CPU |");
console.log("|---|---|---|---|---|---|---|---|");

const add = jit((a, b) => np.add(a, b));
await measure("add16", [{ shape: [16], dtype: "float32", data: ramp(16, 0) }, { shape: [16], dtype: "float32", data: ramp(16, 1) }],
  async ([a, b]) => [add(a, b)]);

// The pte programs at the shapes of their fixtures (tests/fixtures/pte/models.txt and
// dynamic.txt): the LSTM on a batch of 2 with its .ptd weights, the GPT-2 decoder writing one
// token after 8 cached positions with seeded weights (values do not change the time).
const programs = [
  { name: "lstm", named: join(PTE, "lstm.ptd"), inputs: [[2, 7, 8], [2, 2, 24], [2, 2, 24]].map((shape, k) => f32(shape, k)) },
  { name: "gpt2_kv_decoder", named: (_, { shape }) => np.array(ramp(size(shape), 9), { shape, device: "wasm" }),
    inputs: [{ shape: [1, 1], dtype: "int32", data: Int32Array.of(19) }, f32([2, 1, 2, 8, 16], 1), f32([2, 1, 2, 8, 16], 2)] },
];
for (const p of programs) {
  const program = await executorch.load(join(PTE, `${p.name}.pte`), { device: "wasm", namedData: p.named });
  await measure(p.name, p.inputs, (xs) => program.run("forward", xs));
  program.dispose();
}
function size(shape) { return shape.reduce((a, b) => a * b, 1); }
function f32(shape, k) { return { shape, dtype: "float32", data: ramp(size(shape), k) }; }

const { MODELS_DIR, realModels, namedFeeds } = await import(join(ROOT, "tools/onnx_models.mjs"));
const head = realModels().find((m) => m.name === "hey_jarvis");
if (head && existsSync(join(MODELS_DIR, head.file))) {
  const session = await onnx.load(new Uint8Array(readFileSync(join(MODELS_DIR, head.file))), { device: "wasm" });
  const feeds = Object.entries(namedFeeds(head, session.inputNames));
  await measure("hey_jarvis (onnx)", feeds.map(([, f]) => ({ shape: f.dims, dtype: "float32", data: Float32Array.from(f.data) })), async (xs) => {
    const out = await session.run(Object.fromEntries(xs.map((x, i) => [feeds[i][0], x])));
    return Object.values(out);
  });
  session.release();
} else {
  console.log("(hey_jarvis skipped: run `make onnx-models`)");
}
