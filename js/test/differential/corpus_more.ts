// Differential programs for the rest of jax-js's names: random samplers (values where kiln
// uses jax-js's formulas, sample moments where it draws JAX's normals), numpy.fft's n-d
// transforms, the remaining nn and linalg functions, tree's classes and the top level
// (devices, jaxprs, async helpers).
import type { DiffCase, Lib } from "./harness.js";

const loose = { rtol: 1e-4, atol: 1e-5 };
const NORMAL_BASED = "draws through random.normal, which in kiln is JAX's (other values than jax-js 0.1.25's from the same key)";
// kiln's randint, permutation and categorical are JAX's, bit for bit against JAX's fixtures
// (random_test.cpp, jax_fixtures.test.ts); jax-js 0.1.25 draws them by other formulas.
const JAX_DRAWS: Record<string, string> = {
  randint: "random.randint is JAX's (two bit draws, JAX's range reduction); jax-js 0.1.25 takes one draw modulo the range",
  permutation: "random.permutation is JAX's (sort by random keys in rounds); jax-js 0.1.25 argsorts one uniform draw",
  choice: "random.choice goes through randint, permutation or categorical, which are JAX's in kiln",
  categorical: "random.categorical is JAX's (Gumbel noise from JAX's uniform); jax-js 0.1.25 draws its Gumbel noise by its own formula",
  bernoulli: "random.bernoulli without a shape draws one number per entry of p, as JAX (shape defaults to p's); jax-js 0.1.25 draws one number for all of p",
};
// Sample moments of two independent generators over N = 2000 draws: the two means differ by
// a standard error of 0.032 standard deviations, the two standard deviations by 0.022 of
// them; 7% relative plus 0.1 absolute is about three standard errors for the unit-scale
// distributions here and still fails a wrong location or scale. (jax-js's cpu device takes
// about a second per 10 000 draws on a loaded 2-core machine: more would slow make test.)
const moments = { rtol: 0.07, atol: 0.1 };
const N = 2000;

/** [mean, std] of `x` (consumed), as a program returns them. */
const meanStd = (np: Lib, x: any) => [np.mean(x.ref), np.std(x)];

type Sampler = [name: string, run: (r: Lib, k: any, np: Lib) => any, normalBased?: boolean];
const samplers: Sampler[] = [
  ["bits", (r, k) => r.bits(k, [5])],
  ["bits 0-d", (r, k) => r.bits(k)],
  ["bernoulli", (r, k) => r.bernoulli(k, 0.3, [6])],
  ["bernoulli with an Array p", (r, k, np) => r.bernoulli(k, np.array([0.1, 0.9, 0.5]))],
  ["cauchy", (r, k) => r.cauchy(k, [4])],
  ["exponential", (r, k) => r.exponential(k, [4])],
  ["gumbel", (r, k) => r.gumbel(k, [4])],
  ["laplace", (r, k) => r.laplace(k, [4])],
  ["logistic", (r, k) => r.logistic(k, [2, 2])],
  ["pareto", (r, k, np) => r.pareto(k, np.array(3), [4])],
  ["rayleigh", (r, k) => r.rayleigh(k, 2, [4])],
  ["weibullMin", (r, k) => r.weibullMin(k, 2, 1.5, [4])],
  ["triangular", (r, k) => r.triangular(k, 0, 1, 3, [4])],
  ["geometric", (r, k) => r.geometric(k, 0.3, { shape: [5] })],
  ["geometric of float32", (r, k, np) => r.geometric(k, 0.3, { shape: [3], dtype: np.float32 })],
  ["rademacher", (r, k) => r.rademacher(k, { shape: [6] })],
  ["rademacher of float32", (r, k, np) => r.rademacher(k, { shape: [3], dtype: np.float32 })],
  ["randint", (r, k) => r.randint(k, { minval: -3, maxval: 7, shape: [6] })],
  ["randint of uint32", (r, k, np) => r.randint(k, { minval: 0, maxval: 100, shape: [3], dtype: np.uint32 })],
  ["permutation of a number", (r, k) => r.permutation(k, 6)],
  ["permutation of an Array", (r, k, np) => r.permutation(k, np.arange(8).reshape([4, 2]))],
  ["permutation along axis 1", (r, k, np) => r.permutation(k, np.arange(8).reshape([2, 4]), 1)],
  ["choice", (r, k) => r.choice(k, 5, { shape: [3] })],
  ["choice without replacement", (r, k, np) => r.choice(k, np.array([10, 20, 30, 40]), { shape: [3], replace: false })],
  ["choice with p", (r, k, np) => r.choice(k, 4, { shape: [5], p: np.array([0.1, 0.2, 0.3, 0.4]) })],
  ["categorical", (r, k, np) => r.categorical(k, np.log(np.array([0.2, 0.5, 0.3])), { shape: [5] })],
  ["categorical along axis 0", (r, k, np) => r.categorical(k, np.array([[0, 1], [2, 0], [1, 1]]), { axis: 0 })],
  ["categorical without replacement", (r, k, np) => r.categorical(k, np.array([0, 1, 2, 3]), { shape: [2], replace: false })],
  ["lognormal", (r, k) => r.lognormal(k, 0.5, [4]), true],
  ["maxwell", (r, k) => r.maxwell(k, [4]), true],
  ["doubleSidedMaxwell", (r, k) => r.doubleSidedMaxwell(k, 1, 2, [4]), true],
  ["multivariateNormal", (r, k, np) => r.multivariateNormal(k, np.array([1, -1]), np.array([[2, 0.5], [0.5, 1]]), [3]), true],
  ["ball", (r, k) => r.ball(k, 3, { shape: [2] }), true],
  ["ball with p 1 throws", (r, k) => r.ball(k, 2, { p: 1, shape: [2] })],
];
// The cases whose values differ by design (the moments below check these distributions).
const differs = new Set(["bernoulli with an Array p", "randint", "randint of uint32", "permutation of a number", "choice", "choice with p", "categorical", "categorical along axis 0"]);
const samplerCases: DiffCase[] = samplers.map(([name, run, normalBased]) => ({
  name: `random.${name}`,
  tol: loose,
  knownDifference: normalBased ? `random.${name.split(" ")[0]} ${NORMAL_BASED}` : differs.has(name) ? JAX_DRAWS[name.split(" ")[0]] : undefined,
  run: ({ random, numpy: np }: Lib) => run(random, random.key(7), np),
}));

