// The numpy and nn functions that the package composes in TypeScript, against NumPy
// references (tests/fixtures/js_api.txt, tools/gen_js_fixtures.py), on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, nn, numpy as np, scipySpecial } from "../dist/index.js";
import text from "../../tests/fixtures/js_api.txt?raw";
import { compare, parseFixtures, toArray, type Case } from "./fixtures.js";

const num = (c: Case, k: string) => Number(c.params[k][0]);
const ax = (c: Case) => (c.params.axis?.[0] === "none" || c.params.axis === undefined ? null : num(c, "axis"));

const RUN: Record<string, (c: Case, x: any[]) => np.Array | np.Array[]> = {
  "numpy.ptp": (c, x) => np.ptp(x[0], ax(c)),
  "numpy.nanargmax": (c, x) => np.nanargmax(x[0], num(c, "axis")),
  "numpy.nanargmin": (c, x) => np.nanargmin(x[0], num(c, "axis")),
  "numpy.polyder": (c, x) => np.polyder(x[0], c.params.m ? num(c, "m") : 1),
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
  "numpy.nancumsum": (c, x) => np.nancumsum(x[0], num(c, "axis")),
  "numpy.nanvar": (c, x) => np.nanvar(x[0], ax(c)),
  "numpy.nanstd": (c, x) => np.nanstd(x[0], ax(c)),
  "numpy.trapezoid": (c, x) => np.trapezoid(x[0], null, { dx: num(c, "dx") }),
  "numpy.rot90": (c, x) => np.rot90(x[0], num(c, "k")),
  "numpy.vander": (c, x) => np.vander(x[0], { n: num(c, "N") }),
  "numpy.hann": (c) => np.hann(num(c, "M")),
  "numpy.bartlett": (c) => np.bartlett(num(c, "M")),
  "numpy.blackman": (c) => np.blackman(num(c, "M")),
  "numpy.diagflat": (c, x) => np.diagflat(x[0], num(c, "k")),
  "numpy.indices": (c) => np.indices(c.params.dims.map(Number)),
  "numpy.arrayEqual": (c, x) => np.arrayEqual(x[0], x[1], { equalNaN: c.params.equalNaN[0] === "1" }),
  "nn.logmeanexp": (c, x) => nn.logmeanexp(x[0], ax(c)),
};
function runner(c: Case): (x: any[]) => np.Array | np.Array[] {
  if (RUN[c.op]) return (x) => RUN[c.op](c, x);
  const [ns, name] = c.op.split(".");
  const f = ({ nn, numpy: np, scipySpecial } as any)[ns][name];
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
      const result = runner(c)(inputs);
      const outs = Array.isArray(result) ? result : [result];
      expect(outs.length).toBe(c.expects.length);
      outs.forEach((o, i) => {
        expect(compare(o, c.expects[i], c.tol), `${c.id} output ${i}`).toBeNull();
        o.dispose();
      });
      // Composed functions consume their arguments exactly once, as core ops do.
      for (const x of inputs) if (x instanceof np.Array) expect(x.refCount).toBe(0);
    });
  });
}
