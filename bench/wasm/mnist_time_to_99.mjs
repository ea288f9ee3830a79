// Time to 99% MNIST test accuracy for kiln (native and wasm) and @jax-js/jax (wasm), in one run.
//
// kiln wasm and jax-js wasm train the examples/mnist-node CNN (Adam lr 1e-3, cosine decay over
// 5 epochs, batch 64, seed 0) from the same initial parameters on the same shuffled batches in
// this process; kiln native is build/native/kiln_mnist with the same hyperparameters, in a child
// process. The three take turns in time slices of MNIST_SLICE_S seconds (the others paused:
// the native child by SIGSTOP), so load from the rest of the machine falls on all of them
// alike, and the slowest one gets the machine alone once the others are done.
//
// A library's time is its own training time: every step (batch upload, the jitted step, and
// the loss read back, so the work is finished), including the first step's trace and compile.
// The wasm libraries are evaluated on the test set at the same steps (MNIST_EVALS_PER_EPOCH
// per epoch); evaluation time is reported apart and NOT counted. kiln_mnist evaluates once per
// epoch, and its time (its running time between slices) DOES include that evaluation, its
// process start and data load. A library stops at the first evaluation >= MNIST_TARGET.
//
// Env: MNIST_EPOCHS (most epochs, default 5), MNIST_EVALS_PER_EPOCH (4), MNIST_SLICE_S (60),
// MNIST_TARGET (0.99), MNIST_NATIVE (kiln_mnist path; 0 skips native), MNIST_LIBS (which wasm
// libraries, default "kiln,jax"). Smoke: MNIST_STEPS_PER_EPOCH and MNIST_TEST_LIMIT shrink the
// run (e.g. 8 and 500); native then trains on MNIST_STEPS_PER_EPOCH * 64 images.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { dataDir, epochOrder, kiln, kilnInit, kilnOptax, loadJax, loadSplit, makeTrainer } from "./mnist_common.mjs";

const env = (k, d) => (process.env[k] !== undefined && process.env[k] !== "" ? process.env[k] : d);
const BATCH = 64, SEED = 0, LR = 1e-3, SCHEDULE_EPOCHS = 5;
const EPOCHS = Number(env("MNIST_EPOCHS", 5));
const EVALS = Number(env("MNIST_EVALS_PER_EPOCH", 4));
const SLICE_MS = 1000 * Number(env("MNIST_SLICE_S", 60));
const TARGET = Number(env("MNIST_TARGET", 0.99));
const LIBS = env("MNIST_LIBS", "kiln,jax").split(",");
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const NATIVE = env("MNIST_NATIVE", join(root, "build/native/kiln_mnist"));

const train = loadSplit("train"), test = loadSplit("t10k");
const TEST_LIMIT = Number(env("MNIST_TEST_LIMIT", 0));
if (TEST_LIMIT) Object.assign(test, { n: TEST_LIMIT, images: test.images.subarray(0, TEST_LIMIT * 784), labels: test.labels.subarray(0, TEST_LIMIT) });
const fullSteps = Math.floor(train.n / BATCH); // 937: partial batches are dropped, as in kiln_mnist
const stepsPerEpoch = Number(env("MNIST_STEPS_PER_EPOCH", fullSteps));
const totalSteps = SCHEDULE_EPOCHS * stepsPerEpoch; // the cosine decay spans 5 epochs whatever MNIST_EPOCHS is
// Evaluation points: the end of each 1/EVALS of an epoch (so epoch ends are among them).
const evalAt = new Set();
for (let e = 0; e < EPOCHS; e++) for (let k = 1; k <= EVALS; k++) evalAt.add(e * stepsPerEpoch + Math.round((k * stepsPerEpoch) / EVALS));

const log = (s) => process.stdout.write(s + "\n");
const load = () => loadavg()[0].toFixed(2);
const sec = (ms) => (ms / 1000).toFixed(1);

