// A recipe sweep for the examples/mnist-node CNN on kiln's webgpu device: which batch size, peak
// learning rate, schedule and schedule length reach 99% test accuracy in the fewest training
// examples. Each run's schedule ends at its last step; the full test set is evaluated every
// quarter epoch and at the end (mnist_gpu.mjs's trainLoop, run to the end: no early stop).
//
// The grid runs in MNIST_SWEEP_JOBS worker processes sharing the GPU. On an H100 (2026-12-05)
// 12 processes together ran no faster than one: the driver time-slices processes, it does not
// overlap their kernels; so the default is 1, and a run's time is its own only then.
// MNIST_SWEEP_CONFIRM=k then reruns the k best recipes on MNIST_SWEEP_CONFIRM_SEEDS (1,2) and
// times the ones that hold, alone, to their first evaluation >= 99%.
//
// Env (comma-separated lists): MNIST_SWEEP_BATCH (64,128,256), MNIST_SWEEP_LR
// (1e-3,2e-3,3e-3,5e-3), MNIST_SWEEP_SCHEDULE (cosine,warmup-cosine:0.1,warmup-cosine:0.2,
// warmup-cosine:0.3), MNIST_SWEEP_EPOCHS (1,1.5,2,3), MNIST_SWEEP_SEEDS (0), MNIST_SWEEP_JOBS (1),
// MNIST_SWEEP_BUDGET_S (no new grid run after it), MNIST_SWEEP_OUT (a folder for sweep.json;
// none by default), MNIST_READ_EVERY (10);
// smoke: MNIST_TRAIN_LIMIT, MNIST_TEST_LIMIT.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { kilnInit, kilnOptax, loadSplit, makeTrainer } from "../wasm/mnist_common.mjs";
import { evalSteps, loadKilnWebgpu, setupGpu, trainLoop } from "./mnist_gpu.mjs";

const env = (k, d) => (process.env[k] !== undefined && process.env[k] !== "" ? process.env[k] : d);
const list = (k, d) => env(k, d).split(",").map((s) => s.trim()).filter(Boolean);
const log = (s) => process.stdout.write(s + "\n");
const TARGET = Number(env("MNIST_TARGET", 0.99)); // smoke runs lower it
let machine = "";


// A worker reads one run (JSON) per line on stdin and answers READY when it wants the next.
async function worker() {
  const machine = await setupGpu();
  log(`MACHINE ${machine}`);
  const train = loadSplit("train"), test = loadSplit("t10k");
  // Smoke runs on a CPU adapter: MNIST_TRAIN_LIMIT and MNIST_TEST_LIMIT images.
  const limit = (s, n) => n && Object.assign(s, { n, images: s.images.subarray(0, n * 784), labels: s.labels.subarray(0, n) });
  limit(train, Number(env("MNIST_TRAIN_LIMIT", 0))), limit(test, Number(env("MNIST_TEST_LIMIT", 0)));
  const { lib } = await loadKilnWebgpu();
  const lines = createInterface({ input: process.stdin });
  log("READY");
  for await (const line of lines) {
    const c = JSON.parse(line);
    const init = kilnInit(c.seed);
    const stepsPerEpoch = Math.floor(train.n / c.batch);
    const maxSteps = Math.round(c.epochs * stepsPerEpoch);
    const trainer = makeTrainer(lib, kilnOptax, init.host, { lr: c.lr, totalSteps: maxSteps, schedule: { schedule: c.schedule, warmup: c.warmup } });
    const r = await trainLoop({ trainer, train, test, batchSize: c.batch, shuffleKey: init.shuffleKey, maxSteps, evalAt: evalSteps(stepsPerEpoch, maxSteps), target: TARGET, stopAtTarget: !!c.stop, readEvery: Number(env("MNIST_READ_EVERY", 10)) });
    log(`RESULT ${JSON.stringify({ ...c, steps: r.step, trainMs: r.trainMs, reachedMs: r.reached?.trainMs ?? null, evals: r.rows.map((x) => [Number(x.epoch.toFixed(3)), x.acc, x.trainMs]), loss: r.lastLoss })}`);
    init.shuffleKey.dispose();
    log("READY");
  }
}

// Runs `configs` on `jobs` worker processes (each takes the next run when it is free), no new
// run after `budgetMs`; resolves to the results.
async function runAll(configs, jobs, budgetMs = Infinity, label = "") {
  const queue = [...configs], results = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(jobs, configs.length) }, () => new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--worker"], { stdio: ["pipe", "pipe", "inherit"] });
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("MACHINE ")) machine = line.slice(8);
      else if (line === "READY") {
        const c = performance.now() - t0 < budgetMs && queue.shift();
        if (c) child.stdin.write(JSON.stringify(c) + "\n");
        else child.stdin.end();
      } else if (line.startsWith("RESULT ")) {
        const r = JSON.parse(line.slice(7));
        results.push(r);
        log(`${label}${name(r)}: final ${pct(r.evals.at(-1)[1])}, first >= 99% at epoch ${first99(r) ?? "-"}, train ${(r.trainMs / 1000).toFixed(1)} s [${results.length}/${configs.length}, ${((performance.now() - t0) / 1000).toFixed(0)} s]`);
      } else if (line) log(line);
    });
    child.on("exit", (code) => (code && log(`worker exited with ${code}`), resolve()));
  })));
  if (queue.length) log(`${label}budget spent: ${queue.length} runs not started`);
  return results;
}


