// The WebGPU benchmark: kiln's webgpu device against @jax-js/jax's, in one Node.js process on
// one GPU (Dawn from the npm package `webgpu`; in browsers the same code runs on navigator.gpu).
// Both libraries run the same jit'd functions through the same jax-js API; each case is timed
// as `reps` calls queued back to back, then one wait for the GPU (throughput, as a training or
// inference loop sees it), best of `rounds`. The elementwise chain is also given as a fraction
// of the device's buffer-copy bandwidth, measured here with copyBufferToBuffer.
//
//   node bench/webgpu/bench.mjs             all cases, kiln and jax-js
//   BENCH_CASES=matmul4096 BENCH_LIBS=kiln  a subset (names below; libraries: kiln, jax)
//   KILN_WEBGPU_TILES=128x128x16/8x8,...    kiln's contraction tiles (for tuning)
import { execFileSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { create, globals } from "webgpu";

// One GPU object for both libraries (jax-js looks for navigator.gpu; kiln does too, first).
Object.assign(globalThis, globals);
Object.defineProperty(globalThis, "navigator", { value: { gpu: create([]), userAgent: "Node.js" }, configurable: true });

const N = 4096;
const CASES = [
  { name: "matmul1024", what: "f32 matmul 1024", kind: "matmul", n: 1024, dtype: "float32", reps: 50 },
  { name: "matmul2048", what: "f32 matmul 2048", kind: "matmul", n: 2048, dtype: "float32", reps: 20 },
  { name: "matmul4096", what: "f32 matmul 4096", kind: "matmul", n: N, dtype: "float32", reps: 10 },
  { name: "matmul4096f16", what: "f16 matmul 4096", kind: "matmul", n: N, dtype: "float16", reps: 10, f16: true },
  { name: "matvec4096", what: "f32 matvec 4096", kind: "matvec", n: N, dtype: "float32", reps: 50 },
  // Q4_0 in kiln's packed layout (src/models/quantized_weights.h: 8 nibbles per u32, one f32
  // scale per 32 values), the shape of Llama-3.2-1B's MLP gate/up matvec: 8192 rows of 2048.
  { name: "q4matvec1b", what: "q4_0 matvec 8192x2048 (Llama-3.2-1B MLP)", kind: "qmatvec", rows: 8192, n: 2048, dtype: "float32", reps: 50 },
  // The same, 64 in a row in one jit'd call (each one's x is a slice of the last one's output):
  // one call costs ~0.3-0.4 ms of submit and read-back on the H200, ~100x one matvec's traffic
  // at copy bandwidth, so only a chain shows the kernels' own speed.
  { name: "q4matvec1b_x64", what: "q4_0 matvec 8192x2048, 64 chained per call", kind: "qmatvec", rows: 8192, n: 2048, chain: 64, dtype: "float32", reps: 10 },
  { name: "softmax4096", what: "softmax 4096x4096 (last axis)", kind: "softmax", n: N, dtype: "float32", reps: 20 },
  { name: "chain4M", what: "elementwise chain, 4M f32", kind: "chain", n: 1 << 22, dtype: "float32", reps: 50 },
  { name: "chain16M", what: "elementwise chain, 16M f32", kind: "chain", n: 1 << 24, dtype: "float32", reps: 20 },
  { name: "chain64M", what: "elementwise chain, 64M f32", kind: "chain", n: 1 << 26, dtype: "float32", reps: 20 },
];
const only = process.env.BENCH_CASES?.split(",");
// BENCH_SCALE=k divides every size by k (a smoke run on a CPU adapter such as SwiftShader).
const scale = Number(process.env.BENCH_SCALE || 1);
for (const c of CASES) c.n = Math.max(16, Math.round(c.kind === "chain" ? c.n / scale ** 2 : c.n / scale));
const libs = (process.env.BENCH_LIBS ?? "kiln,jax").split(",");
const rounds = Number(process.env.BENCH_ROUNDS || 3);

// Work per call: FLOPs for contractions, bytes that must move for the memory-bound cases.
// A q4 matvec moves its words (4 bits a value), its f32 scales (one per 32) and x.
const work = (c) => c.kind === "matmul" ? 2 * c.n ** 3 : c.kind === "matvec" ? c.n * c.n * 4
  : c.kind === "qmatvec" ? (c.chain ?? 1) * (c.rows * c.n / 2 + c.rows * c.n / 8 + c.n * 4) : 2 * 4 * (c.kind === "chain" ? c.n : c.n * c.n);
const unit = (c) => (c.kind === "matmul" ? "TFLOP/s" : "GB/s");
const rate = (c, ms) => (c.kind === "matmul" ? work(c) / ms / 1e9 : work(c) / ms / 1e6);

function rand(len) {
  const a = new Float32Array(len);
  let s = 12345;
  for (let i = 0; i < len; i++) a[i] = ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
  return a;
}

// The arguments and the jit'd function of a case, on a library with the jax-js API.
function setup(lib, c) {
  const { numpy: np, nn, jit } = lib;
  const arr = (len, shape) => np.array(rand(len)).reshape(shape).astype(c.dtype);
  switch (c.kind) {
    case "matmul": return { f: jit((a, b) => np.matmul(a, b)), args: [arr(c.n * c.n, [c.n, c.n]), arr(c.n * c.n, [c.n, c.n])] };
    case "matvec": return { f: jit((a, x) => np.matmul(a, x)), args: [arr(c.n * c.n, [c.n, c.n]), arr(c.n, [c.n])] };
    case "qmatvec": {
      // The dequantization kiln's quantized_linear fuses into the matvec: shift, mask, convert,
      // subtract 8, scale per 32 values, then the row sums with x.
      const nb = c.n / 32, words = new Uint32Array(c.rows * c.n / 8);
      let s = 777;
      for (let i = 0; i < words.length; i++) words[i] = s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const qmv = (w, sc, x) => {
        const shifts = np.multiply(np.arange(8), 4).astype(np.uint32);
        const q = np.bitwiseAnd(np.rightShift(np.expandDims(w, -1), shifts), 15).astype(np.float32);
        const v = np.multiply(np.subtract(q, 8), np.reshape(sc, [c.rows, nb, 1, 1]));
        return np.sum(np.multiply(np.reshape(v, [c.rows, c.n]), x), 1);
      };
      const f = jit((w, sc, x) => {
        for (let i = 1; i < (c.chain ?? 1); i++) x = qmv(w.ref, sc.ref, x).slice([0, c.n]).mul(0.01);
        return qmv(w, sc, x);
      });
      return { f, args: [np.array(words, { dtype: np.uint32 }).reshape([c.rows, nb, 4]),
        np.array(rand(c.rows * nb)).reshape([c.rows, nb]).mul(0.01), arr(c.n, [c.n])] };
    }
    case "softmax": return { f: jit((x) => nn.softmax(x, -1)), args: [arr(c.n * c.n, [c.n, c.n])] };
    case "chain": return { f: jit((x) => np.maximum(x.ref.mul(1.5).add(0.5), 0).mul(x).sub(0.25)), args: [arr(c.n, [c.n])] };
  }
}

// ms per call: calls with one in flight while the previous one is awaited and freed
// (buffers recycle as in a loop; a lazy library computes every result, since each is
// awaited), best of `rounds` after a warm-up round. A round runs at least `c.reps` calls and
// at least ~250 ms, so short kernels are timed with the GPU at its clocks.
async function timeCase(lib, c) {
  const { f, args } = setup(lib, c);
  const call = () => f(...args.map((a) => a.ref));
  const round = async (reps) => {
    const t = performance.now();
    let prev = null;
    for (let i = 0; i < reps; i++) {
      const y = call();
      const ready = lib.blockUntilReady(y);
      if (prev) { await prev.ready; prev.y.dispose(); }
      prev = { y, ready };
    }
    await prev.ready;
    prev.y.dispose();
    return (performance.now() - t) / reps;
  };
  const warm = await round(c.reps);
  c.timedReps = Math.min(5000, Math.max(c.reps, Math.ceil(250 / warm)));
  let best = Infinity;
  for (let r = 0; r < rounds; r++) best = Math.min(best, await round(c.timedReps));
  if (c.kind === "matmul" && c.dtype === "float32") await checkMatmul(lib, call(), args, c.n);
  for (const a of args) a.dispose();
  return best;
}

// A timed result is only reported when it is right: 64 sampled outputs of the product
// against float64 dot products of the inputs, within 1e-5 of the sum of |a_ik b_kj|.
async function checkMatmul(lib, y, [a, b], n) {
  const [got, A, B] = [await y.data(), await a.ref.data(), await b.ref.data()];
  for (let s = 0; s < 64; s++) {
    const i = (s * 2654435761) % n, j = (s * 40503 + 17) % n;
    let dot = 0, mag = 0;
    for (let k = 0; k < n; k++) dot += A[i * n + k] * B[k * n + j], mag += Math.abs(A[i * n + k] * B[k * n + j]);
    if (!(Math.abs(got[i * n + j] - dot) <= 1e-5 * mag))
      throw new Error(`wrong result at [${i}, ${j}]: ${got[i * n + j]}, expected ${dot}`);
  }
}

// The device's copy bandwidth for 4n bytes (bytes read + written per ms), the better of
// copyBufferToBuffer and a vec4 copy shader, best of rounds (and a one-f32-per-invocation
// shader's, for comparison with kernels that do that).
async function copyBandwidth(device, n) {
  const bytes = 4 * n;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const src = device.createBuffer({ size: bytes, usage }), dst = device.createBuffer({ size: bytes, usage });
  // A shader copying `lanes` floats per invocation (4: vec4, 1: one f32 as kernels do).
  const copyShader = (lanes) => {
    const T = lanes === 4 ? "vec4<f32>" : "f32";
    const module = device.createShaderModule({ code: `
      @group(0) @binding(0) var<storage, read> src: array<${T}>;
      @group(0) @binding(1) var<storage, read_write> dst: array<${T}>;
      @compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
        let i = g.x + g.y * nw.x * 256u;
        if (i < arrayLength(&src)) { dst[i] = src[i]; }
      }` });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
      { binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }] });
    const groups = Math.ceil(n / lanes / 256), gx = Math.min(groups, 65535), gy = Math.ceil(groups / gx);
    return (enc) => {
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline), pass.setBindGroup(0, group), pass.dispatchWorkgroups(gx, gy), pass.end();
    };
  };
  const time = async (encode) => {
    let best = Infinity;
    for (let r = 0; r <= rounds; r++) {
      const t = performance.now();
      const enc = device.createCommandEncoder();
      for (let i = 0; i < 20; i++) encode(enc);
      device.queue.submit([enc.finish()]);
      await device.queue.onSubmittedWorkDone();
      if (r > 0) best = Math.min(best, (performance.now() - t) / 20);
    }
    return (2 * bytes) / best / 1e6;
  };
  const copy = await time((enc) => enc.copyBufferToBuffer(src, 0, dst, 0, bytes));
  const shader = await time(copyShader(4)), scalar = await time(copyShader(1));
  src.destroy(), dst.destroy();
  return { copy, shader, scalar, best: Math.max(copy, shader) };
}

