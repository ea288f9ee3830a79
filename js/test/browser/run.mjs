// Runs the Vitest suite in headless Chromium: bundles test/browser/entry.ts with esbuild
// (`vitest` resolved to vitest-shim.ts), serves it with COOP/COEP headers from a local
// server, and drives Debian's chromium through playwright-core. Exit code 1 on failures.
import { build } from "esbuild";
import { createServer } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));

// `?raw` imports as text, as Vite gives them.
const rawText = {
  name: "raw",
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (a) => ({ path: resolve(a.resolveDir, a.path.slice(0, -4)), namespace: "raw" }));
    b.onLoad({ filter: /.*/, namespace: "raw" }, (a) => ({ contents: readFileSync(a.path, "utf8"), loader: "text" }));
  },
};
// Every test file of the Node suite, so the two runs cannot drift apart; KILN_TEST_FILES (a
// comma-separated list of names such as memory.test.ts) narrows it while working on one file.
const only = process.env.KILN_TEST_FILES?.split(",").filter(Boolean);
// Node-only files: llm.test.ts reads a 98 MB model from data/models; in Chromium, generation
// is tested through the chat page (test/browser/llm.mjs); executorch.test.ts and onnx.test.ts
// read their models from the repository's files. differential.test.ts runs its webgpu part
// here (its cpu and wasm parts and the randomized programs run in Node); the ownership sweep
// is device-independent (Node); webgpu_row_outputs.test.ts runs a child Node process.
const nodeOnly = new Set(["llm.test.ts", "webgpu_row_outputs.test.ts", "differential_random.test.ts", "ownership_sweep.test.ts", "executorch.test.ts", "onnx.test.ts"]);
const testFiles = readdirSync(join(here, ".."))
  .filter((f) => f.endsWith(".test.ts") && !nodeOnly.has(f) && (!only || only.includes(f)))
  .sort();
