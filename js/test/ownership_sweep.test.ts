// The ownership sweep (issue 22: no UseAfterFreeError in any transformation of any library
// function when the caller follows jax-js's rules). Generated over the function names that
// @jax-js/jax 0.1.25 exports in numpy, numpy.linalg, numpy.fft, lax, lax.linalg, nn and
// scipySpecial: each is called with one float32 Array (f(x)) and with two references to
// it (f(x.ref, x)), as a jax-js user would; the forms that kiln computes plainly are then run
// under grad (of the sum of the float leaves), jvp, vjp, vmap and jit. Any transformation may
// throw an ordinary error (grad of an integer result, a shape a function refuses), but never
// UseAfterFreeError, and one that returns leaves no Array alive.
import * as jaxjs from "@jax-js/jax";
import { describe, expect, test } from "vitest";
import * as kiln from "../dist/index.js";

type Lib = any;
const NAMESPACES: [string, (l: Lib) => any][] = [
  ["numpy", (l) => l.numpy],
  ["numpy.linalg", (l) => l.numpy.linalg],
  ["numpy.fft", (l) => l.numpy.fft],
  ["lax", (l) => l.lax],
  ["lax.linalg", (l) => l.lax.linalg],
  ["nn", (l) => l.nn],
  ["scipySpecial", (l) => l.scipySpecial],
];
// Constructors and helpers whose first argument is no Array (shapes, sizes, dtypes, keys).
const NOT_ARRAY_FUNCTIONS = new Set(["array", "zeros", "ones", "full", "empty", "eye", "identity", "arange", "linspace", "logspace", "geomspace", "tri", "indices", "diagIndices", "fromfunction", "hann", "hamming", "bartlett", "blackman", "kaiser", "iinfo", "finfo", "promoteTypes", "resultType", "broadcastShapes", "fftfreq", "rfftfreq", "isscalar", "ndim", "shape", "size", "triuIndices", "trilIndices", "meshgrid"]);

// The input a function of each namespace gets: values in (0.1, 0.9) (inside every domain the
// library functions have), 3x3 and diagonally dominant for linalg (invertible, symmetric
// positive definite), a leading batch axis of 2 for vmap.
function input(np: Lib, ns: string, batch: boolean, vector = false): any {
  const m = [0.9, 0.2, 0.1, 0.2, 0.8, 0.3, 0.1, 0.3, 0.7];
  const base = vector ? np.array([0.3, 0.5, 0.7, 0.2]) : ns.endsWith("linalg") ? np.reshape(np.array(m), [3, 3]) : np.reshape(np.array([0.3, 0.5, 0.7, 0.2, 0.4, 0.6]), [2, 3]);
  return batch ? np.stack([base.ref, np.multiply(base, 0.5)]) : base;
}

function leaves(x: any): any[] {
  if (x !== null && typeof x === "object" && "dtype" in x && "shape" in x) return [x];
  if (Array.isArray(x)) return x.flatMap(leaves);
  if (x !== null && typeof x === "object") return Object.values(x).flatMap(leaves);
  return [];
}

// The call forms tried, in order (x: the namespace's matrix; v: a vector of 4).
type Form = { text: string; vector?: boolean; make: (fn: any) => (x: any) => any };
const FORMS: Form[] = [
  { text: "f(x)", make: (fn) => (x) => fn(x) },
  { text: "f(x, 1)", make: (fn) => (x) => fn(x, 1) },
  { text: "f(x, 0, 1)", make: (fn) => (x) => fn(x, 0, 1) },
  { text: "f(x, [2, 2, 3])", make: (fn) => (x) => fn(x, [2, 2, 3]) },
  { text: "f([x.ref, x])", make: (fn) => (x) => fn([x.ref, x]) },
  { text: "f(x.ref, x)", make: (fn) => (x) => fn(x.ref, x) },
  { text: "f(v)", vector: true, make: (fn) => (x) => fn(x) },
  { text: "f(v.ref, v)", vector: true, make: (fn) => (x) => fn(x.ref, x) },
];
const TRANSFORMS: [string, (k: Lib, f: (x: any) => any, x: () => any, xb: () => any) => unknown][] = [
  ["grad", (k, f, x) => k.grad((y: any) => floatSum(k, f(y)))(x())],
  ["jvp", (k, f, x) => { const a = x(); return k.jvp(f, [a], [k.numpy.onesLike(a.ref)]); }],
  ["vjp", (k, f, x) => { const [y, back] = k.vjp(f, [x()]); const ct = k.tree.map((l: any) => k.numpy.onesLike(l), k.tree.map((l: any) => l.ref, y)); const g = back(ct); back.dispose?.(); return [y, g]; }],
  ["vmap", (k, f, _x, xb) => k.vmap(f)(xb())],
  ["jit", (k, f, x) => { const jf = k.jit(f); const y = jf(x()); jf.dispose?.(); return y; }],
];