async function main() {
  const configs = [];
  for (const epochs of list("MNIST_SWEEP_EPOCHS", "1,1.5,2,3").map(Number))
    for (const batch of list("MNIST_SWEEP_BATCH", "64,128,256").map(Number))
      for (const lr of list("MNIST_SWEEP_LR", "1e-3,2e-3,3e-3,5e-3").map(Number))
        for (const s of list("MNIST_SWEEP_SCHEDULE", "cosine,warmup-cosine:0.1,warmup-cosine:0.2,warmup-cosine:0.3"))
          for (const seed of list("MNIST_SWEEP_SEEDS", "0").map(Number)) {
            const [schedule, warmup] = s.split(":");
            configs.push({ epochs, batch, lr, schedule, warmup: warmup === undefined ? 0 : Number(warmup), seed });
          }
  const jobs = Number(env("MNIST_SWEEP_JOBS", 1));
  const budgetMs = 1000 * Number(env("MNIST_SWEEP_BUDGET_S", Infinity));
  log(`mnist recipe sweep on kiln webgpu: ${configs.length} runs in ${jobs} processes, schedule lengths in the order given, no new run after ${budgetMs / 1000} s`);
  const t0 = performance.now();
  const results = await runAll(configs, jobs, budgetMs);
  log(`\n${machine}; ${jobs} processes, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  // Confirmation: the MNIST_SWEEP_CONFIRM recipes that end >= 99% in the fewest epochs (then
  // the highest accuracy) on more seeds; then the confirmed ones, one at a time (so the time is
  // the GPU's alone), trained to their first evaluation >= 99% for their time to 99%.
  const confirm = Number(env("MNIST_SWEEP_CONFIRM", 0));
  if (confirm) {
    const seeds = list("MNIST_SWEEP_CONFIRM_SEEDS", "1,2").map(Number);
    const top = results.filter((r) => r.evals.at(-1)[1] >= TARGET).sort((a, b) => a.epochs - b.epochs || b.evals.at(-1)[1] - a.evals.at(-1)[1]).slice(0, confirm);
    const more = top.flatMap((r) => seeds.map((seed) => ({ epochs: r.epochs, batch: r.batch, lr: r.lr, schedule: r.schedule, warmup: r.warmup, seed })));
    log(`\nconfirming ${top.length} recipes on seeds ${seeds.join(",")}`);
    results.push(...(await runAll(more, jobs, Infinity, "confirm: ")));
    const same = (a, b) => a.epochs === b.epochs && a.batch === b.batch && a.lr === b.lr && a.schedule === b.schedule && a.warmup === b.warmup;
    const robust = top.filter((t) => results.filter((r) => same(r, t)).every((r) => r.evals.at(-1)[1] >= TARGET));
    const timed = await runAll(robust.map((t) => ({ ...pick(t), seed: 0, stop: true })), 1, Infinity, "timed alone: ");
    for (const r of timed) log(`time to 99% alone (seed 0): ${name(r)}: ${r.reachedMs === null ? "not reached" : `${(r.reachedMs / 1000).toFixed(2)} s at epoch ${first99(r)}`}, ${r.steps} steps`);
    results.push(...timed.map((r) => ({ ...r, timed: true })));
  }
  report(results.filter((r) => !r.timed));
  const out = env("MNIST_SWEEP_OUT", "");
  if (out) mkdirSync(out, { recursive: true }), writeFileSync(join(out, "sweep.json"), JSON.stringify({ machine, jobs, results }));
}

const pick = (r) => ({ epochs: r.epochs, batch: r.batch, lr: r.lr, schedule: r.schedule, warmup: r.warmup });

function name(r) {
  return `${r.epochs} ep, batch ${r.batch}, lr ${r.lr}, ${r.schedule === "cosine" ? "cosine" : `warmup ${r.warmup}`}, seed ${r.seed}`;
}
function pct(a) {
  return `${(100 * a).toFixed(2)}%`;
}
function first99(r) {
  return r.evals.find((e) => e[1] >= TARGET)?.[0];
}

// One row per recipe (seeds together), sorted by the examples needed: the recipe's length if
// every seed ends >= 99%, with the earliest quarter-epoch evaluation >= 99% beside it.
function report(results) {
  const groups = new Map();
  for (const r of results) {
    const k = JSON.stringify([r.epochs, r.batch, r.lr, r.schedule, r.warmup]);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  const rows = [...groups.values()].map((rs) => {
    rs.sort((a, b) => a.seed - b.seed);
    const finals = rs.map((r) => r.evals.at(-1)[1]);
    const firsts = rs.map(first99);
    return { r: rs[0], rs, min: Math.min(...finals), all: finals.every((a) => a >= TARGET), first: firsts.some((f) => f === undefined) ? Infinity : Math.max(...firsts) };
  });
  rows.sort((a, b) => b.all - a.all || a.r.epochs - b.r.epochs || a.first - b.first || b.min - a.min);
  log(`\n| epochs | batch | lr | schedule | seeds | final test accuracy per seed | first >= 99% (epoch, worst seed) | train s per run |`);
  log(`| --- | --- | --- | --- | --- | --- | --- | --- |`);
  for (const { r, rs, first } of rows)
    log(`| ${r.epochs} | ${r.batch} | ${r.lr} | ${r.schedule === "cosine" ? "cosine" : `warmup-cosine ${r.warmup}`} | ${rs.map((x) => x.seed).join(",")} | ${rs.map((x) => pct(x.evals.at(-1)[1])).join(", ")} | ${first === Infinity ? "-" : first} | ${rs.map((x) => (x.trainMs / 1000).toFixed(1)).join(", ")} |`);
}

if (process.argv[2] === "--worker") await worker();
else await main();
process.exit(0); // Dawn's device keeps the event loop alive
