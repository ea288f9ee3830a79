// The MNIST CNN of examples/mnist (C++) written on kiln's JS API, shared by the Node example
// and the browser page: same layers, lecun_normal init from the same keys, Adam with an
// optax cosine decay, one jitted step per batch. Imports are injected so it runs anywhere.

/** conv 5x5x24 -> relu -> pool -> conv 3x3x32 -> relu -> pool -> dense 128 -> relu -> dense 10. */
export function makeCnn({ kiln, optax }) {
  const { numpy: np, lax, nn, random, jit, valueAndGrad } = kiln;

  // jax.nn.initializers.lecun_normal: truncated normal in [-2, 2], variance 1 / fan_in.
  const lecun = (key, shape, fanIn) => random.truncatedNormal(key, -2, 2, shape).mul(Math.sqrt(1 / fanIn) / 0.87962566103423978);

  /** Parameters from random.key(seed) split as the C++ trainer does; returns { params, shuffleKey }. */
  function init(seed) {
    const keys = random.split(random.key(seed), 2);
    const k = random.split(keys.ref.slice(0), 4);
    const shuffleKey = keys.slice(1);
    const key = (i) => k.ref.slice(i);
    const params = {
      conv1_w: lecun(key(0), [24, 1, 5, 5], 1 * 25),
      conv1_b: np.zeros([24]),
      conv2_w: lecun(key(1), [32, 24, 3, 3], 24 * 9),
      conv2_b: np.zeros([32]),
      dense1_w: lecun(key(2), [800, 128], 800),
      dense1_b: np.zeros([128]),
      dense2_w: lecun(key(3), [128, 10], 128),
      dense2_b: np.zeros([10]),
    };
    k.dispose();
    return { params, shuffleKey };
  }

  // kiln's reduceWindow recognizes its computation by name (np.max's exported function is
  // a generic reducer), so the window max is a function named `max`; the name is set
  // explicitly because bundlers rename colliding functions (esbuild made it `max2` when the
  // test suite was bundled for Chromium).
  const max = Object.defineProperty((x) => np.max(x), "name", { value: "max" });
  const convBlock = (x, w, b) => {
    const c = lax.conv(x, w, [1, 1], "VALID");
    const r = nn.relu(c.add(b.reshape([1, -1, 1, 1])));
    return lax.reduceWindow(r, max, [1, 1, 2, 2], [1, 1, 2, 2]);
  };

  /** Logits [b, 10] for images [b, 1, 28, 28]; consumes p and x. */
  function apply(p, x) {
    const b = x.shape[0];
    let h = convBlock(x, p.conv1_w, p.conv1_b); // [b, 24, 12, 12]
    h = convBlock(h, p.conv2_w, p.conv2_b); // [b, 32, 5, 5]
    h = nn.relu(np.matmul(h.reshape([b, 800]), p.dense1_w).add(p.dense1_b));
    return np.matmul(h, p.dense2_w).add(p.dense2_b);
  }

  /** Mean softmax cross-entropy against int labels. */
  function loss(p, x, y) {
    const logp = nn.logSoftmax(apply(p, x), -1);
    return np.mean(np.sum(logp.mul(nn.oneHot(y, 10)), -1)).neg();
  }

  /**
   * Adam with a learning-rate schedule over totalSteps: "cosine" decays from lr to 0 (the C++
   * trainer's default); "warmup-cosine" rises linearly from 0 to lr over the first `warmup`
   * fraction of the steps, then decays to 0 (a one-cycle shape).
   */
  function optimizer(lr, totalSteps, { schedule = "cosine", warmup = 0.1 } = {}) {
    if (schedule === "cosine") return optax.adam(optax.cosineDecaySchedule(lr, totalSteps));
    if (schedule !== "warmup-cosine") throw new Error(`optimizer: unknown schedule ${schedule}, expected "cosine" or "warmup-cosine"`);
    if (!(warmup > 0 && warmup < 1)) throw new Error(`optimizer: got warmup ${warmup}, expected a fraction of the steps in (0, 1)`);
    const warmupSteps = Math.max(1, Math.round(warmup * totalSteps));
    return optax.adam(optax.warmupCosineDecaySchedule(0, lr, warmupSteps, Math.max(totalSteps, warmupSteps + 1)));
  }

  /**
   * The step (params, state, x, y) -> [params, state, loss] for an optimizer: jitted, or op by
   * op with `{ jit: false }` (the leak checks run both).
   */
  function makeStep(opt, { jit: jitted = true } = {}) {
    const step = (p, s, x, y) => {
      const [l, g] = valueAndGrad(loss)(kiln.tree.ref(p), x, y);
      const [u, next] = opt.update(g, s, kiln.tree.ref(p));
      return [optax.applyUpdates(p, u), next, l];
    };
    return jitted ? jit(step) : step;
  }

  const predict = jit((p, x) => np.argmax(apply(p, x), -1));

  /**
   * Resolves to the fraction of `split` classified correctly, in batches of `size`; params are
   * kept. Reads are asynchronous, so it runs on devices without synchronous reads (webgpu).
   */
  async function accuracy(params, split, size = 1000) {
    const order = Array.from({ length: split.n }, (_, i) => i);
    let correct = 0;
    for (let b = 0; b < split.n; b += size) {
      const e = Math.min(split.n, b + size);
      const { x } = batch(np, split, order, b, e);
      const pred = await predict(kiln.tree.ref(params), x).data();
      for (let i = 0; i < e - b; i++) correct += pred[i] === split.labels[b + i] ? 1 : 0;
    }
    return split.n ? correct / split.n : 0;
  }

  return { init, apply, loss, optimizer, makeStep, predict, accuracy };
}

/** MNIST as host arrays: images Float32Array in [0, 1] ([n, 784]) and labels Int32Array. */
export function toSplit(imagesIdx, labelsIdx) {
  const [n, h, w] = imagesIdx.shape;
  if (imagesIdx.shape.length !== 3 || h !== 28 || w !== 28) throw new Error(`mnist: images have shape [${imagesIdx.shape}], expected [n, 28, 28]`);
  if (labelsIdx.shape.length !== 1 || labelsIdx.shape[0] !== n) throw new Error(`mnist: labels have shape [${labelsIdx.shape}], expected [${n}]`);
  const images = new Float32Array(n * 784);
  for (let i = 0; i < images.length; i++) images[i] = imagesIdx.data[i] / 255;
  return { n, images, labels: Int32Array.from(labelsIdx.data) };
}

/** Rows order[begin, end) of a split as a batch { x: [b, 1, 28, 28], y: [b] }. */
export function batch(np, split, order, begin, end) {
  const b = end - begin;
  const x = new Float32Array(b * 784);
  const y = new Int32Array(b);
  for (let i = 0; i < b; i++) {
    const row = order[begin + i];
    x.set(split.images.subarray(row * 784, (row + 1) * 784), i * 784);
    y[i] = split.labels[row];
  }
  return { x: np.array(x, { shape: [b, 1, 28, 28] }), y: np.array(y, { shape: [b] }) };
}
