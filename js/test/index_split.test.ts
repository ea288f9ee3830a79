// Index-set splitting on the wasm device (docs/ARCHITECTURE.md, "Index-set splitting"): jitted
// concatenations and pads, whose kernels the wasm code generator splits into one loop per
// range of the output index (or of each row), equal bit for bit to the cpu interpreter, which
// evaluates every branch and selects.
import { describe, expect, test } from "vitest";
import { jit, numpy as np } from "../dist/index.js";

function uniform(n: number, seed: number): number[] {
  const out: number[] = [];
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(Math.fround(4 * (s / 2 ** 32) - 2));
  }
  return out;
}

type Dev = "wasm" | "cpu";

// Four branches (tanh, exp * 0.5, a constant, x * 2 + 1) of uneven lengths along `axis`:
// boundaries off every 4-lane vector; along the last axis each piece of a row is at least 8 long.
async function concatenated(axis: number, batch: number, device: Dev): Promise<Float32Array> {
  const lens = axis === 2 ? [9, 13, 8, 11] : [3, 5, 2, 7];
  const shapes = lens.map((l) => { const s = [batch, 6, 9]; s[axis] = l * (axis === 0 ? batch : 1); return s; });
  const xs = shapes.map((s, k) => np.array(uniform(s.reduce((a, b) => a * b, 1), 10 + k), { shape: s, device }));
  const f = jit((a: np.Array, b: np.Array, c: np.Array, d: np.Array) =>
    np.concatenate([np.tanh(a), np.multiply(np.exp(b), 0.5), np.add(np.multiply(c, 0), 1.25), np.add(np.multiply(d, 2), 1)], axis));
  return (await f(xs[0], xs[1], xs[2], xs[3]).data()) as Float32Array;
}

describe("index-set splitting on wasm", () => {
  for (const batch of [1, 2])
    for (const axis of [0, 1, 2])
      test(`a concatenation along axis ${axis} of a batch of ${batch} equals the cpu's bits`, async () => {
        const got = await concatenated(axis, batch, "wasm");
        const want = await concatenated(axis, batch, "cpu");
        expect(Array.from(new Uint32Array(got.buffer, got.byteOffset, got.length))).toEqual(
          Array.from(new Uint32Array(want.buffer, want.byteOffset, want.length)));
      });

  test("a pad around tanh, plus one, equals the cpu's bits", async () => {
    const on = async (device: Dev) => {
      const x = np.array(uniform(7 * 3, 5), { shape: [7, 3], device });
      const f = jit((a: np.Array) => np.add(np.pad(np.tanh(a), [[3, 2], [0, 0]]), 1));
      return (await f(x).data()) as Float32Array;
    };
    const got = await on("wasm"), want = await on("cpu");
    expect(Array.from(new Uint32Array(got.buffer))).toEqual(Array.from(new Uint32Array(want.buffer)));
  });
});
