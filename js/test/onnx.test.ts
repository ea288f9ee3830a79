// kiln's onnx namespace: the committed models of tests/fixtures/onnx (tools/gen_onnx_fixtures.py:
// a Gemm graph with a symbolic batch and a Conv graph) against onnx's reference evaluator's
// outputs on cpu and wasm, as tests/onnx_graph_test.cpp does in C++; then the session's
// contract: names, consumption of feeds, errors naming the input, and `call` under grad
// against central differences. Node only: the models are read from the repository's files.
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { grad, jit, numpy as np, onnx } from "../dist/index.js";

const dir = new URL("../../tests/fixtures/onnx/", import.meta.url);

/** A TensorProto file of float32 data (dims: field 1, raw_data: field 9) as shape and values. */
function readTensorPb(name: string): { shape: number[]; values: Float32Array } {
  const b = new Uint8Array(readFileSync(new URL(name, dir)));
  let at = 0;
  const varint = () => {
    let v = 0, scale = 1, byte;
    do { byte = b[at++]; v += (byte & 0x7f) * scale; scale *= 128; } while (byte & 0x80);
    return v;
  };
  const shape: number[] = [];
  let values = new Float32Array(0);
  while (at < b.length) {
    const key = varint(), field = Math.floor(key / 8), wire = key % 8;
    if (wire === 0) { const v = varint(); if (field === 1) shape.push(v); else if (field === 2) expect(v).toBe(1); continue; }
    expect(wire).toBe(2);
    const len = varint(), body = b.slice(at, at + len);
    at += len;
    if (field === 9) values = new Float32Array(body.buffer);
    if (field === 1) { const end = at; at -= len; while (at < end) shape.push(varint()); }
  }
  return { shape, values };
}

const tensor = (name: string, device: string) => {
  const t = readTensorPb(name);
  return np.array(t.values, { shape: t.shape, device: device as any });
};

function expectClose(got: np.Array, name: string) {
  const want = readTensorPb(name);
  expect(got.shape).toEqual(want.shape);
  const g = got.dataSync() as Float32Array;
  for (let i = 0; i < g.length; i++) expect(Math.abs(g[i] - want.values[i])).toBeLessThanOrEqual(1e-6 + 1e-5 * Math.abs(want.values[i]));
}

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
