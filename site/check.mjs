// `make test-site`: checks the built site (build/site, from `make site`).
// 1. Every `js` snippet of the guides runs in Node on the npm package (js/dist) through the
//    REPL's evaluator, and prints exactly its `output` fence when it has one.
// 2. Headless Chromium, without a GPU and then with WebGPU on SwiftShader, loads every page
//    (the Markdown pages, the demos, the two API reference index pages) from the site's own
//    server; any console error, uncaught exception, failed request or request to another
//    origin fails the check; links within the site must resolve. The REPL runs its own example, shows an error for a bad snippet,
//    and runs every guide snippet again; MNIST trains a few
//    steps and draws its chart; the chat page answers with a few tokens of SmolLM2 (wasm run
//    only: on SwiftShader a token takes seconds more). A screenshot of each page goes to
//    build/site-check/<run>/.
// SITE_CHECK_RUNS=wasm (or webgpu) runs one of the two browser runs.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { launchChromium } from "../js/test/browser/chromium.mjs";
import { sitePages } from "./build.mjs";
import { evaluate } from "./demos/repl/evaluate.mjs";
import { snippets } from "./markdown.mjs";
import { startServer } from "./serve.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");
const shots = join(repo, "build/site-check");
const failures = [];
const fail = (what) => {
  failures.push(what);
  console.error(`[site] FAIL ${what}`);
};
const t0 = Date.now();
const seconds = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

const pages = sitePages();
const docSnippets = pages
  .filter((p) => !p.startsWith("demos/"))
  .flatMap((p) => snippets(readFileSync(join(here, "pages", p.replace(/\.html$/, ".md")), "utf8")).map((s) => ({ ...s, where: `site/pages/${p.replace(/\.html$/, ".md")}:${s.line}` })));

// A snippet's result against its fence: no error, and the printed text when one is given.
function judge(s, { output, error }, where) {
  if (error) return fail(`${s.where} (${where}): ${error.stack ?? error}`);
  if (s.expected !== null && output.trim() !== s.expected.trim()) fail(`${s.where} (${where}): printed\n${output}\nexpected\n${s.expected}`);
}

// ---- 1. the snippets in Node ----
const dist = (f) => import(pathToFileURL(join(repo, "js/dist", f)).href);
const nodeModules = { kiln: await dist("index.js"), "kiln/optax": await dist("optax/index.js"), "kiln/io": await dist("io.js") };
// From the site's folder, as the REPL page resolves paths from the site's root.
process.chdir(join(repo, "build/site"));
for (const s of docSnippets) judge(s, await evaluate(s.code, nodeModules), "node");
console.log(`[site] ${docSnippets.length} snippets of the pages ran in Node (${docSnippets.filter((s) => s.expected !== null).length} with a checked output), ${seconds()}`);

// ---- 2. every page in Chromium ----
const server = await startServer();
const origin = `http://127.0.0.1:${server.address().port}`;

const MNIST_STEPS = 5;
// The query each demo page is loaded with under the check: a short run (wasm, webgpu).
const queries = {
  "demos/mnist/index.html": () => `?steps=${MNIST_STEPS}&test=200&eval=${MNIST_STEPS}&epochs=1`,
  "demos/chat/index.html": (run) =>
    run.webgpu ? "" : `?${new URLSearchParams({ autoload: "1", system: "Answer in one word.", prompt: "Capital of France?", maxTokens: "3", bucket: "8" })}`,
};