// Distributions' moments over N draws: both libraries' samples must agree statistically (and
// kiln's normal-based samplers, whose values differ, are checked this way).
const momentOf: [string, (r: Lib, k: any, np: Lib) => any][] = [
  ["normal", (r, k) => r.normal(k, [N])],
  ["uniform", (r, k) => r.uniform(k, [N], { minval: -2, maxval: 3 })],
  ["lognormal", (r, k) => r.lognormal(k, 0.5, [N])],
  ["maxwell", (r, k) => r.maxwell(k, [N])],
  ["doubleSidedMaxwell", (r, k) => r.doubleSidedMaxwell(k, 1, 2, [N])],
  ["multivariateNormal's first component", (r, k, np) => r.multivariateNormal(k, np.array([1, -1]), np.array([[1, 0.5], [0.5, 1]]), [N]).slice([], 0)],
  ["ball", (r, k, np) => np.sum(r.ball(k, 3, { shape: [N] }), 1)],
  ["exponential", (r, k) => r.exponential(k, [N])],
  ["gumbel", (r, k) => r.gumbel(k, [N])],
  ["laplace", (r, k) => r.laplace(k, [N])],
  ["logistic", (r, k) => r.logistic(k, [N])],
  ["rayleigh", (r, k) => r.rayleigh(k, 2, [N])],
  ["weibullMin", (r, k) => r.weibullMin(k, 2, 1.5, [N])],
  ["triangular", (r, k) => r.triangular(k, 0, 1, 3, [N])],
  ["randint", (r, k, np) => np.astype(r.randint(k, { minval: -3, maxval: 7, shape: [N] }), np.float32)],
];
// Frequencies of discrete draws (N draws: two frequencies differ by a standard error under
// 0.016; 0.05 is three of them).
const freq = { rtol: 0, atol: 0.05 };
const frequencyCases: DiffCase[] = [
  { name: "random.bernoulli with an Array p: frequencies", tol: freq, run: ({ random, numpy: np }: Lib) => np.mean(np.astype(random.bernoulli(random.key(12), np.array([0.1, 0.9, 0.5]), [N, 3]), np.float32), 0) },
  { name: "random.categorical: frequencies", tol: freq, run: ({ random, numpy: np, nn }: Lib) => np.mean(nn.oneHot(random.categorical(random.key(13), np.log(np.array([0.2, 0.5, 0.3])), { shape: [N] }), 3), 0) },
  { name: "random.choice with p: frequencies", tol: freq, run: ({ random, numpy: np, nn }: Lib) => np.mean(nn.oneHot(random.choice(random.key(14), 4, { shape: [N], p: np.array([0.1, 0.2, 0.3, 0.4]) }), 4), 0) },
  { name: "random.randint: frequencies", tol: freq, run: ({ random, numpy: np, nn }: Lib) => np.mean(nn.oneHot(random.randint(random.key(15), { minval: 0, maxval: 5, shape: [N] }), 5), 0) },
  { name: "random.permutation is a permutation", run: ({ random, numpy: np }: Lib) => np.sort(random.permutation(random.key(16), 50)) },
  { name: "random.choice without replacement draws distinct values", run: ({ random, numpy: np }: Lib) => np.sort(random.choice(random.key(17), 6, { shape: [6], replace: false })) },
];
const momentCases: DiffCase[] = [
  ...frequencyCases,
  ...momentOf.map(([name, run]) => ({
    name: `random.${name} moments`,
    tol: moments,
    run: ({ random, numpy: np }: Lib) => meanStd(np, run(random, random.key(11), np)),
  })),
  { name: "vmap of random.normal over keys: moments", tol: moments, run: ({ random, numpy: np, vmap }: Lib) => meanStd(np, vmap((k: any) => random.normal(k, [20]))(random.split(random.key(3), 100))) },
  { name: "vmap of random.normal over keys: shape", run: ({ random, numpy: np, vmap }: Lib) => { const x = vmap((k: any) => random.normal(k))(random.split(random.key(3), 4)); const r = [x.shape, x.dtype]; x.dispose(); return r; } },
  { name: "vmap of random.exponential over keys", tol: loose, run: ({ random, vmap }: Lib) => vmap((k: any) => random.exponential(k, [2]))(random.split(random.key(5), 3)) },
  { name: "vmap of random.bits over keys", run: ({ random, vmap }: Lib) => vmap((k: any) => random.bits(k, [2]))(random.split(random.key(5), 3)) },
  { name: "jit of random.uniform", run: ({ random, jit }: Lib) => jit((k: any) => random.uniform(k, [3]))(random.key(2)) },
  { name: "random.split into a shape", run: ({ random }: Lib) => random.split(random.key(4), [2, 2]) },
];