// One wasm library: runs steps for a slice, evaluating at the shared points.
function wasmRunner(name, { lib, optax, around }, init) {
  const trainer = makeTrainer(lib, optax, init.host, { lr: LR, totalSteps, around });
  const orders = [];
  const order = (e) => (orders[e] ??= epochOrder(init.shuffleKey, e, train.n));
  const r = { name, step: 0, trainMs: 0, evalMs: 0, rows: [], done: false, reached: null };
  r.slice = async (ms) => {
    const end = performance.now() + ms;
    while (!r.done && performance.now() < end) {
      const e = Math.floor(r.step / stepsPerEpoch), s = r.step % stepsPerEpoch;
      const t = performance.now();
      const loss = await trainer.step(train, order(e), s * BATCH, (s + 1) * BATCH);
      r.trainMs += performance.now() - t;
      r.step++;
      // A step's promises settle as microtasks; yielding a turn lets a SIGINT/SIGTERM through.
      await new Promise(setImmediate);
      if (!evalAt.has(r.step)) continue;
      const t2 = performance.now();
      const acc = await trainer.accuracy(test);
      r.evalMs += performance.now() - t2;
      r.rows.push({ step: r.step, trainMs: r.trainMs, evalMs: r.evalMs, acc, loss });
      log(`[${name}] step ${r.step} (epoch ${(r.step / stepsPerEpoch).toFixed(2)}): test accuracy ${(100 * acc).toFixed(2)}%, loss ${loss.toFixed(4)}, train ${sec(r.trainMs)} s, eval ${sec(r.evalMs)} s, load ${load()}`);
      if (acc >= TARGET) r.reached = r.rows.at(-1);
      if (r.reached || r.step >= EPOCHS * stepsPerEpoch) r.done = true;
    }
  };
  return r;
}

// kiln_mnist in a child process, paused (SIGSTOP) outside its slices; its clock is the time it
// was allowed to run, read when each epoch line arrives.
function nativeRunner() {
  const args = ["--device", "native", "--epochs", String(SCHEDULE_EPOCHS), "--batch-size", String(BATCH), "--lr", String(LR), "--schedule", "cosine", "--seed", String(SEED), "--data-dir", dataDir];
  if (stepsPerEpoch !== fullSteps) args.push("--train-limit", String(stepsPerEpoch * BATCH));
  if (TEST_LIMIT) args.push("--test-limit", String(TEST_LIMIT));
  const r = { name: "kiln (native)", step: 0, trainMs: 0, rows: [], done: false, reached: null, args };
  let runningSince = null, err = "", wake = null;
  const now = () => r.trainMs + (runningSince === null ? 0 : performance.now() - runningSince);
  const child = spawn(NATIVE, args, { stdio: ["ignore", "pipe", "pipe"] });
  child.kill("SIGSTOP"); // it starts on its first slice
  child.stderr.on("data", (d) => (err = (err + d).slice(-2000)));
  createInterface({ input: child.stdout }).on("line", (line) => {
    const m = /^epoch (\d+)\/\d+: train loss ([\d.]+), test accuracy ([\d.]+)%/.exec(line);
    if (!m) return;
    const epoch = Number(m[1]), acc = Number(m[3]) / 100;
    r.step = epoch * stepsPerEpoch;
    r.rows.push({ step: r.step, trainMs: now(), acc, loss: Number(m[2]), line });
    log(`[${r.name}] ${line} | kiln_mnist running time ${sec(now())} s, load ${load()}`);
    if (acc >= TARGET) r.reached = r.rows.at(-1);
    if (r.reached || epoch >= EPOCHS) finish();
  });
  child.on("exit", (code, signal) => {
    if (!r.done && code !== 0) log(`[${r.name}] exited with ${code ?? signal}: ${err.trim().split("\r").at(-1)}`);
    finish();
  });
  function finish() {
    if (r.done) return;
    r.trainMs = now(), runningSince = null, r.done = true;
    if (child.exitCode === null) child.kill("SIGKILL");
    wake?.();
  }
  r.slice = (ms) =>
    new Promise((resolve) => {
      if (r.done) return resolve();
      runningSince = performance.now();
      child.kill("SIGCONT");
      const timer = setTimeout(() => (wake = null, pause(), resolve()), ms);
      wake = () => (clearTimeout(timer), resolve());
    });
  function pause() {
    if (r.done) return;
    child.kill("SIGSTOP");
    r.trainMs = now(), runningSince = null;
  }
  r.kill = () => child.exitCode === null && child.kill("SIGKILL");
  return r;
}

