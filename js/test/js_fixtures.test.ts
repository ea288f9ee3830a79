// The numpy and nn functions that the package composes in TypeScript, against NumPy
// references (tests/fixtures/js_api.txt, tools/gen_js_fixtures.py), on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, nn, numpy as np } from "../dist/index.js";
import text from "../../tests/fixtures/js_api.txt?raw";
import { compare, parseFixtures, toArray, type Case } from "./fixtures.js";

const num = (c: Case, k: string) => Number(c.params[k][0]);
const ax = (c: Case) => (c.params.axis?.[0] === "none" || c.params.axis === undefined ? null : num(c, "axis"));

const RUN: Record<string, (c: Case, x: any[]) => np.Array> = {
  "numpy.ptp": (c, x) => np.ptp(x[0], ax(c)),
  "numpy.nansum": (c, x) => np.nansum(x[0], ax(c)),
  "numpy.nanmean": (c, x) => np.nanmean(x[0], ax(c)),
  "numpy.nanmax": (c, x) => np.nanmax(x[0], ax(c)),
  "numpy.nanmin": (c, x) => np.nanmin(x[0], ax(c)),
  "numpy.countNonzero": (c, x) => np.countNonzero(x[0], ax(c)),
  "numpy.average": (c, x) => np.average(x[0], ax(c), { weights: x[1] }),
  "numpy.diff": (c, x) => np.diff(x[0], num(c, "n"), num(c, "axis")),
  "numpy.tril": (c, x) => np.tril(x[0], num(c, "k")),
  "numpy.triu": (c, x) => np.triu(x[0], num(c, "k")),
  "numpy.tri": (c) => np.tri(num(c, "n"), num(c, "m"), num(c, "k")),
  "numpy.roll": (c, x) => np.roll(x[0], num(c, "shift"), ax(c)),
  "numpy.diag": (c, x) => np.diag(x[0], num(c, "k")),
  "numpy.columnStack": (_, x) => np.columnStack(x),
  "numpy.dstack": (_, x) => np.dstack(x),
  "numpy.append": (_, x) => np.append(x[0], x[1]),
  "numpy.logspace": (c) => np.logspace(num(c, "start"), num(c, "stop"), num(c, "num")),
  "numpy.geomspace": (c) => np.geomspace(num(c, "start"), num(c, "stop"), num(c, "num")),
  "numpy.select": (_, x) => np.select([x[0], x[1]], [x[2], x[3]], 0),
  "nn.glu": (c, x) => nn.glu(x[0], num(c, "axis")),
  "nn.logmeanexp": (c, x) => nn.logmeanexp(x[0], ax(c)),
};
function runner(c: Case): (x: any[]) => np.Array {
  if (RUN[c.op]) return (x) => RUN[c.op](c, x);
  const [ns, name] = c.op.split(".");
  const f = (ns === "nn" ? (nn as any) : (np as any))[name];
  if (typeof f !== "function") throw new Error(`no JS function ${c.op}`);
  return (x) => f(...x);
}

const cases = parseFixtures(text);

for (const device of ["cpu", "wasm"] as const) {
  describe(`composed functions on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture file has cases", () => expect(cases.length).toBeGreaterThan(80));
    test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const inputs = c.inputs.map((i) => toArray(i.arr));
      const out = runner(c)(inputs);
      expect(compare(out, c.expects[0], c.tol), c.id).toBeNull();
      out.dispose();
      // Composed functions consume their arguments exactly once, as core ops do.
      for (const x of inputs) if (x instanceof np.Array) expect(x.refCount).toBe(0);
    });
  });
}
