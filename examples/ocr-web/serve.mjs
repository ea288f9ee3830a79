// `make serve-ocr`: serves the OCR page, the package build and PaddleOCR's models and
// dictionary (data/onnx-models, from `make onnx-models`) with the COOP/COEP headers that give
// a page SharedArrayBuffer (threads). Also used by the headless test (js/test/browser/ocr.mjs).
import { fileURLToPath } from "node:url";
import { startStaticServer } from "../static_server.mjs";

// Only these folders are served.
const allowed = /^\/(examples\/ocr-web|js\/dist|data\/onnx-models\/node_modules\/@gutenye\/ocr-models\/assets)\/[\w.\/-]*$/;

export const startServer = (port = 0, host = "127.0.0.1") => startStaticServer(allowed, "/examples/ocr-web/", port, host);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(Number(process.env.PORT ?? 8000));
  console.log(`[kiln] OCR page: http://127.0.0.1:${server.address().port}/examples/ocr-web/`);
}
