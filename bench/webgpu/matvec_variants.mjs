// Matvec kernel designs on a real adapter, before kiln's WGSL generator takes one (issue 20):
// hand-written WGSL variants of the decode step's matvecs (f32, and 4-bit codes with a scale
// per 32 values, optionally a min: kiln's q4_0/q4_1 layouts) timed as chains of dispatches in
// one compute pass, against kiln's own fused kernel for the same math (jit, chained in one
// call) and the device's vec4 copy bandwidth. Also the cost of an empty dispatch in a pass.
//
// Variants: `t` lanes reduce one output (each folds blocks lane, lane + t, ...), `r` outputs
// per lane group (so each x load serves r rows), the lanes' sums combined by subgroup
// shuffles ("sg", where the adapter has `subgroups`) or a workgroup-memory tree ("wg"). For
// the 4-bit kinds, `--styles` also times the best (t, r) with x read one f32 per load
// ("xs1") and/or each value dequantized and multiplied on its own ("each": q * d - 8 d, times
// x, added), as kiln's generated chunk does: which of the two the speed comes from.
//
// usage: node matvec_variants.mjs DIST [--quick] [--kiln-only] [--styles] [--few]   (DIST: js/dist of the build)
import path from "node:path";
import { pathToFileURL } from "node:url";
import { create, globals } from "webgpu";
import { copyGBs, timeChain as timeChainOf } from "./gpu_timing.mjs";

Object.assign(globalThis, globals);
globalThis.navigator = { gpu: create([]) };
const quick = process.argv.includes("--quick");  // small shapes, for a CPU adapter
const kilnOnly = process.argv.includes("--kiln-only");  // kiln's kernels only (a KILN_WEBGPU_* sweep)
const styles = process.argv.includes("--styles");  // the load/arithmetic ablation of the best variant
const few = process.argv.includes("--few");  // only the (t, r) that won on an H100 (2026-12-06), subgroups where possible
const dist = pathToFileURL(path.resolve(process.argv[2] ?? "../../js/dist")).href;

const WG = 256;
const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
const hasSg = adapter.features.has("subgroups");
const device = await adapter.requestDevice({
  requiredFeatures: hasSg ? ["subgroups"] : [],
  requiredLimits: {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  },
});
const info = adapter.info ?? {};
// The subgroup size a compute shader runs with here (the shuffles span t lanes only if t <= it).
async function subgroupSize() {
  if (!hasSg) return 0;
  const pipeline = pipelineOf("enable subgroups;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n" +
    "@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) i: u32, @builtin(subgroup_size) n: u32) { if (i == 0u) { o[0] = n; } }");
  const b = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: b } }] });
  await timeChain(pipeline, group, 1, 1, 1);
  return new Uint32Array((await readF32(b, 1)).buffer)[0];
}

function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
}
const buffer = (data, usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC) => {
  const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage: usage | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(b, 0, data);
  return b;
};
async function readF32(buf, n) {
  const r = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const e = device.createCommandEncoder();
  e.copyBufferToBuffer(buf, 0, r, 0, n * 4);
  device.queue.submit([e.finish()]);
  await r.mapAsync(GPUMapMode.READ);
  const v = new Float32Array(r.getMappedRange().slice(0));
  r.destroy();
  return v;
}
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

// ms per chain of `chain` dispatches of `groups` workgroups in one pass (gpu_timing.mjs).
const timeChain = (pipeline, group, groups, chain, reps) =>
  timeChainOf(device, pipeline, group, Math.min(groups, 65535), Math.ceil(groups / 65535), chain, reps);

function pipelineOf(code) {
  const module = device.createShaderModule({ code });
  return device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
}

