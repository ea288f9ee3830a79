import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const M = await require(process.argv[2])({ kilnThreads: 1 });
M._kb_init();
M._kb_set_options(1,1,0,4,2,0,0,0);
const out = [];
for (const co of (process.argv[3]||"4,64").split(",").map(Number)) {
  const id = M._kb_conv(32, 64, co, 56, 3);
  M._kb_run(id); M._kb_run(id);
  let best = Infinity;
  for (let i = 0; i < 8; i++) { const t = performance.now(); M._kb_run(id); best = Math.min(best, performance.now() - t); }
  out.push(`cout ${co}: ${best.toFixed(1)} ms`);
}
console.log(process.argv[2].includes('old') ? 'old' : 'new', out.join(', '));
process.exit(0);
