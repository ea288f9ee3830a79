// Headless Chromium check of examples/ocr-web: the page (served as by `make serve-ocr`) loads
// PaddleOCR's det and rec ONNX models with kiln's onnx namespace, finds the text lines of the
// bundled image (examples/ocr-web/text.png: two lines, "Hello kiln 2026" and "ONNX on the web")
// and reads them. Without an adapter (--disable-gpu) the page runs on wasm.
import { launchChromium, openExample } from "./chromium.mjs";
import { startServer } from "../../../examples/ocr-web/serve.mjs";

const EXPECTED = ["Hello kiln 2026", "ONNX on the web"];
const server = await startServer();
const url = `http://127.0.0.1:${server.address().port}/examples/ocr-web/`;
const { context, close } = await launchChromium(false);
let ok = false;
const t0 = Date.now();
try {
  const tab = await openExample(context, url, { prefix: "ocr-web", global: "ocrPage", timeout: 300_000 });
  const r = await tab.evaluate(() => ({ ...window.ocrPage, shown: document.getElementById("lines").textContent, isolated: crossOriginIsolated }));
  ok = !r.error && r.device === "wasm" && JSON.stringify(r.lines) === JSON.stringify(EXPECTED) && r.shown === EXPECTED.join("\n") && r.isolated;
  console.log(`[kiln] examples/ocr-web: ${ok ? "ok" : "WRONG"}: device ${r.device}, lines ${JSON.stringify(r.lines)} (expected ${JSON.stringify(EXPECTED)}), boxes ${JSON.stringify(r.boxes)}, det ${r.ms?.det?.toFixed(0)} ms, rec ${r.ms?.rec?.toFixed(0)} ms, crossOriginIsolated ${r.isolated}, ${((Date.now() - t0) / 1000).toFixed(0)} s${r.error ? `\n${r.error}` : ""}`);
} finally {
  await close();
  server.close();
}
process.exit(ok ? 0 : 1);
