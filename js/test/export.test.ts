// exportOnnx / exportStablehlo from JS: an MLP and a small CNN traced from JS closures,
// exported, and the ONNX bytes loaded back by kiln's own onnx namespace on cpu and wasm,
// which must give the function's own outputs; the StableHLO module's signature; errors.
// (The engines themselves run the C++ corpus: tools/gen_export_fixtures.py, Export.* tests.)
import { describe, expect, test } from "vitest";
import { exportOnnx, exportStablehlo, lax, nn, numpy as np, onnx } from "../dist/index.js";

function mlp(x: np.Array, w1: np.Array, b1: np.Array, w2: np.Array) {
  return np.matmul(nn.relu(np.matmul(x, w1).add(b1)), w2);
}

function cnn(x: np.Array, w: np.Array) {
  const c = nn.relu(lax.conv(x, w, [1, 1], "SAME"));
  return lax.reduceWindow(c, np.max, [1, 1, 2, 2], [1, 1, 2, 2]);
}

const values = (n: number, seed: number) => Array.from({ length: n }, (_, i) => Math.sin(0.731 * i + seed));

function expectClose(got: np.Array, want: np.Array) {
  expect(got.shape).toEqual(want.shape);
  const g = got.dataSync() as Float32Array, w = want.dataSync() as Float32Array;
  for (let i = 0; i < g.length; i++) expect(Math.abs(g[i] - w[i])).toBeLessThanOrEqual(1e-5 + 1e-5 * Math.abs(w[i]));
}

for (const device of ["cpu", "wasm"]) describe(`export on ${device}`, () => {
  const arr = (n: number[], seed: number) =>
    np.array(values(n.reduce((a, b) => a * b, 1), seed), { shape: n, device: device as any });

  const models = [
    ["mlp", mlp, [[4, 8], [8, 16], [16], [16, 3]]],
    ["cnn", cnn, [[2, 1, 6, 6], [3, 1, 3, 3]]],
  ] as const;
  for (const [name, f, shapes] of models) test(`${name}: the ONNX model read back by kiln gives the function's outputs`, async () => {
    const args = shapes.map((s, i) => arr([...s], i));
    const bytes = exportOnnx(f as any)(...args.map((a) => a.ref));
    expect(bytes).toBeInstanceOf(Uint8Array);
    const s = await onnx.load(bytes, { device: device as any });
    expect(s.inputNames).toEqual(shapes.map((_, i) => `input_${i}`));
    expect(s.outputNames).toEqual(["output_0"]);
    const feeds = Object.fromEntries(args.map((a, i) => [`input_${i}`, a.ref]));
    const { output_0: y } = await s.run(feeds);
    expectClose(y, (f as any)(...args));
    s.release();
  });

  test("the StableHLO module has one main over the flattened arguments", () => {
    const text = exportStablehlo((p: { w: np.Array; b: np.Array }, x: np.Array) => [np.tanh(np.matmul(x.ref, p.w).add(p.b)), x])(
      { b: arr([3], 1), w: arr([2, 3], 2) }, arr([5, 2], 3));
    expect(text.startsWith("module @kiln_export {\n  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<5x2xf32>) -> (tensor<5x3xf32>, tensor<5x2xf32>)")).toBe(true);
    expect(text).toContain('"stablehlo.tanh"');
  });

  test("errors name what cannot be exported", () => {
    const x = arr([3], 0);
    expect(() => exportOnnx((v: np.Array) => lax.bitcastConvertType(v, "int32"))(x.ref)).toThrow(
      /export_onnx: cannot export primitive bitcast_convert_type/);
    expect(() => exportOnnx((v: np.Array) => v, { opset: 13 })(x.ref)).toThrow(/expected 18 or later/);
    expect(() => exportOnnx(3 as any)).toThrow(/exportOnnx/);
    x.dispose();
  });
});
