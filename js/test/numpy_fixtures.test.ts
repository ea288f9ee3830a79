// numpy/lax through the JS API against the committed NumPy fixtures (tests/fixtures/
// numpy_ops.txt, tools/gen_numpy_fixtures.py), on the cpu and wasm devices (webgpu:
// webgpu.test.ts). The cases and their runner are in numpy_cases.ts.
import { describe, expect, test, beforeEach } from "vitest";
import { defaultDevice } from "../dist/index.js";
import { compare } from "./fixtures.js";
import { cases, runNumpyCase } from "./numpy_cases.js";

for (const device of ["cpu", "wasm"] as const) {
  describe(`numpy fixtures on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture file has cases for the JS API", () => {
      expect(cases.length).toBeGreaterThan(1500);
    });
    test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => runNumpyCase(c, device, compare));
  });
}
