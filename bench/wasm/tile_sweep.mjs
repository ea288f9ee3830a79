// Tuning sweep for kiln's tiled wasm contractions (not a peer comparison): runs one case under
// several CodegenOptions in one process and prints GFLOP/s, best of `reps` after a warm-up.
// Usage: node tile_sweep.mjs matmul 1024 'simd,tile,fma,rows,vecs,panel,kblock,pack' ...
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const [kind, size, ...configs] = process.argv.slice(2);
const n = Number(size);
// One thread: a tuning sweep of the kernel code itself (bench.mjs measures the pool).
const M = await require(path.join(here, '../../build/wasm/kiln_bench.cjs'))({ kilnThreads: 1 });
M._kb_init();
const flops = kind === 'matmul' ? 2 * n ** 3 : 2 * n * 64 * 64 * 9 * 56 * 56;
// At least 5 timed calls: V8 runs a module's first calls in its baseline tier (Liftoff) and
// swaps in optimized code only between calls, so a best of 2 can still time baseline code.
const reps = kind === 'matmul' ? Math.max(5, Math.round(2e9 / flops)) : 3;
for (const cfg of configs) {
  M._kb_set_options(...cfg.split(',').map(Number));
  const id = kind === 'matmul' ? M._kb_matmul(n) : M._kb_conv(n, 64, 64, 56, 3);
  M._kb_run(id);
  // Wall time, and this process's CPU time (less sensitive to a loaded machine's preemption).
  let best = Infinity, bestCpu = Infinity;
  for (let i = 0; i < reps; i++) {
    const t = performance.now(), u = process.cpuUsage();
    M._kb_run(id);
    const cu = process.cpuUsage(u);
    best = Math.min(best, performance.now() - t);
    bestCpu = Math.min(bestCpu, (cu.user + cu.system) / 1000);
  }
  const g = (ms) => (flops / ms / 1e6).toFixed(2);
  console.log(`${kind} ${n} [${cfg}]: ${g(best)} GFLOP/s wall (${best.toFixed(1)} ms), ${g(bestCpu)} cpu, tiled ${M._kb_tiled(id)}`);
}
process.exit(0);  // the pthread pool would keep the process alive