// numpy.fft's n-d transforms (ComplexPair { real, imag } in and out, as jax-js's .d.ts).
const pair = (np: Lib) => ({ real: np.array([[1, 2, 0.5], [0, -1, 3]]), imag: np.array([[0, 1, 0], [2, 0, -1]]) });
const fftCases: DiffCase[] = [
  ["fft2", (np: Lib) => np.fft.fft2(pair(np))],
  ["ifft2", (np: Lib) => np.fft.ifft2(pair(np))],
  ["fftn", (np: Lib) => np.fft.fftn(pair(np))],
  ["fftn over one axis", (np: Lib) => np.fft.fftn(pair(np), [0])],
  ["ifftn", (np: Lib) => np.fft.ifftn(pair(np), null)],
  ["rfft2", (np: Lib) => np.fft.rfft2(np.arange(12).astype(np.float32).reshape([3, 4]))],
  ["rfftn", (np: Lib) => np.fft.rfftn(np.arange(24).astype(np.float32).reshape([2, 3, 4]))],
  ["rfftn over axes", (np: Lib) => np.fft.rfftn(np.arange(24).astype(np.float32).reshape([2, 3, 4]), [0, 2])],
  ["irfft2", (np: Lib) => np.fft.irfft2({ real: np.array([[4, 1, 0], [1, 0, 2]]), imag: np.array([[0, 1, 0], [0.5, 0, 0]]) })],
  ["irfftn", (np: Lib) => np.fft.irfftn({ real: np.array([[4, 1, 0], [1, 0, 2]]), imag: np.array([[0, 1, 0], [0.5, 0, 0]]) })],
  ["hfft", (np: Lib) => np.fft.hfft({ real: np.array([1, 2, 3]), imag: np.array([0, 1, 0]) })],
  ["ihfft", (np: Lib) => np.fft.ihfft(np.array([1, 2, 0.5, -1]))],
  ["rfft2 then irfft2", (np: Lib) => np.fft.irfft2(np.fft.rfft2(np.arange(12).astype(np.float32).reshape([3, 4])))],
].map(([name, run]) => ({ name: `numpy.fft.${name}`, tol: loose, run: ({ numpy }: Lib) => (run as (np: Lib) => unknown)(numpy) }));
fftCases.push(
  { name: "grad through numpy.fft.rfft2", tol: loose, run: ({ numpy: np, grad }: Lib) => grad((x: any) => { const { real, imag } = np.fft.rfft2(x); return np.add(np.sum(np.square(real)), np.sum(imag)); })(np.arange(6).astype(np.float32).reshape([2, 3])) },
  { name: "vmap of numpy.fft.fft2", tol: loose, run: ({ numpy: np, vmap }: Lib) => vmap((re: any, im: any) => np.fft.fft2({ real: re, imag: im }))(np.arange(8).astype(np.float32).reshape([2, 2, 2]), np.zeros([2, 2, 2])) },
);

