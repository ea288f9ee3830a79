// The Wasm benchmark: kiln-wasm against @jax-js/jax (wasm), tfjs-backend-wasm and onnxruntime-web
// (wasm EP) in one Node process; each (library, threads) runs in its own worker thread.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const CONV_BATCH = Number(process.env.BENCH_CONV_BATCH || 32);
// BENCH_CASES=matmul,chain keeps the cases of those kinds (default: all).
const KINDS = (process.env.BENCH_CASES || 'matmul,chain,conv').split(',');
const CASES = [
  { name: 'matmul 256', kind: 'matmul', n: 256, reps: 20 },
  { name: 'matmul 1024', kind: 'matmul', n: 1024, reps: 5 },
  { name: 'matmul 2048', kind: 'matmul', n: 2048, reps: 2 },
  { name: 'chain 4M', kind: 'chain', n: 1 << 22, reps: 10 },
  { name: `conv2d b${CONV_BATCH} 64->64 3x3 56x56`, kind: 'conv', n: CONV_BATCH, reps: 1 },
].filter((c) => KINDS.includes(c.kind));
const work = (c) => c.kind === 'matmul' ? 2 * c.n ** 3 : c.kind === 'chain' ? 8 * c.n : 2 * c.n * 64 * 64 * 9 * 56 * 56;
const unit = (c) => (c.kind === 'chain' ? 'GB/s' : 'GFLOP/s');
const rand = (len) => { const a = new Float32Array(len); for (let i = 0; i < len; i++) a[i] = Math.random() - 0.5; return a; };

// Best time (ms) of `reps` calls after one warm-up; run() must finish the computation.
async function best(run, reps) {
  await run();
  let b = Infinity;
  for (let i = 0; i < reps; i++) { const t = performance.now(); await run(); b = Math.min(b, performance.now() - t); }
  return b;
}

const runners = {
  async kiln(threads) {
    // The threaded link (pthreads); kilnThreads sizes its pool (threads - 1 workers).
    // BENCH_KILN_BUILD: another build's kiln_bench.cjs (an A/B of two commits, one worker each).
    const build = process.env.BENCH_KILN_BUILD ? path.resolve(process.env.BENCH_KILN_BUILD) : path.join(here, '../../build/wasm/kiln_bench.cjs');
    const M = await require(build)({ kilnThreads: threads });
    M._kb_init();
    if (M._kb_threads() !== threads) return null;
    return async (c) => {
      const id = c.kind === 'matmul' ? M._kb_matmul(c.n) : c.kind === 'chain' ? M._kb_chain(c.n) : M._kb_conv(c.n, 64, 64, 56, 3);
      const split = M._kb_split_dispatches();
      const ms = await best(() => M._kb_run(id), c.reps);
      return { ms, note: `${M._kb_kernels(id)} kernel(s), ${M._kb_tiled(id)} tiled, ${M._kb_simd(id)} simd, ${M._kb_split_dispatches() - split} split, fma ${M._kb_fma() ? 'on' : 'off'}` };
    };
  },
  async jax(threads) {
    if (threads !== 1) return null;  // jax-js's wasm backend is single-threaded
    const { init, numpy: np, lax, jit, defaultDevice, blockUntilReady } = await import('@jax-js/jax');
    await init('wasm');
    defaultDevice('wasm');
    return async (c) => {
      let f, args;
      if (c.kind === 'matmul') { f = jit((a, b) => np.matmul(a, b)); args = [np.array(rand(c.n * c.n)).reshape([c.n, c.n]), np.array(rand(c.n * c.n)).reshape([c.n, c.n])]; }
      else if (c.kind === 'chain') { f = jit((x) => np.maximum(x.ref.mul(1.5).add(0.5), 0).mul(x).sub(0.25)); args = [np.array(rand(c.n))]; }
      else { f = jit((x, w) => lax.conv(x, w, [1, 1], 'SAME')); args = [np.array(rand(c.n * 64 * 56 * 56)).reshape([c.n, 64, 56, 56]), np.array(rand(64 * 64 * 9)).reshape([64, 64, 3, 3])]; }
      const ms = await best(async () => { const y = f(...args.map((a) => a.ref)); await blockUntilReady(y); y.dispose(); }, c.reps);
      return { ms };
    };
  },
  async tfjs(threads) {
    const tf = await import('@tensorflow/tfjs-core');
    const w = await import('@tensorflow/tfjs-backend-wasm');
    w.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm')) + '/');
    w.setThreadsCount(threads);
    await tf.setBackend('wasm');
    await tf.ready();
    if (w.getThreadsCount() !== threads) return null;  // no threads in Node (no SharedArrayBuffer path)
    return async (c) => {
      let f;
      if (c.kind === 'matmul') { const a = tf.tensor2d(rand(c.n * c.n), [c.n, c.n]), b = tf.tensor2d(rand(c.n * c.n), [c.n, c.n]); f = () => tf.matMul(a, b); }
      else if (c.kind === 'chain') { const x = tf.tensor1d(rand(c.n)); f = () => tf.tidy(() => tf.sub(tf.mul(tf.maximum(tf.add(tf.mul(x, 1.5), 0.5), 0), x), 0.25)); }
      else { const x = tf.tensor4d(rand(c.n * 56 * 56 * 64), [c.n, 56, 56, 64]), k = tf.tensor4d(rand(9 * 64 * 64), [3, 3, 64, 64]); f = () => tf.conv2d(x, k, 1, 'same'); }
      const ms = await best(() => { const y = f(); y.dataSync(); y.dispose(); }, c.reps);
      return { ms, note: 'includes readback (dataSync)' };
    };
  },
  async ort(threads) {
    const ort = await import('onnxruntime-web');
    const { model, intsAttr } = await import('./onnx_model.mjs');
    ort.env.wasm.numThreads = threads;
    return async (c) => {
      let g, feeds;
      const T = (d, s) => new ort.Tensor('float32', d, s);
      if (c.kind === 'matmul') {
        g = { nodes: [['MatMul', ['a', 'b'], ['y']]], inputs: [['a', [c.n, c.n]], ['b', [c.n, c.n]]], output: ['y', [c.n, c.n]] };
        feeds = { a: T(rand(c.n * c.n), [c.n, c.n]), b: T(rand(c.n * c.n), [c.n, c.n]) };
      } else if (c.kind === 'chain') {
        g = { nodes: [['Mul', ['x', 'c15'], ['t1']], ['Add', ['t1', 'c05'], ['t2']], ['Max', ['t2', 'c0'], ['t3']],
                      ['Mul', ['t3', 'x'], ['t4']], ['Sub', ['t4', 'c025'], ['y']]],
              consts: { c15: 1.5, c05: 0.5, c0: 0, c025: 0.25 }, inputs: [['x', [c.n]]], output: ['y', [c.n]] };
        feeds = { x: T(rand(c.n), [c.n]) };
      } else {
        g = { nodes: [['Conv', ['x', 'w'], ['y'], [intsAttr('pads', [1, 1, 1, 1])]]],
              inputs: [['x', [c.n, 64, 56, 56]], ['w', [64, 64, 3, 3]]], output: ['y', [c.n, 64, 56, 56]] };
        feeds = { x: T(rand(c.n * 64 * 56 * 56), [c.n, 64, 56, 56]), w: T(rand(64 * 64 * 9), [64, 64, 3, 3]) };
      }
      const s = await ort.InferenceSession.create(model(g), { executionProviders: ['wasm'] });
      const ms = await best(() => s.run(feeds), c.reps);
      return { ms, note: 'output copied to JS' };
    };
  },
};

