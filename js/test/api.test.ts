// The API surface on cpu and wasm: ownership (.ref, consuming calls, dispose, use after
// free), readback, weak types, pytrees, every transformation on JS closures (checked by
// identities between them), jit caching, devices, and errors that leave state intact.
import { beforeEach, describe, expect, test } from "vitest";
import {
  blockUntilReady, defaultDevice, devicePut, devices, grad, hessian, init, jacfwd, jacrev, jit, jvp, linearize,
  lax, makeJaxpr, nn, numpy as np, random, tree, valueAndGrad, vjp, vmap,
} from "../dist/index.js";

const close = (a: number[] | number, b: number[] | number, tol = 1e-5) => {
  const x = ([] as number[]).concat(a as any).flat(Infinity as 1) as number[];
  const y = ([] as number[]).concat(b as any).flat(Infinity as 1) as number[];
  expect(x.length).toBe(y.length);
  x.forEach((v, i) => expect(Math.abs(v - y[i])).toBeLessThanOrEqual(tol * (1 + Math.abs(y[i]))));
};

test("init and devices", async () => {
  expect(devices).toEqual(["cpu", "wasm", "webgpu", "webgl"]);
  const have = await init();
  expect(have).toContain("cpu");
  expect(have).toContain("wasm");
  // webgpu is there exactly when an adapter is (webgpu.test.ts tests the device itself).
  expect(await init("cpu", "webgpu")).toEqual(have.includes("webgpu") ? ["cpu", "webgpu"] : ["cpu"]);
  expect(() => defaultDevice("webgl" as any)).toThrow(/device 'webgl' is not available/);
});

