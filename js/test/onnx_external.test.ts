// ONNX external data and Loops whose bodies compute their conditions (tools/gen_onnx_fixtures.py:
// outputs from onnxruntime), on cpu and wasm, in Node and in Chromium: a model saved with
// save_as_external_data loaded from its URL (the data file found beside it) and from bytes
// with onnxruntime-web's externalData option in each of its shapes; the errors for a missing,
// short or escaping file; and the Loops' scan outputs of every length the cases give.
import { describe, expect, test } from "vitest";
import { numpy as np, onnx } from "../dist/index.js";
import { expectCloseTo, parseTensorPb, tensorOf } from "./onnx_pb.js";

// Beside this file in Node (file: URLs); from the test server in Chromium (it serves
// tests/fixtures/onnx/, and the bundle sits at the server's root).
const dir = new URL("../../tests/fixtures/onnx/", import.meta.url);

async function bytesOf(name: string): Promise<Uint8Array> {
  const url = new URL(name, dir);
  if (url.protocol === "file:") {
    // @ts-ignore: node:fs without @types/node
    const fs = await import("node:fs/promises");
    return new Uint8Array(await fs.readFile(url));
  }
  const r = await fetch(url);
  expect(r.ok).toBe(true);
  return new Uint8Array(await r.arrayBuffer());
}

const tensor = async (name: string, device: string) => tensorOf(parseTensorPb(await bytesOf(name)), device);
const expectClose = async (got: np.Array, name: string) => expectCloseTo(got, parseTensorPb(await bytesOf(name)));

for (const device of ["cpu", "wasm"]) describe(`onnx external data and data-dependent loops on ${device}`, () => {
  const opts = { device: device as any };

  test("a model with external data loads from its URL and from bytes with externalData", async () => {
    const modelBytes = await bytesOf("external.onnx");
    const data = await bytesOf("external.bin");
    const sessions = [
      await onnx.load(new URL("external.onnx", dir), opts),
      await onnx.load(modelBytes, { ...opts, externalData: [{ path: "external.bin", data }] }),
      await onnx.load(modelBytes, { ...opts, externalData: [{ path: "./external.bin", data: data.slice().buffer }] }),
      await onnx.InferenceSession.create(modelBytes, { ...opts, externalData: [{ path: "external.bin", data: new Blob([data]) }] }),
      await onnx.load(modelBytes, { ...opts, externalData: [{ path: "external.bin", data: new URL("external.bin", dir).href }] }),
    ];
    for (const s of sessions) {
      const out = await s.run({ x: await tensor("external.in0_0.pb", device) });
      await expectClose(out.y, "external.out0_0.pb");
      s.release();
    }
  });

  test("a missing, short or escaping external file is an Error naming the tensor and the file", async () => {
    const modelBytes = await bytesOf("external.onnx");
    const data = await bytesOf("external.bin");
    await expect(onnx.load(modelBytes, opts)).rejects.toThrow(/tensor 'w': its external data file 'external.bin' was not given/);
    await expect(onnx.load(modelBytes, { ...opts, externalData: [{ path: "other.bin", data }] })).rejects.toThrow(
      /'external.bin' was not given \(external files given: 'other.bin'\)/,
    );
    await expect(onnx.load(modelBytes, { ...opts, externalData: [{ path: "external.bin", data: data.slice(0, 100) }] })).rejects.toThrow(
      /tensor 'shift_value' \(external file 'external.bin'\): offset 100 \+ length 20 runs past the end of the file \(100 bytes\)/,
    );
    await expect(onnx.load(modelBytes, { ...opts, externalData: [{ path: "../external.bin", data }] })).rejects.toThrow(/has a '\.\.' part/);
    await expect(onnx.load(modelBytes, { ...opts, externalData: [{ data } as any] })).rejects.toThrow(/externalData\[0\]/);
    await expect(onnx.load(modelBytes, { ...opts, externalData: "external.bin" as any })).rejects.toThrow(/expected an array/);
  });

  test("Loops whose bodies compute their conditions match onnxruntime (scan outputs of any length)", async () => {
    const s = await onnx.load(new URL("loop_while.onnx", dir), opts);
    expect(s.inputNames).toEqual(["M", "go", "x"]);
    // Stop at the trip count, early, after one step, before any (go false), and at M = 0.
    for (let k = 0; k < 5; k++) {
      const feeds: Record<string, np.Array> = {};
      for (const [i, n] of s.inputNames.entries()) feeds[n] = await tensor(`loop_while.in${k}_${i}.pb`, device);
      const out = await s.run(feeds);
      for (const [j, n] of s.outputNames.entries()) await expectClose(out[n], `loop_while.out${k}_${j}.pb`);
    }
    s.release();
  });
});
