// Differential programs from issue 22's list: transformations of library functions (ownership
// inside traces), the argument forms jax-js accepts, and its numerics and dtype rules.
import type { DiffCase, Lib } from "./harness.js";

const mat = (np: Lib) => np.array([[4, 1, 2], [1, 3, 0.5], [2, 0.5, 5]]);
const loose = { rtol: 1e-3, atol: 1e-4 };
const NORMAL = "kiln's random.normal is JAX's (bit for bit against JAX's threefry fixtures); jax-js 0.1.25's normal draws other values from the same key";
const SVD_GRAD = "jax-js 0.1.25 has no JVP rule for its jacobi_eigh, so it cannot differentiate svd; kiln can";

/** Ownership inside transformations: each traced function follows jax-js's `.ref` rules. */
export const transformCases: DiffCase[] = [
  { name: "grad of sum of svd singular values", beyondJaxjs: SVD_GRAD, run: ({ grad, numpy: np }) => grad((a: any) => np.sum(np.linalg.svd(a, { computeUv: false })))(mat(np)) },
  { name: "grad through svd u, s, vh", beyondJaxjs: SVD_GRAD, run: ({ grad, numpy: np }) => grad((a: any) => { const [u, s, vh] = np.linalg.svd(a); return np.sum(np.matmul(np.multiply(u, s), vh)); })(mat(np)) },
  { name: "grad of lu's packed factors", tol: loose, run: ({ grad, numpy: np, lax }) => grad((a: any) => { const [lu, piv, perm] = lax.linalg.lu(a); piv.dispose(); perm.dispose(); return np.sum(lu); })(mat(np)) },
  { name: "grad of Frobenius matrixNorm", webgpu: true, tol: loose, run: ({ grad, numpy: np }) => grad((a: any) => np.linalg.matrixNorm(a))(mat(np)) },
  { name: "grad of matrixNorm keepdims", tol: loose, run: ({ grad, numpy: np }) => grad((a: any) => np.sum(np.linalg.matrixNorm(a, { keepdims: true })))(mat(np)) },
  { name: "grad of batched matrixNorm", tol: loose, run: ({ grad, numpy: np }) => grad((a: any) => np.sum(np.linalg.matrixNorm(a)))(np.arange(12).astype(np.float32).reshape([3, 2, 2])) },
  { name: "vmap of matrixNorm", tol: loose, run: ({ vmap, numpy: np }) => vmap((a: any) => np.linalg.matrixNorm(a))(np.arange(12).astype(np.float32).reshape([3, 2, 2])) },
  { name: "jit of matrixNorm ord 1", tol: loose, run: ({ jit, numpy: np }) => jit((a: any) => np.linalg.matrixNorm(a, { ord: 1 }))(mat(np)) },
  {
    name: "grad of dotProductAttention", tol: loose,
    run: ({ grad, numpy: np, nn }) => {
      const q = np.linspace(-1, 1, 24).reshape([2, 3, 1, 4]);
      const k = np.linspace(1, -1, 24).reshape([2, 3, 1, 4]);
      const v = np.linspace(0, 2, 24).reshape([2, 3, 1, 4]);
      const g = grad((qq: any) => np.sum(nn.dotProductAttention(qq, k.ref, v.ref, { isCausal: true })))(q);
      k.dispose();
      v.dispose();
      return g;
    },
  },
  { name: "jvp of sort of floats", run: ({ jvp, numpy: np }) => jvp((x: any) => np.sort(x), [np.array([3, 1, 2])], [np.array([1, 2, 3])]) },
  { name: "vmap of sort of int32", webgpu: true, run: ({ vmap, numpy: np }) => vmap((x: any) => np.sort(x))(np.array([[3, 1, 2], [0, 5, -1]], { dtype: np.int32 })) },
  { name: "vmap of sort of bool", run: ({ vmap, numpy: np }) => vmap((x: any) => np.sort(x))(np.array([[true, false, true], [false, false, true]])) },
  { name: "jit of sort of int32", run: ({ jit, numpy: np }) => jit((x: any) => np.sort(x))(np.array([3, 1, 2], { dtype: np.int32 })) },
  { name: "jit of floorDivide int32", run: ({ jit, numpy: np }) => jit((x: any, y: any) => np.floorDivide(x, y))(np.array([7, -7, 6], { dtype: np.int32 }), np.array([2, 2, -4], { dtype: np.int32 })) },
  { name: "vmap of floorDivide int32", run: ({ vmap, numpy: np }) => vmap((x: any, y: any) => np.floorDivide(x, y))(np.array([7, -7, 6], { dtype: np.int32 }), np.array([2, 2, -4], { dtype: np.int32 })) },
  { name: "jit of divmod int32", run: ({ jit, numpy: np }) => jit((x: any, y: any) => np.divmod(x, y))(np.array([7, -7, 6], { dtype: np.int32 }), np.array([2, 2, -4], { dtype: np.int32 })) },
  { name: "vmap of divmod int32", run: ({ vmap, numpy: np }) => vmap((x: any, y: any) => np.divmod(x, y))(np.array([7, -7, 6], { dtype: np.int32 }), np.array([2, 2, -4], { dtype: np.int32 })) },
  {
    name: "grad of a strided conv", webgpu: true, tol: loose,
    run: ({ grad, numpy: np, lax }) => {
      const w = np.linspace(-1, 1, 18).reshape([2, 1, 3, 3]);
      const g = grad((x: any) => np.sum(lax.conv(x, w.ref, [2, 2], "VALID")))(np.linspace(0, 1, 49).reshape([1, 1, 7, 7]));
      w.dispose();
      return g;
    },
  },
  {
    name: "grad of a strided conv wrt the kernel", tol: loose,
    run: ({ grad, numpy: np, lax }) => {
      const x = np.linspace(0, 1, 49).reshape([1, 1, 7, 7]);
      const g = grad((w: any) => np.sum(lax.conv(x.ref, w, [2, 2], "SAME")))(np.linspace(-1, 1, 18).reshape([2, 1, 3, 3]));
      x.dispose();
      return g;
    },
  },
];