const spd = (np: Lib) => np.array([[4, 1, 0.5], [1, 3, 0.25], [0.5, 0.25, 2]]);
const linalgCases: DiffCase[] = [
  { name: "numpy.linalg.eigh eigenvalues", tol: loose, run: ({ numpy: np }) => { const [w, v] = np.linalg.eigh(spd(np)); v.dispose(); return w; } },
  { name: "numpy.linalg.eigh reconstructs", tol: { rtol: 1e-3, atol: 1e-4 }, run: ({ numpy: np }) => { const [w, v] = np.linalg.eigh(spd(np)); return np.matmul(np.multiply(v.ref, w), np.matrixTranspose(v)); } },
  { name: "lax.linalg.svd singular values", tol: loose, run: ({ numpy: np, lax }) => { const r = lax.linalg.svd(np.array([[1, 2, 0.5], [-1, 0.25, 3]])); return Array.isArray(r) ? (r[0].dispose(), r[2].dispose(), r[1]) : r; } },
  { name: "lax.linalg.svd without u, v", tol: loose, run: ({ numpy: np, lax }) => lax.linalg.svd(np.array([[1, 2, 0.5], [-1, 0.25, 3]]), { computeUv: false }) },
  { name: "lax.linalg.svd reconstructs", tol: { rtol: 1e-3, atol: 1e-4 }, run: ({ numpy: np, lax }) => { const [u, s, vt] = lax.linalg.svd(np.array([[1, 2, 0.5], [-1, 0.25, 3]]), { fullMatrices: false }); return np.matmul(np.multiply(u, s), vt); } },
];

const nnCases: DiffCase[] = [
  { name: "nn.glu", tol: loose, run: ({ numpy: np, nn }) => nn.glu(np.array([[0.5, -1, 2, 0.25], [1, 2, -3, 0]])) },
  { name: "nn.glu along axis 0", tol: loose, run: ({ numpy: np, nn }) => nn.glu(np.array([[0.5, -1], [2, 0.25]]), 0) },
  { name: "grad of nn.glu", tol: loose, run: ({ numpy: np, nn, grad }) => grad((x: any) => np.sum(nn.glu(x)))(np.array([0.5, -1, 2, 0.25])) },
  { name: "nn.log1mexp", tol: loose, run: ({ numpy: np, nn }) => nn.log1mexp(np.array([0.1, 0.5, 1, 3])) },
  { name: "grad of nn.log1mexp", tol: loose, run: ({ numpy: np, nn, grad }) => grad((x: any) => np.sum(nn.log1mexp(x)))(np.array([0.1, 0.5, 1, 3])) },
  { name: "nn.oneHot", run: ({ numpy: np, nn }) => nn.oneHot(np.array([0, 2, 1], { dtype: np.int32 }), 3) },
  { name: "nn.oneHot of 2-d with out-of-range classes", knownDifference: "kiln's oneHot of a class outside [0, numClasses) is all zeros, as JAX's; jax-js 0.1.25 gives all ones for a negative class", run: ({ numpy: np, nn }) => nn.oneHot(np.array([[0, 3], [-1, 1]], { dtype: np.int32 }), 3) },
  { name: "nn.oneHot of floats", beyondJaxjs: "jax-js 0.1.25 takes integer classes only; kiln compares float classes too, as JAX", sameAs: ({ numpy: np }) => np.array([[1, 0], [0, 1]]), run: ({ numpy: np, nn }) => nn.oneHot(np.array([0, 1]), 2) },
  { name: "vmap of nn.oneHot", run: ({ numpy: np, nn, vmap }) => vmap((x: any) => nn.oneHot(x, 4))(np.array([[0, 3], [2, 1]], { dtype: np.int32 })) },
];

