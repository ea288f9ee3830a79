// The ONNX tests' fixtures: a TensorProto file (the node tests' .pb layout) as an Array, and
// the comparison of an output with one (shape, then each value within 1e-6 + 1e-5 |want|).
import { expect } from "vitest";
import { numpy as np } from "../dist/index.js";

export interface TensorPb {
  shape: number[];
  values: Float32Array;
  type: number; // TensorProto.DataType: 1 FLOAT, 7 INT64, 9 BOOL
}

/** A TensorProto (dims: field 1, data_type: field 2, raw_data: field 9) of float32, int64 or bool. */
export function parseTensorPb(b: Uint8Array): TensorPb {
  let at = 0;
  const varint = () => {
    let v = 0, scale = 1, byte;
    do { byte = b[at++]; v += (byte & 0x7f) * scale; scale *= 128; } while (byte & 0x80);
    return v;
  };
  const shape: number[] = [];
  let raw = new Uint8Array(0), type = 1;
  while (at < b.length) {
    const key = varint(), field = Math.floor(key / 8), wire = key % 8;
    if (wire === 0) { const v = varint(); if (field === 1) shape.push(v); else if (field === 2) type = v; continue; }
    expect(wire).toBe(2);
    const len = varint(), body = b.slice(at, at + len);
    at += len;
    if (field === 9) raw = body;
    if (field === 1) { const end = at; at -= len; while (at < end) shape.push(varint()); }
  }
  expect([1, 7, 9]).toContain(type);
  const values = type === 1 ? new Float32Array(raw.buffer) : Float32Array.from(type === 7 ? new BigInt64Array(raw.buffer) : raw, Number);
  return { shape, values, type };
}

/** The tensor as an Array on `device`: float32, int64 as int32 (kiln has no int64), bool. */
export function tensorOf(t: TensorPb, device: string): np.Array {
  const dtype = t.type === 1 ? np.float32 : t.type === 7 ? np.int32 : np.bool;
  return np.array(t.values, { shape: t.shape, dtype, device: device as any });
}

export function expectCloseTo(got: np.Array, want: TensorPb) {
  expect(got.shape).toEqual(want.shape);
  const g = got.dataSync() as ArrayLike<number>;
  for (let i = 0; i < g.length; i++) expect(Math.abs(Number(g[i]) - want.values[i])).toBeLessThanOrEqual(1e-6 + 1e-5 * Math.abs(want.values[i]));
}
