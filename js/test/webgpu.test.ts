// The webgpu device through the JS API (Dawn from npm `webgpu` in Node.js; SwiftShader on
// machines without a GPU): elementwise ops of each dtype, reductions, matmul and a jit'd MLP
// against the cpu device, the NumPy fixtures, devicePut round trips, ownership, async-only
// readback and the runtime's errors. Without an adapter it is skipped with a message, or fails
// when KILN_REQUIRE_WEBGPU=1 (as `make test` sets it: a broken WebGPU path must not pass as
// "skipped" in CI).
import { beforeEach, describe, expect, test } from "vitest";
import {
  blockUntilReady, defaultDevice, devicePut, getWebGPUDevice, grad, init, jit, lax, nn, numpy as np, random, tree, valueAndGrad,
  webgpuDebug,
} from "../dist/index.js";
import * as optax from "../dist/optax/index.js";
// @ts-ignore: plain JS shared with the Node example and the page
import { makeCnn } from "../../examples/mnist-node/cnn.mjs";
import { webGpuRuntime, webGpuUnavailableReason } from "../dist/webgpu/attach.js";
import { compareAsync } from "./fixtures.js";
import { cases, runNumpyCase } from "./numpy_cases.js";

const have = await init("webgpu");
const gpu = have.includes("webgpu");
// WGSL's division is accurate to 2.5 ulp, not correctly rounded (WGSL spec, "Floating Point
// Accuracy"): the bound for kernels that divide (divide, mean, softmax).
const DIV_RTOL = 2.5 * 2 ** -23;

// NumPy fixtures that fail on SwiftShader (the CPU WebGPU of machines without a GPU), each
// asserted to fail there so the list stays true; on other adapters they run as normal cases.
// Its asinh and the naive expm1/log1p near zero lose more than the fixture bounds allow
// (sin/cos/tan have the prelude's own range reduction since SwiftShader's were off by 2.4e-5,
// acos goes through atan2 since its builtin was off by 7e-5: these fixtures now pass).
const SWIFTSHADER_FAILS: [RegExp, string][] = [
  [/^arcsinh_f32_(7|2x3x4|3x4_fl)$/, "asinh accuracy for |x| > 2"],
  [/^(expm1|log1p)_f32_near_zero$/, "expm1/log1p near zero"],
];
const knownFailure = (id: string) => SWIFTSHADER_FAILS.find(([re]) => re.test(id))?.[1];

// Deterministic inputs with edge values (signed zeros, negatives), so exact ops can be compared bit for bit.
function values(n: number, seed: number, kind: "float" | "positive" | "int" | "uint" | "bool"): number[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: n }, (_, i) => {
    const u = rnd();
    if (kind === "bool") return u < 0.5 ? 0 : 1;
    if (kind === "int") return Math.floor(u * 200) - 100;
    if (kind === "uint") return Math.floor(u * 200);
    if (kind === "positive") return 0.05 + u * 4;
    return i % 17 === 0 ? 0 : i % 19 === 0 ? -0 : u * 8 - 4;
  });
}

function make(vals: number[], dtype: string, shape: number[], device: string): np.Array {
  if (dtype === "bool") return np.array(vals.map((v) => v !== 0), { shape, dtype: np.bool, device: device as any });
  return np.array(vals, { shape, dtype: dtype as np.DType, device: device as any });
}

/** Reads both, compares element by element: exactly (Object.is, NaN = NaN) when rtol is 0. */
async function expectClose(got: np.Array, want: np.Array, rtol = 0, atol = 0, what = "") {
  expect(got.device).toBe("webgpu");
  expect(got.dtype).toBe(want.dtype);
  expect(got.shape).toEqual(want.shape);
  const g = Array.from(await got.data() as ArrayLike<number>);
  const w = Array.from(await want.data() as ArrayLike<number>);
  for (let i = 0; i < w.length; i++) {
    const ok = rtol === 0 && atol === 0
      ? Object.is(g[i], w[i]) || (Number.isNaN(g[i]) && Number.isNaN(w[i]))
      : (Number.isNaN(g[i]) && Number.isNaN(w[i])) || g[i] === w[i] || Math.abs(g[i] - w[i]) <= atol + rtol * Math.abs(w[i]);
    if (!ok) throw new Error(`${what} element ${i}: webgpu ${g[i]}, cpu ${w[i]} (rtol ${rtol}, atol ${atol})`);
  }
}

/** Runs f on the same inputs on webgpu and on cpu and compares the results. */
async function sameAsCpu(f: (...xs: np.Array[]) => np.Array, inputs: [number[], string, number[]][], rtol = 0, atol = 0, what = "") {
  const onGpu = f(...inputs.map(([v, d, s]) => make(v, d, s, "webgpu")));
  const onCpu = f(...inputs.map(([v, d, s]) => make(v, d, s, "cpu")));
  await expectClose(onGpu, onCpu, rtol, atol, what);
}

