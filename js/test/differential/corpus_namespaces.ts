// Differential programs for numpy.linalg, numpy.fft, lax, tree, scipySpecial, random and the
// top-level transformations: one or two plain calls of each, as jax-js's docs show them.
import type { DiffCase, Lib } from "./harness.js";

const loose = { rtol: 1e-4, atol: 1e-5 };
const spd = (np: Lib) => np.array([[4, 1, 0.5], [1, 3, 0.25], [0.5, 0.25, 2]]);
const rect = (np: Lib) => np.array([[1, 2, 0.5], [-1, 0.25, 3]]);
const vec = (np: Lib) => np.array([0.5, -1, 2, 0.25]);
// Transformations of f(x) = sum(sin(x) * x).
const f = (np: Lib) => (x: any) => np.sum(np.multiply(np.sin(x.ref), x));

const linalgNotes: Record<string, Partial<DiffCase>> = {
  slogdet: { knownDifference: "kiln's slogdet sign has the input's float dtype, as JAX's; jax-js 0.1.25 returns an int32 sign" },
  lstsq: { beyondJaxjs: "jax-js 0.1.25's lstsq needs a 2-d b; kiln takes a 1-d b as NumPy and JAX do" },
};
const linalg: DiffCase[] = [
  ["cholesky", (np: Lib) => np.linalg.cholesky(spd(np))],
  ["det", (np: Lib) => np.linalg.det(spd(np))],
  ["inv", (np: Lib) => np.linalg.inv(spd(np))],
  ["solve", (np: Lib) => np.linalg.solve(spd(np), np.array([[1], [2], [3]]))],
  ["slogdet", (np: Lib) => np.linalg.slogdet(spd(np))],
  ["eigvalsh", (np: Lib) => np.linalg.eigvalsh(spd(np))],
  ["svdvals", (np: Lib) => np.linalg.svdvals(rect(np))],
  ["norm", (np: Lib) => np.linalg.norm(rect(np))],
  ["vectorNorm", (np: Lib) => np.linalg.vectorNorm(vec(np), { ord: 1 })],
  ["outer", (np: Lib) => np.linalg.outer(vec(np), np.array([1, 2]))],
  ["matmul", (np: Lib) => np.linalg.matmul(rect(np), spd(np))],
  ["tensordot", (np: Lib) => np.linalg.tensordot(rect(np), spd(np), 1)],
  ["trace", (np: Lib) => np.linalg.trace(spd(np))],
  ["vecdot", (np: Lib) => np.linalg.vecdot(rect(np), rect(np))],
  ["matrixPower", (np: Lib) => np.linalg.matrixPower(spd(np), 3)],
  ["matrixTranspose", (np: Lib) => np.linalg.matrixTranspose(rect(np))],
  ["multiDot", (np: Lib) => np.linalg.multiDot([rect(np), spd(np), np.array([1, 0, 2])])],
  ["lstsq", (np: Lib) => np.linalg.lstsq(np.array([[1, 0], [1, 1], [1, 2]]), np.array([1, 2, 2]))],
  ["diagonal", (np: Lib) => np.linalg.diagonal(spd(np))],
  ["cross", (np: Lib) => np.linalg.cross(np.array([1, 2, 3]), np.array([0, 1, -1]))],
].map(([name, run]) => ({ name: `numpy.linalg.${name}`, tol: loose, run: ({ numpy }: Lib) => (run as (np: Lib) => unknown)(numpy), ...linalgNotes[name as string] }));

const fft: DiffCase[] = [
  ["fftfreq", (np: Lib) => np.fft.fftfreq(6, 0.5)],
  ["rfftfreq", (np: Lib) => np.fft.rfftfreq(6)],
  ["fftshift", (np: Lib) => np.fft.fftshift(np.array([0, 1, 2, 3, 4]))],
  ["ifftshift", (np: Lib) => np.fft.ifftshift(np.array([0, 1, 2, 3, 4]))],
  ["rfft", (np: Lib) => np.fft.rfft(vec(np))],
  ["fft", (np: Lib) => np.fft.fft({ real: vec(np), imag: np.zeros([4]) })],
  ["ifft", (np: Lib) => np.fft.ifft({ real: vec(np), imag: np.array([1, 0, 0, 0]) })],
  ["irfft", (np: Lib) => np.fft.irfft({ real: np.array([1, 2, 3]), imag: np.array([0, 1, 0]) })],
].map(([name, run]) => ({ name: `numpy.fft.${name}`, tol: loose, run: ({ numpy }: Lib) => (run as (np: Lib) => unknown)(numpy) }));

