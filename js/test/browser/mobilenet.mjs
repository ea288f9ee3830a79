// Headless Chromium check of examples/mobilenet-web: the page (served as by
// `make serve-mobilenet`) loads MobileNetV3-small's ExecuTorch program with the formula
// weights, classifies the bundled 224x224 image, and must give ExecuTorch's own top-5
// (tests/fixtures/pte/mobilenet_page.json, from tools/gen_mobilenet_page_fixture.py): the same
// decoded pixels (FNV-1a of the RGB bytes), the same five class indices in order, and each
// logit within the model's tolerance of tests/fixtures/pte/models.txt (rtol 1e-5, atol 1e-4:
// kiln's kernels sum in other orders than ExecuTorch's portable ones). Without an adapter
// (--disable-gpu) the page runs on wasm; MOBILENET_WEBGPU=1 gives Chromium WebGPU on
// SwiftShader, where the page must pick webgpu.
import { readFileSync } from "node:fs";
import { launchChromium, openExample } from "./chromium.mjs";
import { startServer } from "../../../examples/mobilenet-web/serve.mjs";

const RTOL = 1e-5, ATOL = 1e-4;
const WEBGPU = process.env.MOBILENET_WEBGPU === "1";
const RUNS = Number(process.env.MOBILENET_RUNS ?? 2);
const expected = JSON.parse(readFileSync(new URL("../../../tests/fixtures/pte/mobilenet_page.json", import.meta.url), "utf8"));
const labels = readFileSync(new URL("../../../examples/mobilenet-web/imagenet_classes.txt", import.meta.url), "utf8").split("\n");
const server = await startServer();
const url = `http://127.0.0.1:${server.address().port}/examples/mobilenet-web/?runs=${RUNS}`;
const { context, close } = await launchChromium(WEBGPU);
let ok = false;
const t0 = Date.now();
try {
  const tab = await openExample(context, url, { prefix: "mobilenet-web", global: "mobilenetPage", timeout: 540_000 });
  const r = await tab.evaluate(() => ({
    ...window.mobilenetPage, isolated: crossOriginIsolated,
    rows: [...document.querySelectorAll("#top tr")].map((tr) => [...tr.children].map((td) => td.textContent)),
  }));
  const top = (r.top5 ?? []).map((t) => t.index);
  const diffs = (r.top5 ?? []).map((t, i) => Math.abs(t.logit - expected.logits[i]));
  const within = diffs.length === 5 && diffs.every((d, i) => d <= ATOL + RTOL * Math.abs(expected.logits[i]));
  const shown = r.rows?.length === 5 && r.rows.every((row, i) => row[0] === String(expected.top5[i]) && row[1] === labels[expected.top5[i]]);
  ok = !r.error && r.device === (WEBGPU ? "webgpu" : "wasm") && r.rgbHash === expected.image.rgb_fnv1a32 &&
    JSON.stringify(top) === JSON.stringify(expected.top5) && within && shown && r.ms.runs.length === RUNS && r.isolated;
  console.log(`[kiln] examples/mobilenet-web: ${ok ? "ok" : "WRONG"}: device ${r.device}, rgb hash ${r.rgbHash} (expected ${expected.image.rgb_fnv1a32}), ` +
    `top-5 ${JSON.stringify(top)} (ExecuTorch ${JSON.stringify(expected.top5)}), max |logit - ExecuTorch| ${Math.max(...diffs).toExponential(2)} ` +
    `(allowed ${ATOL} + ${RTOL}|logit|), load ${r.ms?.load?.toFixed(0)} ms, runs ${r.ms?.runs?.map((t) => t.toFixed(0)).join(", ")} ms, ` +
    `crossOriginIsolated ${r.isolated}, ${((Date.now() - t0) / 1000).toFixed(0)} s${r.error ? `\n${r.error}` : ""}`);
} finally {
  await close();
  server.close();
}
process.exit(ok ? 0 : 1);
