// The MobileNet page: torchvision's MobileNetV3-small exported to ExecuTorch
// (tests/fixtures/pte/mobilenet_v3_small.pte, by tools/gen_pte_fixtures.py) loaded with kiln's
// executorch namespace. The program was exported with external constants; its weights are the
// seeded formula of js/test/pte_formula.mjs (not trained: see the page's note). The image is
// decoded by the browser, drawn at 224x224 and normalized with ImageNet's mean and std exactly
// as tools/gen_mobilenet_page_fixture.py does before running ExecuTorch, whose top-5 the headless
// check (js/test/browser/mobilenet.mjs) compares with window.mobilenetPage.
import * as kiln from "../../js/dist/index.js";
import { formulaValues } from "../../js/test/pte_formula.mjs";

const np = kiln.numpy;
const q = new URLSearchParams(location.search);
const PROGRAM = new URL("../../tests/fixtures/pte/mobilenet_v3_small.pte", location.href);
const SIDE = 224, MEAN = [0.485, 0.456, 0.406], STD = [0.229, 0.224, 0.225];
const RUNS = Number(q.get("runs") ?? 2); // the first traces and compiles; later ones are steady state
const $ = (id) => document.getElementById(id);
const state = (window.mobilenetPage = { device: null, top5: [], ms: {}, rgbHash: null, error: null, done: false });
const status = (s) => ($("status").textContent = s);

let labels, program, image;

// The program on `device`, its external tensors from the weight formula.
async function loadOn(device) {
  const t0 = performance.now();
  program?.dispose();
  program = null;
  program = await kiln.executorch.load(PROGRAM, {
    device,
    namedData: (name, { dtype, shape }) =>
      dtype === "float32" ? np.array(formulaValues(name, shape), { shape, device }) : np.zeros(shape, { dtype, device }),
  });
  state.device = device;
  state.ms.load = performance.now() - t0;
}

// The image's pixels at 224x224 (drawn 1:1 when it already has that size: no resampling).
function pixels(bitmap) {
  const c = $("canvas"), g = c.getContext("2d", { willReadFrequently: true });
  g.fillStyle = "#fff";
  g.fillRect(0, 0, SIDE, SIDE);
  g.drawImage(bitmap, 0, 0, SIDE, SIDE);
  return g.getImageData(0, 0, SIDE, SIDE).data;
}

// FNV-1a of the RGB bytes in row order: the check compares it with the generator's, so a
// decoding difference shows as such rather than as different logits.
function rgbHash(rgba) {
  let h = 2166136261;
  for (let i = 0; i < rgba.length; ++i) if (i % 4 !== 3) h = Math.imul(h ^ rgba[i], 16777619) >>> 0;
  return h;
}

// RGBA to NCHW float32, (v / 255 - mean) / std in double, one rounding to float32.
function toTensor(rgba) {
  const plane = SIDE * SIDE, out = new Float32Array(3 * plane);
  for (let i = 0; i < plane; ++i)
    for (let c = 0; c < 3; ++c) out[c * plane + i] = (rgba[i * 4 + c] / 255 - MEAN[c]) / STD[c];
  return np.array(out, { shape: [1, 3, SIDE, SIDE], device: state.device });
}

async function classify() {
  const rgba = pixels(image);
  state.rgbHash = rgbHash(rgba);
  state.ms.runs = [];
  let logits;
  for (let r = 0; r < RUNS; ++r) {
    const t0 = performance.now();
    const [out] = await program.run("forward", [toTensor(rgba)]);
    logits = await out.data(); // consumes out; includes the read back: what a caller waits for
    state.ms.runs.push(performance.now() - t0);
  }
  // Descending, ties to the lower index (NumPy's stable argsort of -logits, as the generator).
  const order = [...logits.keys()].sort((a, b) => logits[b] - logits[a] || a - b);
  state.top5 = order.slice(0, 5).map((i) => ({ index: i, label: labels[i], logit: logits[i] }));
  show();
}

function show() {
  $("top").replaceChildren(...state.top5.map(({ index, label, logit }) => {
    const tr = document.createElement("tr");
    for (const [text, cls] of [[index, "num"], [label, ""], [logit.toFixed(4), "num"]]) {
      const td = tr.appendChild(document.createElement("td"));
      td.textContent = text;
      if (cls) td.className = cls;
    }
    return tr;
  }));
  const [first, ...rest] = state.ms.runs;
  status(`${state.device}: load ${state.ms.load.toFixed(0)} ms, first run (trace + compile) ${first.toFixed(0)} ms` +
    (rest.length ? `, then ${rest.map((t) => t.toFixed(0)).join(", ")} ms a run` : ""));
}

async function main() {
  const devices = await kiln.init();
  const device = q.get("device") ?? (devices.includes("webgpu") ? "webgpu" : devices.includes("wasm") ? "wasm" : "cpu");
  const select = $("device");
  select.replaceChildren(...devices.map((d) => Object.assign(document.createElement("option"), { value: d, textContent: d, selected: d === device })));
  status(`loading MobileNetV3-small on ${device}…`);
  const [text, blob] = await Promise.all([
    fetch("./imagenet_classes.txt").then((r) => r.text()),
    fetch(q.get("image") ?? "./scene.png").then((r) => r.blob()),
  ]);
  labels = text.split("\n").slice(0, 1000);
  image = await createImageBitmap(blob, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  await loadOn(device);
  status(`classifying on ${device}…`);
  await classify();
  state.done = true;
  console.log(`[mobilenet-web] top-5 ${JSON.stringify(state.top5.map((t) => t.index))} on ${state.device}: load ${state.ms.load.toFixed(0)} ms, runs ${state.ms.runs.map((t) => t.toFixed(0)).join(", ")} ms`);
  select.onchange = () => rerun(() => loadOn(select.value));
  $("file").onchange = (e) => {
    const f = e.target.files[0];
    if (f) rerun(async () => (image = await createImageBitmap(f, { colorSpaceConversion: "none" })));
  };
}

// A device or image change: redo what it needs, then classify again.
function rerun(step) {
  status("working…");
  step().then(classify).catch(fail);
}

function fail(e) {
  state.error = String(e?.stack ?? e);
  status(`error: ${e?.message ?? e}`);
}
main().catch(fail);
