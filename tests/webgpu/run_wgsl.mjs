// Runs the WGSL cases of tools/wgsl_cases.cpp (JSON lines on stdin) on a real WebGPU device:
// Dawn from the npm package `webgpu` (SwiftShader on machines without a GPU), and compares
// every output with the cpu interpreter's within each case's stated bound. Exit code 1 on
// any mismatch, WGSL compile error or device error.
import { readFileSync } from "node:fs";

// KILN_WEBGPU_MODULE: a path to the package when it is not resolvable from this folder.
const { create, globals } = await import(process.env.KILN_WEBGPU_MODULE ?? "webgpu");
Object.assign(globalThis, globals);
// Dawn aborts if the GPU object is garbage-collected: keep it referenced.
globalThis.kilnGpuInstance = create([]);
const adapter = await globalThis.kilnGpuInstance.requestAdapter();
if (!adapter) throw new Error("run_wgsl: no WebGPU adapter (for SwiftShader set VK_ICD_FILENAMES)");
// The adapter's workgroup limits (cases with large tiles need more than the defaults).
const want = ["maxComputeInvocationsPerWorkgroup", "maxComputeWorkgroupSizeX", "maxComputeWorkgroupStorageSize"];
const device = await adapter.requestDevice({ requiredLimits: Object.fromEntries(want.map((k) => [k, adapter.limits[k]])) });

const hexToBytes = (h) => Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
const pad4 = (n) => Math.max(4, Math.ceil(n / 4) * 4);
const SIZE = { float32: 4, int32: 4, uint32: 4, float16: 2, bool: 1 };

function half(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
function values(bytes, dtype) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / SIZE[dtype];
  const out = [];
  for (let i = 0; i < n; i++) {
    if (dtype === "float32") out.push(dv.getFloat32(4 * i, true));
    else if (dtype === "int32") out.push(dv.getInt32(4 * i, true));
    else if (dtype === "uint32") out.push(dv.getUint32(4 * i, true));
    else if (dtype === "float16") out.push(half(dv.getUint16(2 * i, true)));
    else out.push(bytes[i]);
  }
  return out;
}

async function run(c) {
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: c.wgsl });
  const info = await module.getCompilationInfo();
  const errs = info.messages.filter((m) => m.type === "error");
  if (errs.length) return `WGSL compile error: ${errs.map((m) => `${m.lineNum}: ${m.message}`).join("; ")}`;
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
  const mk = (bytes, usage) => {
    const b = device.createBuffer({ size: pad4(bytes.byteLength), usage: usage | GPUBufferUsage.COPY_DST });
    const p = new Uint8Array(pad4(bytes.byteLength));
    p.set(bytes);
    device.queue.writeBuffer(b, 0, p);
    return b;
  };
  const want = hexToBytes(c.expect);
  const params = mk(new Uint8Array(new Uint32Array([c.size, 0, 0, 0]).buffer), GPUBufferUsage.UNIFORM); // size, w1..w3
  const out = mk(new Uint8Array(pad4(want.byteLength)), GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
  const ins = c.inputs.map((h) => mk(hexToBytes(h), GPUBufferUsage.STORAGE));
  const entries = [params, out, ...ins].map((buffer, binding) => ({ binding, resource: { buffer } }));
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
  const staging = device.createBuffer({ size: pad4(want.byteLength), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(c.gx, c.gy);
  pass.end();
  enc.copyBufferToBuffer(out, 0, staging, 0, pad4(want.byteLength));
  device.queue.submit([enc.finish()]);
  const err = await device.popErrorScope();
  if (err) return `device error: ${err.message}`;
  await staging.mapAsync(GPUMapMode.READ);
  const got = new Uint8Array(staging.getMappedRange().slice(0, want.byteLength));
  staging.unmap();
  for (const b of [params, out, staging, ...ins]) b.destroy();
  const g = values(got, c.out), w = values(want, c.out);
  for (let i = 0; i < w.length; i++) {
    if (Number.isNaN(w[i]) && Number.isNaN(g[i])) continue;
    const ok = c.rtol === 0 && c.atol === 0 ? Object.is(g[i], w[i]) || (g[i] === 0 && w[i] === 0 && c.out !== "float32")
      : Math.abs(g[i] - w[i]) <= c.atol + c.rtol * Math.abs(w[i]) || g[i] === w[i];
    if (!ok) return `element ${i}: webgpu ${g[i]}, cpu ${w[i]} (rtol ${c.rtol}, atol ${c.atol})`;
  }
  return null;
}

const lines = readFileSync(0, "utf8").split("\n").filter((l) => l.trim());
let failed = 0;
const t0 = performance.now();
for (const line of lines) {
  const c = JSON.parse(line);
  const why = await run(c);
  if (why) {
    failed++;
    console.log(`FAIL ${c.name}: ${why}`);
    if (process.env.KILN_WEBGPU_DEBUG) console.log(c.wgsl);
  }
}
console.log(`[kiln] webgpu WGSL cases: ${lines.length - failed}/${lines.length} agree with the cpu (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
device.destroy();
process.exit(failed || lines.length === 0 ? 1 : 0);
