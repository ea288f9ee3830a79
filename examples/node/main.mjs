// kiln in Node.js: fit a line by gradient descent with grad and jit, written exactly as
// for @jax-js/jax (only the import names kiln). Run: npm install && node main.mjs
import { grad, jit, numpy as np, random, defaultDevice } from "kiln";

console.log("device:", defaultDevice());

// Data: y = 3x - 1 plus noise, from kiln's JAX-compatible PRNG.
const [kx, kn] = random.split(random.key(0));
const x = random.uniform(kx, [256], { minval: -1, maxval: 1 });
const y = x.ref.mul(3).sub(1).add(random.normal(kn, [256]).mul(0.1));

const loss = (p, x, y) => np.mean(np.square(x.mul(p.w).add(p.b).sub(y)));
// One jitted step: traced once, then run as fused kernels.
const step = jit((p, x, y) => {
  const g = grad(loss)({ w: p.w.ref, b: p.b.ref }, x, y);
  return { w: p.w.sub(g.w.mul(0.5)), b: p.b.sub(g.b.mul(0.5)) };
});

let p = { w: np.array(0), b: np.array(0) };
for (let i = 0; i < 100; i++) p = step(p, x.ref, y.ref);
console.log(`w = ${p.w.item().toFixed(3)}, b = ${p.b.item().toFixed(3)} (true: 3, -1)`);
console.log("final loss:", loss({ w: np.array(3), b: np.array(-1) }, x, y).item().toFixed(4));
step.dispose();
