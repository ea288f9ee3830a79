// Which core the package loaded (threaded where SharedArrayBuffer and workers exist, so in
// Node and on a cross-origin isolated page), and that a large kernel is split over the pool's
// workers with the same bits as one thread. KILN_NUM_THREADS=1 checks the single-threaded core.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, numpy as np, random } from "../dist/index.js";
import { coreInfo, setWasmThreads } from "../dist/core.js";

const g = globalThis as any;
const forced = g.KILN_NUM_THREADS ?? g.process?.env?.KILN_NUM_THREADS;
const single = Number(forced) === 1;

const bits = async (a: np.Array) => new Uint32Array(((await a.data()) as Float32Array).slice().buffer);
const differing = (x: Uint32Array, y: Uint32Array) => {
  let n = Math.abs(x.length - y.length);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) n++;
  return n;
};

describe("the loaded core", () => {
  beforeEach(() => {
    defaultDevice("wasm");
  });

  if (single) {
    test("KILN_NUM_THREADS=1 loads the single-threaded core", () => {
      const info = coreInfo();
      expect(info.threaded).toBe(false);
      expect([info.threads, info.maxThreads]).toEqual([1, 1]);
      expect(() => setWasmThreads(2)).toThrow(/single-threaded core/);
    });
    return;
  }

  test("is the threaded core, with a pool of at least one worker", () => {
    const info = coreInfo();
    expect(info.threaded).toBe(true);
    expect(info.maxThreads).toBeGreaterThanOrEqual(2);
    expect(info.threads).toBe(info.maxThreads);
    expect(() => setWasmThreads(info.maxThreads + 1)).toThrow(/expected 1 to/);
  });

  test("splits a 512 x 512 matmul over the pool's workers, bit-identical to one thread", async () => {
    const { maxThreads } = coreInfo();
    const keys = random.split(random.key(7), 2);
    const a = random.normal(keys.ref.slice(0), [512, 512]);
    const b = random.normal(keys.slice(1), [512, 512]);
    try {
      setWasmThreads(1);
      const before1 = coreInfo();
      const one = await bits(np.matmul(a.ref, b.ref));
      expect(coreInfo().splitDispatches).toBe(before1.splitDispatches);
      setWasmThreads(maxThreads);
      const before = coreInfo();
      // Three runs: a worker's first chunk compiles the kernel there, and on a loaded machine
      // the calling thread may take every chunk of one dispatch before a worker wakes.
      for (let i = 0; i < 3; i++) {
        const many = await bits(np.matmul(a.ref, b.ref));
        expect(many.length).toBe(512 * 512);
        expect(differing(many, one), `run ${i}: elements whose bits differ from one thread's`).toBe(0);
      }
      const after = coreInfo();
      expect(after.splitDispatches - before.splitDispatches).toBeGreaterThanOrEqual(3);
      expect(after.workerChunks).toBeGreaterThan(before.workerChunks);
    } finally {
      setWasmThreads(maxThreads);
      a.dispose();
      b.dispose();
    }
  });
});
