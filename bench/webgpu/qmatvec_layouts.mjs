// kiln's generated quantized matvec kernel in the LLM runtime's two packed layouts (issue 20):
// rows interleaved by 16 (the CPU devices' layout) and row-contiguous (webgpu's), for the
// decode matvecs of the Llama-3.2-1B and SmolLM2-135M shapes (and an f32 4096 x 4096 matvec),
// against the vec4 copy shader.
// Each case builds the runtime's dequantization expression (models/quantized_weights.cpp:
// words [rows / G, k, G] read through the transpose that undoes the interleave, shift, mask,
// convert, scale, and a min or an offset) over random codes, lets kiln run it once, captures
// the kernel's pipeline, bind group and grid from the runtime, and times that dispatch as a
// chain of 64 in one compute pass on the GPU clock (no host encoding in the time). The
// shifts come from np.arange (a loaded array; the runtime uses an iota expression).
//
// usage: node qmatvec_layouts.mjs DIST [--quick]   (DIST: js/dist of the build; QMV_WGSL=1 prints
// each case's kernel)
import path from "node:path";
import { pathToFileURL } from "node:url";
import { create, globals } from "webgpu";
import { copyGBs, timeChain } from "./gpu_timing.mjs";

Object.assign(globalThis, globals);
globalThis.navigator = { gpu: create([]) };
const quick = process.argv.includes("--quick");  // small shapes, for a CPU adapter (SwiftShader)
const dist = pathToFileURL(path.resolve(process.argv[2] ?? "../../js/dist")).href;
const lib = await import(`${dist}/index.js`);
await lib.init("webgpu");
lib.defaultDevice("webgpu");
const { webGpuRuntime } = await import(`${dist}/webgpu/attach.js`);
const rt = webGpuRuntime();
const device = rt.device;
const { numpy: np } = lib;

// The runtime's kernels as they are recorded: WGSL by pipeline id, and each dispatch with the
// bind group's buffers (made during the dispatch that first uses them).
const wgslOf = new Map();
const dispatches = [];
let current = null;
const pipeline0 = rt.pipeline.bind(rt);
rt.pipeline = (wgsl, n) => { const id = pipeline0(wgsl, n); wgslOf.set(id, wgsl); return id; };
const dispatch0 = rt.dispatch.bind(rt);
// dispatch(id, inputs, output, size, gx, gy, first, count, w1..w3): inputs[first, first + count).
rt.dispatch = (...args) => {
  const [id, inputs, , size, gx, gy, first = 0, count = inputs.length - first] = args;
  current = { id, ninputs: count, size, gx, gy, buffers: null };
  dispatches.push(current);
  try { return dispatch0(...args); } finally { current = null; }
};
const bindGroup0 = device.createBindGroup.bind(device);
device.createBindGroup = (desc) => {
  if (current) current.buffers = desc.entries.map((e) => e.resource.buffer);
  return bindGroup0(desc);
};

// The captured dispatch again, as the runtime bound it (explicit layout: uniform, out, inputs).
function replay(d) {
  const entries = [
    { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
    { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
  ];
  for (let i = 0; i < d.ninputs; i++) entries.push({ binding: 2 + i, visibility: GPUShaderStage.COMPUTE, buffer: { type: "read-only-storage" } });
  const layout = device.createBindGroupLayout({ entries });
  const module = device.createShaderModule({ code: wgslOf.get(d.id) });
  const pipeline = device.createComputePipeline({ layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: "main" } });
  const group = bindGroup0({ layout, entries: d.buffers.map((buffer, binding) => ({ binding, resource: { buffer } })) });
  return { pipeline, group };
}

// The runtime's packed formats (quantized_weights.cpp's kFormats) that these shapes use.
const FORMATS = {
  q4_0: { bits: 4, offset: 8, withMin: false },
  q4_1: { bits: 4, offset: 0, withMin: true },
  q8_0: { bits: 8, offset: 128, withMin: false },
};

function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
}

