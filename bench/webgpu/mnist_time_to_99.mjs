// Time to 99% MNIST test accuracy on WebGPU: kiln's webgpu device against @jax-js/jax's, one
// after the other in one Node.js process on one GPU (Dawn from the npm package `webgpu`).
//
// Equal settings, as bench/wasm/mnist_time_to_99.mjs: the examples/mnist-node CNN, batch 64,
// Adam lr 1e-3 cosine-decayed over 5 epochs, seed 0, kiln's initial parameters copied into
// jax-js, the same shuffled batches, evaluation on the test set every quarter epoch; a library
// stops at the first evaluation >= MNIST_TARGET. What the training time counts is trainLoop's
// (mnist_gpu.mjs): losses are read every MNIST_READ_EVERY steps, asynchronously, so the GPU is
// not stalled every step; evaluation is not counted.
//
// Env: MNIST_LIBS (default "kiln,jax"), MNIST_EPOCHS (most epochs, 5), MNIST_TARGET (0.99),
// MNIST_CAP_S (training-time cap per library, 300), MNIST_READ_EVERY (10), MNIST_SEED (0).
// Another recipe, still equal for both: MNIST_BATCH, MNIST_LR, MNIST_SCHEDULE_EPOCHS (the
// schedule's length; training stops there at the latest), MNIST_SCHEDULE (cosine |
// warmup-cosine, kiln only: jax-js's Adam shim has the cosine alone), MNIST_WARMUP (fraction).
// Smoke: MNIST_STEPS_PER_EPOCH and MNIST_TEST_LIMIT shrink the run.
import { kilnInit, kilnOptax, loadJax, loadSplit, makeTrainer } from "../wasm/mnist_common.mjs";
import { evalSteps, loadKilnWebgpu, setupGpu, trainLoop } from "./mnist_gpu.mjs";

const env = (k, d) => (process.env[k] !== undefined && process.env[k] !== "" ? process.env[k] : d);
const BATCH = Number(env("MNIST_BATCH", 64)), LR = Number(env("MNIST_LR", 1e-3)), SEED = Number(env("MNIST_SEED", 0));
const SCHEDULE = env("MNIST_SCHEDULE", "cosine"), WARMUP = Number(env("MNIST_WARMUP", 0.1));
const SCHEDULE_EPOCHS = Number(env("MNIST_SCHEDULE_EPOCHS", 5));
const EPOCHS = Math.min(Number(env("MNIST_EPOCHS", 5)), SCHEDULE_EPOCHS);
const TARGET = Number(env("MNIST_TARGET", 0.99)), CAP_MS = 1000 * Number(env("MNIST_CAP_S", 300));
const READ_EVERY = Number(env("MNIST_READ_EVERY", 10));
const LIBS = env("MNIST_LIBS", "kiln,jax").split(",");
if (SCHEDULE !== "cosine" && LIBS.includes("jax")) throw new Error("jax-js's Adam shim has the cosine schedule only: set MNIST_LIBS=kiln");

const log = (s) => process.stdout.write(s + "\n");
const sec = (ms) => (ms / 1000).toFixed(2);
log(await setupGpu());

const train = loadSplit("train"), test = loadSplit("t10k");
const TEST_LIMIT = Number(env("MNIST_TEST_LIMIT", 0));
if (TEST_LIMIT) Object.assign(test, { n: TEST_LIMIT, images: test.images.subarray(0, TEST_LIMIT * 784), labels: test.labels.subarray(0, TEST_LIMIT) });
const STEPS_PER_EPOCH = Number(env("MNIST_STEPS_PER_EPOCH", 0));
if (STEPS_PER_EPOCH) Object.assign(train, { n: STEPS_PER_EPOCH * BATCH });
const stepsPerEpoch = Math.floor(train.n / BATCH);
const totalSteps = Math.round(SCHEDULE_EPOCHS * stepsPerEpoch);
const maxSteps = Math.round(EPOCHS * stepsPerEpoch);
const evalAt = evalSteps(stepsPerEpoch, maxSteps);
const recipe = `batch ${BATCH}, Adam lr ${LR}, ${SCHEDULE === "cosine" ? "cosine" : `warmup-cosine (warmup ${WARMUP})`} over ${totalSteps} steps (${SCHEDULE_EPOCHS} epochs), seed ${SEED}`;
log(`mnist time to ${100 * TARGET}% on webgpu: ${LIBS.join(", ")}; ${recipe}; ${stepsPerEpoch} steps/epoch, at most ${EPOCHS} epochs, 4 evaluations/epoch on ${test.n} test images, loss read every ${READ_EVERY} steps`);