const treeCases: DiffCase[] = [
  { name: "tree.NodeType", run: ({ tree }) => [tree.NodeType.Array, tree.NodeType.Object, tree.NodeType.Leaf] },
  { name: "tree.JsTreeDef", run: ({ tree }) => { const d = tree.structure([1, { a: 2, b: [3] }]); return [d instanceof tree.JsTreeDef, d.nodeType, d.size, d.childTreedefs.length, d.equals(tree.structure([0, { a: 0, b: [0] }])), d.equals(tree.structure([0]))]; } },
];

const topCases: DiffCase[] = [
  { name: "Array and DType at the top level", run: (lib) => { const x = lib.numpy.ones([2]); const r = [x instanceof lib.Array, lib.DType.Float32, x.dtype === lib.DType.Float32]; x.dispose(); return r; } },
  { name: "devices", run: ({ devices }) => [globalThis.Array.isArray(devices), devices.includes("cpu"), devices.includes("wasm")] },
  { name: "defaultDevice", run: ({ defaultDevice }) => typeof defaultDevice() },
  { name: "init returns a promise of devices", run: async ({ init }) => { const d = await init("cpu"); return d.includes("cpu"); } },
  { name: "blockUntilReady", run: async ({ numpy: np, blockUntilReady }) => blockUntilReady({ a: np.array([1, 2]), b: [np.ones([2])] }) },
  { name: "devicePut", run: async ({ numpy: np, devicePut }) => devicePut({ a: np.array([1, 2]), b: 3 }) },
  { name: "devicePut on cpu", run: async ({ numpy: np, devicePut }) => devicePut([np.array([1, 2]), 1.5], "cpu") },
  // Called on kiln's webgpu device in webgpu.test.ts; here only present (this process may hold an adapter).
  { name: "getWebGPUDevice", run: ({ getWebGPUDevice }) => typeof getWebGPUDevice },
  { name: "setDebug", run: ({ setDebug }) => { setDebug(0); return true; } },
  { name: "profiler", run: ({ profiler }) => [typeof profiler.startTrace, typeof profiler.stopTrace] },
  {
    name: "makeJaxpr prints and disposes",
    run: ({ numpy: np, makeJaxpr, ClosedJaxpr }) => {
      // makeJaxpr traces with the arguments' shapes and dtypes only: they stay the caller's.
      const [x, y] = [np.array([1, 2]), np.array(3)];
      const { jaxpr, treedef } = makeJaxpr((a: any, b: any) => [np.sin(a), np.add(b.ref, b)])(x, y);
      const r = [jaxpr instanceof ClosedJaxpr, typeof jaxpr.toString(), treedef.size];
      jaxpr.dispose();
      x.dispose();
      y.dispose();
      return r;
    },
  },
  {
    name: "makeJaxpr's Jaxpr structure",
    knownDifference: "kiln's ClosedJaxpr is the traced program as text (toString, dispose); jax-js 0.1.25's internal IR objects (jaxpr.inBinders, eqns, outs, consts) are not exposed",
    run: ({ numpy: np, makeJaxpr }) => {
      const x = np.array([1, 2]);
      const { jaxpr } = makeJaxpr((a: any) => np.sin(a))(x);
      x.dispose();
      const n = jaxpr.jaxpr.inBinders.length;
      jaxpr.dispose();
      return n;
    },
  },
];

