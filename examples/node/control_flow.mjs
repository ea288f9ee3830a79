// kiln's lax control flow in Node.js (the C++ twin is examples/control_flow.cpp):
// 1. a character-level RNN whose pass over the text is one lax.scan, trained with a jitted
//    valueAndGrad of that scan (the loop runs inside the compiled program) and SGD;
// 2. a fixed-point solver, x = a cos(x), with lax.whileLoop, and dx/da by jvp through it.
// Run: npm install && node control_flow.mjs [steps]
import { jit, jvp, lax, nn, numpy as np, random, valueAndGrad, defaultDevice } from "kiln";

const steps = Number(process.argv[2] ?? 300);
console.log("device:", defaultDevice());

// ---- 1. character-level RNN ----
const text = "hello kiln, hello loops. scan me, while you can. ";
const vocab = [...new Set(text)];
const ids = [...text].map((c) => vocab.indexOf(c));
const V = vocab.length, H = 32, T = ids.length - 1;
const xs = nn.oneHot(np.array(ids.slice(0, T), { dtype: "int32" }), V);
const ys = nn.oneHot(np.array(ids.slice(1), { dtype: "int32" }), V);

const keys = random.split(random.key(0), 3);
const normal = (i, shape) => random.normal(keys.ref.slice(i), shape).mul(1 / Math.sqrt(shape[0]));
let params = { wxh: normal(0, [V, H]), whh: normal(1, [H, H]), why: normal(2, [H, V]), bh: np.zeros([H]), by: np.zeros([V]) };
keys.dispose();

// Mean cross-entropy of each next character; the body closes over the parameters (.ref: a
// value read again later is referenced, as everywhere in the jax-js API).
function loss(p, xs, ys) {
  const [h, nll] = lax.scan(
    (h, [x, y]) => {
      const h2 = np.tanh(np.matmul(x, p.wxh.ref).add(np.matmul(h, p.whh.ref)).add(p.bh.ref));
      const logp = nn.logSoftmax(np.matmul(h2.ref, p.why.ref).add(p.by.ref));
      return [h2, np.sum(logp.mul(y)).neg()];
    },
    np.zeros([H]),
    [xs, ys],
  );
  h.dispose();
  for (const v of Object.values(p)) v.dispose();
  return np.mean(nll);
}

const step = jit((p, xs, ys) => {
  const refs = Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v.ref]));
  const [l, g] = valueAndGrad(loss)(refs, xs, ys);
  const next = {};
  for (const k of Object.keys(p)) next[k] = p[k].sub(g[k].mul(0.5));
  return [next, l];
});
for (let i = 0; i <= steps; i++) {
  const [next, l] = step(params, xs.ref, ys.ref);
  params = next;
  if (i % 50 === 0) console.log(`step ${String(i).padStart(4)}  loss ${(await l.data())[0].toFixed(4)}`);
  else l.dispose();
}

// Greedy sampling with another scan: the carry holds the hidden state and the last character.
const [, chars] = lax.scan(
  ([h, c]) => {
    const x = nn.oneHot(c, V);
    const h2 = np.tanh(np.matmul(x, params.wxh.ref).add(np.matmul(h, params.whh.ref)).add(params.bh.ref));
    const next = np.argmax(np.matmul(h2.ref, params.why.ref).add(params.by.ref)).astype("int32");
    return [[h2, next.ref], next];
  },
  [np.zeros([H]), np.array(ids[0], { dtype: "int32" })],
  null,
  { length: 48 },
);
console.log(`sample: "${text[0] + [...(await chars.data())].map((c) => vocab[c]).join("")}"`);

// ---- 2. fixed point of x = a cos(x) ----
const solve = (a) => {
  const [, x, n] = lax.whileLoop(
    ([prev, x, n]) => np.logicalAnd(np.max(np.abs(prev.sub(x.ref))).greater(1e-6), n.less(1000)),
    ([, x, n]) => [x.ref, a.ref.mul(np.cos(x)), n.add(1)],
    [np.fullLike(a.ref, 10), np.zerosLike(a.ref), np.array(0)],
  );
  a.dispose();
  n.dispose();
  return x;
};
const a = np.array([0.3, 0.6, 0.9]);
const x = solve(a.ref);
console.log("x = a cos(x) for a = [0.3, 0.6, 0.9]:", await x.ref.data());
const [, dx] = jvp(solve, [a.ref], [np.onesLike(a.ref)]);
console.log("dx/da by jvp through the loop:      ", await dx.data());
console.log("dx/da by the implicit function:     ", await np.cos(x.ref).div(a.ref.mul(np.sin(x)).add(1)).data());
a.dispose();