async function load(name) {
  if (name === "kiln") {
    // BENCH_KILN_DIST: another build's js/dist (an A/B of two commits, in two processes).
    const dist = process.env.BENCH_KILN_DIST ? pathToFileURL(path.resolve(process.env.BENCH_KILN_DIST)).href : new URL("../../js/dist", import.meta.url).href;
    const lib = await import(`${dist}/index.js`);
    if (!(await lib.init("webgpu")).includes("webgpu")) throw new Error("kiln: no webgpu device");
    lib.defaultDevice("webgpu");
    const { webGpuRuntime } = await import(`${dist}/webgpu/attach.js`);
    return { lib, device: webGpuRuntime().device, runtime: webGpuRuntime() };
  }
  const lib = await import("@jax-js/jax");
  await lib.init("webgpu");
  lib.defaultDevice("webgpu");
  return { lib };
}

const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
const info = adapter.info ?? {};
let gpuName = "";
try { gpuName = execFileSync("nvidia-smi", ["--query-gpu=name", "--format=csv,noheader"]).toString().trim(); } catch {}
const hasF16 = adapter.features.has("shader-f16");
console.log(`adapter: ${[info.vendor, info.architecture, info.description].filter(Boolean).join(" ")}${gpuName ? ` (${gpuName})` : ""}; shader-f16: ${hasF16}; subgroups: ${adapter.features.has("subgroups")}`);
if (process.env.KILN_WEBGPU_TILES) console.log(`kiln tiles: ${process.env.KILN_WEBGPU_TILES}`);

