// Host cost per kernel of a greedy webgpu decode step: the main thread's CPU time (Linux
// /proc schedstat, so Dawn's and SwiftShader's worker threads are left out) inside the
// generation's feed(), which records a step, divided by steps and kernels per step. With a model whose GPU work is
// small (tools/gen_tiny_llm.py with more layers) this is the cost of recording the kernels.
//   node bench/llm/decode_host.mjs MODEL.gguf [tokens=24] [runs=2]
//   KILN_DIST=DIR[,DIR2...]: builds' js/dist, measured alternately in one process each run
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [file, tokens = "24", runs = "2"] = process.argv.slice(2);
const dist = process.env.KILN_DIST ? pathToFileURL(resolve(process.env.KILN_DIST)).href : new URL("../../js/dist", import.meta.url).href;
const { init, llm, profiler } = await import(`${dist}/index.js`);

// CPU time of the main thread in ms (Linux schedstat, nanoseconds): Dawn's and SwiftShader's
// worker threads, which run the GPU work on this machine, are left out.
const mainThreadCpuMs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;

await init("webgpu");
const model = await llm.load(file, { device: "webgpu", nCtx: 256 });
for (let r = 0; r < Number(runs) + 1; r++) {
  const g = model.generate("The history of", { maxTokens: Number(tokens), ignoreEos: true });
  let n = 0, k0 = 0, text = "", cpu = 0, fed = 0;
  for await (const piece of g) {
    text += piece;
    // From the 3rd piece on (steady state: no compilation, bind groups cached), the main
    // thread's CPU time inside feed(), which records the next step (`gen` is the core's
    // generation behind the JS Generation; wrapped here for the measurement only).
    if (++n === 3) {
      k0 = profiler.webgpuCounters().dispatches;
      const gen = g.gen, feed = gen.feed.bind(gen);
      gen.feed = (row) => {
        const t = mainThreadCpuMs();
        try {
          return feed(row);
        } finally {
          cpu += mainThreadCpuMs() - t;
          fed++;
        }
      };
    }
  }
  const kernels = (profiler.webgpuCounters().dispatches - k0) / fed;
  const s = g.stats();
  console.log(`${r === 0 ? "warm-up" : "run " + r}: ${kernels.toFixed(1)} kernels/step, feed() ${(cpu / fed).toFixed(3)} ms main-thread CPU/step = ` +
    `${((cpu / fed / kernels) * 1000).toFixed(2)} us/kernel (${fed} steps); decodeHostMs ${(s.decodeHostMs / (s.generatedTokens - 1)).toFixed(2)}/token; ` +
    `${s.decodeTokensPerSecond.toFixed(1)} tok/s; text ${JSON.stringify(text.slice(0, 40))}`);
}
model.dispose();