if (only && testFiles.length !== only.length) throw new Error(`KILN_TEST_FILES: no such test file among ${only.join(", ")}`);
// The files run in two pages at once (each tab is a renderer process of its own, and CI has
// two cores; one page ran them one after another), split by source size, largest first.
const pages = Math.max(1, Math.min(Number(process.env.KILN_BROWSER_PAGES ?? 2), testFiles.length));
const groups = Array.from({ length: pages }, () => ({ files: [], bytes: 0 }));
for (const f of [...testFiles].sort((a, b) => sizeOf(b) - sizeOf(a))) {
  const g = groups.reduce((a, b) => (b.bytes < a.bytes ? b : a));
  g.files.push(f);
  g.bytes += sizeOf(f);
}
function sizeOf(f) {
  return readFileSync(join(here, "..", f)).length;
}
const scripts = [];
for (const g of groups) {
  const entry = readFileSync(join(here, "entry.ts"), "utf8").replace(
    /^\/\/ @tests.*$/m,
    g.files.sort().map((f) => `import "../${f}";`).join("\n"),
  );
  const bundle = await build({
    stdin: { contents: entry, resolveDir: here, sourcefile: "entry.ts", loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    external: ["node:*"],
    alias: { vitest: join(here, "vitest-shim.ts") },
    plugins: [rawText],
    logLevel: "warning",
  });
  scripts.push(bundle.outputFiles[0].contents);
}
const page = (i) => `<!doctype html><meta charset="utf-8"><title>kiln tests</title><script type="module" src="/bundle${i}.js"></script>`;

// Cross-origin isolation (SharedArrayBuffer, so a threaded build can be chosen).
const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" };
// Also the repository's examples/web page and the package it loads (js/dist), and the ONNX
// fixtures that onnx_external.test.ts loads by URL.
const repo = resolve(here, "../../..");
const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".wasm": "application/wasm" };
const dist = resolve(here, "../../dist");
const server = createServer((req, res) => {
  const path = (req.url ?? "").split("?")[0];
  if (/^\/(examples\/web|js\/dist|tests\/fixtures\/onnx)\/[\w./-]*$/.test(path) && !path.includes("..")) {
    const file = join(repo, path.endsWith("/") ? path + "index.html" : path);
    try {
      const body = readFileSync(file);
      res.writeHead(200, { ...headers, "Content-Type": types[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  } else if (/^\/kiln_core_mt\.(cjs|wasm|worker\.cjs)$/.test(path)) {
    // The threaded core's files, next to the bundle (js/src/core.ts finds them there).
    const file = join(dist, path.slice(1));
    res.writeHead(200, { ...headers, "Content-Type": types[file.slice(file.lastIndexOf("."))] }).end(readFileSync(file));
  } else if (/^\/bundle\d+\.js$/.test(req.url ?? "") && scripts[Number(req.url.slice(7, -3))])
    res.writeHead(200, { ...headers, "Content-Type": "text/javascript" }).end(scripts[Number(req.url.slice(7, -3))]);
  else if (/^\/page\d+\.html$/.test(req.url ?? "")) res.writeHead(200, { ...headers, "Content-Type": "text/html" }).end(page(Number(req.url.slice(5, -5))));
  else res.writeHead(404).end();
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}/`;

const profile = mkdtempSync(join(tmpdir(), "kiln-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  // WebGPU on SwiftShader (Vulkan on the CPU), so webgpu.test.ts runs here too on machines
  // without a GPU; Chromium on Linux exposes WebGPU only with --enable-unsafe-webgpu. ANGLE on
  // SwiftShader gives the compositor GL, without which WebGPU canvases draw blank and the
  // synchronous reads (a canvas copy) find none.
  args: ["--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-vulkan=swiftshader",
    "--use-webgpu-adapter=swiftshader", "--use-angle=swiftshader", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run"],
});
let failed = 0;
try {
  const tabs = [];
  for (let i = 0; i < pages; i++) tabs.push(i === 0 ? context.pages()[0] ?? (await context.newPage()) : await context.newPage());
  for (const tab of tabs) {
    tab.on("pageerror", (e) => console.error(`[page error] ${e.message}`));
    // KILN_BROWSER_CONSOLE=1 prints the page's console (timings a test logs).
    if (process.env.KILN_BROWSER_CONSOLE) tab.on("console", (m) => console.log(`[page] ${m.text()}`));
  }
  const version = context.browser()?.version() ?? "chromium";
  const states = await Promise.all(tabs.map(async (tab, i) => {
    await tab.goto(`${url}page${i}.html`);
    await tab.waitForFunction(() => window.__kiln?.done === true, null, { timeout: 540_000, polling: 500 });
    return tab.evaluate(() => window.__kiln);
  }));
  const tab = tabs[0];
  const results = states.flatMap((st) => st.results);
  // Every page must be isolated and run on the threaded core with FMA (checked below on the
  // worst page: the first that lacks it).
  const isolated = states.every((st) => st.isolated), sab = states.every((st) => st.sab);
  const core = states.map((st) => st.core).find((c) => !c?.threaded || !(c.workerChunks > 0) || !c.fma) ?? states[0].core;
  const bad = results.filter((r) => !r.ok);
  failed = bad.length;
  for (const r of bad.slice(0, 30)) console.error(`FAIL ${r.name}\n  ${r.error.split("\n").slice(0, 3).join("\n  ")}`);
  console.log(`[kiln] chromium ${version}: ${results.length - bad.length} passed, ${bad.length} failed (crossOriginIsolated ${isolated}, SharedArrayBuffer ${sab})`);
  // Where the pages' time went: the slowest top-level suites (a suite's name says its device).
  const bySuite = new Map();
  for (const r of results) {
    const suite = r.name.split(" > ")[0];
    bySuite.set(suite, (bySuite.get(suite) ?? 0) + (r.ms ?? 0));
  }
  const slowest = [...bySuite].sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(`[kiln] slowest suites (s): ${slowest.map(([n, ms]) => `${n}: ${(ms / 1000).toFixed(1)}`).join("; ")}`);
  console.log(`[kiln] core: ${core?.threaded ? "threaded (kiln_core_mt)" : "single-threaded (kiln_core)"}, ${core?.maxThreads} threads, ${core?.splitDispatches} split dispatches, ${core?.workerChunks} worker chunks, fma ${core?.fma ? "on" : "off"}`);
  // The page must have had WebGPU (SwiftShader): a skipped webgpu suite would hide a broken path.
  if (results.some((r) => /SKIPPED, no WebGPU adapter/.test(r.name)) || (!only && !results.some((r) => /webgpu device/.test(r.name)))) {
    console.error("[kiln] the page had no WebGPU adapter: the webgpu tests did not run");
    failed++;
  }
  if (!isolated) {
    console.error("[kiln] the page is not cross-origin isolated");
    failed++;
  }
  // Chromium has Relaxed SIMD (since 114), so the probe must find it and the suite must have
  // run the fused contraction kernels.
  if (!core?.fma) {
    console.error("[kiln] the page's wasm backend did not turn on Relaxed-SIMD FMA");
    failed++;
  }
  if (!core?.threaded || !(core.workerChunks > 0)) {
    console.error("[kiln] the suite did not run on the threaded core's pool");
    failed++;
  }
  // The example page must compute d/dx sin(x)·x as the formula does.
  await tab.goto(url + "examples/web/");
  await tab.waitForFunction(() => !document.getElementById("out").textContent.startsWith("loading"), null, { timeout: 60_000 });
  const text = await tab.textContent("#out");
  const rows = text.split("\n").filter((l) => l.startsWith("x ="));
  const agree = rows.length === 5 && rows.every((l) => {
    const m = l.match(/kiln (\S+) .* (\S+)$/);
    return m && Math.abs(Number(m[1]) - Number(m[2])) < 1e-5;
  });
  console.log(`[kiln] examples/web: ${agree ? "ok" : "WRONG"}\n${text}`);
  if (!agree) failed++;
  if (!only && results.length < 1000) {
    console.error(`[kiln] only ${results.length} tests ran`);
    failed++;
  }
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed === 0 ? 0 : 1);
