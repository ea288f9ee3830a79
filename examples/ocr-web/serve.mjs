// `make serve-ocr`: serves the OCR page, the package build and PaddleOCR's models and
// dictionary (data/onnx-models, from `make onnx-models`) with the COOP/COEP headers that give
// a page SharedArrayBuffer (threads). Also used by the headless test (js/test/browser/ocr.mjs).
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".wasm": "application/wasm", ".png": "image/png", ".txt": "text/plain; charset=utf-8" };
// Only these folders are served (never the rest of the machine).
const allowed = /^\/(examples\/ocr-web|js\/dist|data\/onnx-models\/node_modules\/@gutenye\/ocr-models\/assets)\/[\w.\/-]*$/;

export function startServer(port = 0, host = "127.0.0.1") {
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "").split("?")[0]);
    if (path === "/") return res.writeHead(302, { Location: "/examples/ocr-web/" }).end();
    if (!allowed.test(path) || path.includes("..")) return res.writeHead(404).end();
    const file = join(repo, path.endsWith("/") ? path + "index.html" : path);
    let size;
    try {
      size = statSync(file).size;
    } catch {
      return res.writeHead(404).end();
    }
    const type = types[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream";
    res.writeHead(200, { ...headers, "Content-Type": type, "Content-Length": size });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(Number(process.env.PORT ?? 8000));
  console.log(`[kiln] OCR page: http://127.0.0.1:${server.address().port}/examples/ocr-web/`);
}