// The WGSL of one variant. kind: "f32" (A rows of n floats), "q4" (words of 8 codes, scale per
// 32), "q4m" (and a min per 32). t lanes per output, r outputs per lane group.
function variantWgsl(kind, t, r, red, style = "") {
  const scalarX = style.includes("xs1"), each = style.includes("each");
  const groupsPerWg = WG / t;
  const q = kind !== "f32";
  const lines = [];
  if (red === "sg") lines.push("enable subgroups;");
  lines.push(
    "struct P { rows: u32, nb: u32 }",
    "@group(0) @binding(0) var<uniform> p: P;",
    "@group(0) @binding(1) var<storage, read_write> out: array<f32>;",
    `@group(0) @binding(2) var<storage, read> w: array<vec4<${q ? "u32" : "f32"}>>;`,
    `@group(0) @binding(3) var<storage, read> x: array<${scalarX ? "f32" : "vec4<f32>"}>;`,
  );
  if (q) lines.push("@group(0) @binding(4) var<storage, read> sc: array<f32>;");
  if (kind === "q4m") lines.push("@group(0) @binding(5) var<storage, read> mn: array<f32>;");
  if (red === "wg") lines.push(`var<workgroup> sh: array<f32, ${WG * r}>;`);
  if (q) {
    lines.push(
      "fn lo(v: u32) -> vec4<f32> { return vec4<f32>((vec4<u32>(v) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(15u)); }",
      "fn hi(v: u32) -> vec4<f32> { return vec4<f32>((vec4<u32>(v) >> vec4<u32>(16u, 20u, 24u, 28u)) & vec4<u32>(15u)); }",
    );
  }
  lines.push(
    `@compute @workgroup_size(${WG})`,
    "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {",
    `  let lane = lid % ${t}u;`,
    `  let row0 = ((wid.x + wid.y * nwg.x) * ${groupsPerWg}u + lid / ${t}u) * ${r}u;`,
  );
  for (let i = 0; i < r; i++) lines.push(`  var acc${i} = 0.0;`);
  lines.push(`  for (var b = lane; b < p.nb; b = b + ${t}u) {`);
  if (q) {
    // A block: 32 codes in 4 words, 8 vec4 of x. sum(q * d * x) - 8 d sum(x) (q4_0) or + m sum(x) (q4_1).
    for (let k = 0; k < 8; k++)
      lines.push(scalarX ? `    let x${k} = vec4<f32>(x[b * 32u + ${4 * k}u], x[b * 32u + ${4 * k + 1}u], x[b * 32u + ${4 * k + 2}u], x[b * 32u + ${4 * k + 3}u]);`
        : `    let x${k} = x[b * 8u + ${k}u];`);
    lines.push("    let xs = dot(x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7, vec4<f32>(1.0));");
    for (let i = 0; i < r; i++) {
      lines.push(`    { let row = min(row0 + ${i}u, p.rows - 1u); let k = row * p.nb + b; let c = w[k];`);
      if (each) {
        // Per value: (q * d + m) * x (q4m) or (q - 8) * d * x, added one by one.
        const v = kind === "q4m" ? (q) => `(${q} * sc[k] + mn[k])` : (q) => `((${q} - 8.0) * sc[k])`;
        const parts = ["lo(c.x)", "hi(c.x)", "lo(c.y)", "hi(c.y)", "lo(c.z)", "hi(c.z)", "lo(c.w)", "hi(c.w)"];
        parts.forEach((q, j) => {
          lines.push(`      { let q = ${q};`);
          for (const e of ["x", "y", "z", "w"]) lines.push(`        acc${i} = acc${i} + ${v(`q.${e}`)} * x${j}.${e};`);
          lines.push("      }");
        });
        lines.push("    }");
      } else {
        lines.push("      let s = dot(lo(c.x), x0) + dot(hi(c.x), x1) + dot(lo(c.y), x2) + dot(hi(c.y), x3) +",
          "              dot(lo(c.z), x4) + dot(hi(c.z), x5) + dot(lo(c.w), x6) + dot(hi(c.w), x7);",
          kind === "q4m" ? `      acc${i} = acc${i} + sc[k] * s + mn[k] * xs; }` : `      acc${i} = acc${i} + sc[k] * (s - 8.0 * xs); }`);
      }
    }
  } else {
    lines.push("    let xv = x[b];");
    for (let i = 0; i < r; i++) lines.push(`    acc${i} = acc${i} + dot(w[min(row0 + ${i}u, p.rows - 1u) * p.nb + b], xv);`);
  }
  lines.push("  }");
  if (red === "sg") {
    for (let i = 0; i < r; i++)
      for (let s = t >> 1; s >= 1; s >>= 1) lines.push(`  acc${i} = acc${i} + subgroupShuffleXor(acc${i}, ${s}u);`);
  } else {
    for (let i = 0; i < r; i++) lines.push(`  sh[lid * ${r}u + ${i}u] = acc${i};`);
    lines.push("  workgroupBarrier();");
    lines.push(`  for (var s = ${t >> 1}u; s > 0u; s = s >> 1u) {`, "    if (lane < s) {");
    for (let i = 0; i < r; i++) lines.push(`      sh[lid * ${r}u + ${i}u] = sh[lid * ${r}u + ${i}u] + sh[(lid + s) * ${r}u + ${i}u];`);
    lines.push("    }", "    workgroupBarrier();", "  }");
    for (let i = 0; i < r; i++) lines.push(`  acc${i} = sh[lid * ${r}u + ${i}u];`);
  }
  lines.push("  if (lane == 0u) {");
  for (let i = 0; i < r; i++) lines.push(`    if (row0 + ${i}u < p.rows) { out[row0 + ${i}u] = acc${i}; }`);
  lines.push("  }", "}");
  return lines.join("\n");
}

