// numpy.fft, the eigen/singular value decompositions (numpy.linalg and lax.linalg) and the
// matrix norms built on them, against JAX (tests/fixtures/spectral.txt,
// tools/gen_spectral_fixtures.py) on cpu and wasm, with ownership, transformations and errors.
import { beforeEach, describe, expect, test } from "vitest";
import { defaultDevice, grad, jit, lax, numpy as np, random, vmap } from "../dist/index.js";
import spectralText from "../../tests/fixtures/spectral.txt?raw";
import { compare, hostDevices, parseFixtures, toArray, type Case } from "./fixtures.js";

type A = np.Array;
const fft = np.fft;
const axis = (c: Case) => Number(c.params.axis[0]);
const axes = (c: Case) => (c.params.axes[0] === "none" ? null : c.params.axes.map(Number));
const flag = (c: Case, k: string, d: boolean) => (c.params[k] ? c.params[k][0] === "1" : d);
const pair = (x: A[]) => ({ real: x[0], imag: x[1] });
const out2 = (z: { real: A; imag: A }) => [z.real, z.imag];

const OPS: Record<string, (c: Case, x: A[]) => A[]> = {
  fft: (c, x) => out2(fft.fft(pair(x), axis(c))),
  ifft: (c, x) => out2(fft.ifft(pair(x), axis(c))),
  fftn: (c, x) => out2(fft.fftn(pair(x), axes(c))),
  ifftn: (c, x) => out2(fft.ifftn(pair(x), axes(c))),
  fft2: (c, x) => out2(fft.fft2(pair(x), axes(c)!)),
  ifft2: (c, x) => out2(fft.ifft2(pair(x), axes(c)!)),
  rfft: (c, x) => out2(fft.rfft(x[0], axis(c))),
  ihfft: (c, x) => out2(fft.ihfft(x[0], axis(c))),
  irfft: (c, x) => [fft.irfft(pair(x), axis(c))],
  hfft: (c, x) => [fft.hfft(pair(x), axis(c))],
  rfftn: (c, x) => out2(fft.rfftn(x[0], axes(c))),
  rfft2: (c, x) => out2(fft.rfft2(x[0], axes(c)!)),
  irfftn: (c, x) => [fft.irfftn(pair(x), axes(c))],
  irfft2: (c, x) => [fft.irfft2(pair(x), axes(c)!)],
  fftfreq: (c) => [fft.fftfreq(Number(c.params.n[0]), Number(c.params.d[0]))],
  rfftfreq: (c) => [fft.rfftfreq(Number(c.params.n[0]), Number(c.params.d[0]))],
  fftshift: (c, x) => [fft.fftshift(x[0], axes(c))],
  ifftshift: (c, x) => [fft.ifftshift(x[0], axes(c))],
  // lax.linalg.eigh returns [vectors, values]; numpy.linalg.eigh [values, vectors].
  eigh: (c, x) => {
    if (c.params.lower) {
      const [v, w] = lax.linalg.eigh(x[0], { lower: flag(c, "lower", true), symmetrizeInput: flag(c, "symmetrize", true) });
      return [w, v];
    }
    return np.linalg.eigh(x[0]);
  },
  eigvalsh: (_, x) => [np.linalg.eigvalsh(x[0])],
  eighsq: (_, x) => {
    const [w, v] = np.linalg.eigh(x[0]);
    return [w, np.square(v)];
  },
  svd: (_, x) => np.linalg.svd(x[0]),
  svdvals: (_, x) => [np.linalg.svdvals(x[0])],
  svdsq: (_, x) => {
    const [u, s, vh] = lax.linalg.svd(x[0]) as A[];
    return [np.square(u), s, np.square(vh)];
  },
};
const REAL_INPUT = new Set(["rfft", "ihfft", "rfftn", "rfft2", "eighsq", "svdsq"]);

// Flips the columns of `cols` (and rows of `rows`) whose dot product with the reference's
// is negative: vectors are defined up to sign.
function alignSigns(cols: A, ref: A, rows?: A): [A, A?] {
  const sign = np.where(np.less(np.sum(np.multiply(cols.ref, ref), -2), 0), -1, 1).astype(cols.dtype);
  const c = np.multiply(cols, np.expandDims(sign.ref, -2));
  const r = rows === undefined ? undefined : np.multiply(rows, np.expandDims(sign, -1));
  if (rows === undefined) sign.dispose();
  return [c, r];
}

const cases = parseFixtures(spectralText);

