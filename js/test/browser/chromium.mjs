// Headless Chromium for the example pages' checks (mnist.mjs, llm.mjs, ocr.mjs, mobilenet.mjs):
// a fresh profile, WebGPU on SwiftShader when asked (otherwise no GPU, so a page must fall back
// to wasm), and a close() that also removes the profile. `extraArgs`: more Chromium switches
// (bench/llm/browser.mjs passes V8 flags as a diagnostic).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export async function launchChromium(webgpu, extraArgs = []) {
  const gpuArgs = webgpu
    ? ["--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-vulkan=swiftshader", "--use-webgpu-adapter=swiftshader"]
    : ["--disable-gpu"];
  const profile = mkdtempSync(join(tmpdir(), "kiln-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--headless=new", "--no-sandbox", ...gpuArgs, "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", ...extraArgs],
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}

// An example page (llm.mjs, ocr.mjs, mobilenet.mjs) at `url` in the context's tab: its page
// errors and its console lines starting with `[prefix]` relayed, then waits until
// window[global].done or window[global].error is set. Returns the tab.
export async function openExample(context, url, { prefix, global, timeout, polling = 500 }) {
  const tab = context.pages()[0] ?? (await context.newPage());
  tab.on("pageerror", (e) => console.error(`[page error] ${e.message}`));
  tab.on("console", (m) => m.text().startsWith(`[${prefix}]`) && console.log(m.text()));
  await tab.goto(url);
  await tab.waitForFunction((g) => window[g]?.done || window[g]?.error, global, { timeout, polling });
  return tab;
}