/** The sum of a result's float leaves; its other leaves are disposed, as a jax-js user would. */
function floatSum(k: Lib, y: unknown): any {
  let s: any = 0;
  for (const l of leaves(y)) {
    if (l.dtype.startsWith("float")) s = k.numpy.add(s, k.numpy.sum(l));
    else l.dispose();
  }
  return s;
}

function disposeAll(x: unknown) {
  for (const l of leaves(x)) if (l.refCount > 0) l.dispose();
}

// A form conforms to jax-js's rules where jax-js computes it plainly and consumes the input
// (its reference count comes back to 0): f(x.ref, x) of a function of one Array would leave
// x alive in jax-js too, and is not swept.
await jaxjs.init("cpu");
jaxjs.defaultDevice("cpu");
function conforms(jfn: any, form: Form, ns: string): boolean {
  const x = input(jaxjs.numpy, ns, false, form.vector);
  try {
    const y = form.make(jfn)(x);
    const ok = leaves(y).length > 0 && x.refCount === 0;
    disposeAll(y);
    return ok;
  } catch {
    return false;
  }
}

kiln.defaultDevice("cpu");
const rows: { name: string; form: Form; fn: any; ns: string }[] = [];
for (const [ns, get] of NAMESPACES) {
  for (const [name, v] of Object.entries(get(jaxjs))) {
    if (typeof v !== "function" || NOT_ARRAY_FUNCTIONS.has(name) || /^[A-Z]/.test(name)) continue;
    const fn = get(kiln)[name];
    for (const form of FORMS) {
      // The conforming forms that kiln computes plainly (returning Arrays) are swept.
      if (!conforms(v, form, ns)) continue;
      try {
        const y = form.make(fn)(input(kiln.numpy, ns, false, form.vector));
        if (leaves(y).length === 0) continue;
        disposeAll(y);
      } catch {
        continue;
      }
      rows.push({ name: `${ns}.${name}`, form, fn: form.make(fn), ns });
      // The first form jax-js computes is the function's: f(x.ref, x) of a function of one
      // Array is no call a user writes (jax-js's jitted library functions consume the extra
      // argument, kiln's ignore it).
      break;
    }
  }
}

describe("ownership sweep over jax-js's function names", () => {
  test("the sweep reaches most functions", () => expect(new Set(rows.map((r) => r.name)).size).toBeGreaterThan(250));
  test.each(rows.map((r) => [`${r.name} ${r.form.text}`, r] as const))("%s", (_n, r) => {
    const problems: string[] = [];
    for (const [t, run] of TRANSFORMS) {
      const before = kiln.memory().numArrays;
      try {
        disposeAll(run(kiln, r.fn, () => input(kiln.numpy, r.ns, false, r.form.vector), () => input(kiln.numpy, r.ns, true, r.form.vector)));
        const leaked = kiln.memory().numArrays - before;
        if (leaked !== 0) problems.push(`${t}: left ${leaked} arrays alive`);
      } catch (e) {
        if ((e as Error)?.name === "UseAfterFreeError") problems.push(`${t}: ${(e as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