// Bad input: the error class jax-js throws (TypeError, RangeError or Error) is kiln's too.
const errorCases: DiffCase[] = [
  { name: "concatenate of mismatched shapes throws", run: ({ numpy: np }) => np.concatenate([np.zeros([2, 3]), np.zeros([2, 4])]) },
  { name: "stack of mismatched shapes throws", run: ({ numpy: np }) => np.stack([np.zeros([2]), np.zeros([3])]) },
  { name: "sum over an axis out of bounds throws", run: ({ numpy: np }) => np.sum(np.zeros([2, 3]), 3) },
  { name: "expandDims at an axis out of bounds throws", run: ({ numpy: np }) => np.expandDims(np.zeros([2]), 3) },
  { name: "transpose with a repeated axis throws", run: ({ numpy: np }) => np.transpose(np.zeros([2, 3]), [0, 0]) },
  { name: "bitwiseAnd of floats throws", run: ({ numpy: np }) => np.bitwiseAnd(np.zeros([2]), np.zeros([2])) },
  { name: "leftShift of floats throws", run: ({ numpy: np }) => np.leftShift(np.zeros([2]), np.zeros([2])) },
  { name: "cholesky of a non-square matrix throws", run: ({ numpy: np }) => np.linalg.cholesky(np.zeros([2, 3])) },
  { name: "grad of a non-scalar output throws", run: ({ numpy: np, grad }) => grad((x: any) => np.sin(x))(np.zeros([2])) },
  { name: "grad with respect to int32 throws", run: ({ numpy: np, grad }) => grad((x: any) => np.sum(x))(np.zeros([2], { dtype: np.int32 })) },
  { name: "vmap over axes of different sizes throws", run: ({ numpy: np, vmap }) => vmap((a: any, b: any) => np.add(a, b))(np.zeros([2]), np.zeros([3])) },
  { name: "arange with step 0 throws", run: ({ numpy: np }) => np.arange(0, 5, 0) },
  { name: "linspace of a negative count throws", run: ({ numpy: np }) => np.linspace(0, 1, -1) },
  { name: "an index out of bounds throws", run: ({ numpy: np }) => np.zeros([3]).slice(5) },
  { name: "too many indices throw", run: ({ numpy: np }) => np.zeros([3]).slice(0, 0) },
  { name: "geomspace from 0 throws", run: ({ numpy: np }) => np.geomspace(0, 1, 3) },
  { name: "bitcastConvertType to another width throws", run: ({ numpy: np, lax }) => lax.bitcastConvertType(np.zeros([2]), np.float16) },
  { name: "a ragged nested array throws", run: ({ numpy: np }) => np.array([[1, 2], [3]]) },
  { name: "eye of a negative size throws", run: ({ numpy: np }) => np.eye(-1) },
  { name: "split into unequal sections throws", run: ({ numpy: np }) => np.split(np.arange(5), 2) },
  { name: "triu of 1-d throws", run: ({ numpy: np }) => np.triu(np.zeros([3])) },
  { name: "sort of 0-d throws", run: ({ numpy: np }) => np.sort(np.array(2)) },
  { name: "numpy.dot of 0-d arrays", run: ({ numpy: np }) => np.dot(np.array(2), np.array(3)) },
];

