// `make serve-site`: serves build/site, the whole static site, with the COOP/COEP headers that
// make a page cross-origin isolated (SharedArrayBuffer, so the threaded core). Any static host
// that can send these two headers serves it the same; without them kiln still runs, on one
// thread. Also used by the site check (site/check.mjs) through startServer().
import { createReadStream, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
const types = {
  ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
  ".wasm": "application/wasm", ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png", ".md": "text/markdown; charset=utf-8",
};

export function startServer(root = resolve(here, "../build/site"), port = 0, host = "127.0.0.1") {
  const server = createServer((req, res) => {
    let path = decodeURIComponent((req.url ?? "/").split("?")[0].split("#")[0]);
    if (path.endsWith("/")) path += "index.html";
    const file = resolve(root, "." + path);
    // Nothing outside the site's folder.
    if (!file.startsWith(root + sep)) return res.writeHead(404).end();
    let size;
    try {
      const st = statSync(file);
      if (st.isDirectory()) return res.writeHead(302, { Location: path + "/" }).end();
      size = st.size;
    } catch {
      return res.writeHead(404).end();
    }
    res.writeHead(200, { ...headers, "Content-Type": types[extname(file)] ?? "application/octet-stream", "Content-Length": size });
    if (req.method === "HEAD") return res.end();
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) => server.listen(port, host, () => ok(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startServer(undefined, Number(process.env.PORT ?? 8000));
  console.log(`[kiln] site: http://127.0.0.1:${server.address().port}/`);
}