const cases = CASES.filter((c) => (!only || only.includes(c.name)) && (!c.f16 || hasF16));
const results = {}, notes = {};
let copyGBs = null;
for (const name of libs) {
  const { lib, device, runtime } = await load(name);
  const chain = cases.findLast((c) => c.kind === "chain");
  if (device && chain) copyGBs = await copyBandwidth(device, chain.n);
  for (const c of cases) {
    try {
      const before = runtime?.stats();
      results[`${name}/${c.name}`] = rate(c, await timeCase(lib, c));
      if (before) {
        // The timed calls and, for checked matmuls, the one whose result is checked.
        const after = runtime.stats(), calls = c.reps + rounds * c.timedReps + (c.kind === "matmul" && c.dtype === "float32" ? 1 : 0);
        notes[c.name] = `${((after.dispatches - before.dispatches) / calls).toFixed(1)} dispatches, ${((after.submits - before.submits) / calls).toFixed(1)} submits per call`;
      }
    } catch (e) {
      results[`${name}/${c.name}`] = `error: ${String(e?.message ?? e).slice(0, 80)}`;
    }
  }
}

const fmt = (v) => (typeof v === "number" ? v.toFixed(v >= 100 ? 0 : 2) : v ?? "-");
console.log(`\n| case | unit | ${libs.join(" | ")} | ${libs.length > 1 ? "kiln/jax-js | " : ""}kiln's work per call |`);
console.log(`| --- | --- | ${libs.map(() => "---").join(" | ")} |${libs.length > 1 ? " --- |" : ""} --- |`);
for (const c of cases) {
  const k = results[`kiln/${c.name}`], j = results[`jax/${c.name}`];
  const ratio = typeof k === "number" && typeof j === "number" ? `${(k / j).toFixed(2)}x |` : libs.length > 1 ? "- |" : "";
  console.log(`| ${c.what} | ${unit(c)} | ${libs.map((l) => fmt(results[`${l}/${c.name}`])).join(" | ")} | ${ratio} ${notes[c.name] ?? ""} |`);
}
const chainCase = cases.findLast((c) => c.kind === "chain"), chainName = chainCase?.name, chainMiB = chainCase ? (4 * chainCase.n) >> 20 : 0;
if (copyGBs) {
  const k = results[`kiln/${chainName}`], j = results[`jax/${chainName}`], frac = (v) => (typeof v === "number" ? (v / copyGBs.best).toFixed(2) : "-");
  console.log(`\ncopy bandwidth (${chainMiB} MiB): copyBufferToBuffer ${copyGBs.copy.toFixed(0)} GB/s, vec4 shader ${copyGBs.shader.toFixed(0)} GB/s, f32 shader ${copyGBs.scalar.toFixed(0)} GB/s;` +
    ` the ${chainName} chain as a fraction of the better: kiln ${frac(k)}, jax-js ${frac(j)}`);
  for (const c of cases.filter((c) => c.kind === "matvec" || c.kind === "qmatvec"))
    console.log(`${c.what}: kiln ${frac(results[`kiln/${c.name}`])} of the copy bandwidth`);
}
process.exit(0);
