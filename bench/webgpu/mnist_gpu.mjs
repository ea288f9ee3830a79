// What bench/webgpu/mnist_time_to_99.mjs and mnist_sweep.mjs share: the WebGPU adapter in Node
// (Dawn from the npm package `webgpu`), kiln on its webgpu device, and a training loop that keeps
// the GPU busy. The model, data, init and jax-js shim are bench/wasm/mnist_common.mjs's.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { create, globals } from "webgpu";
import { epochOrder, kiln } from "../wasm/mnist_common.mjs";

/** Installs navigator.gpu (one GPU object for both libraries); resolves to a line naming the machine. */
export async function setupGpu() {
  Object.assign(globalThis, globals);
  Object.defineProperty(globalThis, "navigator", { value: { gpu: create([]), userAgent: "Node.js" }, configurable: true });
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new Error("no WebGPU adapter (on a machine without a GPU: VK_ICD_FILENAMES=<swiftshader icd json>)");
  const info = adapter.info ?? {};
  let smi = "";
  try { smi = execFileSync("nvidia-smi", ["--query-gpu=name,driver_version", "--format=csv,noheader"]).toString().trim(); } catch {}
  let cpu = cpus()[0]?.model ?? "?";
  try { cpu = /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpu; } catch {}
  const gpu = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
  return `adapter ${gpu}${smi ? ` (nvidia-smi: ${smi})` : ""}; CPU ${cpu} x${cpus().length}; node ${process.version}`;
}

/** kiln with its webgpu device as the default (init and shuffles stay on wasm: mnist_common). */
export async function loadKilnWebgpu() {
  if (!(await kiln.init("webgpu")).includes("webgpu")) throw new Error("kiln: no webgpu device");
  kiln.defaultDevice("webgpu");
  return { lib: kiln };
}

/**
 * Trains with `trainer` (mnist_common's makeTrainer) on batches of `batchSize` from the epoch
 * orders of shuffleKey, evaluating on `test` after the steps in `evalAt` (a Set), until maxSteps,
 * `target` test accuracy (when stopAtTarget) or `capMs` of training time.
 *
 * Steps are queued without waiting for the GPU: the loss of every readEvery-th step is read
 * asynchronously, and the loop waits only for the read before the latest, so at most about
 * 2 * readEvery steps are in flight. Before an evaluation every read is awaited (all queued work
 * is then done) and the clock stops: training time is the batches' assembly and upload, the
 * steps (the first one's trace and compile too) and the loss reads; the evaluations and the
 * epoch orders (drawn before the clock starts) are not counted.
 */
export async function trainLoop({ trainer, train, test, batchSize, shuffleKey, maxSteps, evalAt, target = 0.99, stopAtTarget = true, capMs = Infinity, readEvery = 10, log = () => {} }) {
  const stepsPerEpoch = Math.floor(train.n / batchSize);
  const orders = [];
  for (let e = 0; e * stepsPerEpoch < maxSteps; e++) orders.push(epochOrder(shuffleKey, e, train.n));
  const r = { step: 0, trainMs: 0, evalMs: 0, rows: [], reached: null, lastLoss: NaN };
  let pending = [];
  let t = performance.now();
  while (r.step < maxSteps) {
    const e = Math.floor(r.step / stepsPerEpoch), s = r.step % stepsPerEpoch;
    const l = await trainer.enqueue(train, orders[e], s * batchSize, (s + 1) * batchSize);
    r.step++;
    const evaluate = evalAt.has(r.step) || r.step === maxSteps;
    if (r.step % readEvery === 0 || evaluate) pending.push(l.jsAsync());
    else l.dispose();
    if (pending.length > 1) r.lastLoss = await pending.shift();
    const over = r.trainMs + performance.now() - t > capMs;
    if (!evaluate && !over) continue;
    for (const p of pending) r.lastLoss = await p;
    pending = [];
    r.trainMs += performance.now() - t;
    const t2 = performance.now();
    const acc = await trainer.accuracy(test);
    r.evalMs += performance.now() - t2;
    r.rows.push({ step: r.step, epoch: r.step / stepsPerEpoch, trainMs: r.trainMs, acc, loss: r.lastLoss });
    log(r.rows.at(-1));
    if (acc >= target && !r.reached) r.reached = r.rows.at(-1);
    if ((r.reached && stopAtTarget) || over) break;
    t = performance.now();
  }
  r.capped = !r.reached && r.step < maxSteps;
  return r;
}

/** The steps after which to evaluate: every 1/perEpoch of an epoch, and the last step. */
export function evalSteps(stepsPerEpoch, maxSteps, perEpoch = 4) {
  const at = new Set([maxSteps]);
  for (let k = 1; Math.round((k * stepsPerEpoch) / perEpoch) <= maxSteps; k++) at.add(Math.round((k * stepsPerEpoch) / perEpoch));
  return at;
}