// One problem: host data, the reference of its first rows, the bytes a matvec must read.
function problem(kind, rows, n) {
  const next = rng(rows * 7 + n);
  const x = Float32Array.from({ length: n }, () => (next() / 2 ** 32) - 0.5);
  if (kind === "f32") {
    const a = Float32Array.from({ length: rows * n }, () => (next() / 2 ** 32) - 0.5);
    const ref = (i) => { let s = 0; for (let j = 0; j < n; j++) s += a[i * n + j] * x[j]; return s; };
    return { kind, rows, n, nb: n / 4, a, x, ref, bytes: rows * n * 4 };
  }
  const nb = n / 32;
  const words = Uint32Array.from({ length: rows * nb * 4 }, () => next());
  const sc = Float32Array.from({ length: rows * nb }, () => (next() / 2 ** 32) * 0.02);
  const mn = Float32Array.from({ length: rows * nb }, () => -(next() / 2 ** 32) * 0.1);
  const code = (i, j) => (words[i * nb * 4 + (j >> 3)] >>> ((j & 7) * 4)) & 15;
  const ref = (i) => {
    let s = 0;
    for (let j = 0; j < n; j++) {
      const k = i * nb + (j >> 5);
      s += (kind === "q4m" ? sc[k] * code(i, j) + mn[k] : sc[k] * (code(i, j) - 8)) * x[j];
    }
    return s;
  };
  const bytes = rows * n / 2 + rows * nb * 4 * (kind === "q4m" ? 2 : 1);
  return { kind, rows, n, nb, words, sc, mn, x, ref, bytes };
}

async function runVariant(pb, t, r, red, chain, style = "") {
  const pipeline = pipelineOf(variantWgsl(pb.kind, t, r, red, style));
  const out = device.createBuffer({ size: pb.rows * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const uni = buffer(new Uint32Array([pb.rows, pb.nb, 0, 0]), GPUBufferUsage.UNIFORM);
  const entries = [{ binding: 0, resource: { buffer: uni } }, { binding: 1, resource: { buffer: out } },
    { binding: 2, resource: { buffer: pb.gw } }, { binding: 3, resource: { buffer: pb.gx } }];
  if (pb.kind !== "f32") entries.push({ binding: 4, resource: { buffer: pb.gsc } });
  if (pb.kind === "q4m") entries.push({ binding: 5, resource: { buffer: pb.gmn } });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
  const groups = Math.ceil(pb.rows / ((WG / t) * r));
  const ms = await timeChain(pipeline, group, groups, chain);
  const got = await readF32(out, pb.rows);
  let err = 0;
  for (const i of [0, 1, t + 1, pb.rows >> 1, pb.rows - 1]) err = Math.max(err, Math.abs(got[i] - pb.ref(i)) / (Math.abs(pb.ref(i)) + 1e-3));
  out.destroy();
  return { us: (ms * 1000) / chain, gbs: (pb.bytes * chain) / (ms * 1e6), err };
}

async function emptyDispatch(chain) {
  const pipeline = pipelineOf("@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n" +
    "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { if (i == 0u) { o[0] = o[0] + 1u; } }");
  const b = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: b } }] });
  const t0 = performance.now();
  const ms = await timeChain(pipeline, group, 1, chain);
  return { us: (ms * 1000) / chain, wallPerDispatch: ((performance.now() - t0) * 1000) / (8 * chain) };
}

// kiln's kernel for the same math: a chain of `chain` matvecs in one jitted call (the x of
// each is the last one's first n outputs, scaled: fused into the next kernel's loads).
async function kilnChain(lib, pb, chain) {
  const { numpy: np, jit } = lib;
  const { rows, n, kind } = pb;
  const nb = n / 32;
  const mv = kind === "f32" ? (a, _s, _m, x) => np.matmul(a, x) : (w, s, m, x) => {
    const shifts = np.multiply(np.arange(8), 4).astype(np.uint32);
    const qv = np.bitwiseAnd(np.rightShift(np.expandDims(w, -1), shifts), 15).astype(np.float32);
    const v = kind === "q4m" ? np.add(np.multiply(qv, np.reshape(s, [rows, nb, 1, 1])), np.reshape(m, [rows, nb, 1, 1]))
      : np.multiply(np.subtract(qv, 8), np.reshape(s, [rows, nb, 1, 1]));
    return np.sum(np.multiply(np.reshape(v, [rows, n]), x), 1);
  };
  const f = jit((a, s, m, x) => {
    for (let i = 1; i < chain; i++) {
      const y = mv(a.ref, s.ref, m.ref, x);
      x = (rows >= n ? y.slice([0, n]) : np.tile(y, [Math.ceil(n / rows)]).slice([0, n])).mul(0.01);
    }
    return mv(a, s, m, x);
  });
  const a = kind === "f32" ? np.array(pb.a).reshape([rows, n]) : np.array(pb.words, { dtype: np.uint32 }).reshape([rows, nb, 4]);
  const s = kind === "f32" ? np.zeros([1]) : np.array(pb.sc).reshape([rows, nb]);
  const m = kind === "q4m" ? np.array(pb.mn).reshape([rows, nb]) : np.zeros([1]);
  const x = np.array(pb.x);
  const once = async () => { const y = f(a.ref, s.ref, m.ref, x.ref); await y.data(); };
  await once();
  const times = [];
  for (let i = 0; i < 5; i++) { const t0 = performance.now(); await once(); times.push(performance.now() - t0); }
  const ms = median(times);
  return { us: (ms * 1000) / chain, gbs: (pb.bytes * chain) / (ms * 1e6) };
}