/** Argument forms jax-js accepts. */
export const argumentCases: DiffCase[] = [
  { name: "trapezoid with sample points", webgpu: true, run: ({ numpy: np }) => np.trapezoid(np.array([1, 2, 4]), np.array([0, 1, 3])) },
  { name: "trapezoid with dx", run: ({ numpy: np }) => np.trapezoid(np.array([[1, 2, 4], [0, 1, 1]]), null, { dx: 0.5, axis: 0 }) },
  { name: "diagonal with offset", webgpu: true, run: ({ numpy: np }) => np.diagonal(np.arange(12).reshape([3, 4]), 1) },
  { name: "diagonal with negative offset", run: ({ numpy: np }) => np.diagonal(np.arange(12).reshape([3, 4]), -1) },
  { name: "diagonal over other axes", run: ({ numpy: np }) => np.diagonal(np.arange(24).reshape([2, 3, 4]), 0, 1, 2) },
  { name: "diagonal over axes 0, 2", run: ({ numpy: np }) => np.diagonal(np.arange(24).reshape([2, 3, 4]), 1, 0, 2) },
  { name: "diagIndices as an index", webgpu: true, run: ({ numpy: np }) => { const [i, j] = np.diagIndices(3); return np.arange(9).reshape([3, 3]).slice(i, j); } },
  { name: "reduceWindow with np.max", run: ({ numpy: np, lax }) => lax.reduceWindow(np.arange(16).astype(np.float32).reshape([4, 4]), np.max, [2, 2], [2, 2]) },
  { name: "reduceWindow with a lambda", webgpu: true, run: ({ numpy: np, lax }) => lax.reduceWindow(np.arange(16).astype(np.float32).reshape([4, 4]), (w: any) => np.sum(w), [2, 2], [1, 1]) },
  { name: "reduceWindow with a mean lambda", run: ({ numpy: np, lax }) => lax.reduceWindow(np.arange(16).astype(np.float32).reshape([4, 4]), (w: any) => np.mean(w), [2, 2], [2, 2]) },
  { name: "einsum sublist form", webgpu: true, run: ({ numpy: np }) => np.einsum(np.arange(6).reshape([2, 3]), [0, 1], np.arange(3), [1], [0]) },
  { name: "einsum sublist without output", run: ({ numpy: np }) => np.einsum(np.arange(6).reshape([2, 3]), [0, 1], np.arange(6).reshape([3, 2]), [1, 2]) },
  { name: "take with axis", run: ({ numpy: np }) => np.take(np.arange(12).reshape([3, 4]), np.array([2, 0], { dtype: np.int32 }), 1) },
  { name: "take flattened", run: ({ numpy: np }) => np.take(np.arange(12).reshape([3, 4]), np.array([11, 0], { dtype: np.int32 })) },
  { name: "take with a float index", run: ({ numpy: np }) => np.take(np.arange(4), np.array([1.5])) },
  { name: "takeAlongAxis", run: ({ numpy: np }) => np.takeAlongAxis(np.array([[3, 1], [2, 4]]), np.array([[1, 0], [0, 0]], { dtype: np.int32 }), 1) },
  { name: "takeAlongAxis rank mismatch", run: ({ numpy: np }) => np.takeAlongAxis(np.array([[3, 1], [2, 4]]), np.array([1, 0], { dtype: np.int32 }), 1) },
  { name: "cross of 2-vectors", webgpu: true, run: ({ numpy: np }) => np.cross(np.array([1, 2]), np.array([3, 4])) },
  { name: "cross of 2- and 3-vectors", run: ({ numpy: np }) => np.cross(np.array([1, 2]), np.array([3, 4, 5])) },
  { name: "diff with prepend", webgpu: true, run: ({ numpy: np }) => np.diff(np.array([1, 4, 9]), 1, -1, { prepend: 0 }) },
  { name: "diff with append array", run: ({ numpy: np }) => np.diff(np.array([[1, 4], [9, 16]]), 1, 0, { append: np.array([[0, 0]]) }) },
  { name: "diff of booleans", run: ({ numpy: np }) => np.diff(np.array([true, false, false, true])) },
  { name: "diff n=2", run: ({ numpy: np }) => np.diff(np.array([1, 4, 9, 16]), 2) },
  { name: "ediff1d with toBegin and toEnd", run: ({ numpy: np }) => np.ediff1d(np.array([[1, 2], [4, 7]]), { toBegin: np.array([-1, -2]), toEnd: 9 }) },
  { name: "indices sparse", run: ({ numpy: np }) => np.indices([2, 3], { sparse: true }) },
  { name: "indices dense", run: ({ numpy: np }) => np.indices([2, 3]) },
  { name: "geomspace to int32", webgpu: true, run: ({ numpy: np }) => np.geomspace(1, 1000, 4, true, { dtype: np.int32 }) },
  { name: "geomspace", tol: { rtol: 1e-5, atol: 1e-5 }, run: ({ numpy: np }) => np.geomspace(1, 1000, 4) },
  { name: "polyval batched x", run: ({ numpy: np }) => np.polyval(np.array([1, 2, 3]), np.array([[0, 1], [2, 3]])) },
  { name: "polyval batched coefficients", run: ({ numpy: np }) => np.polyval(np.array([[1, 2], [3, 4]]), np.array([2])) },
  { name: "polysub", run: ({ numpy: np }) => np.polysub(np.array([1, 2]), np.array([1, 2, 3])) },
  { name: "trapezoid of 2-d y with 1-d x", run: ({ numpy: np }) => np.trapezoid(np.array([[1, 2, 4], [1, 1, 1]]), np.array([0, 1, 3])) },
  { name: "trapezoid with x along axis 0", run: ({ numpy: np }) => np.trapezoid(np.array([[1, 2], [4, 1], [1, 1]]), np.array([0, 1, 3]), { axis: 0 }) },
  { name: "trapezoid of int32", run: ({ numpy: np }) => np.trapezoid(np.array([1, 2, 4], { dtype: np.int32 })) },
  { name: "diagonal with offset over axes 2, 1", run: ({ numpy: np }) => np.diagonal(np.arange(24).reshape([2, 3, 4]), -1, 2, 1) },
  { name: "index arrays beside a slice", run: ({ numpy: np }) => np.arange(24).reshape([2, 3, 4]).slice([], np.array([0, 2], { dtype: np.int32 }), np.array([1, 3], { dtype: np.int32 })) },
  { name: "index arrays apart", run: ({ numpy: np }) => np.arange(24).reshape([2, 3, 4]).slice(np.array([0, 1], { dtype: np.int32 }), [], np.array([1, 3], { dtype: np.int32 })) },
  { name: "a number and an index array apart", run: ({ numpy: np }) => np.arange(24).reshape([2, 3, 4]).slice(1, [], np.array([1, 3], { dtype: np.int32 })) },
  { name: "broadcast index arrays", run: ({ numpy: np }) => np.arange(12).reshape([3, 4]).slice(np.array([[0], [2]], { dtype: np.int32 }), np.array([1, 3], { dtype: np.int32 })) },
  {
    name: "negative index arrays", beyondJaxjs: "jax-js 0.1.25 rejects negative indices in index arrays (bufidx out of bounds); kiln wraps them as NumPy and JAX do",
    run: ({ numpy: np }) => np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]).slice(np.array([[0], [2]], { dtype: np.int32 }), np.array([1, -1], { dtype: np.int32 })),
    sameAs: ({ numpy: np }) => np.array([[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]).slice(np.array([[0], [2]], { dtype: np.int32 }), np.array([1, 3], { dtype: np.int32 })),
  },
  { name: "reduceWindow of the last axis only", run: ({ numpy: np, lax }) => lax.reduceWindow(np.arange(8).astype(np.float32).reshape([2, 4]), (w: any) => np.max(w), [2], [2]) },
  { name: "reduceWindow with a product lambda", run: ({ numpy: np, lax }) => lax.reduceWindow(np.linspace(1, 2, 6), (w: any) => np.prod(w), [3], [1]) },
  { name: "einsum sublist trace", run: ({ numpy: np }) => np.einsum(np.arange(9).reshape([3, 3]), [0, 0], []) },
  { name: "takeAlongAxis with float indices", run: ({ numpy: np }) => np.takeAlongAxis(np.array([[3, 1], [2, 4]]), np.array([[1], [0]]), 1) },
  { name: "cross of batched 2-vectors", run: ({ numpy: np }) => np.cross(np.array([[1, 2], [0, 1]]), np.array([3, 4])) },
  { name: "cross along axis 0", knownDifference: "kiln puts the result vectors along `axis` as NumPy and JAX do (shape [3, 2]); jax-js 0.1.25 returns shape [3]", run: ({ numpy: np }) => np.cross(np.array([[1, 2], [0, 1], [1, 1]]), np.array([[3, 4], [1, 1], [0, 2]]), 0) },
  { name: "diff of int32 with a float prepend", run: ({ numpy: np }) => np.diff(np.array([1, 4, 9], { dtype: np.int32 }), 1, -1, { prepend: 2.5 }) },
  { name: "diff n=0", run: ({ numpy: np }) => np.diff(np.array([1, 4, 9]), 0) },
  { name: "ediff1d of int32 with a float toBegin", run: ({ numpy: np }) => np.ediff1d(np.array([1, 2], { dtype: np.int32 }), { toBegin: 1.5 }) },
  { name: "indices sparse 3-d", run: ({ numpy: np }) => np.indices([2, 1, 3], { sparse: true }) },
  { name: "concatenate of 0-d", run: ({ numpy: np }) => np.concatenate([np.array(1), np.array(2)]) },
  { name: "stack of 0-d", run: ({ numpy: np }) => np.stack([np.array(1), np.array(2)]) },
  { name: "hstack of 0-d", run: ({ numpy: np }) => np.hstack([np.array(1), np.array(2)]) },
  { name: "vstack of 0-d", run: ({ numpy: np }) => np.vstack([np.array(1), np.array(2)]) },
  { name: "cumsum of 0-d", run: ({ numpy: np }) => np.cumsum(np.array(3)) },
  { name: "softmax over a zero-length axis", webgpu: true, run: ({ numpy: np, nn }) => nn.softmax(np.zeros([2, 0])) },
  { name: "logSoftmax over a zero-length axis", run: ({ numpy: np, nn }) => nn.logSoftmax(np.zeros([0, 3]), 0) },
  { name: "cumsum over a zero-length axis", run: ({ numpy: np }) => np.cumsum(np.zeros([0, 3]), 0) },
  { name: "sum of an empty array", run: ({ numpy: np }) => np.sum(np.zeros([0, 3]), 0) },
  { name: "max of an empty array", knownDifference: "kiln follows JAX: max over a zero-length axis has no identity and throws; jax-js 0.1.25 returns -Infinity", run: ({ numpy: np }) => np.max(np.zeros([0, 3]), 0) },
  { name: "softmax over no axes", run: ({ numpy: np, nn }) => nn.softmax(np.array([1, 2, 3]), []) },
  { name: "logSoftmax over no axes", run: ({ numpy: np, nn }) => nn.logSoftmax(np.array([1, 2, 3]), []) },
];

