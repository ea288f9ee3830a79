// Diagnostic (not a peer comparison): kiln-wasm's conv2d forward and its two gradients, the
// bench's layer (64->64 channels, 3x3, SAME, 56x56) at batch B, through the package's JS API.
// Each gradient is jit(grad) of sum(conv(x, w) * dy) with respect to x (dx) or w (dw), so it
// runs the transposed contraction alone. Needs `make js-build`.
// Usage: KILN_NUM_THREADS=1 node conv_grad.mjs [batch=8] [reps=5]
const kiln = await import(new URL('../../js/dist/index.js', import.meta.url).href);
const { numpy: np, lax, jit, grad, random } = kiln;
await kiln.init();
kiln.defaultDevice('wasm');
const batch = Number(process.argv[2] || 8), reps = Number(process.argv[3] || 5);
const shape = [batch, 64, 56, 56];
const x = random.normal(random.key(1), shape), w = random.normal(random.key(2), [64, 64, 3, 3]);
const dy = random.normal(random.key(3), shape);
const conv = (x, w) => lax.conv(x, w, [1, 1], 'SAME');
const cases = [
  ['forward', jit(conv), [x, w]],
  ['dx', jit((dy, w, x) => grad((x) => np.sum(conv(x, w).mul(dy)))(x)), [dy, w, x]],
  ['dw', jit((dy, x, w) => grad((w) => np.sum(conv(x, w).mul(dy)))(w)), [dy, x, w]],
];
const flops = 2 * batch * 64 * 64 * 9 * 56 * 56;  // the same for each of the three
for (const [name, f, args] of cases) {
  let best = Infinity;
  for (let i = 0; i <= reps; i++) {  // the first call compiles
    const t = performance.now();
    const y = f(...args.map((a) => a.ref));
    await y.blockUntilReady();
    if (i > 0) best = Math.min(best, performance.now() - t);
    y.dispose();
  }
  console.log(`conv2d b${batch} ${name}: ${best.toFixed(1)} ms, ${(flops / best / 1e6).toFixed(1)} GFLOP/s`);
}
process.exit(0);  // the pthread pool would keep the process alive