if (!isMainThread) {
  const { lib, threads } = workerData;
  const run = await runners[lib](threads);
  const out = [];
  if (run) for (const c of CASES) { const r = await run(c); out.push({ case: c.name, ...r, rate: work(c) / r.ms / 1e6, unit: unit(c) }); }
  parentPort.postMessage(out);
} else {
  const libs = (process.env.BENCH_LIBS || 'kiln,jax,tfjs,ort').split(',');
  const results = {};
  for (const threads of [1, 2])
    for (const lib of libs) {
      const r = await new Promise((res, rej) => {
        const w = new Worker(fileURLToPath(import.meta.url), { workerData: { lib, threads } });
        // Terminated once it reports: kiln's pthread pool would keep the worker alive.
        w.once('message', (m) => { res(m); w.terminate(); });
        w.once('error', rej);
        w.once('exit', (code) => rej(new Error(`${lib} x${threads}: the worker exited (${code}) before reporting`)));
      });
      results[`${lib}@${threads}`] = r;
      process.stderr.write(`[bench] ${lib} x${threads}: ${r.length ? 'done' : 'not available'}\n`);
    }
  console.log('| case | threads | kiln | @jax-js/jax | tfjs-wasm | ort-web | kiln/jax | kiln/tfjs | kiln/ort |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const threads of [1, 2])
    for (const c of CASES) {
      const get = (lib) => (results[`${lib}@${threads}`] || []).find((r) => r.case === c.name);
      const fmt = (r) => (r ? `${r.rate.toFixed(2)} ${r.unit} (${r.ms.toFixed(1)} ms)` : 'n/a');
      const ratio = (p) => { const k = get('kiln'), q = get(p); return k && q ? `${(k.rate / q.rate).toFixed(2)}x` : 'n/a'; };
      console.log(`| ${c.name} | ${threads} | ${fmt(get('kiln'))} | ${fmt(get('jax'))} | ${fmt(get('tfjs'))} | ${fmt(get('ort'))} | ${ratio('jax')} | ${ratio('tfjs')} | ${ratio('ort')} |`);
    }
  for (const threads of [1, 2]) {
    const k = results[`kiln@${threads}`];
    if (k?.length) console.log(`\nkiln notes, ${threads} thread(s): ${k.map((r) => `${r.case}: ${r.note}`).join('; ')}`);
  }
  // kiln at 2 threads over kiln at 1 (the pool's speed-up).
  const k1 = results['kiln@1'] || [], k2 = results['kiln@2'] || [];
  if (k1.length && k2.length)
    console.log(`\nkiln 2 threads / 1 thread: ${CASES.map((c) => { const a = k1.find((r) => r.case === c.name), b = k2.find((r) => r.case === c.name); return a && b ? `${c.name} ${(b.rate / a.rate).toFixed(2)}x` : `${c.name} n/a`; }).join(', ')}`);
}