/** Numerics and dtype rules. */
export const numericCases: DiffCase[] = [
  { name: "power(0, negative)", run: ({ numpy: np }) => np.power(np.array([0, 0, 2]), np.array([-1, -2, -1])) },
  { name: "power(0, negative) int exponent", run: ({ numpy: np }) => np.power(np.array([0, 0, 2]), -1) },
  { name: "copysign with signed zeros", run: ({ numpy: np }) => np.copysign(np.array([1, 2, 3, 0]), np.array([-0, 0, -1, -0])) },
  { name: "modf of int32", run: ({ numpy: np }) => np.modf(np.array([3, -2], { dtype: np.int32 })) },
  { name: "modf of float32", run: ({ numpy: np }) => np.modf(np.array([3.5, -2.25])) },
  { name: "signbit of negative NaN float64", oracleNeeds: ["Float16Array"], run: ({ numpy: np }) => np.signbit(np.negative(np.array([NaN, 1], { dtype: np.float64 }))) },
  { name: "resultType of int32 and float32", run: ({ numpy: np }) => np.resultType(np.int32, np.float32) },
  { name: "resultType of a number and int32", webgpu: true, run: ({ numpy: np }) => np.resultType(1.5, np.int32) },
  { name: "resultType of an array and a number", run: ({ numpy: np }) => { const a = np.array([1, 2], { dtype: np.int32 }); const t = np.resultType(a, 2); a.dispose(); return t; } },
  { name: "resultType of nothing", run: ({ numpy: np }) => np.resultType() },
  { name: "resultType of a string", run: ({ numpy: np }) => np.resultType("int64" as any) },
  { name: "Array.div on int32", webgpu: true, run: ({ numpy: np }) => np.array([7, -7], { dtype: np.int32 }).div(2) },
  { name: "divide int32 arrays", run: ({ numpy: np }) => np.divide(np.array([7, -7], { dtype: np.int32 }), np.array([2, 2], { dtype: np.int32 })) },
  { name: "resultType of true", run: ({ numpy: np }) => np.resultType(true) },
  { name: "resultType of a weak array and int32", run: ({ numpy: np }) => { const a = np.array(2.5); const t = np.resultType(a, np.int32); a.dispose(); return t; } },
  { name: "resultType of int32 and uint32", run: ({ numpy: np }) => np.resultType(np.int32, np.uint32) },
  { name: "resultType of float16 and int32", run: ({ numpy: np }) => np.resultType(np.float16, np.int32) },
  { name: "Array.div of int32 arrays", run: ({ numpy: np }) => np.array([7, -7, 5], { dtype: np.int32 }).div(np.array([2, 2, -3], { dtype: np.int32 })) },
  { name: "Array.div of float32", run: ({ numpy: np }) => np.array([7, -7]).div(2) },
  {
    name: "grad of arctan2 where y is 0",
    knownDifference: "kiln's derivative of arctan2(y, x) at y = 0 is JAX's, x / (x^2 + y^2); jax-js 0.1.25 gives NaN",
    run: ({ numpy: np, grad }) => grad((y: any) => np.sum(np.arctan2(y, -0.4)))(np.array([0, 1])),
  },
  {
    name: "grad of prod with a zero",
    knownDifference: "kiln's derivative of prod where an element is 0 is JAX's (the product of the others); jax-js 0.1.25 gives NaN",
    run: ({ numpy: np, grad }) => grad((x: any) => np.prod(x))(np.array([0, 2, 3])),
  },
  {
    name: "floor after a float32 subtraction",
    knownDifference: "kiln rounds each float32 operation as JAX does (0.35f - 1.35f is -1); jax-js 0.1.25's cpu device keeps intermediates as JS doubles inside a kernel (-1.0000000059...) so floor gives -2",
    run: ({ numpy: np, jit }) => jit((x: any) => np.floor(np.subtract(x, 1.35)))(np.array([0.35])),
  },
  { name: "sign of NaN", run: ({ numpy: np }) => np.sign(np.array([NaN, -2, 0, 3])) },
];

/** Transformations over PRNG keys and errors on bad input. */
export const miscCases: DiffCase[] = [
  { name: "vmap of random.uniform over split keys", run: ({ vmap, random }) => vmap((k: any) => random.uniform(k, [2]))(random.split(random.key(0), 3)) },
  { name: "vmap of random.normal over split keys", knownDifference: NORMAL, run: ({ vmap, random }) => vmap((k: any) => random.normal(k, [2]))(random.split(random.key(1), 3)) },
  { name: "reshape to a wrong size throws", run: ({ numpy: np }) => np.reshape(np.zeros([2, 3]), [4]) },
  {
    name: "add of mismatched shapes throws",
    run: ({ numpy: np }) => np.add(np.zeros([2, 3]), np.zeros([4])),
  },
  { name: "a disposed array throws", run: ({ numpy: np }) => { const x = np.zeros([2]); x.dispose(); return np.add(x, 1); } },
  { name: "matmul of mismatched shapes throws", run: ({ numpy: np }) => np.matmul(np.zeros([2, 3]), np.zeros([2, 3])) },
];
