// The example pages' file server: serves the paths `allowed` matches (never the rest of the
// machine), streamed, with the COOP/COEP headers that give a page SharedArrayBuffer (threads);
// "/" redirects to `home`. Used by examples/llm-web, examples/ocr-web and examples/mobilenet-web
// (serve.mjs).
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
const types = {
  ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
  ".wasm": "application/wasm", ".png": "image/png", ".txt": "text/plain; charset=utf-8",
};

export function startStaticServer(allowed, home, port = 0, host = "127.0.0.1") {
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "").split("?")[0]);
    if (path === "/") return res.writeHead(302, { Location: home }).end();
    if (!allowed.test(path) || path.includes("..")) return res.writeHead(404).end();
    const file = join(repo, path.endsWith("/") ? path + "index.html" : path);
    let size;
    try {
      size = statSync(file).size;
    } catch {
      return res.writeHead(404).end();
    }
    // Streamed: models are tens of MB.
    const type = types[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream";
    res.writeHead(200, { ...headers, "Content-Type": type, "Content-Length": size });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}