for (const device of hostDevices /* cpu in Node only */) {
  describe(`numpy.fft and decompositions on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });
    test("the fixture file has cases", () => {
      expect(cases.length).toBe(127);
    });
    test.each(cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
      const inputs = c.inputs.map((i) => toArray(i.arr)) as A[];
      if (c.op.startsWith("grad_")) {
        const op = c.op.slice(5);
        const nin = REAL_INPUT.has(op) ? 1 : 2;
        const ws = inputs.splice(nin);
        const f = (...a: A[]) => {
          const outs = OPS[op](c, a);
          let s: A | null = null;
          outs.forEach((o, k) => {
            if (k < ws.length) {
              const t = np.sum(np.multiply(o, ws[k].ref));
              s = s === null ? t : np.add(s, t);
            } else o.dispose();
          });
          return s!;
        };
        const gs = grad(f, { argnums: inputs.map((_, i) => i) })(...inputs) as A[];
        gs.forEach((g, i) => {
          expect(compare(g, c.expects[i], c.tol), `${c.id} grad ${i}`).toBeNull();
          g.dispose();
        });
        ws.forEach((w) => w.dispose());
        return;
      }
      let outs = OPS[c.op](c, inputs);
      expect(outs.length).toBe(c.expects.length);
      if (c.op === "eigh") outs[1] = alignSigns(outs[1], toArray(c.expects[1]) as A)[0];
      if (c.op === "svd") [outs[0], outs[2]] = alignSigns(outs[0], toArray(c.expects[0]) as A, outs[2]) as [A, A];
      outs.forEach((o, i) => {
        expect(compare(o, c.expects[i], c.tol), `${c.id} output ${i}`).toBeNull();
        o.dispose();
      });
      for (const x of inputs) expect(x.refCount).toBe(0);
    });

    test("fft round trips, and vmap and jit see through the transforms", () => {
      const re = random.normal(random.key(1), [3, 40]);
      const im = random.normal(random.key(2), [3, 40]);
      const back = fft.ifft(fft.fft({ real: re.ref, imag: im.ref }));
      expect(np.allclose(back.real, re.ref, { atol: 2e-5 })).toBe(true);
      expect(np.allclose(back.imag, im.ref, { atol: 2e-5 })).toBe(true);
      const power = (x: A) => {
        const z = fft.rfft(x);
        return np.add(np.square(z.real), np.square(z.imag));
      };
      const batched = vmap(power)(re.ref);
      const jitted = jit(power)(re.ref);
      for (let i = 0; i < 3; i++) expect(np.allclose(batched.ref.slice(i), power(re.ref.slice(i)), { atol: 1e-4 })).toBe(true);
      expect(np.allclose(jitted, batched, { atol: 1e-4 })).toBe(true);
      // grad of a linear map: the adjoint; for the unnormalized DFT, sum(re(fft(x))) has
      // gradient n at index 0 and 0 elsewhere (up to the twiddles' float32 rounding).
      const g = grad((x: A) => np.sum(fft.fft({ real: x, imag: np.zerosLike(x.ref) }).real))(np.ones([8])) as A;
      expect(np.allclose(g, np.array([8, 0, 0, 0, 0, 0, 0, 0]), { atol: 1e-6, rtol: 0 })).toBe(true);
      re.dispose();
      im.dispose();
    });

    test("eigh and svd reconstruct, and feed the matrix norms", () => {
      const x = random.normal(random.key(3), [6, 6]);
      const s = np.divide(np.add(x.ref, np.matrixTranspose(x.ref)), 2);
      const [w, v] = np.linalg.eigh(s.ref);
      const rec = np.matmul(np.multiply(v.ref, np.expandDims(w, -2)), np.matrixTranspose(v));
      expect(np.allclose(rec, s.ref, { atol: 1e-5 })).toBe(true);
      const [vs, ws] = lax.linalg.eigh(s.ref, { sortEigenvalues: false });
      vs.dispose();
      expect(np.allclose(np.sort(ws), np.linalg.eigvalsh(s.ref), { atol: 1e-5 })).toBe(true);
      const sv = np.linalg.svdvals(x.ref);
      const top = sv.ref.js()[0], bottom = sv.ref.js()[5];
      expect(np.linalg.norm(x.ref, { ord: 2 }).item()).toBeCloseTo(top, 5);
      expect(np.linalg.matrixNorm(x.ref, { ord: -2 }).item()).toBeCloseTo(bottom, 5);
      expect(np.linalg.norm(x.ref, { ord: "nuc" }).item()).toBeCloseTo(np.sum(sv.ref).item(), 4);
      expect(np.allclose(np.linalg.svd(x.ref, { computeUv: false }), sv, { atol: 0 })).toBe(true);
      // axes given in either order, and keepdims
      const b = random.normal(random.key(4), [2, 3, 4]);
      const n1 = np.linalg.norm(b.ref, { ord: 2, axis: [2, 0], keepdims: true });
      expect(n1.shape).toEqual([1, 3, 1]);
      const n2 = vmap((m: A) => np.linalg.norm(m, { ord: 2 }), 1)(b);
      expect(np.allclose(n1.reshape([3]), n2, { atol: 1e-5 })).toBe(true);
      s.dispose();
      x.dispose();
    });

    test("errors name the operation", () => {
      const z = () => np.zeros([4]);
      expect(() => fft.fft({ real: z(), imag: np.zeros([5]) })).toThrow(/fft/);
      expect(() => fft.fft({ real: np.zeros([4], { dtype: np.int32 }), imag: np.zeros([4], { dtype: np.int32 }) })).toThrow(/fft.*float/);
      expect(() => fft.irfft({ real: np.zeros([1]), imag: np.zeros([1]) })).toThrow(/irfft/);
      expect(() => fft.rfft(z(), 1)).toThrow(/rfft/);
      expect(() => fft.fftfreq(0)).toThrow(/fftfreq/);
      expect(() => fft.fft(z() as any)).toThrow(/ComplexPair/);
      expect(() => np.linalg.eigh(np.zeros([2, 3]))).toThrow(/eigh/);
      expect(() => np.linalg.svd(np.zeros([3, 2]), { fullMatrices: true })).toThrow(/svd/);
      expect(() => np.linalg.norm(np.eye(3), { ord: 3 as any, axis: [0, 1] })).toThrow(/norm/);
    });
  });
}