// [rows, k] row-major host values in the runtime's order for groups of g rows: [rows / g, k, g].
function interleave(v, rows, g) {
  const k = v.length / rows, out = new v.constructor(v.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < k; c++) out[(Math.floor(r / g) * k + c) * g + (r % g)] = v[r * k + c];
  return out;
}

// One matvec y = W x as the LLM runtime builds it, with W's rows interleaved by g.
async function runCase(type, rows, cols, g, chain) {
  const f = FORMATS[type], per = 32 / f.bits, nb = cols / 32, k = cols / per;
  const next = rng(rows * 31 + cols + g);
  const words = Uint32Array.from({ length: rows * k }, () => next());
  const sc = Float32Array.from({ length: rows * nb }, () => (next() / 2 ** 32) * 0.02);
  const mn = Float32Array.from({ length: rows * nb }, () => -(next() / 2 ** 32) * 0.1);
  const xs = Float32Array.from({ length: cols }, () => next() / 2 ** 32 - 0.5);
  const put = (v, n, dtype) => np.array(interleave(v, rows, g), { dtype }).reshape([rows / g, n, g]);
  // Kept alive (.ref below) until the replay is timed: the captured bind group holds their buffers.
  const held = [put(words, k, np.uint32), put(sc, nb, np.float32), put(mn, nb, np.float32), np.array(xs).reshape([1, 1, cols])];
  const [W, S, M, X] = held;
  // deinterleave_rows, then unpack (quantized_weights.cpp), then quantized_linear's sum.
  const rowsOf = (a, n) => np.reshape(np.transpose(a, [0, 2, 1]), [rows, n]);
  const w = np.reshape(rowsOf(W.ref, k), [1, rows, nb, 32 / per]);
  const s = np.reshape(rowsOf(S.ref, nb), [1, rows, nb, 1, 1]);
  const shifts = np.multiply(np.arange(per), f.bits).astype(np.uint32);
  const q = np.bitwiseAnd(np.rightShift(np.expandDims(w, -1), shifts), (1 << f.bits) - 1).astype(np.float32);
  const v = f.withMin ? np.add(np.multiply(q, s), np.reshape(rowsOf(M.ref, nb), [1, rows, nb, 1, 1]))
    : np.multiply(np.subtract(q, f.offset), s);
  dispatches.length = 0;
  const y = np.sum(np.multiply(X.ref, np.reshape(v, [1, rows, cols])), -1);
  const got = await y.data();
  const mine = dispatches.filter((d) => d.size === rows && d.buffers);
  if (mine.length !== 1) throw new Error(`${type} ${rows}x${cols}: ${mine.length} matvec dispatches captured`);
  const d = mine[0];
  // Some rows against the host (f64), within the f32 summation bound.
  let err = 0;
  for (const r of [0, 1, 17, rows >> 1, rows - 1]) {
    let ref = 0, mag = 0;
    for (let j = 0; j < cols; j++) {
      const code = (words[r * k + Math.floor(j / per)] >>> ((j % per) * f.bits)) & ((1 << f.bits) - 1);
      const b = r * nb + Math.floor(j / 32);
      const val = f.withMin ? code * sc[b] + mn[b] : (code - f.offset) * sc[b];
      ref += val * xs[j];
      mag += Math.abs(val * xs[j]);
    }
    err = Math.max(err, Math.abs(got[r] - ref) / mag);
  }
  const { pipeline, group } = replay(d);
  const ms = await timeChain(device, pipeline, group, d.gx, d.gy, chain);
  const bytes = rows * cols * f.bits / 8 + rows * nb * 4 * (f.withMin ? 2 : 1) + cols * 4 + rows * 4;
  for (const a of held) a.dispose();
  const text = wgslOf.get(d.id);
  if (process.env.QMV_WGSL) console.log(text);
  const strategy = text.includes("fn f_rows") ? `tree, ${(text.match(/in\d+v\[/g) ?? []).length} vec4 loads per chunk` : "serial";
  return { us: (ms * 1000) / chain, gbs: (bytes * chain) / (ms * 1e6), err, strategy };
}