const lib = await import(`${dist}/index.js`);
await lib.init("webgpu");
lib.defaultDevice("webgpu");

const sgSize = await subgroupSize();
console.log(`adapter: ${info.vendor} ${info.architecture} ${info.description}; subgroups ${hasSg} (size ${sgSize})`);
const copy = await copyGBs(device, quick ? 16 : 256);
const empty = await emptyDispatch(quick ? 64 : 512);
console.log(`vec4 copy shader: ${copy.toFixed(0)} GB/s (read + written); empty dispatch in a pass: ${empty.us.toFixed(2)} us on the GPU clock, ${empty.wallPerDispatch.toFixed(2)} us with encoding`);

const shapes = quick
  ? [["f32", 256, 512], ["q4", 512, 256], ["q4m", 192, 576]]
  : [["f32", 4096, 4096], ["q4", 8192, 2048], ["q4", 2048, 8192], ["q4m", 1536, 576], ["q4m", 576, 1536], ["q4m", 576, 576]];
const variants = [];
for (const t of quick ? [4, 8, 16] : [8, 16, 32, 64]) for (const r of [1, 2, 4]) for (const red of hasSg ? ["sg", "wg"] : ["wg"]) {
  if (red === "sg" && t > sgSize) continue;
  if (few && (t === 8 || (hasSg && t <= sgSize && red === "wg"))) continue;
  variants.push([t, r, red]);
}
const chain = quick ? 4 : 64;
console.log("| shape | variant | us per matvec | GB/s | of copy | max rel err |");
console.log("|---|---|---|---|---|---|");
for (const [kind, rows, n] of shapes) {
  const pb = problem(kind, rows, n);
  pb.gw = buffer(kind === "f32" ? pb.a : pb.words);
  pb.gx = buffer(pb.x);
  if (kind !== "f32") pb.gsc = buffer(pb.sc);
  if (kind === "q4m") pb.gmn = buffer(pb.mn);
  const name = `${kind} ${rows}x${n}`;
  const k = await kilnChain(lib, pb, chain);
  console.log(`| ${name} | kiln jit | ${k.us.toFixed(1)} | ${k.gbs.toFixed(0)} | ${(k.gbs / copy).toFixed(2)} | - |`);
  const rowsOut = [];
  for (const [t, r, red] of kilnOnly ? [] : variants) {
    if (kind === "f32" ? n / 4 < t : n / 32 < t) continue;
    const v = await runVariant(pb, t, r, red, chain);
    rowsOut.push([v.gbs, `| ${name} | t${t} r${r} ${red} | ${v.us.toFixed(1)} | ${v.gbs.toFixed(0)} | ${(v.gbs / copy).toFixed(2)} | ${v.err.toExponential(1)} |`]);
  }
  rowsOut.sort((a, b) => b[0] - a[0]).slice(0, quick ? 99 : 6).forEach(([, l]) => console.log(l));
  if (styles && kind !== "f32" && rowsOut.length) {
    // The best (t, r, reduction) again with kiln-like loads and arithmetic.
    const [, t, r, red] = /t(\d+) r(\d+) (\w+)/.exec(rowsOut[0][1]).map((v, i) => (i < 3 ? Number(v) : v));
    for (const style of ["xs1", "each", "xs1 each"]) {
      const v = await runVariant(pb, t, r, red, chain, style);
      console.log(`| ${name} | t${t} r${r} ${red} ${style} | ${v.us.toFixed(1)} | ${v.gbs.toFixed(0)} | ${(v.gbs / copy).toFixed(2)} | ${v.err.toExponential(1)} |`);
    }
  }
  for (const b of [pb.gw, pb.gx, pb.gsc, pb.gmn]) b?.destroy();
}
process.exit(0);
