// Relaxed-SIMD FMA in the wasm device's tiled contractions: on exactly where the engine
// validates f32x4.relaxed_madd (Chromium: yes; Node 20: only with a flag) unless
// KILN_WASM_FMA=0, and a float32 matmul on wasm stays within the dot product's error bound
// of the cpu interpreter's unfused sums either way.
import { describe, expect, test } from "vitest";
import { numpy as np } from "../dist/index.js";
import { coreInfo } from "../dist/core.js";

// A module whose one function returns f32x4.relaxed_madd of three v128.const zeros, written
// here independently of the core's own probe.
function engineHasRelaxedSimd(): boolean {
  const zeros = (): number[] => [0xfd, 0x0c, ...new Array(16).fill(0)];
  const body = [0x00, ...zeros(), ...zeros(), ...zeros(), 0xfd, 0x85, 0x02, 0x0b];
  const bytes = [0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0, 10, body.length + 2, 1, body.length, ...body];
  try {
    return WebAssembly.validate(new Uint8Array(bytes));
  } catch {
    return false;
  }
}

function uniform(n: number, seed: number): number[] {
  const out: number[] = [];
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(Math.fround(s / 2 ** 31 - 1));
  }
  return out;
}

describe("relaxed-SIMD FMA on the wasm device", () => {
  test("is on exactly where the engine has Relaxed SIMD and KILN_WASM_FMA is not 0", () => {
    const g = globalThis as any;
    const off = String(g.process?.env?.KILN_WASM_FMA ?? g.KILN_WASM_FMA) === "0";
    expect(coreInfo().fma).toBe(engineHasRelaxedSimd() && !off);
  });

  test("a tiled float32 matmul stays within (2K + 2) u sum |a b| of the cpu's sums", async () => {
    const [m, k, n] = [37, 300, 132];
    const a = uniform(m * k, 1), b = uniform(k * n, 2);
    const on = (device: "wasm" | "cpu") =>
      np.matmul(np.array(a, { shape: [m, k], device }), np.array(b, { shape: [k, n], device }));
    const got = (await on("wasm").data()) as Float32Array;
    const want = (await on("cpu").data()) as Float32Array;
    const u = 2 ** -24;
    let differ = 0;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let mag = 0;
        for (let r = 0; r < k; r++) mag += Math.abs(a[i * k + r] * b[r * n + j]);
        const x = i * n + j;
        if (!(Math.abs(got[x] - want[x]) <= (2 * k + 2) * u * mag))
          throw new Error(`element (${i}, ${j}): wasm ${got[x]}, cpu ${want[x]}, bound ${(2 * k + 2) * u * mag}`);
        if (got[x] !== want[x]) differ++;
      }
    // Unfused, the tiled loop sums in the cpu's order: bit for bit.
    if (!coreInfo().fma) expect(differ).toBe(0);
  });
});
