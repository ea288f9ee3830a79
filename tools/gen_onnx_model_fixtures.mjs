// Writes tests/fixtures/onnx_models/: the inputs of each real model of tools/onnx_models.mjs and
// onnxruntime-node's outputs on them, as ONNX TensorProto files (tests/onnx_real_models_test.cpp
// reads them). Images are stored as their resized RGB bytes (uint8 [h, w, 3]) and audio as
// int16 samples; the test normalizes them as PaddleOCR and openWakeWord do. The recognizer's
// output ([1, 40, 6625] probabilities) is large, so only its argmax and max per time step and
// the first 64 classes of every step are committed (stated in the test).
//
//   cd tools/onnx-oracle && npm ci --ignore-scripts && cd ../.. && make onnx-models
//   node tools/gen_onnx_model_fixtures.mjs          # writes the fixtures
//   node tools/gen_onnx_model_fixtures.mjs --check  # compares a fresh run with them
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { MODELS_DIR, ROOT, realModels, namedFeeds } from "./onnx_models.mjs";
import { varint } from "../bench/wasm/onnx_model.mjs";

const ort = createRequire(join(ROOT, "tools/onnx-oracle/package.json"))("onnxruntime-node");
const OUT = join(ROOT, "tests/fixtures/onnx_models");
const check = process.argv.includes("--check");

// TensorProto: dims (1, packed int64), data_type (2), name (8), raw_data (9).
const TYPES = { float32: [1, 4], uint8: [2, 1], int16: [5, 2], int64: [7, 8] };
function tensorProto(name, type, dims, data) {
  const [code] = TYPES[type];
  const dimBytes = dims.flatMap(varint), nameBytes = [...Buffer.from(name)];
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from([
    0x0a, ...varint(dimBytes.length), ...dimBytes, 0x10, ...varint(code),
    0x42, ...varint(nameBytes.length), ...nameBytes, 0x4a, ...varint(raw.length), ...raw,
  ]);
}

// The committed view of an output: all of it, or for the recognizer the summary above.
function outputViews(name, t) {
  if (name !== "ocr_rec") return [["out", "float32", t.dims, t.data]];
  const [n, steps, classes] = t.dims, argmax = new BigInt64Array(n * steps), max = new Float32Array(n * steps);
  const slice = new Float32Array(n * steps * 64);
  for (let s = 0; s < n * steps; ++s) {
    const row = t.data.subarray(s * classes, (s + 1) * classes);
    let best = 0;
    for (let c = 1; c < classes; ++c) if (row[c] > row[best]) best = c;
    argmax[s] = BigInt(best), max[s] = row[best];
    slice.set(row.subarray(0, 64), s * 64);
  }
  return [["argmax", "int64", [n, steps], argmax], ["max", "float32", [n, steps], max], ["first64", "float32", [n, steps, 64], slice]];
}

let worst = 0;
mkdirSync(OUT, { recursive: true });
for (const m of realModels()) {
  const session = await ort.InferenceSession.create(join(MODELS_DIR, m.file), { intraOpNumThreads: 1, graphOptimizationLevel: "all" });
  const feeds = namedFeeds(m, session.inputNames);
  const files = [];
  const ortFeeds = {};
  for (const [name, f] of Object.entries(feeds)) {
    ortFeeds[name] = new ort.Tensor("float32", f.data, f.dims);
    if (f.image) files.push([`${m.name}.image.pb`, tensorProto(name, "uint8", [f.image.h, f.image.w, 3], f.image.hwc)]);
    else if (f.int16) files.push([`${m.name}.in.pb`, tensorProto(name, "int16", f.dims, Int16Array.from(f.data))]);
    else files.push([`${m.name}.in.pb`, tensorProto(name, "float32", f.dims, f.data)]);
  }
  const out = await session.run(ortFeeds);
  const t = out[session.outputNames[0]];
  for (const [suffix, type, dims, data] of outputViews(m.name, t)) files.push([`${m.name}.${suffix}.pb`, tensorProto(session.outputNames[0], type, dims, data)]);
  console.log(`${m.name}: ${session.inputNames.join(",")} -> ${session.outputNames.join(",")} [${t.dims}]`);
  for (const [file, bytes] of files) {
    const path = join(OUT, file);
    if (!check) { writeFileSync(path, bytes); continue; }
    const old = existsSync(path) ? readFileSync(path) : Buffer.alloc(0);
    if (old.length !== bytes.length) { console.error(`${file}: size ${old.length}, regenerated ${bytes.length}`); process.exitCode = 1; continue; }
    // Float payloads (the last bytes of the file) within 1e-4 relative: onnxruntime's kernels
    // round differently per CPU; everything else byte for byte.
    if (/\.(out|max|first64)\.pb$/.test(file)) {
      const floats = (buf) => new Float32Array(Uint8Array.prototype.slice.call(buf, buf.length & 3).buffer);
      const a = floats(old), b = floats(bytes);
      if (!old.subarray(0, 16).equals(bytes.subarray(0, 16))) { console.error(`${file}: header differs`); process.exitCode = 1; }
      for (let i = 0; i < b.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]) / (1e-3 + Math.abs(b[i])));
    } else if (!old.equals(bytes)) { console.error(`${file}: differs`); process.exitCode = 1; }
  }
}
if (check) console.log(`worst relative difference of the outputs: ${worst.toExponential(2)}${worst > 1e-4 ? " (too large)" : ""}`);
if (worst > 1e-4) process.exitCode = 1;