// What the randomized programs found where jax-js 0.1.25 itself deviates from JAX.
const randomFound: DiffCase[] = [
  {
    name: "vmap of jit on int32",
    knownDifference: "jax-js 0.1.25's vmap of a jitted function computes int32 inputs as float32 (a float32 result; bitwise ops then throw); kiln keeps int32, as JAX",
    run: ({ numpy: np, vmap, jit }) => vmap(jit((x: any) => np.multiply(x, 8)))(np.array([[1, 2], [3, 4]], { dtype: np.int32 })),
  },
  {
    name: "jit of sort along a leading axis",
    beyondJaxjs: "jax-js 0.1.25's jit sorts along the last axis only (\"routine primitive sort input is not immediate\"); kiln sorts along any axis",
    run: ({ numpy: np, jit }) => jit((x: any) => np.sort(x, 0))(np.array([[3, 1], [2, 4]], { dtype: np.int32 })),
    sameAs: ({ numpy: np }) => np.array([[2, 1], [3, 4]], { dtype: np.int32 }),
  },
  { name: "cumsum of a zero-size array along a non-empty axis", run: ({ numpy: np }) => np.cumsum(np.zeros([0, 3, 2]), 2) },
  { name: "vmap of cumsum over a zero-size batch", run: ({ numpy: np, vmap }) => vmap((x: any) => np.cumsum(x, 0))(np.zeros([0, 2])) },
  { name: "grad of cumsum of a zero-size array", run: ({ numpy: np, grad }) => grad((x: any) => np.sum(np.cumsum(x, 1)))(np.zeros([0, 3])) },
  // The indexing, linear algebra and dtype families (random_families.ts).
  {
    name: "jit of grad of the sum of a take",
    beyondJaxjs: "jax-js 0.1.25's jit of grad of sum(take(x)) throws (scatter input is not imm); kiln computes it",
    run: ({ numpy: np, jit, grad }) => jit(grad((x: any) => np.sum(np.take(x, np.array([2, 0, 2], { dtype: np.int32})))))(np.array([1, 2, 3])),
    sameAs: ({ numpy: np, grad }) => grad((x: any) => np.sum(np.take(x, np.array([2, 0, 2], { dtype: np.int32 }))))(np.array([1, 2, 3])),
  },
  {
    name: "jit of grad of the sum of a slice",
    knownDifference: "jax-js 0.1.25's jit of grad of sum(x.slice(...)) gives ones everywhere; kiln gives ones inside the slice only, as JAX and jax-js without jit",
    run: ({ numpy: np, jit, grad }) => jit(grad((x: any) => np.sum(x.slice([1, 2]))))(np.array([1, 2, 3])),
  },
  { name: "grad of the sum of a slice", run: ({ numpy: np, grad }) => grad((x: any) => np.sum(x.slice([1, 2])))(np.array([1, 2, 3])) },
  {
    name: "rightShift of a negative int32",
    knownDifference: "jax-js 0.1.25 shifts int32 right logically (-18 >> 1 is 2147483639); kiln shifts arithmetically (-9), as JAX",
    run: ({ numpy: np }) => np.rightShift(np.array([-18, 6], { dtype: np.int32 }), np.array(1, { dtype: np.int32 })),
  },
  {
    name: "vmap of tanh on float16",
    oracleNeeds: ["Float16Array"],
    knownDifference: "jax-js 0.1.25's vmap of tanh (a jitted library function) computes float16 as float32 (a float32 result); kiln keeps float16, as JAX",
    run: ({ numpy: np, vmap }) => vmap((x: any) => np.tanh(x))(np.array([[0.5, 1]], { dtype: np.float16 })),
  },
  {
    name: "floorDivide of int32 by a number",
    beyondJaxjs: "jax-js 0.1.25's floorDivide of int32 by a JS number throws (no floor for int32); kiln floors, as JAX",
    run: ({ numpy: np }) => np.floorDivide(np.array([-16, 5], { dtype: np.int32 }), 3),
    sameAs: ({ numpy: np }) => np.array([-6, 1], { dtype: np.int32 }),
  },
  {
    name: "jit of floorDivide of int32 by a number",
    knownDifference: "jax-js 0.1.25's jit of floorDivide of int32 by a JS number truncates (-16 // 3 is -5); kiln floors (-6), as JAX",
    run: ({ numpy: np, jit }) => jit((x: any) => np.floorDivide(x, 3))(np.array([-16, 5], { dtype: np.int32 })),
  },
  {
    name: "leftShift of int32 by a number",
    beyondJaxjs: "jax-js 0.1.25 refuses a JS number as the shift (weakly typed float32); kiln takes it as JAX does",
    run: ({ numpy: np }) => np.leftShift(np.array([-3, 5], { dtype: np.int32 }), 2),
    sameAs: ({ numpy: np }) => np.leftShift(np.array([-3, 5], { dtype: np.int32 }), np.array(2, { dtype: np.int32 })),
  },
  {
    name: "floorDivide of uint32 by a number",
    beyondJaxjs: "jax-js 0.1.25's floorDivide of uint32 by a JS number throws (no floor for uint32); kiln divides, as JAX",
    run: ({ numpy: np }) => np.floorDivide(np.array([7, 9], { dtype: np.uint32 }), 2),
    sameAs: ({ numpy: np }) => np.array([3, 4], { dtype: np.uint32 }),
  },
  {
    name: "uint32 minus a number",
    knownDifference: "jax-js 0.1.25 returns uint32 [1, 2, 3] - 2 unchanged; kiln wraps (4294967295, 0, 1), as JAX",
    run: ({ numpy: np }) => np.subtract(np.array([1, 2, 3], { dtype: np.uint32 }), 2),
  },
  {
    name: "grad of float16",
    oracleNeeds: ["Float16Array"],
    knownDifference: "jax-js 0.1.25's gradient of a float16 function is float32; kiln's is float16, as JAX",
    run: ({ numpy: np, grad }) => grad((x: any) => np.sum(np.tanh(x)))(np.array([0.5, 1], { dtype: np.float16 })),
  },
  {
    name: "vmap of jit on float16",
    oracleNeeds: ["Float16Array"],
    knownDifference: "jax-js 0.1.25's vmap of a jitted function computes float16 as float32 (a float32 result); kiln keeps float16, as JAX",
    run: ({ numpy: np, vmap, jit }) => vmap(jit((x: any) => np.multiply(x, 3)))(np.array([[0.5, 1]], { dtype: np.float16 })),
  },
  {
    name: "grad through astype",
    oracleNeeds: ["Float16Array"],
    beyondJaxjs: "jax-js 0.1.25 has no backward pass for casts; kiln differentiates astype between float dtypes, as JAX",
    run: ({ numpy: np, grad }) => grad((x: any) => np.sum(np.astype(np.multiply(x, 3), np.float32)))(np.array([0.5, 1], { dtype: np.float64 })),
    sameAs: ({ numpy: np }) => np.full([2], 3, { dtype: np.float64 }),
  },
  {
    name: "grad of vectorNorm where an element is 0",
    knownDifference: "jax-js 0.1.25's derivative of vectorNorm (ord 2) is NaN at a zero element; kiln's is 0 there (x / |x|), as JAX",
    run: ({ numpy: np, grad }) => grad((x: any) => np.linalg.vectorNorm(x, { ord: 2 }))(np.array([0, 3, 4])),
  },
  {
    name: "jit of sort of a raveled sort",
    beyondJaxjs: "jax-js 0.1.25's jit cannot sort a reshaped sort's result (routine input is not imm); kiln compiles it",
    run: ({ numpy: np, jit }) => jit((x: any) => np.sort(np.ravel(np.sort(x))))(np.array([[3, 1, 2]])),
    sameAs: ({ numpy: np }) => np.array([1, 2, 3]),
  },
  {
    name: "vmap of jit of sort of a flipped array",
    beyondJaxjs: "jax-js 0.1.25's jit sorts only its input as given (a flipped, transposed or raveled operand throws: routine input is not imm); kiln compiles it",
    run: ({ numpy: np, vmap, jit }) => vmap(jit((x: any) => np.sort(np.flip(x), 0)))(np.array([[3, 1, 2], [0, 5, 4]])),
    sameAs: ({ numpy: np }) => np.array([[1, 2, 3], [0, 4, 5]]),
  },
  // kiln's jit once folded these bounds away (its reduction accumulator had an index's range).
  { name: "jit of maximum of an int32 reduction and a number", run: ({ numpy: np, jit }) => jit((x: any) => np.maximum(np.sum(x, -1), -5))(np.array([[-9, -3], [4, -8]], { dtype: np.int32 })) },
  { name: "jit of clip of an int32 cumsum", run: ({ numpy: np, jit }) => jit((x: any) => np.clip(np.cumsum(x, -1), -5, 5))(np.array([[-9, -3], [4, 8]], { dtype: np.int32 })) },
  {
    name: "jit of solve",
    tol: { rtol: 1e-4, atol: 1e-5 },
    beyondJaxjs: "jax-js 0.1.25's jit throws on triangular_solve (solve, inv, and the gradients of det and cholesky); kiln compiles them",
    run: ({ numpy: np, jit }) => jit((a: any) => np.linalg.solve(a, np.array([[1], [2]])))(np.array([[3, 1], [1, 2]])),
    sameAs: ({ numpy: np }) => np.linalg.solve(np.array([[3, 1], [1, 2]]), np.array([[1], [2]])),
  },
  {
    name: "jit of grad of det",
    tol: { rtol: 1e-4, atol: 1e-5 },
    beyondJaxjs: "jax-js 0.1.25's jit throws on triangular_solve, which the gradient of det uses; kiln compiles it",
    run: ({ numpy: np, jit, grad }) => jit(grad((a: any) => np.linalg.det(a)))(np.array([[3, 1], [1, 2]])),
    sameAs: ({ numpy: np, grad }) => grad((a: any) => np.linalg.det(a))(np.array([[3, 1], [1, 2]])),
  },
];

export const moreCases: DiffCase[] = [...errorCases, ...randomFound, ...samplerCases, ...momentCases, ...fftCases, ...linalgCases, ...nnCases, ...treeCases, ...topCases];
