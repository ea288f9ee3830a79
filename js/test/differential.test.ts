// Runs the differential programs (test/differential/) against @jax-js/jax 0.1.25 and kiln
// on cpu and wasm: same shapes, dtypes, values, error classes, and no leaked kiln arrays.
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

let removeFloat16Array = () => {};
beforeAll(async () => {
  provideIteratorHelpers();
  removeFloat16Array = await provideFloat16Array();
  // jax-js's cpu device: its wasm device cannot instantiate in Node 20 (memory limits).
  await jaxjs.init("cpu");
  jaxjs.defaultDevice("cpu");
  for (const c of corpus) if (oracleRuns(c)) oracle.set(c.name, await runProgramAsync(jaxjs, c));
}, 120_000);
afterAll(() => removeFloat16Array());

for (const device of ["cpu", "wasm"] as const) {
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

// The cases marked `webgpu` on kiln's webgpu device (Dawn on SwiftShader here: slow, so a
// subset), read back asynchronously. Skipped without an adapter unless KILN_REQUIRE_WEBGPU=1.
const webgpuCases = corpus.filter((c) => c.webgpu);
const haveWebGpu = (await kiln.init("webgpu")).includes("webgpu");
describe.skipIf(!haveWebGpu && !process.env.KILN_REQUIRE_WEBGPU)("differential against @jax-js/jax on webgpu", () => {
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
if (process.env.KILN_DIFF_REPORT) {
  test("report", async () => {
    const used = new Set<string>();
    for (const device of ["cpu", "wasm"] as const) {
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
