// numpy.linalg.qr against jnp.linalg.qr (tests/fixtures/qr.txt from tools/gen_qr_fixtures.py):
// q and r in reduced and complete modes and the jvp of the reduced factorization, on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, jvp, numpy as np } from "../dist/index.js";
import text from "../../tests/fixtures/qr.txt?raw";
import { compare, parseFixtures, toArray } from "./fixtures.js";

type A = np.Array;
const cases = parseFixtures(text);

for (const device of ["cpu", "wasm"] as const) {
  describe(`linalg.qr on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture file has cases", () => expect(cases.length).toBe(13));
    test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const mode = c.params.mode[0] as "reduced" | "complete";
      const a = toArray(c.inputs[0].arr) as A;
      const [q, r] = np.linalg.qr(a.ref, mode);
      expect(compare(q, c.expects[0], c.tol), "q").toBeNull();
      expect(compare(r, c.expects[1], c.tol), "r").toBeNull();
      q.dispose();
      r.dispose();
      if (c.expects.length === 4) {
        const t = toArray(c.inputs[1].arr) as A;
        const [out, tan] = jvp((x: A) => np.linalg.qr(x, mode), [a.ref], [t]);
        for (const o of out) o.dispose();
        expect(compare(tan[0], c.expects[2], c.tol), "dq").toBeNull();
        expect(compare(tan[1], c.expects[3], c.tol), "dr").toBeNull();
        for (const o of tan) o.dispose();
      }
      a.dispose();
      expect(a.refCount).toBe(0);
    });
    test("errors name qr", () => {
      expect(() => np.linalg.qr(np.zeros([3]))).toThrow(/qr/);
      expect(() => np.linalg.qr(np.zeros([3, 3]), "full" as any)).toThrow(/qr: got mode 'full'/);
    });
  });
}
