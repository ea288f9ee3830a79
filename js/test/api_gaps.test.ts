// The last jax-js 0.1.x names kiln added (lax.convTranspose; numpy convolve, correlate,
// polymul, unwrap, cov, corrcoef, frexp, bitwiseCount) against JAX (tests/fixtures/api_gaps.txt,
// tools/gen_api_gaps_fixtures.py), and diagIndices, fromfunction, applyAlongAxis and
// applyOverAxes against their definitions, on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, lax, numpy as np } from "../dist/index.js";
import text from "../../tests/fixtures/api_gaps.txt?raw";
import { compare, parseFixtures, toArray, type Case } from "./fixtures.js";

type A = np.Array;
const ints = (c: Case, k: string) => c.params[k].map(Number);

// The fixture's explicit pairs are JAX's (padding of the dilated input); jax-js's
// convTranspose takes k - 1 - p instead.
function jaxjsPadding(c: Case, rhs: A): lax.PaddingType {
  if (c.params.padding) return c.params.padding[0] as lax.PaddingType;
  const p = ints(c, "padding_pairs"), dil = c.params.rhs_dilation ? ints(c, "rhs_dilation") : [];
  return rhs.shape.slice(2).map((k, i) => {
    const kd = (k - 1) * (dil[i] ?? 1) + 1;
    return [kd - 1 - p[2 * i], kd - 1 - p[2 * i + 1]] as [number, number];
  });
}

const RUN: Record<string, (c: Case, x: any[]) => A | A[]> = {
  conv_transpose: (c, x) =>
    lax.convTranspose(x[0], x[1], ints(c, "strides"), jaxjsPadding(c, x[1]), {
      rhsDilation: c.params.rhs_dilation ? ints(c, "rhs_dilation") : undefined,
      transposeKernel: c.params.transpose_kernel[0] === "1",
    }),
  convolve: (c, x) => np.convolve(x[0], x[1], c.params.mode[0] as any),
  correlate: (c, x) => np.correlate(x[0], x[1], c.params.mode[0] as any),
  polymul: (_, x) => np.polymul(x[0], x[1]),
  unwrap: (c, x) =>
    np.unwrap(x[0], c.params.discont ? Number(c.params.discont[0]) : null, Number(c.params.axis[0]), c.params.period ? Number(c.params.period[0]) : undefined),
  cov: (c, x) => np.cov(x[0], x[1] ?? null, { rowvar: c.params.rowvar[0] === "1" }),
  corrcoef: (_, x) => np.corrcoef(x[0], x[1]),
  frexp: (_, x) => np.frexp(x[0]),
  bitwise_count: (_, x) => np.bitwiseCount(x[0]),
};

const cases = parseFixtures(text);

for (const device of ["cpu", "wasm"] as const) {
  describe(`jax-js gap functions on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture file has cases", () => expect(cases.length).toBe(45));
    test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const inputs = c.inputs.map((i) => toArray(i.arr));
      const result = RUN[c.op](c, inputs);
      const outs = Array.isArray(result) ? result : [result];
      expect(outs.length).toBe(c.expects.length);
      outs.forEach((o, i) => {
        expect(compare(o, c.expects[i], c.tol), `${c.id} output ${i}`).toBeNull();
        o.dispose();
      });
      for (const x of inputs) if (x instanceof np.Array) expect(x.refCount).toBe(0);
    });

    test("diagIndices, fromfunction, applyAlongAxis, applyOverAxes", () => {
      const [i, j] = np.diagIndicesFrom(np.zeros([3, 3]));
      expect(i.js()).toEqual([0, 1, 2]);
      expect(j.js()).toEqual([0, 1, 2]);
      expect(np.diagIndices(4, 3).map((a) => a.js())).toEqual([[0, 1, 2, 3], [0, 1, 2, 3], [0, 1, 2, 3]]);
      expect(() => np.diagIndicesFrom(np.zeros([2, 3]))).toThrow(/diagIndicesFrom/);
      const f = np.fromfunction((r: A, c: A) => np.add(np.multiply(r, 10), c), [2, 3]);
      expect(f.js()).toEqual([[0, 1, 2], [10, 11, 12]]);
      const x = np.array([[3, 1, 2], [9, 7, 8]]);
      expect(np.applyAlongAxis((v: A) => np.sort(v), 1, x.ref).js()).toEqual([[1, 2, 3], [7, 8, 9]]);
      expect(np.applyAlongAxis((v: A) => np.max(v), 0, x.ref).js()).toEqual([9, 7, 8]);
      const s = np.applyOverAxes((a: A, ax: number) => np.sum(a, ax), x, [0, 1]);
      expect(s.shape).toEqual([1, 1]);
      expect(s.js()).toEqual([[30]]);
    });

    test("errors name the operation", () => {
      expect(() => np.convolve(np.zeros([2, 2]), np.zeros([2]))).toThrow(/convolve/);
      expect(() => np.correlate(np.zeros([3]), np.zeros([2]), "wide" as any)).toThrow(/correlate/);
      expect(() => np.polymul(np.zeros([2, 1]), np.zeros([2]))).toThrow(/polymul/);
      expect(() => np.bitwiseCount(np.zeros([2]))).toThrow(/bitwiseCount/);
      expect(() => lax.convTranspose(np.zeros([1, 2, 4]), np.zeros([3, 2, 2]), [1], "FULL" as any)).toThrow(/conv_transpose/);
      expect(() => np.unwrap(np.zeros([3]), null, 1)).toThrow(/unwrap/);
    });
  });
}
