// The MNIST CNN training step (examples/mnist-node/cnn.mjs: the same model code, Adam with a
// cosine decay, batch 64, one jitted step) on kiln's wasm device and on @jax-js/jax's wasm
// backend, in one Node process, on the same batches of the real training set. Prints ms per
// step and, with the number of steps kiln's full run needed to reach 99% test accuracy
// (STEPS_TO_99, from bench/results/mnist.md), each library's projected time to 99%.
import { kiln, kilnOptax, kilnInit, loadJax, loadSplit, makeTrainer } from "./mnist_common.mjs";

const STEPS = Number(process.env.BENCH_STEPS || 20);
const STEPS_TO_99 = Number(process.env.STEPS_TO_99 || 0);
const train = loadSplit("train");
const init = kilnInit(0);
init.shuffleKey.dispose();

async function timeSteps(name, { lib, optax, around }) {
  const trainer = makeTrainer(lib, optax, init.host, { totalSteps: 5 * 937, around });
  const order = Array.from({ length: train.n }, (_, i) => i);
  const times = [];
  let first = 0, loss = 0;
  for (let i = 0; i <= STEPS; i++) {
    const t = performance.now();
    loss = await trainer.step(train, order, i * 64, (i + 1) * 64);
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
rows.push(await timeSteps("kiln (wasm)", { lib: kiln, optax: kilnOptax }));
rows.push(await timeSteps("@jax-js/jax (wasm)", await loadJax()));

console.log(`| library | first step (trace + compile) | median step, batch 64 | loss after ${STEPS + 1} steps |${STEPS_TO_99 ? " projected time to 99% |" : ""}`);
console.log(`| --- | --- | --- | --- |${STEPS_TO_99 ? " --- |" : ""}`);
for (const r of rows)
  console.log(`| ${r.name} | ${r.first.toFixed(0)} ms | ${r.median.toFixed(1)} ms | ${r.loss.toFixed(4)} |${STEPS_TO_99 ? ` ${((STEPS_TO_99 * r.median) / 1000).toFixed(0)} s |` : ""}`);
console.log(`\njax-js / kiln step time: ${(rows[1].median / rows[0].median).toFixed(2)}x`);