const lax: DiffCase[] = [
  { name: "lax.dot", knownDifference: "kiln's lax.dot without dimension numbers is JAX's (contract lhs's last axis with rhs's first); jax-js 0.1.25's contracts nothing (an outer product)", run: ({ numpy: np, lax }) => lax.dot(rect(np), spd(np)) },
  { name: "lax.erf", tol: loose, run: ({ numpy: np, lax }) => lax.erf(vec(np)) },
  { name: "lax.erfc", tol: loose, run: ({ numpy: np, lax }) => lax.erfc(vec(np)) },
  { name: "grad through lax.stopGradient", run: ({ numpy: np, lax, grad }) => grad((x: any) => np.sum(np.multiply(lax.stopGradient(x.ref), x)))(vec(np)) },
  { name: "lax.topK", run: ({ numpy: np, lax }) => lax.topK(vec(np), 2) },
  { name: "lax.bitcastConvertType", run: ({ numpy: np, lax }) => lax.bitcastConvertType(np.array([1, -2]), np.int32) },
  { name: "lax.convGeneralDilated", tol: loose, run: ({ numpy: np, lax }) => lax.convGeneralDilated(np.linspace(0, 1, 25).reshape([1, 1, 5, 5]), np.linspace(-1, 1, 9).reshape([1, 1, 3, 3]), [1, 1], "SAME", { rhsDilation: [1, 1] }) },
  { name: "lax.convWithGeneralPadding", tol: loose, run: ({ numpy: np, lax }) => lax.convWithGeneralPadding(np.linspace(0, 1, 25).reshape([1, 1, 5, 5]), np.linspace(-1, 1, 9).reshape([1, 1, 3, 3]), [2, 2], [[1, 1], [0, 1]]) },
  { name: "lax.convTranspose", tol: loose, run: ({ numpy: np, lax }) => lax.convTranspose(np.linspace(0, 1, 8).reshape([1, 2, 4]), np.linspace(-1, 1, 12).reshape([3, 2, 2]), [2], "SAME") },
  { name: "lax.linalg.cholesky", tol: loose, run: ({ numpy: np, lax }) => lax.linalg.cholesky(spd(np)) },
  { name: "lax.linalg.triangularSolve", tol: loose, run: ({ numpy: np, lax }) => lax.linalg.triangularSolve(np.array([[2, 0], [1, 4]]), np.array([[2], [6]]), { leftSide: true, lower: true }) },
  { name: "lax.linalg.eigh eigenvalues", tol: loose, run: ({ numpy: np, lax }) => { const [v, w] = lax.linalg.eigh(spd(np)); v.dispose(); return w; } },
];

const tree: DiffCase[] = [
  { name: "tree.leaves", run: ({ numpy: np, tree }) => tree.leaves({ a: np.array([1]), b: [np.array([2]), 3] }) },
  { name: "tree.map", run: ({ numpy: np, tree }) => tree.map((x: any) => np.multiply(x, 2), { a: np.array([1, 2]), b: [np.array([3])] }) },
  { name: "tree.flatten and unflatten", run: ({ numpy: np, tree }) => { const [leaves, def] = tree.flatten({ a: np.array([1]), b: [np.array([2])] }); return tree.unflatten(def, leaves.reverse()); } },
  { name: "tree.structure and dispose", run: ({ numpy: np, tree }) => { const t = { a: np.array([1]), b: [np.array([2])] }; const n = tree.structure(t).numLeaves; tree.dispose(t); return n; } },
  { name: "tree.ref", run: ({ numpy: np, tree }) => { const t = [np.array([1]), np.array([2])]; const r = tree.ref(t); tree.dispose(t); return r; } },
];

const scipy: DiffCase[] = ["erf", "erfc", "logit", "softmax", "logSoftmax", "logsumexp"].map((name) => ({
  name: `scipySpecial.${name}`,
  tol: loose,
  run: ({ numpy: np, scipySpecial }: Lib) => scipySpecial[name](np.array([0.1, 0.4, 0.75])),
}));

const transforms: DiffCase[] = [
  { name: "valueAndGrad", tol: loose, run: ({ numpy: np, valueAndGrad }) => valueAndGrad(f(np))(vec(np)) },
  { name: "hessian", tol: loose, run: ({ numpy: np, hessian }) => hessian(f(np))(np.array([0.5, -1])) },
  { name: "jacfwd", tol: loose, run: ({ numpy: np, jacfwd }) => jacfwd((x: any) => np.sin(x))(np.array([0.5, -1])) },
  { name: "jacrev", tol: loose, run: ({ numpy: np, jacrev }) => jacrev((x: any) => np.sin(x))(np.array([0.5, -1])) },
  { name: "jacobian", tol: loose, run: ({ numpy: np, jacobian }) => jacobian((x: any) => np.cumsum(x))(np.array([0.5, -1, 2])) },
  { name: "vjp", tol: loose, run: ({ numpy: np, vjp }) => { const [y, back] = vjp((x: any) => np.sin(x), [vec(np)]); const g = back(np.ones([4])); back.dispose?.(); return [y, g]; } },
  { name: "linearize", tol: loose, run: ({ numpy: np, linearize }) => { const [y, lin] = linearize((x: any) => np.sin(x), [vec(np)]); const t = lin(np.ones([4])); lin.dispose?.(); return [y, t]; } },
  { name: "vmap with inAxes", run: ({ numpy: np, vmap }) => vmap((a: any, b: any) => np.add(a, b), [0, null])(rect(np), np.array([1, 2, 3])) },
  { name: "jit with a static argument", run: ({ numpy: np, jit }) => jit((x: any, n: number) => np.multiply(x, n), { staticArgnums: [1] })(vec(np), 3) },
];

export const namespaceCases: DiffCase[] = [...linalg, ...fft, ...lax, ...tree, ...scipy, ...transforms];