const runners = [];
if (NATIVE !== "0") {
  if (existsSync(NATIVE)) runners.push(nativeRunner());
  else log(`[kiln (native)] ${NATIVE} not found (cmake --preset native && cmake --build --preset native --target kiln_mnist); skipped`);
}
kiln.defaultDevice("wasm");
const init = kilnInit(SEED);
if (LIBS.includes("kiln")) runners.push(wasmRunner("kiln (wasm)", { lib: kiln, optax: kilnOptax }, init));
if (LIBS.includes("jax")) {
  runners.push(wasmRunner("@jax-js/jax (wasm)", await loadJax(), init));
}

log(`mnist time to ${100 * TARGET}%: ${runners.map((r) => r.name).join(", ")}; batch ${BATCH}, Adam lr ${LR}, cosine over ${totalSteps} steps, seed ${SEED}; ` +
  `${stepsPerEpoch} steps/epoch, at most ${EPOCHS} epochs, ${EVALS} evaluations/epoch on ${test.n} test images, ${SLICE_MS / 1000} s slices; KILN_NUM_THREADS=${env("KILN_NUM_THREADS", "(default)")}, load ${load()}`);

function summary() {
  const wasm = runners.filter((r) => r.evalMs !== undefined);
  if (wasm.length) {
    log(`\n| step | epoch | ${wasm.map((r) => `${r.name} train s | accuracy`).join(" | ")} |`);
    log(`| --- | --- | ${wasm.map(() => "--- | ---").join(" | ")} |`);
    for (const step of [...evalAt].sort((a, b) => a - b)) {
      const cells = wasm.map((r) => r.rows.find((x) => x.step === step)).map((x) => (x ? `${sec(x.trainMs)} | ${(100 * x.acc).toFixed(2)}%` : "- | -"));
      if (cells.some((c) => c !== "- | -")) log(`| ${step} | ${(step / stepsPerEpoch).toFixed(2)} | ${cells.join(" | ")} |`);
    }
    for (const r of wasm) log(`${r.name}: ${r.step} steps, train ${sec(r.trainMs)} s, eval ${sec(r.evalMs)} s (not counted)`);
  }
  const native = runners.find((r) => r.args);
  if (native) for (const x of native.rows) log(`${native.name}: epoch ${x.step / stepsPerEpoch}, ${sec(x.trainMs)} s, accuracy ${(100 * x.acc).toFixed(2)}% (${x.line.replace(/^epoch \S+ /, "")})`);
  const at = (r) => (r.reached ? `${sec(r.reached.trainMs)} s (step ${r.reached.step})` : `not reached (best ${r.rows.length ? (100 * Math.max(...r.rows.map((x) => x.acc))).toFixed(2) : "-"}% in ${sec(r.trainMs)} s, ${r.step} steps)`);
  log(`\ntime to ${100 * TARGET}%: ${runners.map((r) => `${r.name} ${at(r)}`).join("; ")}`);
  const by = (n) => runners.find((r) => r.name === n);
  const k = by("kiln (wasm)"), j = by("@jax-js/jax (wasm)"), n = by("kiln (native)");
  if (k?.reached && j) log(`@jax-js/jax wasm / kiln wasm: ${j.reached ? "" : ">= "}${((j.reached ? j.reached.trainMs : j.trainMs) / k.reached.trainMs).toFixed(2)}x${j.reached ? "" : " (jax-js has not reached it yet)"}`);
  if (k?.reached && n?.reached) log(`kiln wasm / kiln native: ${(k.reached.trainMs / n.reached.trainMs).toFixed(2)}x`);
}

// An interrupted run (Ctrl-C, kill) still prints what it measured.
for (const s of ["SIGINT", "SIGTERM"])
  process.on(s, () => {
    log(`\ninterrupted (${s}): partial results`);
    summary();
    for (const r of runners) r.kill?.();
    process.exit(130);
  });

while (runners.some((r) => !r.done)) for (const r of runners) if (!r.done) await r.slice(SLICE_MS);
summary();