const requireGpu = globalThis.process?.env?.KILN_REQUIRE_WEBGPU === "1";
if (!gpu && requireGpu) {
  test("webgpu: an adapter is required (KILN_REQUIRE_WEBGPU=1)", () => {
    throw new Error(`no WebGPU adapter: ${webGpuUnavailableReason()}`);
  });
} else if (!gpu) {
  test("webgpu: SKIPPED, no WebGPU adapter", () => {
    console.warn(`[kiln] webgpu tests SKIPPED: ${webGpuUnavailableReason()}`);
  });
} else {
  describe("webgpu device", () => {
    beforeEach(() => {
      defaultDevice("wasm");
    });

    test("init, devices, defaultDevice, getWebGPUDevice", async () => {
      expect(await init()).toContain("webgpu");
      expect(await init("cpu", "webgpu")).toEqual(["cpu", "webgpu"]);
      expect(getWebGPUDevice().limits.maxStorageBuffersPerShaderStage).toBeGreaterThanOrEqual(8);
      expect(defaultDevice("webgpu")).toBe("webgpu");
      const x = np.arange(4);
      expect(x.device).toBe("webgpu");
      expect(await x.jsAsync()).toEqual([0, 1, 2, 3]);
    });

    const N = 300; // not a multiple of the workgroup or of 4: the tails of packed words run too
    const F: [number[], string, number[]] = [values(N, 1, "float"), "float32", [N]];
    const G: [number[], string, number[]] = [values(N, 2, "float"), "float32", [N]];
    const P: [number[], string, number[]] = [values(N, 3, "positive"), "float32", [N]];
    const I: [number[], string, number[]] = [values(N, 4, "int"), "int32", [N]];
    const J: [number[], string, number[]] = [values(N, 5, "int"), "int32", [N]];
    const U: [number[], string, number[]] = [values(N, 6, "uint"), "uint32", [N]];
    const V: [number[], string, number[]] = [values(N, 7, "uint"), "uint32", [N]];
    const B: [number[], string, number[]] = [values(N, 8, "bool"), "bool", [N]];
    const C: [number[], string, number[]] = [values(N, 9, "bool"), "bool", [N]];
    const H: [number[], string, number[]] = [values(N, 10, "float"), "float16", [N]];
    const K: [number[], string, number[]] = [values(N, 11, "float"), "float16", [N]];

    // [name, f, inputs, rtol, atol]: rtol 0 = bit for bit (WGSL rounds + - * / sqrt correctly,
    // and the prelude gives NaN-propagating max/min, NumPy's floor-divide and mod, casts).
    const ELEMENTWISE: [string, (...x: np.Array[]) => np.Array, [number[], string, number[]][], number, number][] = [
      ["f32 add", np.add, [F, G], 0, 0],
      ["f32 subtract", np.subtract, [F, G], 0, 0],
      ["f32 multiply", np.multiply, [F, G], 0, 0],
      ["f32 divide", np.divide, [F, P], DIV_RTOL, 0],
      ["f32 maximum", np.maximum, [F, G], 0, 0],
      ["f32 minimum", np.minimum, [F, G], 0, 0],
      ["f32 negative", np.negative, [F], 0, 0],
      ["f32 abs", np.abs, [F], 0, 0],
      ["f32 sqrt", np.sqrt, [P], 0, 0],
      ["f32 floor", np.floor, [F], 0, 0],
      ["f32 where", (a, b) => np.where(np.greater(a.ref, b.ref), a, b), [F, G], 0, 0],
      ["f32 exp", np.exp, [F], 4e-6, 0],
      ["f32 log", np.log, [P], 4e-6, 1e-7],
      ["f32 tanh", np.tanh, [F], 1e-5, 1e-7],
      ["f32 sin", np.sin, [F], 1e-6, 1e-7],
      ["f32 cos", np.cos, [F], 1e-6, 1e-7],
      ["f32 tan", np.tan, [F], 2e-6, 1e-7],
      ["f32 sin of large x", (a) => np.sin(a.mul(1000)), [F], 1e-6, 1e-6],
      ["f32 relu", nn.relu, [F], 0, 0],
      ["f32 sigmoid", nn.sigmoid, [F], 1e-5, 1e-7],
      ["f32 less", np.less, [F, G], 0, 0],
      ["f32 astype int32", (a) => a.astype(np.int32), [F], 0, 0],
      ["i32 add", np.add, [I, J], 0, 0],
      ["i32 multiply", np.multiply, [I, J], 0, 0],
      ["i32 floor_divide", np.floorDivide, [I, J], 0, 0],
      ["i32 remainder", np.remainder, [I, J], 0, 0],
      ["i32 bitwise_xor", np.bitwiseXor, [I, J], 0, 0],
      ["i32 maximum", np.maximum, [I, J], 0, 0],
      ["i32 equal", np.equal, [I, J], 0, 0],
      ["i32 astype float32", (a) => a.astype(np.float32), [I], 0, 0],
      ["u32 add", np.add, [U, V], 0, 0],
      ["u32 subtract (wraps)", np.subtract, [U, V], 0, 0],
      ["u32 floor_divide", np.floorDivide, [U, V], 0, 0],
      ["u32 bitwise_and", np.bitwiseAnd, [U, V], 0, 0],
      ["u32 right_shift", np.rightShift, [U, [values(N, 12, "uint").map((v) => v % 40), "uint32", [N]]], 0, 0],
      ["bool logical_and", np.logicalAnd, [B, C], 0, 0],
      ["bool logical_xor", np.logicalXor, [B, C], 0, 0],
      ["bool logical_not", np.logicalNot, [B], 0, 0],
      ["bool astype float32", (a) => a.astype(np.float32), [B], 0, 0],
      ["f16 add", np.add, [H, K], 0, 0],
      ["f16 multiply", np.multiply, [H, K], 0, 0],
      ["f16 astype float32", (a) => a.astype(np.float32), [H], 0, 0],
      ["f16 overflow to +-inf", (a) => a.mul(30000), [H], 0, 0],
      ["f32 arctan2 of signed zeros", np.arctan2, [[[0, -0, 0, -0, 0, -0, 1, -1], "float32", [8]], [[0, 0, -0, -0, -1, -1, 0, -0], "float32", [8]]], 1e-6, 0],
    ];
    test.each(ELEMENTWISE.map((e) => [e[0], e] as const))("elementwise %s equals cpu", async (_n, [name, f, ins, rtol, atol]) => {
      await sameAsCpu(f, ins, rtol, atol, name);
    });

    // Short axes reduce serially (the cpu's order: bit for bit); axes of >= 256 with few
    // outputs use the workgroup tree, whose float sums differ from the serial order by rounding.
    const M: [number[], string, number[]] = [values(24 * 1000, 12, "float"), "float32", [24, 1000]];
    const MI: [number[], string, number[]] = [values(24 * 1000, 13, "int"), "int32", [24, 1000]];
    const S: [number[], string, number[]] = [values(40 * 30, 14, "float"), "float32", [40, 30]];
    // 13 rows of 600: several outputs per tree workgroup (32 lanes each), the last group partly empty.
    const R: [number[], string, number[]] = [values(13 * 600, 15, "float"), "float32", [13, 600]];
    const REDUCTIONS: [string, (x: np.Array) => np.Array, [number[], string, number[]], number, number][] = [
      ["sum axis 1, serial", (x) => np.sum(x, 1), S, 0, 0],
      ["max axis 0, serial", (x) => np.max(x, 0), S, 0, 0],
      ["mean keepdims, serial", (x) => np.mean(x, 1, { keepdims: true }), S, DIV_RTOL, 0],
      ["sum axis 1, tree", (x) => np.sum(x, 1), M, 1000 * 6e-8, 1e-5],
      ["sum all, tree", (x) => np.sum(x), M, 24000 * 6e-8, 1e-4],
      ["max axis 1, tree", (x) => np.max(x, 1), M, 0, 0],
      ["min axis 1, tree", (x) => np.min(x, 1), M, 0, 0],
      ["int32 sum axis 1, tree", (x) => np.sum(x, 1), MI, 0, 0],
      ["sum axis 1, tree of 13 rows", (x) => np.sum(x, 1), R, 600 * 6e-8, 1e-5],
      ["max axis 1, tree of 13 rows", (x) => np.max(x, 1), R, 0, 0],
      ["argmax axis 1", (x) => np.argmax(x, 1), M, 0, 0],
      ["softmax axis 1", (x) => nn.softmax(x, 1), M, 1e-5, 1e-8],
    ];
    test.each(REDUCTIONS.map((r) => [r[0], r] as const))("reduction %s equals cpu", async (_n, [name, f, x, rtol, atol]) => {
      await sameAsCpu(f, [x], rtol, atol, name);
    });

    // The packed weights of kiln's GGUF loader (src/models/quantized_weights.h): codes of
    // `bits` bits packed into u32 words, one f32 scale (and min) per block of `block` values,
    // dequantized by shift, mask, convert, scale inside the matvec. On webgpu the tree
    // reduction unrolls such a body by its index period (32 or 16 terms per chunk: one word
    // load per 8 or 4 values), so each layout below takes that path: q4_0 (offset 8), q4_1
    // and q4_K (with mins), q8_0 (bytes, offset 128), q6_K (bytes in blocks of 16, offset 32).
    const QUANT: [string, number, number, number, boolean][] = [
      ["q4_0", 4, 32, 8, false], ["q4_1/q4_K", 4, 32, 0, true], ["q8_0", 8, 32, 128, false], ["q6_K", 8, 16, 32, false],
    ];
    test.each(QUANT)("quantized matvec %s equals cpu", async (_n, bits, block, offset, withMin) => {
      const rows = 40, cols = 576, per = 32 / bits, nb = cols / block, wpb = block / per;
      let seed = 31 + bits;  // every bit of the words random (all codes occur)
      const words = Array.from({ length: rows * nb * wpb }, () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0));
      const W: [number[], string, number[]] = [words, "uint32", [rows, nb, wpb]];
      const S: [number[], string, number[]] = [values(rows * nb, 32, "positive").map((v) => v / 2 ** (bits + 2)), "float32", [rows, nb]];
      const Mn: [number[], string, number[]] = [values(rows * nb, 33, "float").map((v) => v / 16), "float32", [rows, nb]];
      const X: [number[], string, number[]] = [values(cols, 34, "float"), "float32", [cols]];
      const qmatvec = (w: np.Array, s: np.Array, m: np.Array, x: np.Array) => {
        const shifts = np.multiply(np.arange(0, per, 1, { device: w.device as any }), bits).astype(np.uint32);
        const q = np.bitwiseAnd(np.rightShift(np.expandDims(w, -1), shifts), (1 << bits) - 1).astype(np.float32);
        const sc = np.reshape(s, [rows, nb, 1, 1]);
        const v = withMin ? np.add(np.multiply(q, sc), np.reshape(m, [rows, nb, 1, 1])) : (m.dispose(), np.multiply(np.subtract(q, offset), sc));
        return np.sum(np.multiply(np.reshape(v, [rows, cols]), x), 1);
      };
      // Terms are at most ~4 in size (|code| * scale <= 1, |x| <= 4): the two summation
      // orders differ by at most cols * 4 * 2^-24 or so, far below a wrong word or scale.
      await sameAsCpu(qmatvec, [W, S, Mn, X], cols * 6e-8, cols * 4 * 6e-8, `quantized matvec ${_n}`);
    });

    // jit fusion on webgpu recomputes a small full reduction inside the reduction that reads
    // it (a kernel's prelude, jit_fusion.cpp: recomputes_as_prelude): RMSNorm's sum of squares
    // feeding the matvec of the normed vector costs no kernel of its own. 576 columns take the
    // tree reduction (the workgroup folds the prelude together), 64 the serial one (each
    // invocation folds it), 40 and 300 rows one and several workgroups.
    test.each([[576, 40], [576, 300], [64, 40]])("RMSNorm then matvec, %i columns x %i rows: one kernel, equals cpu", async (cols, rows) => {
      const rmsMatvec = jit((x: np.Array, g: np.Array, m: np.Array) => {
        const r = np.reciprocal(np.sqrt(np.mean(np.square(x.ref), -1, { keepdims: true }).add(1e-5)));
        return np.matmul(m, x.mul(r).mul(g));
      });
      const X: [number[], string, number[]] = [values(cols, 41, "float"), "float32", [cols]];
      const G: [number[], string, number[]] = [values(cols, 42, "positive"), "float32", [cols]];
      const M: [number[], string, number[]] = [values(rows * cols, 43, "float"), "float32", [rows, cols]];
      await sameAsCpu(rmsMatvec, [X, G, M], cols * 4 * 6e-8, cols * 32 * 6e-8, "rms matvec");
      const rt = webGpuRuntime()!;
      const args = [X, G, M].map(([v, d, s]) => make(v, d, s, "webgpu"));
      const before = rt.stats().dispatches;
      const y = rmsMatvec(args[0], args[1], args[2]);
      expect(rt.stats().dispatches - before).toBe(1);
      y.dispose();
    });

    // Preludes elsewhere: a vector's softmax (its maximum a prelude of the exponentials' sum,
    // both read by the normalization), and x * max(x): over 1000 terms the maximum is the
    // elementwise kernel's prelude (1 kernel); over 10000 (> 8192, read by 10000 outputs) it
    // is computed by a kernel of its own after all (each workgroup of the reader would fold
    // it: separate_long_prelude), so 2.
    test("jitted softmax of a vector, and a long maximum read by every element, equal cpu", async () => {
      const X: [number[], string, number[]] = [values(1000, 44, "float"), "float32", [1000]];
      await sameAsCpu(jit((x: np.Array) => nn.softmax(x)), [X], 1000 * 6e-8 + DIV_RTOL, 1e-9, "softmax");
      const scaled = jit((x: np.Array) => x.ref.mul(np.max(x)));
      const L: [number[], string, number[]] = [values(10000, 45, "float"), "float32", [10000]];
      await sameAsCpu(scaled, [L], 0, 0, "x * max(x)");
      await sameAsCpu(scaled, [X], 0, 0, "x * max(x), 1000");
      const rt = webGpuRuntime()!;
      for (const [v, n, kernels] of [[L[0], 10000, 2], [X[0], 1000, 1]] as [number[], number, number][]) {
        const x = make(v, "float32", [n], "webgpu");
        const before = rt.stats().dispatches;
        const y = scaled(x);
        expect(rt.stats().dispatches - before, `kernels of x * max(x) over ${n}`).toBe(kernels);
        y.dispose();
      }
    });

    test("matmul 64x96 @ 96x48 and a batched einsum equal cpu", async () => {
      const a: [number[], string, number[]] = [values(64 * 96, 15, "float"), "float32", [64, 96]];
      const b: [number[], string, number[]] = [values(96 * 48, 16, "float"), "float32", [96, 48]];
      await sameAsCpu(np.matmul, [a, b], 96 * 6e-8, 1e-5, "matmul");
      const c: [number[], string, number[]] = [values(3 * 8 * 5, 17, "float"), "float32", [3, 8, 5]];
      const d: [number[], string, number[]] = [values(3 * 5 * 7, 18, "float"), "float32", [3, 5, 7]];
      await sameAsCpu((x, y) => np.einsum("bij,bjk->bik", x, y), [c, d], 5 * 6e-8, 1e-6, "einsum");
    });

    test("matmul 256x256 @ 256x256 equals wasm (a tiled contraction with exact tiles)", async () => {
      const a = values(256 * 256, 19, "float"), b = values(256 * 256, 20, "float");
      const onGpu = np.matmul(make(a, "float32", [256, 256], "webgpu"), make(b, "float32", [256, 256], "webgpu"));
      const onWasm = np.matmul(make(a, "float32", [256, 256], "wasm"), make(b, "float32", [256, 256], "wasm"));
      const g = await onGpu.data(), w = await onWasm.data();
      // Either side may fuse a * b + c (wasm does where the engine has Relaxed SIMD), so the
      // bound is the dot product's: 2 K u sum_k |a_ik b_kj|.
      const mag = new Float64Array(256 * 256);
      for (let i = 0; i < 256; i++)
        for (let k = 0; k < 256; k++)
          for (let j = 0; j < 256; j++) mag[i * 256 + j] += Math.abs(a[i * 256 + k] * b[k * 256 + j]);
      for (let i = 0; i < w.length; i++)
        if (!(Math.abs(g[i] - w[i]) <= 2 * 256 * 6e-8 * mag[i])) throw new Error(`element ${i}: webgpu ${g[i]}, wasm ${w[i]}`);
    });

    test("a strided, padded convolution and both of its gradients equal cpu (tiled contractions over windows)", async () => {
      const x: [number[], string, number[]] = [values(2 * 5 * 11 * 9, 31, "float"), "float32", [2, 5, 11, 9]];
      const w: [number[], string, number[]] = [values(24 * 5 * 3 * 3, 32, "float"), "float32", [24, 5, 3, 3]];
      const conv = (a: np.Array, b: np.Array) => lax.conv(a, b, [2, 1], "SAME");
      await sameAsCpu(conv, [x, w], 45 * 6e-8, 1e-5, "conv");
      const loss = (a: np.Array, b: np.Array) => np.sum(np.sin(conv(a, b)));
      await sameAsCpu((a, b) => grad(loss)(a, b), [x, w], 1e-5, 1e-4, "conv input gradient");
      await sameAsCpu((a, b) => grad((q: np.Array, p: np.Array) => loss(p, q))(b, a), [x, w], 1e-5, 1e-4, "conv weight gradient");
    });

    test("a jit'd MLP: forward and valueAndGrad equal cpu, and jit runs on its inputs' device", async () => {
      const shapes: Record<string, number[]> = { w1: [16, 32], b1: [32], w2: [32, 4], b2: [4] };
      const params = (device: string) =>
        Object.fromEntries(Object.entries(shapes).map(([k, s], i) => {
          const n = s.reduce((p, q) => p * q, 1);
          return [k, make(values(n, 20 + i, "float").map((v) => v * 0.25), "float32", s, device)];
        })) as Record<string, np.Array>;
      const xs = values(8 * 16, 30, "float");
      const ys = values(8 * 4, 31, "float");
      const forward = (p: Record<string, np.Array>, x: np.Array) =>
        np.add(np.matmul(nn.relu(np.add(np.matmul(x, p.w1), p.b1)), p.w2), p.b2);
      const loss = (p: Record<string, np.Array>, x: np.Array, y: np.Array) => np.mean(np.square(np.subtract(forward(p, x), y)));
      const fwd = jit(forward);
      const step = jit(valueAndGrad(loss));
      const results: Record<string, any> = {};
      for (const device of ["webgpu", "cpu"]) {
        const p = params(device);
        const x = make(xs, "float32", [8, 16], device);
        const y = make(ys, "float32", [8, 4], device);
        const out = fwd({ w1: p.w1.ref, b1: p.b1.ref, w2: p.w2.ref, b2: p.b2.ref }, x.ref);
        expect(out.device).toBe(device);
        const [l, g] = step(p, x, y) as [np.Array, Record<string, np.Array>];
        expect(l.device).toBe(device);
        expect(g.w1.device).toBe(device);
        results[device] = { out, l, g };
      }
      const tol = 1e-5;
      await expectClose(results.webgpu.out, results.cpu.out, tol, 1e-6, "forward");
      await expectClose(results.webgpu.l, results.cpu.l, tol, 1e-6, "loss");
      for (const k of Object.keys(shapes)) await expectClose(results.webgpu.g[k], results.cpu.g[k], tol, 1e-6, `grad ${k}`);
      // A second call reuses the compiled program (no new pipelines).
      const rt = webGpuRuntime()!;
      const before = rt.stats().pipelines;
      const p = params("webgpu");
      const [l2, g2] = step(p, make(xs, "float32", [8, 16], "webgpu"), make(ys, "float32", [8, 4], "webgpu")) as [np.Array, any];
      expect(rt.stats().pipelines).toBe(before);
      const l2v = (await l2.data())[0];
      expect(Number.isFinite(l2v)).toBe(true);
      for (const k of Object.keys(shapes)) g2[k].dispose();
    });

    test("a warm jitted program binds the same buffers every call: no new bind group", async () => {
      // Layers whose temporaries of one size are given back out of the order they were taken:
      // handed out last-in first-out, the buffers each kernel got moved from call to call and
      // every call created 14-23 bind groups (a SmolLM2 decode step ~620 of its ~700).
      const f = jit((x: np.Array, w: np.Array) => {
        for (let i = 0; i < 8; i++) {
          const h = np.tanh(np.matmul(x.ref, w.ref));
          const g = np.exp(x.ref).sum(1, { keepdims: true });
          x = x.add(h.mul(g));
        }
        w.dispose();
        return x;
      });
      const x = np.ones([4, 64], { device: "webgpu" }), w = np.ones([64, 64], { device: "webgpu" }).mul(0.01);
      const rt = webGpuRuntime()!;
      const made: number[] = [];
      for (let i = 0; i < 6; i++) {
        const before = rt.stats().bindGroups;
        await f(x.ref, w.ref).data();
        made.push(rt.stats().bindGroups - before);
      }
      x.dispose();
      w.dispose();
      expect(made.slice(2)).toEqual([0, 0, 0, 0]);
    });

    test("jit packs outputs into kernels that bind no more storage buffers than the device allows", async () => {
      // Four outputs of one size, each reading four buffers (as a decoder's rotated keys per
      // layer): packed into one kernel they would bind 16 inputs, over the per-stage limit
      // (8 by default, 12 on SwiftShader), and SmolLM2's decode step failed so on webgpu.
      const f = (xs: np.Array[]) => [0, 1, 2, 3].map((i) =>
        np.add(np.multiply(xs[4 * i], xs[4 * i + 1]), np.multiply(xs[4 * i + 2], xs[4 * i + 3])));
      const inputs = (device: string) => Array.from({ length: 16 }, (_, i) => make(values(64, 60 + i, "float"), "float32", [64], device));
      const got = jit(f)(inputs("webgpu")) as np.Array[];
      const want = f(inputs("cpu"));
      for (let i = 0; i < 4; i++) await expectClose(got[i], want[i], 1e-6, 1e-6, `output ${i}`);
    });

    test("grad of a scalar function on webgpu equals cpu", async () => {
      const f = (x: np.Array) => np.sum(np.multiply(np.tanh(x.ref), np.exp(x)));
      const xs = values(64, 40, "float").map((v) => v * 0.5);
      await expectClose(grad(f)(make(xs, "float32", [64], "webgpu")), grad(f)(make(xs, "float32", [64], "cpu")), 1e-5, 1e-6, "grad");
    });

    test("devicePut round trips wasm -> webgpu -> cpu -> webgpu -> wasm keep every dtype's bytes", async () => {
      for (const [vals, dtype] of [[values(37, 50, "float"), "float32"], [values(37, 51, "int"), "int32"], [values(37, 52, "uint"), "uint32"], [values(37, 53, "bool"), "bool"], [values(37, 54, "float"), "float16"]] as const) {
        const x = make(vals as number[], dtype, [37], "wasm");
        const want = await make(vals as number[], dtype, [37], "wasm").data();
        let y = (await devicePut([x], "webgpu"))[0];
        expect(() => x.shape).toThrow(ReferenceError); // consumed
        expect(y.device).toBe("webgpu");
        y = (await devicePut(y, "cpu"));
        expect(y.device).toBe("cpu");
        y = (await devicePut({ a: y }, "webgpu")).a;
        expect(y.device).toBe("webgpu");
        y = (await devicePut(y, "wasm"));
        expect(y.device).toBe("wasm");
        expect(Array.from(y.dataSync() as ArrayLike<number>)).toEqual(Array.from(want as ArrayLike<number>));
      }
    });

    test("mixed devices: arrays meet after devicePut; a number becomes a webgpu array", async () => {
      const a = np.array([1, 2, 3], { device: "webgpu" });
      const b = (await devicePut(np.array([10, 20, 30], { device: "cpu" }), "webgpu"));
      expect(await np.add(a, b).jsAsync()).toEqual([11, 22, 33]);
      const [n] = await devicePut([5], "webgpu");
      expect(n.device).toBe("webgpu");
      expect(await n.jsAsync()).toBe(5);
      // Arrays with data on two devices do not meet, eagerly or in a jit closure.
      const g = np.array([1, 2, 3], { device: "webgpu" });
      const w = np.array([1, 2, 3], { device: "wasm" });
      expect(() => np.add(g.ref, w.ref)).toThrow(/got arrays on devices webgpu and wasm, expected one device/);
      const f = jit((x: np.Array) => np.add(x, w.ref));
      expect(() => f(g.ref)).toThrow(/closes over an array on device wasm but runs on webgpu/);
      expect(g.refCount).toBe(3); // an error consumes nothing: both .ref references are still held
      g.dispose();
      g.dispose();
      expect(await g.jsAsync()).toEqual([1, 2, 3]);
      w.dispose();
    });

    test("ownership: data() consumes, .ref keeps, dispose frees the GPU buffer, use after free throws", async () => {
      const rt = webGpuRuntime()!;
      const base = rt.stats().buffers;
      const x = np.array([1, 2, 3, 4], { device: "webgpu" });
      const y = x.ref.mul(2);
      expect(await y.ref.jsAsync()).toEqual([2, 4, 6, 8]);
      expect(y.refCount).toBe(1);
      expect(await y.data()).toEqual(new Float32Array([2, 4, 6, 8]));
      expect(() => y.shape).toThrow(ReferenceError);
      await expect(y.data()).rejects.toThrow(ReferenceError);
      expect(rt.stats().buffers).toBe(base + 1); // x only
      x.dispose();
      expect(rt.stats().buffers).toBe(base);
      // Eager loops reuse pooled buffers instead of creating new ones.
      let z = np.zeros([1000], { device: "webgpu" });
      for (let i = 0; i < 20; i++) z = z.add(1);
      expect(await z.jsAsync().then((v: number[]) => v[999])).toBe(20);
      expect(rt.stats().buffers).toBe(base);
    });

    test("blockUntilReady computes a webgpu array and waits for the GPU, consuming nothing", async () => {
      const rt = webGpuRuntime()!;
      const x = np.array(Array.from({ length: 1000 }, (_, i) => i), { device: "webgpu" }).mul(2);
      const before = rt.stats().dispatches;
      expect(await blockUntilReady(x)).toBe(x);
      expect(rt.stats().dispatches).toBe(before + 1);
      expect(x.refCount).toBe(1);
      expect((await x.data())[999]).toBe(1998);
    });

    test.runIf(typeof OffscreenCanvas !== "undefined")("browsers have synchronous reads (the canvas copy's probe passed)", () =>
      expect(webGpuRuntime()!.canReadSync()).toBe(true));

    test.runIf(!webGpuRuntime()?.canReadSync())("without a blocking path (Node.js): dataSync, js and item throw a clear error and consume nothing", async () => {
      const x = np.array([1.5, 2.5], { device: "webgpu" });
      expect(() => x.dataSync()).toThrow(/webgpu.*no synchronous reads.*await x.data\(\)/);
      expect(() => x.js()).toThrow(/no synchronous reads/);
      expect(() => x.ref.sum().item()).toThrow(/no synchronous reads/);
      expect(x.refCount).toBe(1);
      expect(await x.jsAsync()).toEqual([1.5, 2.5]);
    });

    test.runIf(!!webGpuRuntime()?.canReadSync())("in browsers dataSync, js and item read through a canvas copy, every byte exact", async () => {
      const rt = webGpuRuntime()!;
      // 20 000 int32 from a kernel: more than one 64 KiB round trip, a partial last row, and
      // every byte value in every byte position (the alpha byte included).
      const n = 20000;
      const vals = Int32Array.from({ length: n }, (_, i) => Math.imul(i, 0x01000193) ^ 0x5bd1e995);
      const x = np.array(vals, { device: "webgpu" }).add(0);
      const before = rt.stats().syncReads;
      expect(x.ref.dataSync()).toEqual(vals);
      expect(rt.stats().syncReads).toBe(before + 1);
      expect(x.ref.reshape([100, 200]).js()[99]).toEqual(Array.from(vals.slice(n - 200)));
      expect(x.refCount).toBe(1);
      x.dispose();
      // Sizes that are no multiple of 4 (bools: one byte each), NaN and infinities, a scalar.
      expect(np.logicalNot(np.array([true, false, true], { device: "webgpu" })).js()).toEqual([false, true, false]);
      expect(np.array([NaN, -Infinity, -0, 3.25], { device: "webgpu" }).mul(1).js()).toEqual([NaN, -Infinity, -0, 3.25]);
      expect(np.array([1.5, 2.5], { device: "webgpu" }).sum().item()).toBe(4);
    });

    test("errors: too large an allocation, float64, a WGSL kernel that does not compile", async () => {
      const big = getWebGPUDevice().limits.maxStorageBufferBindingSize / 4 + 1024;
      await expect(np.zeros([big], { device: "webgpu" }).add(1).data()).rejects.toThrow(/webgpu: out of memory: cannot allocate \d+ bytes/);
      await expect(np.ones([2], { dtype: np.float64, device: "webgpu" }).add(1).data()).rejects.toThrow(/float64 is not supported on WebGPU/);
      // The device still works after both.
      expect(await np.array([0, 1, 2], { device: "webgpu" }).add(0).jsAsync()).toEqual([0, 1, 2]);

      const rt = webGpuRuntime()!;
      const bad = "@group(0) @binding(1) var<storage, read_write> out: array<u32>;\n@compute @workgroup_size(1)\nfn main() { out[0] = undefined_thing; }\n";
      const pipe = rt.pipeline(bad, 0);
      expect(pipe).toBeGreaterThanOrEqual(0);
      const h = rt.alloc(16);
      expect(rt.dispatch(pipe, new Int32Array(0), h, 4, 1, 1)).toBe(0);
      const read = rt.read(h, 0, 16)!;
      await expect(read).rejects.toThrow(/did not compile: 3:\d+: .*undefined_thing.*KILN_WEBGPU_DEBUG/s);
      // Known failed now: the next dispatch of it fails at once; with debug on, the text comes along.
      expect(rt.dispatch(pipe, new Int32Array(0), h, 4, 1, 1)).toBe(-1);
      expect(rt.lastError).toMatch(/did not compile/);
      webgpuDebug(true);
      const pipe2 = rt.pipeline(bad + "// debug\n", 0);
      rt.dispatch(pipe2, new Int32Array(0), h, 4, 1, 1);
      await expect(rt.read(h, 0, 16)!).rejects.toThrow(/--- WGSL ---[\s\S]*undefined_thing/);
      webgpuDebug(false);
      rt.free(h);
      expect(rt.pipeline("x", 200)).toBe(-1);
      expect(rt.lastError).toMatch(/201 storage buffers/);
    });

    // WGSL has no float64: samplers that widen to float64 elsewhere (XLA's FMA in uniform's
    // scaling and erf_inv's Horner steps) round the product first here. uniform may then differ
    // from the cpu by one ulp of max(|floats * span|, |lo|); normal and truncatedNormal also go
    // through WGSL's log and sqrt, which the WGSL spec lets be off by 3 ulp (log: 2^-21 absolute
    // near 1), so a few ulp of the sample's scale.
    test("random samplers run on webgpu and agree with the cpu", async () => {
      const draw = {
        uniform: [() => random.uniform(random.key(1), [4096], { minval: -0.9, maxval: 0.7 }), 2 ** -23],
        normal: [() => random.normal(random.key(2), [4096]), 4 * 2 ** -22],
        truncatedNormal: [() => random.truncatedNormal(random.key(3), -2, 2, [4096]), 4 * 2 ** -22],
      } as const;
      for (const [name, [f, atol]] of Object.entries(draw)) {
        defaultDevice("cpu");
        const want = await f().data();
        defaultDevice("webgpu");
        const got = await f().data();
        let worst = 0;
        for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
        expect(worst, name).toBeLessThanOrEqual(atol);
      }
    });

    // (Its init draws from truncatedNormal: it stopped the page at init on WebGPU before.)
    test("the MNIST CNN of examples/ initializes on webgpu", async () => {
      defaultDevice("webgpu");
      const cnn = makeCnn({ kiln: { numpy: np, random, nn, jit, valueAndGrad, lax }, optax });
      const { params, shuffleKey } = cnn.init(0);
      shuffleKey.dispose();
      const leaves = tree.leaves(params) as np.Array[];
      expect(leaves.length).toBeGreaterThan(0);
      for (const p of leaves) expect(p.device).toBe("webgpu");
      const first = (await leaves[0].ref.data()) as Float32Array;
      expect(first.every(Number.isFinite)).toBe(true);
      tree.dispose(params);
    });

    describe("numpy fixtures on webgpu", () => {
      beforeEach(() => {
        defaultDevice("webgpu");
      });
      const swiftshader = /swiftshader/i.test(webGpuRuntime()?.adapter ?? "");
      // WGSL has no 64-bit floats: a float64 case either agrees with NumPy (no kernel ran: data
      // written and read back) or fails with that error.
      const f64 = (c: (typeof cases)[number]) =>
        !c.error && (c.inputs.some((i) => i.arr.dtype === "float64") || c.expects.some((e) => e.dtype === "float64"));
      test.each(cases.map((c) => [c.id, c] as const))("%s", async (_id, c) => {
        const known = swiftshader ? knownFailure(c.id) : undefined;
        if (f64(c)) {
          const err = await runNumpyCase(c, "webgpu", compareAsync).then(() => null, (e) => e);
          if (err) expect(String(err.message)).toMatch(/float64 is not supported on WebGPU/);
        }
        else if (known) await expect(runNumpyCase(c, "webgpu", compareAsync), `known failure (${known})`).rejects.toThrow();
        else await runNumpyCase(c, "webgpu", compareAsync);
      });
    });

    // Last: after a device loss every call fails with a clear error, and nothing crashes.
    test("device loss: later calls throw 'the device was lost'", async () => {
      const x = np.array([1, 2], { device: "webgpu" });
      webGpuRuntime()!.destroy();
      await getWebGPUDevice().lost;
      expect(() => np.array([1, 2], { device: "webgpu" })).toThrow(/the device was lost/);
      await expect(x.data()).rejects.toThrow(/the device was lost/);
      defaultDevice("wasm"); // the browser runner shares one package instance across files
    });
  });
}