// What each demo does under the check, and how its result is judged.
const demos = {
  "demos/hello/index.html": async (tab, run) => {
    const want = `${run.webgpu ? "webgpu" : "wasm"}: 0,2,4,6`;
    await tab.waitForFunction((w) => document.getElementById("out").textContent === w, want, { timeout: 30_000 }).catch(() => {});
    const got = await tab.textContent("#out");
    if (got !== want) fail(`hello page (${run.name}): shows ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    return got;
  },
  "demos/repl/index.html": async (tab) => {
    await tab.waitForFunction(() => window.repl?.ready, null, { timeout: 60_000 });
    const own = await tab.evaluate(() => window.repl.run(document.getElementById("code").value));
    if (own.error || !/^x: \[-1, -0\.5, 0, 0\.5, 1\]\ngrad f: \[0\.42, 0\.7864, 1, 0\.7864, 0\.42\]$/.test(own.output)) fail(`REPL example: printed ${JSON.stringify(own.output)}, error ${own.error}`);
    // A user error is shown on the page (and is no console error).
    const bad = await tab.evaluate(() => window.repl.run('import { numpy as np } from "kiln";\nnp.ones([2]).add(np.ones([3]));'));
    const shown = await tab.textContent("#error");
    if (!bad.error || !shown.includes(bad.error) || !/shape|broadcast/i.test(bad.error)) fail(`REPL error display: ${JSON.stringify(bad)}, shown ${JSON.stringify(shown)}`);
    for (const s of docSnippets) judge(s, await tab.evaluate((code) => window.repl.run(code), s.code), "REPL page");
    // A guide's "Open in the REPL" link fills the textarea with its snippet.
    const link = await tab.evaluate(async () => {
      const html = await (await fetch("guides/ownership.html")).text();
      return new DOMParser().parseFromString(html, "text/html").querySelector("p.try a").getAttribute("href");
    });
    const want = docSnippets.find((s) => s.where.includes("ownership.md")).code;
    await tab.goto(new URL(link, `${origin}/guides/ownership.html`).href);
    await tab.waitForFunction((w) => document.getElementById("code").value === w, want, { timeout: 10_000 }).catch(() => {});
    const filled = await tab.inputValue("#code");
    if (filled !== want) fail(`REPL link: the textarea got ${JSON.stringify(filled.slice(0, 80))}`);
    await tab.evaluate(() => window.repl.run(document.getElementById("code").value)); // the screenshot shows the linked snippet, run
    return `example and ${docSnippets.length} guide snippets ran; a bad snippet shows ${JSON.stringify(bad.error.slice(0, 80))}`;
  },
  "demos/mnist/index.html": async (tab, run) => {
    // On SwiftShader, compiling the CNN's WGSL takes minutes on 2 cores: the webgpu run checks
    // that the page picks webgpu and starts; training on webgpu is js/test/browser/mnist.mjs's
    // (make test-js).
    if (run.webgpu) {
      await tab.waitForFunction(() => window.mnist?.device || window.mnist?.error, null, { timeout: 60_000 });
      const r = await tab.evaluate(() => ({ device: window.mnist.device, error: window.mnist.error, status: document.getElementById("status").textContent }));
      if (r.error || r.device !== "webgpu") fail(`MNIST demo (webgpu): ${JSON.stringify(r)}`);
      return `started on ${r.device}: ${JSON.stringify(r.status)}`;
    }
    await tab.waitForFunction(() => window.mnist?.done || window.mnist?.error, null, { timeout: 120_000, polling: 500 });
    const r = await tab.evaluate(() => {
      const c = document.getElementById("chart");
      const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let inked = 0;
      for (let i = 0; i < px.length; i += 4) if (px[i] < 200 || px[i + 1] < 200 || px[i + 2] < 200) inked++;
      return { ...window.mnist, inked, text: document.getElementById("accuracy").textContent, isolated: crossOriginIsolated };
    });
    // Chance is 10%; 5 steps of seed 0 reach 54.5% on 200 test images (measured 2026-12-05).
    const accuracy = r.accuracies.at(-1)?.accuracy ?? 0;
    if (r.error || r.steps !== MNIST_STEPS || r.draws !== MNIST_STEPS || r.inked < 500 || !r.text.includes("%") || r.device !== "wasm" || !r.isolated || !r.losses.every(Number.isFinite) || accuracy < 0.25)
      fail(`MNIST demo (${run.name}): ${JSON.stringify({ error: r.error, steps: r.steps, draws: r.draws, inked: r.inked, text: r.text, device: r.device, isolated: r.isolated })}`);
    return `${r.steps} steps on ${r.device}, losses ${r.losses.map((l) => l.toFixed(3)).join(" ")}, accuracy ${r.text}`;
  },
  "demos/chat/index.html": async (tab, run) => {
    if (run.webgpu) {
      await tab.waitForFunction(() => window.llmPage?.device || window.llmPage?.error, null, { timeout: 60_000 });
      return `kiln ready on ${await tab.evaluate(() => window.llmPage.device)} (generation is checked in the wasm run)`;
    }
    await tab.waitForFunction(() => window.llmPage?.done || window.llmPage?.error, null, { timeout: 240_000, polling: 500 });
    const r = await tab.evaluate(() => ({ ...window.llmPage, shown: document.getElementById("log").textContent, statsText: document.getElementById("stats").textContent }));
    const s = r.stats[0];
    if (r.error || r.device !== "wasm" || r.replies.length !== 1 || !r.replies[0] || !r.shown.includes(r.replies[0]) || !(s?.generatedTokens >= 1 && s.generatedTokens <= 3) || !r.statsText.includes("tok/s"))
      fail(`chat demo: ${JSON.stringify({ error: r.error, device: r.device, replies: r.replies, stats: r.statsText })}`);
    return `reply ${JSON.stringify(r.replies[0])}, ${r.statsText}`;
  },
};

async function browserRun(run) {
  const { context, close } = await launchChromium(run.webgpu);
  mkdirSync(join(shots, run.name), { recursive: true });
  let current = "";
  // Nothing may come from outside the site's server.
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    fail(`${current} (${run.name}): request to another origin: ${url}`);
    return route.abort();
  });
  // A tab per page: closing one that is still working (the webgpu run's MNIST) aborts its
  // requests, which is not a failure; every other failed request is.
  const open = async (page) => {
    const tab = await context.newPage();
    const problem = (what) => fail(`${page} (${run.name}): ${what}`);
    let closing = false;
    tab.on("console", (m) => m.type() === "error" && problem(`console error: ${m.text()}`));
    tab.on("pageerror", (e) => problem(`uncaught: ${e.message}`));
    tab.on("requestfailed", (r) => (closing && r.failure()?.errorText === "net::ERR_ABORTED") || problem(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    tab.on("response", (r) => r.status() >= 400 && problem(`HTTP ${r.status()}: ${r.url()}`));
    return { tab, close: () => ((closing = true), tab.close()) };
  };
  try {
    for (const page of [...pages, "api/js/index.html", "api/cpp/index.html"]) {
      current = page;
      const start = Date.now();
      const { tab, close: closeTab } = await open(page);
      await tab.goto(`${origin}/${page}${queries[page]?.(run) ?? ""}`, { waitUntil: "load" });
      let note = demos[page] ? await demos[page](tab, run) : `"${await tab.title()}"`;
      // Our pages' links within the site must resolve (once, in the first run).
      if (run === runs[0] && !page.startsWith("api/") && !demos[page]) {
        const urls = await tab.evaluate(() => [...new Set([...document.links].filter((a) => a.origin === location.origin).map((a) => a.href.split("#")[0]))]);
        const bad = await Promise.all(urls.map(async (u) => ((await fetch(u, { method: "HEAD" })).ok ? null : u)));
        const broken = { count: urls.length, bad: bad.filter(Boolean) };
        if (broken.bad.length) fail(`${page} (${run.name}): broken links: ${broken.bad.join(", ")}`);
        note += `, ${broken.count - broken.bad.length} of ${broken.count} links within the site resolve`;
      }
      // Whole pages for ours; the first screen of the (long) API references and of the demos.
      const whole = !demos[page] && !page.startsWith("api/");
      await tab.screenshot({ path: join(shots, run.name, `${page.replace(/\//g, "_").replace(/\.html$/, "")}.png`), fullPage: whole });
      console.log(`[site] ${run.name}: ${page}: ${note} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
      await closeTab();
    }
  } finally {
    await close();
  }
}

rmSync(shots, { recursive: true, force: true });
const runs = [{ name: "wasm", webgpu: false }, { name: "webgpu", webgpu: true }].filter((r) => !process.env.SITE_CHECK_RUNS || process.env.SITE_CHECK_RUNS.split(",").includes(r.name));
try {
  for (const run of runs) await browserRun(run);
} finally {
  server.close();
}
console.log(`[site] ${failures.length ? `${failures.length} FAILURES` : "ok"}: ${pages.length + 2} pages in ${runs.map((r) => r.name).join(" and ")} Chromium, screenshots in build/site-check, ${seconds()}`);
process.exit(failures.length ? 1 : 0);
