// x.at(...index).get/set/add/multiply/min/max against JAX's x.at[index] (values, vjp, jvp,
// jit and vmap; tests/fixtures/scatter.txt from tools/gen_scatter_fixtures.py), its
// ownership (the method consumes x, the index Arrays and the updates), on cpu and wasm.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, jit, jvp, numpy as np, vjp, vmap } from "../dist/index.js";
import text from "../../tests/fixtures/scatter.txt?raw";
import { compare, parseFixtures, toArray, type Case } from "./fixtures.js";

type A = np.Array;

// The generator's index tokens: A<k> index array k, i<n>, s<start>:<stop>:<step>, e.
function indexOf(c: Case, arrays: A[]): any[] {
  return c.params.index.map((t) => {
    if (t[0] === "A") return arrays[Number(t.slice(1))].ref;
    if (t[0] === "i") return Number(t.slice(1));
    if (t === "e") return "...";
    return t.slice(1).split(":").map((p) => (p === "" ? null : Number(p)));
  });
}

function apply(c: Case, x: A, arrays: A[], u: A | undefined): A {
  const m = c.params.method[0];
  const opts: any = c.params.mode[0] === "-" ? {} : { mode: c.params.mode[0] };
  const ref = x.at(...indexOf(c, arrays));
  if (m === "get") {
    if (c.params.fill_value) opts.fillValue = Number(c.params.fill_value[0]);
    return ref.get(opts);
  }
  return (ref as any)[m](u!, opts);
}

function check(got: A, want: any, c: Case, what: string) {
  expect(compare(got, want, c.tol), `${c.id} ${what}`).toBeNull();
  got.dispose();
}

const cases = parseFixtures(text);

for (const device of ["cpu", "wasm"] as const) {
  describe(`x.at() on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture file has cases", () => expect(cases.length).toBe(91));

    test.each(cases.filter((c) => c.op === "at").map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const inputs = c.inputs.map((i) => toArray(i.arr) as A);
      const na = c.params.index.filter((t) => t[0] === "A").length;
      const get = c.params.method[0] === "get";
      const [x, ...rest] = inputs;
      const arrays = rest.slice(0, na);
      const u = get ? undefined : rest[na];
      const f = (xx: A, uu?: A) => apply(c, xx, arrays, uu);
      const primals = get ? [x] : [x, u!];
      check(f(...(primals.map((p) => p.ref) as [A, A?])), c.expects[0], c, "eager");
      const jf = jit(f);
      check(jf(...(primals.map((p) => p.ref) as [A, A?])), c.expects[0], c, "jit");
      jf.dispose();
      const k = primals.length + na;
      if (c.expects.length > 1) {
        const [out, pullback] = vjp(f, primals.map((p) => p.ref));
        out.dispose();
        const cts = pullback(inputs[k].ref);
        pullback.dispose();
        check(cts[0], c.expects[1], c, "vjp x");
        if (!get) check(cts[1], c.expects[2], c, "vjp u");
        if (c.expects.length === (get ? 3 : 4)) {
          const tangents = get ? [inputs[k + 1].ref] : [inputs[k + 1].ref, inputs[k + 2].ref];
          const [o, t] = jvp(f, primals.map((p) => p.ref), tangents);
          o.dispose();
          check(t, c.expects[c.expects.length - 1], c, "jvp");
        }
      }
      for (const a of inputs) a.dispose();
      for (const a of inputs) expect(a.refCount).toBe(0);
    });

    test.each(cases.filter((c) => c.op === "at_vmap").map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const inputs = c.inputs.map((i) => toArray(i.arr) as A);
      const get = c.params.method[0] === "get";
      const axes = c.params.in_axes.map((a) => (Number(a) < 0 ? null : Number(a)));
      const f = (xx: A, ii: A, uu?: A) => apply(c, xx, [ii], uu);
      const out = vmap(f, axes)(...inputs.map((a) => a.ref));
      check(out, c.expects[0], c, "vmap");
      for (const a of inputs) a.dispose();
      expect(get || inputs.length === 3).toBe(true);
    });

    test("the method consumes x, the index Arrays and the updates; at() alone takes nothing", () => {
      const x = np.zeros([4]);
      const i = np.array([1, 3], { dtype: np.int32 });
      const u = np.array([5, 7]);
      const ref = x.at(i);
      expect(x.refCount).toBe(1);
      const y = ref.add(u);
      expect([x.refCount, i.refCount, u.refCount]).toEqual([0, 0, 0]);
      expect(y.js()).toEqual([0, 5, 0, 7]);
      const z = np.arange(5).astype(np.float32);
      expect(z.ref.at([1, 4]).set(-1).js()).toEqual([0, -1, -1, -1, 4]);
      expect(z.ref.at([null, null, -2]).get().js()).toEqual([4, 2, 0]);
      expect(z.at(9).get({ mode: "fill", fillValue: -3 }).js()).toEqual(-3);
    });

    test("errors name the method", () => {
      const x = np.zeros([3, 4]);
      expect(() => x.ref.at(0).set(1, { mode: "wrap" as any })).toThrow(/at.set: got mode 'wrap'/);
      expect(() => x.ref.at(0, 1, 2).add(1)).toThrow(/at.add: too many indices/);
      expect(() => x.ref.at(null as any).get()).toThrow(/at: got null as an index term/);
      x.dispose();
    });
  });
}
