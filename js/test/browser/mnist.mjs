// Headless Chromium check of examples/mnist-web: loads the page (served as by
// `make serve-mnist`), trains a few steps, and checks that the chart was drawn (non-white
// pixels on the canvas) and that the reported test accuracy beats chance clearly.
import { launchChromium } from "./chromium.mjs";
import { startServer } from "../../../examples/mnist-web/serve.mjs";

// The test: 20 batch-64 Adam steps of the page's recipe, its schedule compressed to those
// steps. The same script runs the page's full training when asked: MNIST_STEPS=1405
// MNIST_TEST=10000 MNIST_EVAL=234 MNIST_MIN_ACCURACY=0.99 (1.5 epochs, evaluated every quarter).
const env = (k, d) => (process.env[k] ? Number(process.env[k]) : d);
const STEPS = env("MNIST_STEPS", 20);
const EPOCHS = env("MNIST_EPOCHS", STEPS / 937); // the schedule's length (937 steps an epoch)
const TEST = env("MNIST_TEST", 500), EVAL = env("MNIST_EVAL", STEPS);
const MIN_ACCURACY = env("MNIST_MIN_ACCURACY", 0.3); // chance is 0.1; measured 2026-12-03: see bench/results/mnist.md
// MNIST_WEBGPU=1: Chromium with WebGPU on SwiftShader, where the page must pick `webgpu`
// (without it the page must fall back to `wasm`).
const WEBGPU = process.env.MNIST_WEBGPU === "1";
const server = await startServer();
const url = `http://127.0.0.1:${server.address().port}/examples/mnist-web/?steps=${STEPS}&epochs=${EPOCHS}&test=${TEST}&eval=${EVAL}`;
const { context, close } = await launchChromium(WEBGPU);
let ok = false;
try {
  const tab = context.pages()[0] ?? (await context.newPage());
  tab.on("pageerror", (e) => console.error(`[page error] ${e.message}`));
  await tab.goto(url);
  await tab.waitForFunction(() => window.mnist?.done || window.mnist?.error, null, { timeout: Math.max(300_000, STEPS * 2_000), polling: 1000 });
  const r = await tab.evaluate(() => {
    const c = document.getElementById("chart");
    const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let inked = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i] < 200 || px[i + 1] < 200 || px[i + 2] < 200) inked++;
    const m = window.mnist;
    return { error: m.error, steps: m.steps, draws: m.draws, accuracies: m.accuracies, device: m.device, inked, text: document.getElementById("accuracy").textContent, isolated: crossOriginIsolated };
  });
  const acc = r.accuracies.at(-1)?.accuracy ?? 0;
  ok = !r.error && r.device === (WEBGPU ? "webgpu" : "wasm") && r.steps === STEPS && r.draws === STEPS && r.inked > 500 && acc >= MIN_ACCURACY && r.text.includes("%") && r.isolated;
  console.log(`[kiln] examples/mnist-web: ${ok ? "ok" : "WRONG"}: device ${r.device}, ${r.steps} steps, ${r.draws} chart draws, ${r.inked} inked pixels, accuracy "${r.text}", crossOriginIsolated ${r.isolated}, evaluations ${r.accuracies.map((a) => `${a.step}: ${(100 * a.accuracy).toFixed(2)}%`).join(", ")}${r.error ? `\n${r.error}` : ""}`);
} finally {
  await close();
  server.close();
}
process.exit(ok ? 0 : 1);
