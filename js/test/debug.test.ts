// setDebug and profiler (jax-js's names): levels outside 0..5 are errors; between
// startTrace and stopTrace every kernel dispatch becomes an event and a performance.measure
// entry, and none is recorded after stopTrace.
import { describe, expect, test } from "vitest";
import { numpy as np, profiler, setDebug } from "../dist/index.js";

describe("setDebug", () => {
  test("takes levels 0 to 5 and rejects others with an Error naming it", () => {
    for (const level of [0, 1, 5, 0]) setDebug(level);
    expect(() => setDebug(6)).toThrow(/set_debug: got level 6, expected 0 \(off\) to 5/);
    expect(() => setDebug(-1)).toThrow(/expected 0 \(off\) to 5/);
    expect(() => setDebug(1.5)).toThrow(/setDebug: got 1.5, expected an integer/);
  });
});

describe("profiler", () => {
  for (const device of ["cpu", "wasm"] as const) {
    test(`traces the kernels of a sum on ${device}`, async () => {
      const x = np.array([1, 2, 3, 4, 5, 6], { shape: [2, 3], device });
      profiler.startTrace();
      const got = Array.from(await np.sum(x.ref.mul(2), 1).data());  // reading runs it
      const events = profiler.stopTrace();
      const mine = events.filter((e) => e.name === `kiln ${device} kernel [2 x 3]`);
      expect(mine.length).toBe(1);
      expect(mine[0].duration).toBeGreaterThanOrEqual(0);
      expect(mine[0].start).toBeGreaterThan(0);
      const perf = (globalThis as any).performance;
      expect(perf.getEntriesByName(`kiln ${device} kernel [2 x 3]`, "measure").length).toBeGreaterThan(0);
      expect(got).toEqual([12, 30]);
      await x.add(1).data();
      expect(profiler.stopTrace()).toEqual([]);
    });
  }
});