for (const device of ["cpu", "wasm"] as const) {
  describe(`API on ${device}`, () => {
    beforeEach(() => {
      defaultDevice(device);
    });

    test("arrays live on the default device; devicePut moves them", async () => {
      const x = np.array([1, 2, 3]);
      expect(x.device).toBe(device);
      const other = device === "cpu" ? "wasm" : "cpu";
      const [y] = await devicePut([x], other);
      expect(y.device).toBe(other);
      expect(() => x.shape).toThrow(ReferenceError);
      expect(y.js()).toEqual([1, 2, 3]);
      const z = np.zeros([2], { device: other });
      expect(z.device).toBe(other);
      z.dispose();
    });

    test("ownership: .ref, consuming calls, dispose, use after free", () => {
      const x = np.array([1, 2, 3]);
      expect(x.refCount).toBe(1);
      const y = x.ref.add(1);
      expect(x.refCount).toBe(1);
      expect(y.refCount).toBe(1);
      const z = np.multiply(x, y); // consumes both
      expect(x.refCount).toBe(0);
      expect(() => x.js()).toThrow(ReferenceError);
      expect(() => y.dispose()).toThrow(/freed/);
      // The message names the freed array's dtype and shape (kept by dispose, one core call).
      expect(() => y.dispose()).toThrow("Referenced tracer Array:float32[3] freed");
      const m = np.zeros([2, 0, 3], { dtype: np.int32 });
      expect(m.toString()).toBe("Array:int32[2,0,3]");
      m.dispose();
      expect(() => m.shape).toThrow("Referenced tracer Array:int32[2,0,3] freed");
      const s = np.array(5);
      expect(s.toString()).toBe("Array:float32[]");
      s.dispose();
      expect(z.js()).toEqual([2, 6, 12]);
      expect(() => z.js()).toThrow(ReferenceError); // readback consumed the last reference
      const w = np.ones([2]);
      w.ref;
      w.dispose();
      expect(w.refCount).toBe(1);
      w.dispose();
      expect(() => w.ref).toThrow(ReferenceError);
      // Using one array twice needs two references.
      const u = np.array([1, 2]);
      expect(() => np.add(u, u)).toThrow(ReferenceError);
      expect(np.add(u.ref, u).js()).toEqual([2, 4]);
    });

    test("readback: js, dataSync, data, jsAsync, item, and dtypes", async () => {
      const a = np.array([[1, 2], [3, 4]], { dtype: np.int32 });
      expect(a.shape).toEqual([2, 2]);
      expect(a.ndim).toBe(2);
      expect(a.size).toBe(4);
      expect(a.dtype).toBe("int32");
      expect(a.ref.dataSync()).toBeInstanceOf(Int32Array);
      expect(await a.ref.jsAsync()).toEqual([[1, 2], [3, 4]]);
      expect(Array.from(await a.data())).toEqual([1, 2, 3, 4]);
      const b = np.array([true, false]);
      expect(b.dtype).toBe("bool");
      expect(b.ref.js()).toEqual([true, false]);
      expect(b.dataSync()).toBeInstanceOf(Int32Array); // as jax-js
      expect(np.array(5).item()).toBe(5);
      expect(() => np.zeros([2]).item()).toThrow(/item/);
      const f = np.array(new Float64Array([0.1, 0.2]));
      expect(f.dtype).toBe("float64");
      expect(Array.from(f.dataSync())).toEqual([0.1, 0.2]);
      const u = np.array(new Uint32Array([4294967295]));
      expect(u.js()).toEqual([4294967295]);
      const r = np.array([1, 2, 3, 4, 5, 6]).reshape([2, 3]);
      const [r0, r1] = r;
      expect(r0.js()).toEqual([1, 2, 3]);
      expect(r1.js()).toEqual([4, 5, 6]);
      expect(np.array(7.5) + 1).toBe(8.5); // Symbol.toPrimitive on scalars
      expect(await blockUntilReady({ a: np.ones([1]) }).then((t) => t.a.js())).toEqual([1]);
    });

    test("float16 reads are numbers with or without Float16Array", () => {
      // Node 20 has no Float16Array: reads widen the halves to float32 (exactly), never bits.
      const halves = [1.5, -0.25, 65504, 2 ** -24, -Infinity, 0.1];
      const want = (globalThis as any).Float16Array ? Array.from(new (globalThis as any).Float16Array(halves)) : [1.5, -0.25, 65504, 2 ** -24, -Infinity, 0.0999755859375];
      expect(np.array(halves, { dtype: np.float16 }).js()).toEqual(want);
      expect(Number.isNaN(np.array([NaN], { dtype: np.float16 }).item())).toBe(true);
    });

    test("weak types follow jax-js", () => {
      expect(np.array(3).weakType).toBe(true);
      expect(np.array([1, 2]).weakType).toBe(false);
      expect(np.arange(3).dtype).toBe("int32");
      const i = np.array([1, 2], { dtype: np.int32 });
      // A JS number takes the dtype of the array it meets: int32 + 1.5 stays int32.
      const viaFloat = i.ref.add(1.5);
      expect(viaFloat.dtype).toBe("int32");
      expect(viaFloat.js()).toEqual(i.ref.add(1).js());
      // A weak array yields to a strong one, of any kind (jax-js's rule).
      const w = np.array(2.5);
      expect(np.array([1, 2], { dtype: np.float16 }).add(w.ref).dtype).toBe("float16");
      const iw = i.ref.add(w);
      expect(iw.dtype).toBe("int32");
      expect(iw.js()).toEqual(i.ref.add(2).js());
      expect(np.where(np.array([true, false]), i, 2.5).dtype).toBe("int32");
      // Numbers are not cast where they are not operands of promotion (bernoulli's p).
      const heads = random.bernoulli(random.key(1), 0.5, [4000]).astype(np.float32).mean().item();
      expect(Math.abs(heads - 0.5)).toBeLessThan(0.05);
    });

    test("Array methods agree with the numpy functions", () => {
      const x = np.array([[1, -2, 3], [4, 5, -6]]);
      expect(x.ref.sum().item()).toBe(np.sum(x.ref).item());
      expect(x.ref.sum(0).js()).toEqual([5, 3, -3]);
      expect(x.ref.max(1, { keepdims: true }).js()).toEqual([[3], [5]]);
      expect(x.ref.transpose().js()).toEqual([[1, 4], [-2, 5], [3, -6]]);
      expect(x.ref.slice(1, [1]).js()).toEqual([5, -6]);
      expect(x.ref.slice([], 0).js()).toEqual([1, 4]);
      expect(x.ref.slice(null).shape).toEqual([1, 2, 3]);
      expect(x.ref.flatten().shape).toEqual([6]);
      const idx = np.array([2, 0, 2], { dtype: np.int32 });
      expect(x.ref.slice([], idx.ref).js()).toEqual(np.take(x.ref, idx.ref, 1).js());
      expect(x.ref.slice(1, idx.ref).js()).toEqual([-6, 4, -6]);
      expect(x.ref.slice(idx).shape).toEqual([3, 3]); // rows 2, 0, 2 of a 2-row array clamp (JAX's gather)
      expect(x.ref.greater(0).js()).toEqual([[true, false, true], [true, true, false]]);
      expect(x.ref.astype(np.int32).dtype).toBe("int32");
      expect(np.eye(3).diagonal().js()).toEqual([1, 1, 1]);
      const plain = [[1, -2, 3], [4, 5, -6]].map((r) => r.map((v) => ((((-v - 1) / 2) * -2) % 7 + 7) % 7));
      expect(x.neg().sub(1).div(2).mul(-2).mod(7).js()).toEqual(plain);
    });

    test("pytrees: flatten, unflatten, map, ref, dispose", () => {
      const t = { b: [1, np.array([2])], a: { c: null } } as any;
      const [leaves, def] = tree.flatten(t);
      expect(leaves.length).toBe(3);
      expect(def.size).toBe(3);
      expect(def.toString()).toBe("JsTreeDef({b: [*, *], a: {c: *}})");
      const back = tree.unflatten(def, leaves) as any;
      expect(back.b[1]).toBe(leaves[1]);
      const doubled = tree.map((x: any) => (typeof x === "number" ? 2 * x : x), t) as any;
      expect(doubled.b[0]).toBe(2);
      const r = tree.ref(t);
      expect(r.b[1].refCount).toBe(2);
      tree.dispose(t);
      tree.dispose(t);
      expect(() => t.b[1].js()).toThrow(ReferenceError);
      expect(() => tree.unflatten(def, [1])).toThrow(/few leaves/);
    });

    test("grad, valueAndGrad over nested trees, argnums and hasAux", () => {
      const f = (p: { w: np.Array; b: np.Array[] }) => np.sum(np.square(p.w)).add(p.b[0].sum().mul(3));
      const g = grad(f)({ w: np.array([1, 2]), b: [np.array([5, 6, 7])] }) as any;
      expect(g.w.js()).toEqual([2, 4]);
      expect(g.b[0].js()).toEqual([3, 3, 3]);
      const h = (x: np.Array, y: np.Array) => np.sum(x.mul(y));
      const [gx, gy] = grad(h, { argnums: [0, 1] })(np.array([1, 2]), np.array([3, 4])) as any;
      expect(gx.js()).toEqual([3, 4]);
      expect(gy.js()).toEqual([1, 2]);
      expect((grad(h, { argnums: 1 })(np.array([1, 2]), np.array([3, 4])) as any).js()).toEqual([1, 2]);
      const withAux = (x: np.Array) => [np.sum(np.sin(x.ref)), { double: x.mul(2) }];
      const [ga, aux] = grad(withAux, { hasAux: true })(np.array([0, 1])) as any;
      close(ga.js(), [1, Math.cos(1)]);
      expect(aux.double.js()).toEqual([0, 2]);
      const [[v, aux2], gv] = valueAndGrad(withAux, { hasAux: true })(np.array([0, 1])) as any;
      close(v.js(), Math.sin(1));
      expect(aux2.double.js()).toEqual([0, 2]);
      close(gv.js(), [1, Math.cos(1)]);
      // Arguments are consumed.
      const x = np.array([1, 2]);
      grad((t: np.Array) => t.sum())(x);
      expect(() => x.js()).toThrow(ReferenceError);
    });

    test("jvp, vjp and linearize are transposes of each other (<J t, c> = <t, J^T c>)", () => {
      const f = (x: np.Array, y: np.Array) => ({ s: np.sin(x.ref.mul(y.ref)), p: x.mul(y).sum() });
      const x0 = [0.3, -1.2, 2.0], y0 = [1.5, 0.5, -0.7], tx = [1, 2, 3], ty = [-1, 0.5, 2], cs = [0.2, -0.4, 1.0], cp = 1.5;
      const [out, tan] = jvp(f, [np.array(x0), np.array(y0)], [np.array(tx), np.array(ty)]) as any;
      close(out.s.js(), x0.map((v, i) => Math.sin(v * y0[i])));
      const ts = tan.s.js() as number[];
      const tp = tan.p.item();
      const [out2, pullback] = vjp(f, [np.array(x0), np.array(y0)]) as any;
      tree.dispose(out2);
      const [cx, cy] = pullback({ s: np.array(cs), p: np.array(cp) });
      const lhs = ts.reduce((a, v, i) => a + v * cs[i], 0) + tp * cp;
      const cxv = cx.js() as number[], cyv = cy.js() as number[];
      const rhs = cxv.reduce((a, v, i) => a + v * tx[i], 0) + cyv.reduce((a, v, i) => a + v * ty[i], 0);
      close(lhs, rhs, 1e-5);
      pullback.dispose();
      const [out3, lin] = linearize(f, [np.array(x0), np.array(y0)]) as any;
      tree.dispose(out3);
      const lt = lin(np.array(tx), np.array(ty));
      close(lt.s.js(), ts);
      close(lt.p.item(), tp);
      lin.dispose();
    });

    test("jacfwd equals jacrev; hessian is symmetric and matches finite differences of grad", () => {
      const f = (x: np.Array) => np.tanh(np.matmul(np.array([[1, 2, 0], [0, -1, 3]]), x.ref)).mul(x.slice([0, 2]));
      const x0 = [0.1, 0.4, -0.3];
      const jf = jacfwd(f)(np.array(x0)) as np.Array;
      const jr = jacrev(f)(np.array(x0)) as np.Array;
      expect(jf.shape).toEqual([2, 3]);
      close(jf.js(), jr.js());
      const s = (x: np.Array) => np.sum(np.sin(x.ref).mul(x.ref).mul(x));
      const H = (hessian(s)(np.array(x0)) as np.Array).js() as number[][];
      for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) close(H[i][j], H[j][i]);
      const eps = 1e-2;
      const gAt = (v: number[]) => (grad(s)(np.array(v, { dtype: np.float64 })) as np.Array).js() as number[];
      for (let j = 0; j < 3; j++) {
        const up = x0.slice(), dn = x0.slice();
        up[j] += eps;
        dn[j] -= eps;
        const gu = gAt(up), gd = gAt(dn);
        for (let i = 0; i < 3; i++) close(H[i][j], (gu[i] - gd[i]) / (2 * eps), 1e-3);
      }
    });

    test("vmap matches a loop, with inAxes per argument and as trees", () => {
      const f = (p: { w: np.Array }, x: np.Array) => np.dot(p.w, x);
      const w = [[1, 2], [3, 4]];
      const xs = [[1, 0], [0, 1], [2, -1]];
      const batched = vmap(f, [{ w: null }, 0])({ w: np.array(w) }, np.array(xs)) as np.Array;
      const loop = xs.map((x) => (f({ w: np.array(w) }, np.array(x)) as np.Array).js());
      expect(batched.js()).toEqual(loop);
      const cols = vmap((x: np.Array) => x.sum(), 1)(np.array([[1, 2], [3, 4]])) as np.Array;
      expect(cols.js()).toEqual([4, 6]);
      const g = vmap(grad((x: np.Array) => np.sum(np.square(x))))(np.array([[1, 2], [3, 4]])) as np.Array;
      expect(g.js()).toEqual([[2, 4], [6, 8]]);
      expect(() => vmap((x: np.Array) => x, [0, 0])(np.zeros([2]))).toThrow(/vmap/);
    });

    test("jit caches per signature and tree structure, honours staticArgnums, and frees on dispose", () => {
      let traces = 0;
      const f = jit((x: np.Array, y: np.Array) => {
        traces++;
        return np.sqrt(np.square(x).add(np.square(y)));
      });
      expect(f(np.array([3, 5]), np.array([4, 12])).js()).toEqual([5, 13]);
      expect(f(np.array([6, 8]), np.array([8, 6])).js()).toEqual([10, 10]);
      expect(traces).toBe(1);
      f(np.array([1, 2, 3]), np.array([1, 2, 3])).dispose(); // a new shape: a new trace
      expect(traces).toBe(2);
      f(np.array([1, 2], { dtype: np.float64 }), np.array([1, 2], { dtype: np.float64 })).dispose();
      expect(traces).toBe(3);
      f.dispose();
      let t2 = 0;
      const g = jit((p: any, n: number) => {
        t2++;
        return p.a.mul(n).add(p.b ?? 0);
      }, { staticArgnums: [1] });
      expect(g({ a: np.array([1, 2]) }, 3).js()).toEqual([3, 6]);
      expect(g({ a: np.array([1, 2]) }, 3).js()).toEqual([3, 6]);
      expect(t2).toBe(1);
      expect(g({ a: np.array([1, 2]) }, 4).js()).toEqual([4, 8]);
      expect(t2).toBe(2);
      expect(g({ a: np.array([1, 2]), b: np.array([1, 1]) }, 4).js()).toEqual([5, 9]);
      expect(t2).toBe(3);
      g.dispose();
      // jit composes with grad in both orders.
      const sq = (x: np.Array) => np.sum(np.square(x));
      expect((grad(jit(sq))(np.array([1, 2])) as np.Array).js()).toEqual([2, 4]);
      const jg = jit(grad(sq));
      expect((jg(np.array([1, 2])) as np.Array).js()).toEqual([2, 4]);
      jg.dispose();
    });

    test("lax.dot with dimension numbers equals matmul and einsum", () => {
      const a = [[[1, 2, 3], [4, 5, 6]], [[0, 1, 0], [2, 0, -1]]];
      const b = [[[1, 0], [0, 1], [1, 1]], [[2, 1], [0, 3], [1, -1]]];
      const d = lax.dot(np.array(a), np.array(b), { lhsContractingDims: [2], rhsContractingDims: [1], lhsBatchDims: [0], rhsBatchDims: [0] });
      expect(d.js()).toEqual(np.matmul(np.array(a), np.array(b)).js());
      const m = lax.dot(np.array([[1, 2], [3, 4]]), np.array([[5], [6]]));
      expect(m.js()).toEqual(np.einsum("ij,jk->ik", np.array([[1, 2], [3, 4]]), np.array([[5], [6]])).js());
    });

    test("finfo and iinfo describe the dtypes; promoteTypes follows JAX's lattice", () => {
      const f32 = np.finfo(np.float32);
      expect(Math.fround(1 + f32.eps)).not.toBe(1);
      expect(Math.fround(1 + f32.eps / 2)).toBe(1);
      expect(np.array([f32.max], { dtype: np.float32 }).js()).toEqual([f32.max]);
      expect(np.isinf(np.array([f32.max]).mul(2)).js()).toEqual([true]);
      const i32 = np.iinfo(np.int32);
      expect(np.array([i32.max, i32.min], { dtype: np.int32 }).js()).toEqual([2147483647, -2147483648]);
      // JAX's promotion table (jax.numpy.promote_types without x64).
      expect(np.promoteTypes(np.int32, np.float32)).toBe("float32");
      expect(np.promoteTypes(np.bool, np.int32)).toBe("int32");
      expect(np.promoteTypes(np.float16, np.float32)).toBe("float32");
      expect(np.resultType(np.bool, np.uint32, np.float64)).toBe("float64");
    });

    test("makeJaxpr traces a closure", () => {
      const { jaxpr, treedef } = makeJaxpr((x: np.Array) => ({ y: np.sin(x.ref).mul(x) }))(np.array([1, 2]));
      const text = jaxpr.toString();
      expect(text).toMatch(/sin/);
      expect(text).toMatch(/mul/);
      expect(treedef.toString()).toBe("JsTreeDef({y: *})");
    });

    test("nn and random", () => {
      const s = nn.softmax(np.array([[1, 2, 3], [0, 0, 0]])).js() as number[][];
      s.forEach((row) => close(row.reduce((a, b) => a + b, 0), 1));
      close((nn.relu(np.array([-1, 2])) as np.Array).js(), [0, 2]);
      const k = random.key(0);
      const [k1, k2] = random.split(k);
      const a = random.uniform(k1.ref, [1000]);
      const b = random.uniform(k1, [1000]);
      expect(np.allclose(a.ref, b)).toBe(true); // same key, same bits
      const c = random.normal(k2, [2000]).js() as number[];
      const mean = c.reduce((p, q) => p + q, 0) / c.length;
      expect(Math.abs(mean)).toBeLessThan(0.1);
      expect(np.all(a.ref.greaterEqual(0)).item()).toBe(1);
      a.dispose();
    });

    test("errors name the op and leave held arrays intact", () => {
      const a = np.ones([2, 3]);
      const b = np.ones([4]);
      expect(() => np.add(a, b)).toThrow(/add/);
      expect(a.refCount).toBe(1);
      expect(() => np.matmul(a, b)).toThrow(/matmul/);
      expect(() => np.reshape(a, [4])).toThrow(/reshape/);
      expect(() => a.ref.astype("complex64" as any)).toThrow(/dtype/);
      expect(() => np.array([[1, 2], [3]])).toThrow(/ragged/);
      // A shape that does not fit a typed array's elements is an error (the core checks the
      // bytes against it: formats/raw_array.h), never a read past the data.
      expect(() => np.array(new Float32Array(4), { shape: [1000] })).toThrow(
        /array: got 16 bytes of float32 data for shape \(1000,\), expected 4000/,
      );
      expect(() => np.array(new Float32Array(4), { shape: [2, -2] })).toThrow(/non-negative/);
      const fits = np.array(new Float32Array(4), { shape: [2, 2] });
      expect(fits.shape).toEqual([2, 2]);
      fits.dispose();
      // Inside a transformation, too; the trace unwinds and the next one works.
      const bad = (x: np.Array) => np.sum(x.add(np.zeros([5])));
      expect(() => grad(bad)(np.ones([3]))).toThrow(/add/);
      class Mine extends Error {}
      const thrower = () => {
        throw new Mine("from the closure");
      };
      expect(() => grad(thrower)(np.ones([2]))).toThrow(Mine);
      expect(() => vmap(thrower)(np.ones([2]))).toThrow(Mine);
      const j = jit(thrower);
      expect(() => j(np.ones([2]))).toThrow(Mine);
      j.dispose();
      expect(() => grad((x: np.Array) => x)(np.ones([3]))).toThrow(/grad/);
      expect((grad((x: np.Array) => np.sum(x.ref.mul(x)))(np.array([3])) as np.Array).js()).toEqual([6]);
      expect(a.ref.js()).toEqual([[1, 1, 1], [1, 1, 1]]);
      expect(b.js()).toEqual([1, 1, 1, 1]);
      a.dispose();
    });
  });
}
