// lax.decodeAttention on webgpu (one WGSL kernel; SwiftShader on machines without a GPU)
// against the cpu device's C++ reference and against the unfused formula on webgpu, on random
// shapes with 1-3 query heads per kv head, lengths 0..n_ctx and sliding windows; its grad
// (through the formula) against the cpu device's; and wasm's SIMD128 routine against cpu's and
// the formula. tests/decode_attention_test.cpp checks the reference against the formula and the
// device kernels against the reference bit for bit.
import { describe, expect, test } from "vitest";
import { grad, init, lax, numpy as np } from "../dist/index.js";

const env = (globalThis as any).process?.env ?? {};
const gpu = (await init("webgpu")).includes("webgpu");

function rand(n: number, seed: number, scale: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = scale * (((s >>> 16) - 32768) / 32768);
  }
  return out;
}

type Shape = { H: number; Hkv: number; D: number; C: number };

// The operands of one case as host data (arrays are made per device and call: ops consume them).
function operands(s: Shape, seed: number) {
  return {
    q: rand(s.H * s.D, seed, 2), keys: rand(s.C * s.Hkv * s.D, seed + 1, 2), values: rand(s.C * s.Hkv * s.D, seed + 2, 1),
    k: rand(s.Hkv * s.D, seed + 3, 2), v: rand(s.Hkv * s.D, seed + 4, 1),
  };
}

function call(s: Shape, o: ReturnType<typeof operands>, device: string, start: number, slidingWindow: number, unfused = false) {
  const a = (data: Float32Array, shape: number[]) => np.array(data, { shape, device });
  return lax.decodeAttention(
    a(o.q, [s.H, s.D]), a(o.keys, [s.C, s.Hkv, s.D]), a(o.values, [s.C, s.Hkv, s.D]), a(o.k, [s.Hkv, s.D]), a(o.v, [s.Hkv, s.D]),
    np.array(start, { dtype: np.int32, device }), { scale: 1 / Math.sqrt(s.D), slidingWindow, unfused },
  );
}

function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, tol: number, what: string) {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= tol * (1 + Math.abs(want[i])))) throw new Error(`${what} [${i}]: ${got[i]} vs ${want[i]}`);
  }
}

describe.skipIf(!gpu && !env.KILN_REQUIRE_WEBGPU)("decodeAttention on webgpu", () => {
  test("equals the cpu reference and the unfused formula", async () => {
    let seed = 3;
    // D = 80 > 64 invocations: two output dims per invocation; C = 70: two chunks of rows
    // (64 per workgroup of the partial kernel), C = 150: three, merged, with 3 query heads
    // per kv head.
    const shapes: Shape[] = [
      { H: 4, Hkv: 4, D: 8, C: 6 }, { H: 6, Hkv: 2, D: 16, C: 9 }, { H: 3, Hkv: 1, D: 80, C: 70 },
      { H: 6, Hkv: 2, D: 64, C: 150 },
    ];
    for (const s of shapes) {
      const o = operands(s, (seed += 10));
      for (const window of [0, 1, 3, 70]) {
        for (const start of [0, 1, Math.floor(s.C / 2), s.C - 1, s.C]) {
          const what = `${JSON.stringify(s)} window ${window} start ${start}`;
          const got = (await call(s, o, "webgpu", start, window).data()) as Float32Array;
          const ref = (await call(s, o, "cpu", start, window).data()) as Float32Array;
          const formula = (await call(s, o, "webgpu", start, window, true).data()) as Float32Array;
          expectClose(got, ref, 1e-5, what + " vs cpu");
          expectClose(got, formula, 1e-5, what + " vs formula");
        }
      }
    }
  }, 300_000);

  test("grad in q equals the cpu device's", async () => {
    const s: Shape = { H: 4, Hkv: 2, D: 8, C: 5 };
    const o = operands(s, 41);
    const c = rand(s.H * s.D, 77, 1);
    const g = async (device: string) => {
      const f = (q: any) => {
        const a = (data: Float32Array, shape: number[]) => np.array(data, { shape, device });
        const y = lax.decodeAttention(q, a(o.keys, [s.C, s.Hkv, s.D]), a(o.values, [s.C, s.Hkv, s.D]), a(o.k, [s.Hkv, s.D]),
          a(o.v, [s.Hkv, s.D]), np.array(3, { dtype: np.int32, device }), { scale: 0.4, slidingWindow: 2 });
        return np.sum(y.mul(a(c, [s.H, s.D])));
      };
      return (await grad(f)(np.array(o.q, { shape: [s.H, s.D], device })).data()) as Float32Array;
    };
    const got = await g("webgpu"), want = await g("cpu");
    expectClose(got, want, 1e-5, "grad");
    expect(got.some((x) => Math.abs(x) > 1e-3)).toBe(true);
  }, 300_000);
});

// wasm runs the routine's SIMD128 kernel (decode_attention_wasm.cpp): SmolLM2's head shape
// (3 query heads per kv head, 64 values), Gemma 3's (4 per kv head), a head size that is not a
// multiple of 8 (the reference), every start with and without a window.
test("decodeAttention on wasm equals cpu's routine and its formula", async () => {
  let seed = 5;
  const shapes: Shape[] = [{ H: 9, Hkv: 3, D: 64, C: 13 }, { H: 4, Hkv: 1, D: 16, C: 6 }, { H: 2, Hkv: 1, D: 4, C: 3 }];
  for (const s of shapes) {
    const o = operands(s, (seed += 10));
    for (const window of [0, 3]) {
      for (let start = 0; start <= s.C; start++) {
        const what = `${JSON.stringify(s)} window ${window} start ${start}`;
        const got = (await call(s, o, "wasm", start, window).data()) as Float32Array;
        const formula = (await call(s, o, "wasm", start, window, true).data()) as Float32Array;
        const ref = (await call(s, o, "cpu", start, window).data()) as Float32Array;
        expectClose(got, ref, 1e-5, what + " wasm vs cpu");
        expectClose(got, formula, 1e-5, what + " wasm vs formula");
      }
    }
  }
});
