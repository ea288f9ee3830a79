// GPU-clock timing shared by bench/webgpu's kernel scripts: a chain of dispatches of one
// pipeline recorded in one compute pass and encoded before the clock starts, and the device's
// vec4 copy-shader bandwidth (the yardstick issue 20's targets are fractions of).

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

// ms per chain of `chain` dispatches of (gx, gy) workgroups in one pass: the median of `reps`
// after one warm-up.
export async function timeChain(device, pipeline, group, gx, gy, chain, reps = 7) {
  const times = [];
  for (let rep = 0; rep < reps + 1; rep++) {
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    for (let i = 0; i < chain; i++) {
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(gx, gy);
    }
    pass.end();
    const cb = enc.finish();
    const t0 = performance.now();
    device.queue.submit([cb]);
    await device.queue.onSubmittedWorkDone();
    if (rep > 0) times.push(performance.now() - t0);
  }
  return median(times);
}

// GB/s read + written by a vec4 copy of `mib` MiB (chains of 8).
export async function copyGBs(device, mib) {
  const n = (mib << 20) / 16;
  const src = device.createBuffer({ size: n * 16, usage: GPUBufferUsage.STORAGE });
  const dst = device.createBuffer({ size: n * 16, usage: GPUBufferUsage.STORAGE });
  const module = device.createShaderModule({ code: "@group(0) @binding(0) var<storage, read> s: array<vec4<f32>>;\n" +
    "@group(0) @binding(1) var<storage, read_write> d: array<vec4<f32>>;\n" +
    "@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {\n" +
    `  let i = g.x + g.y * nw.x * 256u; if (i < ${n}u) { d[i] = s[i]; } }` });
  const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: src } }, { binding: 1, resource: { buffer: dst } }] });
  const groups = Math.ceil(n / 256), gx = Math.min(groups, 65535);
  const ms = await timeChain(device, pipeline, group, gx, Math.ceil(groups / gx), 8);
  src.destroy(); dst.destroy();
  return (2 * n * 16 * 8) / (ms * 1e6);
}
