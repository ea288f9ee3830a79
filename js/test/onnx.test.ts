// kiln's onnx namespace: the committed models of tests/fixtures/onnx (tools/gen_onnx_fixtures.py:
// a Gemm graph with a symbolic batch and a Conv graph) against onnx's reference evaluator's
// outputs on cpu and wasm, as tests/onnx_graph_test.cpp does in C++; then the session's
// contract: names, consumption of feeds, errors naming the input, and `call` under grad
// against central differences; a model with external data loaded from a path string (the rest
// of external data and data-dependent Loops: onnx_external.test.ts, in Chromium too). Node
// only: the models are read from the repository's files.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { grad, jit, numpy as np, onnx } from "../dist/index.js";
import { expectCloseTo, parseTensorPb, tensorOf } from "./onnx_pb.js";

const dir = new URL("../../tests/fixtures/onnx/", import.meta.url);

const readTensorPb = (name: string) => parseTensorPb(new Uint8Array(readFileSync(new URL(name, dir))));
const tensor = (name: string, device: string) => tensorOf(readTensorPb(name), device);
const expectClose = (got: np.Array, name: string) => expectCloseTo(got, readTensorPb(name));

describe.each(["cpu", "wasm"])("onnx models on %s", (device) => {
  test.each([["gemm", 2], ["conv", 1]] as const)("%s matches onnx's reference evaluator", async (model, sizes) => {
    const s = await onnx.load(new URL(`${model}.onnx`, dir), { device: device as any });
    expect(s.inputNames.length).toBe(1);
    for (let k = 0; k < sizes; k++) {
      const out = await s.run({ [s.inputNames[0]]: tensor(`${model}.in${k}_0.pb`, device) });
      expect(Object.keys(out)).toEqual(s.outputNames);
      const y = out[s.outputNames[0]];
      expect(y.device).toBe(device);
      expectClose(y, `${model}.out${k}_0.pb`);
      const [z] = s.call([tensor(`${model}.in${k}_0.pb`, device)]);
      expectClose(z, `${model}.out${k}_0.pb`);
    }
    s.release();
  });
});

test("a model with external data loads from a file path string, its data from a path too", async () => {
  const s = await onnx.load(fileURLToPath(new URL("external.onnx", dir)), { device: "cpu" });
  const bytes = new Uint8Array(readFileSync(new URL("external.onnx", dir)));
  const t = await onnx.load(bytes, { device: "cpu", externalData: [{ path: "external.bin", data: fileURLToPath(new URL("external.bin", dir)) }] });
  for (const session of [s, t]) {
    expectClose((await session.run({ x: tensor("external.in0_0.pb", "cpu") })).y, "external.out0_0.pb");
    session.release();
  }
});

describe("onnx API", () => {
  test("run consumes the feeds only when it succeeds; errors name the input", async () => {
    const s = await onnx.InferenceSession.create(readFileSync(new URL("gemm.onnx", dir)), { device: "cpu" });
    const name = s.inputNames[0];
    const x = tensor("gemm.in0_0.pb", "cpu");
    const xi = x.ref.astype(np.int32);
    await expect(s.run({ [name]: xi })).rejects.toThrow(new RegExp(name));
    expect(xi.refCount).toBe(1); // the failed call took nothing
    xi.dispose();
    await expect(s.run({ nope: x })).rejects.toThrow(/nope|missing|feed/);
    expect(x.refCount).toBe(1);
    const out = await s.run({ [name]: x });
    expect(x.refCount).toBe(0);
    out[s.outputNames[0]].dispose();
    await expect(s.run({ [name]: 3 as any })).rejects.toThrow(new RegExp(`feed '${name}'`));
    await expect(onnx.load(new Uint8Array([0xff, 0xff, 0xff]))).rejects.toThrow(/onnx/);
    s.release();
    await expect(s.run({})).rejects.toThrow(/released/);
  });

  test("call is a pure function: grad through the imported Conv graph matches differences", async () => {
    const s = await onnx.load(new URL("conv.onnx", dir), { device: "cpu" });
    const x = tensor("conv.in0_0.pb", "cpu");
    const n = s.call([x.ref])[0];
    const weights = np.cos(np.arange(0, n.size, 1, { dtype: np.float32, device: "cpu" }).mul(0.7)).reshape(n.shape);
    n.dispose();
    const loss = (v: np.Array) => np.sum(s.call([v])[0].mul(weights.ref));
    const g = jit(grad(loss))(x.ref).dataSync() as Float32Array;
    const xv = x.dataSync() as Float32Array;
    const h = 1e-2;
    const at = (v: Float32Array) => loss(np.array(v, { shape: readTensorPb("conv.in0_0.pb").shape, device: "cpu" })).item() as number;
    for (let i = 0; i < xv.length; i += Math.max(1, Math.floor(xv.length / 8))) {
      const up = xv.slice(), down = xv.slice();
      up[i] += h;
      down[i] -= h;
      const fd = (at(up) - at(down)) / (2 * h);
      expect(Math.abs(g[i] - fd)).toBeLessThanOrEqual(2e-3 + 2e-2 * Math.abs(fd));
    }
    weights.dispose();
    s.release();
  });
});
