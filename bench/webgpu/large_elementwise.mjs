// Why large elementwise kernels are slow on WebGPU (bench/results/webgpu.md: the 64M chain at
// ~40 GB/s, 16M at ~430): times kiln's jit'd chain at several sizes with the runtime's
// counters, next to raw Dawn copy shaders submitted the way a library submits them (one
// dispatch per submit, waited for), with the output buffer reused or created per call.
//   node bench/webgpu/large_elementwise.mjs     (on a machine with a GPU; after make js-build)
import { create, globals } from "webgpu";

Object.assign(globalThis, globals);
Object.defineProperty(globalThis, "navigator", { value: { gpu: create([]), userAgent: "Node.js" }, configurable: true });

const { init, numpy: np, jit, blockUntilReady, defaultDevice } = await import("../../js/dist/index.js");
const { webGpuRuntime } = await import("../../js/dist/webgpu/attach.js");
await init("webgpu");
defaultDevice("webgpu");
const rt = webGpuRuntime();
const device = rt.device;
const sizes = (process.env.SIZES || "16,32,48,64").split(",").map((m) => Number(m) << 20);
const rows = [];

async function timeCalls(reps, call) {
  await call();
  const t = performance.now();
  for (let i = 0; i < reps; i++) await call();
  return (performance.now() - t) / reps;
}

for (const n of sizes) {
  const x = np.array(new Float32Array(n).fill(0.25));
  const f = jit((v) => np.maximum(v.ref.mul(1.5).add(0.5), 0).mul(v).sub(0.25));
  const call = async () => {
    const y = f(x.ref);
    await blockUntilReady(y);
    y.dispose();
  };
  const s0 = rt.stats();
  const ms = await timeCalls(10, call);
  const s1 = rt.stats();
  rows.push({ what: `kiln chain ${n >> 20}M`, ms, gbs: (8 * n) / ms / 1e6,
    note: `per call: ${((s1.dispatches - s0.dispatches) / 11).toFixed(1)} dispatches, ${((s1.submits - s0.submits) / 11).toFixed(1)} submits; buffers ${s0.buffers}->${s1.buffers}, pooled ${s0.pooledBytes >> 20}->${s1.pooledBytes >> 20} MiB` });
  f.dispose();
  x.dispose();
}

// Raw Dawn: one f32 per invocation, as kiln's elementwise kernels.
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const module = device.createShaderModule({ code: `
  @group(0) @binding(0) var<storage, read> src: array<f32>;
  @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
  @compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
    let i = g.x + g.y * nw.x * 256u;
    if (i < arrayLength(&src)) { dst[i] = src[i] * 1.5 + 0.5; }
  }` });
const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
for (const n of sizes) {
  const bytes = 4 * n;
  const src = device.createBuffer({ size: bytes, usage });
  let dst = device.createBuffer({ size: bytes, usage });
  const groups = Math.ceil(n / 256), gx = Math.min(groups, 65535), gy = Math.ceil(groups / gx);
  const submit = (out) => {
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [
      { binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: out } }] });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline), pass.setBindGroup(0, group), pass.dispatchWorkgroups(gx, gy), pass.end();
    device.queue.submit([enc.finish()]);
    return device.queue.onSubmittedWorkDone();
  };
  const reused = await timeCalls(10, () => submit(dst));
  rows.push({ what: `raw f32 shader ${n >> 20}M, output reused`, ms: reused, gbs: (8 * n) / reused / 1e6, note: "" });
  const fresh = await timeCalls(10, async () => {
    const out = device.createBuffer({ size: bytes, usage });
    await submit(out);
    out.destroy();
  });
  rows.push({ what: `raw f32 shader ${n >> 20}M, output created per call`, ms: fresh, gbs: (8 * n) / fresh / 1e6, note: "" });
  const alternating = [dst, device.createBuffer({ size: bytes, usage })];
  let k = 0;
  const alt = await timeCalls(10, () => submit(alternating[k++ % 2]));
  rows.push({ what: `raw f32 shader ${n >> 20}M, two outputs alternating`, ms: alt, gbs: (8 * n) / alt / 1e6, note: "" });
  src.destroy(), alternating.forEach((b) => b.destroy());
}

console.log("| what | ms per call | GB/s | note |\n| --- | --- | --- | --- |");
for (const r of rows) console.log(`| ${r.what} | ${r.ms.toFixed(3)} | ${r.gbs.toFixed(0)} | ${r.note} |`);
process.exit(0);