// The f32 matvec y = W x (issue 20's other bandwidth target), W [rows, cols] row-major.
async function runF32Case(rows, cols, chain) {
  const next = rng(rows + cols);
  const ws = Float32Array.from({ length: rows * cols }, () => next() / 2 ** 32 - 0.5);
  const xs = Float32Array.from({ length: cols }, () => next() / 2 ** 32 - 0.5);
  const held = [np.array(ws).reshape([rows, cols]), np.array(xs).reshape([1, cols])];
  dispatches.length = 0;
  const got = await np.sum(np.multiply(held[1].ref, held[0].ref), -1).data();
  const mine = dispatches.filter((d) => d.size === rows && d.buffers);
  if (mine.length !== 1) throw new Error(`f32 ${rows}x${cols}: ${mine.length} matvec dispatches captured`);
  let err = 0;
  for (const r of [0, 1, rows >> 1, rows - 1]) {
    let ref = 0, mag = 0;
    for (let j = 0; j < cols; j++) { ref += ws[r * cols + j] * xs[j]; mag += Math.abs(ws[r * cols + j] * xs[j]); }
    err = Math.max(err, Math.abs(got[r] - ref) / mag);
  }
  const { pipeline, group } = replay(mine[0]);
  const ms = await timeChain(device, pipeline, group, mine[0].gx, mine[0].gy, chain);
  for (const a of held) a.dispose();
  const bytes = rows * cols * 4 + cols * 4 + rows * 4;
  return { us: (ms * 1000) / chain, gbs: (bytes * chain) / (ms * 1e6), err, strategy: wgslOf.get(mine[0].id).includes("fn f_rows") ? "tree" : "other" };
}

const info = rt.adapter ?? "";
console.log(`adapter: ${typeof info === "string" ? info : JSON.stringify(info)}; dist ${process.argv[2]}`);
const copy = await copyGBs(device, quick ? 16 : 256);
console.log(`vec4 copy shader: ${copy.toFixed(0)} GB/s (read + written)`);
// [label, type, rows, cols]: each model's distinct decode matvecs (q/k/v merged as the loader does).
const shapes = quick
  ? [["small", "q4_0", 64, 512], ["small", "q4_1", 48, 576], ["small", "q8_0", 48, 576]]
  : [["1B qkv", "q4_0", 3072, 2048], ["1B attn_output", "q4_0", 2048, 2048], ["1B gate, up", "q4_0", 8192, 2048],
     ["1B down", "q4_0", 2048, 8192], ["1B output", "q4_0", 128256, 2048],
     ["SmolLM2 qkv", "q4_1", 960, 576], ["SmolLM2 attn_output", "q4_1", 576, 576], ["SmolLM2 gate, up", "q4_1", 1536, 576],
     ["SmolLM2 down", "q4_1", 576, 1536], ["SmolLM2 output", "q8_0", 49152, 576]];
const chain = quick ? 4 : 64;
console.log("| matvec | type rows x cols | layout | kernel | us | GB/s | of copy | max rel err |");
console.log("|---|---|---|---|---|---|---|---|");
{
  const [rows, cols] = quick ? [64, 256] : [4096, 4096];
  const r = await runF32Case(rows, cols, chain);
  console.log(`| f32 | f32 ${rows}x${cols} | row-major | ${r.strategy} | ${r.us.toFixed(1)} | ${r.gbs.toFixed(0)} | ${(r.gbs / copy).toFixed(2)} | ${r.err.toExponential(1)} |`);
}
for (const [label, type, rows, cols] of shapes) {
  for (const [layout, g] of [["interleaved 16", rows % 16 === 0 ? 16 : 1], ["row-contiguous", 1]]) {
    const r = await runCase(type, rows, cols, g, chain);
    console.log(`| ${label} | ${type} ${rows}x${cols} | ${layout} | ${r.strategy} | ${r.us.toFixed(1)} | ${r.gbs.toFixed(0)} | ${(r.gbs / copy).toFixed(2)} | ${r.err.toExponential(1)} |`);
  }
}
process.exit(0);
