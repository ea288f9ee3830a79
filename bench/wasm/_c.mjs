import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const M = await require('../../build/wasm/kiln_bench.cjs')({ kilnThreads: 1 });
M._kb_init(); M._kb_set_options(1,1,0,4,2,0,0,0);
const id = M._kb_conv(2, 64, 64, 56, 3);
for (let i = 0; i < 8; i++) M._kb_run(id);
process.exit(0);
