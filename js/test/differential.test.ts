// Runs the differential programs (test/differential/) against @jax-js/jax 0.1.25 and kiln
// on cpu and wasm (in Node) and webgpu (in Node and in headless Chromium: test/browser/run.mjs
// runs this file for its webgpu part only): same shapes, dtypes, values, error classes, and
// no leaked kiln arrays.
import * as jaxjs from "@jax-js/jax";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import * as kiln from "../dist/index.js";
import { apiCases } from "./differential/corpus_api.js";
import { namespaceCases } from "./differential/corpus_namespaces.js";
import { argumentCases, miscCases, numericCases, transformCases } from "./differential/corpus_issue.js";
import { moreCases } from "./differential/corpus_more.js";
import { numpyNameCases } from "./differential/corpus_numpy.js";
import { checkOnKilnAsync, provideFloat16Array, provideIteratorHelpers, recordingLib, runProgramAsync, type DiffCase, type Outcome } from "./differential/harness.js";

const corpus: DiffCase[] = [...transformCases, ...argumentCases, ...numericCases, ...miscCases, ...apiCases, ...namespaceCases, ...numpyNameCases, ...moreCases];
const oracle = new Map<string, Outcome>();
const oracleRuns = (c: DiffCase) => (c.oracleNeeds ?? []).every((g) => g in globalThis);
// In the browser bundle there is no process: only the webgpu part runs there (Node runs the rest).
const inBrowser = typeof (globalThis as any).process === "undefined";
const env: Record<string, string | undefined> = inBrowser ? {} : process.env;

// The cases on kiln's webgpu device (Dawn on SwiftShader here: slow, so a subset), read back
// asynchronously: the cases marked `webgpu` and every 5th case of the corpus (about 60 s);
// KILN_DIFF_WEBGPU=all runs every case (the long run: tools/differential_long.sh), =N every
// N-th. Left out there, with the reason (docs/COMPATIBILITY.md):
const NOT_ON_WEBGPU: Record<string, string> = {
  "signbit of negative NaN float64": "float64: WGSL has no 64-bit floats",
  "numpy.full of float64": "float64: WGSL has no 64-bit floats",
  "grad through astype": "float64: WGSL has no 64-bit floats",
  "numpy.allclose": "returns a JS boolean, a synchronous read: Node's Dawn has none (browsers do)",
};
const webgpuEvery = env.KILN_DIFF_WEBGPU === "all" ? 1 : Number(env.KILN_DIFF_WEBGPU ?? 5);
const webgpuCases = corpus.filter((c, i) => (c.webgpu || (webgpuEvery > 0 && i % webgpuEvery === 0)) && !(c.name in NOT_ON_WEBGPU));

let removeFloat16Array = () => {};
beforeAll(async () => {
  provideIteratorHelpers();
  removeFloat16Array = await provideFloat16Array();
  // jax-js's cpu device: its wasm device cannot instantiate in Node 20 (memory limits).
  await jaxjs.init("cpu");
  jaxjs.defaultDevice("cpu");
  for (const c of inBrowser ? webgpuCases : corpus) if (oracleRuns(c)) oracle.set(c.name, await runProgramAsync(jaxjs, c));
}, 120_000);
afterAll(() => removeFloat16Array());

for (const device of inBrowser ? [] : (["cpu", "wasm"] as const)) {
  describe(`differential against @jax-js/jax on ${device}`, () => {
    beforeEach(() => {
      kiln.defaultDevice(device);
    });
    test.each(corpus.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
      if (!oracleRuns(c)) return;
      const difference = await checkOnKilnAsync(kiln, c, oracle.get(c.name)!, false);
      if (difference !== null) expect.fail(difference);
    });
  });
}

// Skipped without an adapter unless KILN_REQUIRE_WEBGPU=1.
const haveWebGpu = (await kiln.init("webgpu")).includes("webgpu");
describe.skipIf(!haveWebGpu && !env.KILN_REQUIRE_WEBGPU)("differential against @jax-js/jax on webgpu", () => {
  beforeEach(() => {
    kiln.defaultDevice("webgpu");
  });
  test("an adapter is present", () => expect(haveWebGpu).toBe(true));
  test.each(webgpuCases.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    if (!oracleRuns(c)) return;
    const difference = await checkOnKilnAsync(kiln, c, oracle.get(c.name)!);
    if (difference !== null) expect.fail(difference);
  });
});

// KILN_DIFF_REPORT=1: one line per program and device with its difference (for triage),
// then the exported names the corpus used (for docs/COMPATIBILITY.md).
if (env.KILN_DIFF_REPORT) {
  test("report", async () => {
    const used = new Set<string>();
    for (const device of inBrowser ? [] : (["cpu", "wasm"] as const)) {
      kiln.defaultDevice(device);
      for (const c of corpus) {
        if (!oracleRuns(c)) continue;
        const d = await checkOnKilnAsync(recordingLib(kiln, used), c, oracle.get(c.name)!, false);
        if (d !== null) console.log(`DIFF ${device} | ${c.name} | ${d}`);
      }
    }
    console.log(`USED ${[...used].sort().join(" ")}`);
  });
}