const init = kilnInit(SEED);
const results = [];
for (const name of LIBS) {
  const label = name === "kiln" ? "kiln (webgpu)" : "@jax-js/jax (webgpu)";
  try {
    const { lib, optax, around } = name === "kiln" ? { ...(await loadKilnWebgpu()), optax: kilnOptax } : await loadJax("webgpu", () => import("@jax-js/jax"));
    const trainer = makeTrainer(lib, optax, init.host, { lr: LR, totalSteps, schedule: { schedule: SCHEDULE, warmup: WARMUP }, around });
    const row = (x) => log(`[${label}] step ${x.step} (epoch ${x.epoch.toFixed(2)}): test accuracy ${(100 * x.acc).toFixed(2)}%, loss ${x.loss.toFixed(4)}, train ${sec(x.trainMs)} s`);
    const r = await trainLoop({ trainer, train, test, batchSize: BATCH, shuffleKey: init.shuffleKey, maxSteps, evalAt, target: TARGET, capMs: CAP_MS, readEvery: READ_EVERY, log: row });
    // Steady rate: the steps between the first and the last evaluation (no compile in it).
    const a = r.rows[0], b = r.rows.at(-1);
    r.steady = b && b.step > a.step ? (b.step - a.step) / ((b.trainMs - a.trainMs) / 1000) : NaN;
    results.push({ label, ...r });
    log(`[${label}] ${r.step} steps, train ${sec(r.trainMs)} s (${(r.step / (r.trainMs / 1000)).toFixed(0)} steps/s, ${r.steady.toFixed(0)} after the first evaluation), eval ${sec(r.evalMs)} s (not counted)`);
  } catch (e) {
    results.push({ label, error: String(e?.stack ?? e) });
    log(`[${label}] failed: ${String(e?.stack ?? e)}`);
  }
}

log(`\n| library | time to ${100 * TARGET}% (s) | steps | epochs | accuracy there | steps/s (all) | steps/s (steady) |`);
log(`| --- | --- | --- | --- | --- | --- | --- |`);
for (const r of results) {
  if (r.error) { log(`| ${r.label} | failed: ${r.error.split("\n")[0].slice(0, 120)} | | | | | |`); continue; }
  const best = Math.max(...r.rows.map((x) => x.acc));
  const at = r.reached ? sec(r.reached.trainMs) : `not reached (best ${(100 * best).toFixed(2)}% in ${sec(r.trainMs)} s${r.capped ? ", time cap" : ""})`;
  const x = r.reached ?? r.rows.at(-1);
  log(`| ${r.label} | ${at} | ${x.step} | ${x.epoch.toFixed(2)} | ${(100 * x.acc).toFixed(2)}% | ${(r.step / (r.trainMs / 1000)).toFixed(0)} | ${r.steady.toFixed(0)} |`);
}
const [k, j] = ["kiln (webgpu)", "@jax-js/jax (webgpu)"].map((l) => results.find((r) => r.label === l && !r.error));
if (k?.reached && j) log(`@jax-js/jax webgpu / kiln webgpu time to ${100 * TARGET}%: ${j.reached ? "" : ">= "}${((j.reached ?? j).trainMs / k.reached.trainMs).toFixed(2)}x`);
process.exit(0); // Dawn's device keeps the event loop alive
