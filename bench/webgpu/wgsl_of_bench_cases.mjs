// The WGSL of the webgpu bench's cases (bench.mjs: matmul, matvec, softmax, the chain; small sizes)
// from one build's js/dist, as a hash and length per pipeline, so two commits' kernels can be
// compared text for text on any adapter (SwiftShader too). usage: node wgsl_of_bench_cases.mjs
// DIST [PREFIX] (PREFIX: also write each WGSL to PREFIX_i.wgsl).
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createHash } from "node:crypto";
import { create, globals } from "webgpu";
Object.assign(globalThis, globals);
globalThis.navigator = { gpu: create([]) };
const dist = pathToFileURL(path.resolve(process.argv[2])).href;
const lib = await import(`${dist}/index.js`);
await lib.init("webgpu"); lib.defaultDevice("webgpu");
const { webGpuRuntime } = await import(`${dist}/webgpu/attach.js`);
const rt = webGpuRuntime(); const texts = [];
const orig = rt.pipeline.bind(rt); rt.pipeline = (w, n) => { texts.push(w); return orig(w, n); };
const { numpy: np, nn, jit } = lib;
const arr = (shape) => np.array(new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.5)).reshape(shape);
for (const n of [64, 256]) {
  const cases = [
    [jit((a, b) => np.matmul(a, b)), [arr([n, n]), arr([n, n])]],
    [jit((a, x) => np.matmul(a, x)), [arr([n, n]), arr([n])]],
    [jit((x) => nn.softmax(x, -1)), [arr([n, n])]],
    [jit((x) => np.maximum(x.ref.mul(1.5).add(0.5), 0).mul(x).sub(0.25)), [arr([n * n])]],
  ];
  for (const [f, args] of cases) { const y = f(...args); await y.data(); }
}
if (process.argv[3]) { const fs = await import("node:fs"); texts.forEach((t, i) => fs.writeFileSync(`${process.argv[3]}_${i}.wgsl`, t)); }
for (const t of texts) console.log(createHash("sha256").update(t).digest("hex").slice(0, 16), t.length);
process.exit(0);
