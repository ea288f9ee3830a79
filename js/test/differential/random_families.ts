// More families of randomized differential programs (issue 22), beside the elementwise
// chains of random_programs.ts: indexing (take, takeAlongAxis, slice with numbers, ranges,
// new axes and an index Array, where), linear algebra (matmul/dot/einsum/tensordot/inner/
// outer shapes, solve/inv/cholesky/det on well-conditioned matrices built from the input,
// vector and matrix norms) and dtypes (int32, uint32, float16, float64 arithmetic and casts),
// under no transformation, jit, vmap, grad, jvp, vjp, jit of grad and vmap of jit.
//
// Each family draws a program from the seed and returns a function of the input that a
// jax-js user could write (every Array consumed once; `.ref` where it is used twice). The
// transformed input is the first argument; other operands are built inside the function.
import type { DiffCase, Lib, Tolerance } from "./harness.js";
import { randomCase, rng } from "./random_programs.js";

const TRANSFORMS = ["none", "jit", "vmap", "grad", "jvp", "vjp", "jitgrad", "vmapjit"] as const;
type Transform = (typeof TRANSFORMS)[number];
const DIFFERENTIATES = new Set<Transform>(["grad", "jvp", "vjp", "jitgrad"]);
const MAPS = new Set<Transform>(["vmap", "vmapjit"]);

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: R, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);
/** Values in [-1, 1] on a grid of 2^-10: exact in float16 and float32, ties unlikely. */
const smooth = (r: R, n: number) => Array.from({ length: n }, () => Math.round((r() * 2 - 1) * 1024) / 1024);
const ints = (r: R, n: number, lo: number, hi: number) => Array.from({ length: n }, () => int(r, lo, hi));

/** A generated program: what the transformed function does to its input, spelled out. */
interface Family {
  text: string;
  dtype: string;
  /** The input's shape as the function sees it (vmap adds a leading axis). */
  shape: number[];
  values: number[];
  tol: Tolerance;
  f: (np: Lib, x: any) => any;
  /**
   * Under which transformations jax-js 0.1.25 throws where kiln computes (the reason): the
   * case then checks that jax-js still throws and that kiln's result equals the same
   * program without `jit` (docs/COMPATIBILITY.md, Where kiln goes beyond jax-js).
   */
  beyondUnderJit?: { transforms: Transform[]; reason: string };
}

function arr(np: Lib, values: number[], shape: number[], dtype = "float32"): any {
  return np.reshape(np.array(values, { dtype: np[dtype] }), shape);
}

// ---- indexing ----------------------------------------------------------------------------

type SliceArg = number | [] | [number] | [number, number] | null | { index: number[]; shape: number[] };

function sliceArgs(r: R, shape: number[], nonEmpty: boolean): { args: SliceArg[]; text: string } {
  const args: SliceArg[] = [];
  let usedArray = false;
  const n = int(r, 0, shape.length);
  for (let i = 0; i < n; i++) {
    if (r() < 0.15) args.push(null);
    const d = shape[i];
    const u = r();
    if (u < 0.25) args.push(int(r, -d, d - 1));
    else if (u < 0.45) args.push([]);
    else if (u < 0.6) args.push([int(r, -d, nonEmpty ? d - 1 : d)]);
    else if (u < 0.85 || usedArray) {
      // jax-js 0.1.25's jit of grad through an empty range gives ones, even with an op after.
      const a = int(r, 0, nonEmpty ? d - 1 : d);
      args.push([a, int(r, nonEmpty ? a + 1 : a, d)]);
    } else {
      usedArray = true;
      const ishape = [int(r, 1, 3)];
      args.push({ index: ints(r, ishape[0], 0, d - 1), shape: ishape });
    }
  }
  const text = args.map((a) => (a === null ? "null" : typeof a === "number" ? `${a}` : "index" in a ? `idx[${a.index}]` : `[${a}]`)).join(", ");
  return { args, text };
}

function indexing(r: R, shape: number[], float: boolean, transform: Transform): Omit<Family, "shape" | "values" | "dtype"> {
  const u = r();
  const idx = (np: Lib, v: number[], s: number[]) => arr(np, v, s, "int32");
  let text: string;
  let f: (np: Lib, x: any) => any;
  if (u < 0.3) {
    const axis = r() < 0.3 ? null : int(r, 0, shape.length - 1);
    const n = axis === null ? prod(shape) : shape[axis];
    const ishape = Array.from({ length: int(r, 0, 2) }, () => int(r, 1, 3));
    const iv = ints(r, prod(ishape), 0, n - 1);
    text = `take([${iv}] as [${ishape}], axis ${axis})`;
    f = (np, x) => np.take(x, idx(np, iv, ishape), axis);

  } else if (u < 0.5) {
    const axis = int(r, 0, shape.length - 1);
    const ishape = shape.map((d, i) => (i === axis ? int(r, 1, 3) : d));
    const iv = ints(r, prod(ishape), 0, shape[axis] - 1);
    text = `takeAlongAxis([${iv}] as [${ishape}], axis ${axis})`;
    f = (np, x) => np.takeAlongAxis(x, idx(np, iv, ishape), axis);

  } else if (u < 0.8) {
    const { args, text: t } = sliceArgs(r, shape, transform === "jitgrad");
    text = `slice(${t})`;
    f = (np, x) => x.slice(...args.map((a) => (a !== null && typeof a === "object" && "index" in a ? idx(np, a.index, a.shape) : a)));
  } else {
    const c = pick(r, [-0.25, 0, 0.5]);
    const negated = r() < 0.5;
    text = `where(x > ${c}, x, ${negated ? "-x" : "0.5"})`;
    f = (np, x) => (negated ? np.where(np.greater(x.ref, c), x.ref, np.negative(x)) : np.where(np.greater(x.ref, c), x, 0.5));
  }
  // Under jit of grad an elementwise op follows the indexing: jax-js 0.1.25's jit of grad of
  // sum(take(x)) throws and of sum(x.slice(...)) gives ones (docs/COMPATIBILITY.md).
  if (float && (transform === "jitgrad" || r() < 0.5)) {
    const g = f;
    text += " sin";
    f = (np, x) => np.sin(g(np, x));
  }
  return { text, f, tol: { rtol: 1e-5, atol: 1e-6 } };
}

// ---- linear algebra ----------------------------------------------------------------------

const PRODUCTS: { name: string; shapes: (n: number, m: number, k: number, b: number) => [number[], number[]]; f: (np: Lib, a: any, b: any) => any }[] = [
  { name: "matmul vv", shapes: (n) => [[n], [n]], f: (np, a, b) => np.matmul(a, b) },
  { name: "matmul mv", shapes: (n, m) => [[m, n], [n]], f: (np, a, b) => np.matmul(a, b) },
  { name: "matmul vm", shapes: (n, m, k) => [[n], [n, k]], f: (np, a, b) => np.matmul(a, b) },
  { name: "matmul mm", shapes: (n, m, k) => [[m, n], [n, k]], f: (np, a, b) => np.matmul(a, b) },
  { name: "matmul batched", shapes: (n, m, k, b) => [[b, m, n], [b, n, k]], f: (np, a, b) => np.matmul(a, b) },
  { name: "matmul broadcast", shapes: (n, m, k, b) => [[b, m, n], [n, k]], f: (np, a, b) => np.matmul(a, b) },
  { name: "matmul broadcast 1", shapes: (n, m, k, b) => [[1, m, n], [b, n, k]], f: (np, a, b) => np.matmul(a, b) },
  { name: "dot mm", shapes: (n, m, k) => [[m, n], [n, k]], f: (np, a, b) => np.dot(a, b) },
  { name: "dot vv", shapes: (n) => [[n], [n]], f: (np, a, b) => np.dot(a, b) },
  { name: "einsum ij,jk->ik", shapes: (n, m, k) => [[m, n], [n, k]], f: (np, a, b) => np.einsum("ij,jk->ik", a, b) },
  { name: "einsum bij,bjk->bik", shapes: (n, m, k, b) => [[b, m, n], [b, n, k]], f: (np, a, b) => np.einsum("bij,bjk->bik", a, b) },
  { name: "einsum ij,kj->ki", shapes: (n, m, k) => [[m, n], [k, n]], f: (np, a, b) => np.einsum("ij,kj->ki", a, b) },
  { name: "einsum ij,j->i", shapes: (n, m) => [[m, n], [n]], f: (np, a, b) => np.einsum("ij,j->i", a, b) },
  { name: "einsum ij,ij->", shapes: (n, m) => [[m, n], [m, n]], f: (np, a, b) => np.einsum("ij,ij->", a, b) },
  { name: "tensordot axes 1", shapes: (n, m, k) => [[m, n], [n, k]], f: (np, a, b) => np.tensordot(a, b, 1) },
  { name: "inner", shapes: (n, m, k) => [[m, n], [k, n]], f: (np, a, b) => np.inner(a, b) },
  { name: "outer", shapes: (n, m) => [[n], [m]], f: (np, a, b) => np.outer(a, b) },
];

// jax-js 0.1.25's jit cannot hold triangular_solve (solve, inv, and the gradients of det and cholesky).
const TRIANGULAR = "jax-js 0.1.25's jit throws on triangular_solve (routine input is not imm)";

function linalg(r: R, n: number, mapped: boolean): Pick<Family, "shape" | "text" | "f" | "beyondUnderJit"> {
  const u = r();
  const eye = (np: Lib) => np.multiply(np.eye(n), n + 1);
  if (u < 0.45) {
    const p = pick(r, PRODUCTS);
    const [sa, sb] = p.shapes(n, int(r, 1, 3), int(r, 1, 3), int(r, 1, 3));
    const bv = smooth(r, prod(sb));
    return { shape: sa, text: `${p.name} [${sa}] x [${sb}]`, f: (np, x) => p.f(np, x, arr(np, bv, sb)) };
  }
  // Square matrices from the input x: x + (n+1)I is strictly diagonally dominant (entries of
  // x in [-1, 1]), x x^T + nI is positive definite; both well conditioned.
  const batch = !mapped && r() < 0.25 ? [int(r, 1, 2)] : [];
  const shape = [...batch, n, n];
  const dominant = (np: Lib, x: any) => np.add(x, eye(np));
  const spd = (np: Lib, x: any) => np.add(np.matmul(x.ref, np.matrixTranspose(x)), np.multiply(np.eye(n), n));
  const ops: [string, (np: Lib, x: any) => any][] = [
    ["solve", (np, x) => np.linalg.solve(dominant(np, x), arr(np, bv, [...batch, n, 1]))],
    ["inv", (np, x) => np.linalg.inv(dominant(np, x))],
    ["det", (np, x) => np.linalg.det(dominant(np, x))],
    ["cholesky", (np, x) => np.linalg.cholesky(spd(np, x))],
    ["norm fro", (np, x) => np.linalg.norm(x, { ord: "fro", axis: [-2, -1] })],
    ["matrixNorm 1", (np, x) => np.linalg.matrixNorm(x, { ord: 1 })],
    ["vectorNorm 2", (np, x) => np.linalg.vectorNorm(x, { ord: 2, axis: -1, keepdims: true })],
    ["vectorNorm 1", (np, x) => np.linalg.vectorNorm(x, { ord: 1, axis: -1 })],
    ["norm", (np, x) => np.linalg.norm(x)],
  ];
  const bv = smooth(r, prod([...batch, n, 1]));
  const [name, f] = pick(r, ops);
  const underJit: Record<string, Transform[]> = { solve: ["jit", "vmapjit", "jitgrad"], inv: ["jit", "vmapjit", "jitgrad"], det: ["jitgrad"], cholesky: ["jitgrad"] };
  return { shape, text: name, f, beyondUnderJit: name in underJit ? { transforms: underJit[name], reason: TRIANGULAR } : undefined };
}

// ---- dtypes ------------------------------------------------------------------------------

// The float chains (float16 adds tanh after square).
const FLOAT_OPS: [string, (np: Lib, x: any) => any][] = [
  ["sin", (np, x) => np.sin(x)],
  ["exp", (np, x) => np.exp(x)],
  ["multiply 3", (np, x) => np.multiply(x, 3)],
  ["add x", (np, x) => np.add(x.ref, x)],
  ["square", (np, x) => np.square(x)],
  ["sum", (np, x) => np.sum(x, -1)],
  ["to float32", (np, x) => np.astype(x, np.float32)],
];
// Per dtype: values the generator draws and the ops it chains (each keeps the dtype).
const DTYPE_OPS: Record<string, { values: (r: R, n: number) => number[]; ops: [string, (np: Lib, x: any) => any][] }> = {
  int32: {
    values: (r, n) => ints(r, n, -20, 20),
    ops: [
      ["add 7", (np, x) => np.add(x, 7)],
      ["multiply -3", (np, x) => np.multiply(x, -3)],
      // floorDivide and leftShift by int32 Arrays: jax-js 0.1.25 refuses a JS number there
      // (and its jit truncates floorDivide by one): docs/COMPATIBILITY.md.
      ["floorDivide 3", (np, x) => np.floorDivide(x, np.array(3, { dtype: np.int32 }))],
      ["remainder 4", (np, x) => np.remainder(x, 4)],
      ["abs", (np, x) => np.abs(x)],
      // No rightShift: jax-js 0.1.25 shifts int32 right logically (docs/COMPATIBILITY.md).
      ["leftShift 2", (np, x) => np.leftShift(x, np.array(2, { dtype: np.int32 }))],
      ["bitwiseXor 5", (np, x) => np.bitwiseXor(x, 5)],
      ["cumsum", (np, x) => np.cumsum(x, -1)],
      ["sum", (np, x) => np.sum(x, -1)],
      ["max", (np, x) => np.max(x, -1)],
      ["to float32 and back", (np, x) => np.astype(np.multiply(np.astype(x, np.float32), 0.5), np.int32)],
      ["clip", (np, x) => np.clip(x, -5, 5)],
    ],
  },
  uint32: {
    values: (r, n) => ints(r, n, 0, 40),
    ops: [
      ["add 7", (np, x) => np.add(x, 7)],
      ["multiply 3", (np, x) => np.multiply(x, 3)],
      // No subtraction: jax-js 0.1.25 subtracts a JS number from uint32 wrongly ([1, 2, 3] - 2
      // is [1, 2, 3]); divisors and shifts are uint32 Arrays (docs/COMPATIBILITY.md).
      ["floorDivide 3", (np, x) => np.floorDivide(x, np.array(3, { dtype: np.uint32 }))],
      ["remainder 4", (np, x) => np.remainder(x, 4)],
      ["rightShift 1", (np, x) => np.rightShift(x, np.array(1, { dtype: np.uint32 }))],
      ["bitwiseAnd 12", (np, x) => np.bitwiseAnd(x, 12)],
      ["maximum 9", (np, x) => np.maximum(x, 9)],
      ["sum", (np, x) => np.sum(x, -1)],
      ["to int32", (np, x) => np.astype(x, np.int32)],
    ],
  },
  float16: { values: (r, n) => smooth(r, n), ops: [...FLOAT_OPS.slice(0, 5), ["tanh", (np, x) => np.tanh(x)], ...FLOAT_OPS.slice(5)] },
  float64: { values: (r, n) => smooth(r, n), ops: FLOAT_OPS },
};
// Where the result is compared: float16 keeps 11 bits (a few operations: rtol 1e-2);
// float64 as jax-js computes it, in JS doubles (1e-12).
const DTYPE_TOL: Record<string, Tolerance> = { int32: { rtol: 0, atol: 0 }, uint32: { rtol: 0, atol: 0 }, float16: { rtol: 1e-2, atol: 1e-3 }, float64: { rtol: 1e-12, atol: 1e-14 } };

export const FAMILIES = ["indexing", "linalg", "dtype"] as const;
export type FamilyName = (typeof FAMILIES)[number];

function draw(family: FamilyName, r: R, transform: Transform): Family {
  const mapped = MAPS.has(transform);
  const differentiates = DIFFERENTIATES.has(transform);
  if (family === "indexing") {
    const shape = Array.from({ length: int(r, 1, 3) }, () => int(r, 1, 4));
    const dtype = differentiates || transform === "vmapjit" || r() < 0.7 ? "float32" : "int32";
    const p = indexing(r, shape, dtype === "float32", transform);
    return { ...p, dtype, shape, values: dtype === "float32" ? smooth(r, prod(shape)) : ints(r, prod(shape), -9, 9) };
  }
  if (family === "linalg") {
    const p = linalg(r, int(r, 1, 4), mapped);
    // No exact zeros: jax-js 0.1.25's derivative of vectorNorm is NaN there (docs/COMPATIBILITY.md).
    const values = smooth(r, prod(p.shape)).map((v) => v || 2 ** -11);
    return { ...p, dtype: "float32", values, tol: { rtol: 1e-3, atol: 1e-4 } };
  }
  // vmap of jit takes floats only: jax-js 0.1.25 computes int32 there as float32, and its
  // gradients and vmap of jit of float16 come back float32 (docs/COMPATIBILITY.md).
  const dtype = differentiates || transform === "vmapjit" ? "float64" : pick(r, ["int32", "uint32", "float16", "float64"]);
  const shape = Array.from({ length: int(r, 1, 2) }, () => int(r, 1, 4));
  // No casts under differentiation: jax-js 0.1.25 has no backward pass for them.
  // No tanh of float16 under vmap: jax-js 0.1.25 returns float32 there.
  const allowed = DTYPE_OPS[dtype].ops.filter(([name]) => !(differentiates && name.startsWith("to ")) && !(transform === "vmap" && dtype === "float16" && name === "tanh"));
  const ops = Array.from({ length: int(r, 1, 3) }, () => pick(r, allowed));
  // Reductions and casts end the chain (the next op would meet another shape or dtype).
  const end = ops.findIndex(([name]) => name === "sum" || name === "max" || name.startsWith("to "));
  const chain = end === -1 ? ops : ops.slice(0, end + 1);
  return {
    dtype,
    shape,
    values: DTYPE_OPS[dtype].values(r, prod(shape)),
    text: chain.map(([name]) => name).join(", "),
    tol: DTYPE_TOL[dtype],
    f: (np, x) => chain.reduce((y, [, op]) => op(np, y), x),
  };
}

/** The program of `seed` in `family`, as a DiffCase whose name spells it out. */
export function familyCase(family: FamilyName, seed: number): DiffCase {
  const r = rng(seed);
  const transform = pick(r, TRANSFORMS);
  const p = draw(family, r, transform);
  const batch = MAPS.has(transform) ? [int(r, 1, 3)] : [];
  const inShape = [...batch, ...p.shape];
  const values = [...p.values, ...p.dtype.startsWith("float") ? smooth(r, prod(inShape) - p.values.length) : ints(r, prod(inShape) - p.values.length, 0, 9)];
  const needs = p.dtype === "float16" || p.dtype === "float64" ? ["Float16Array"] : [];
  const run = (t: Transform) => ({ numpy: np, jit, vmap, grad, jvp, vjp }: Lib) => {
    const f = (x: any) => p.f(np, x);
    const x = arr(np, values, inShape, p.dtype);
    const sumOf = (y: any) => np.sum(f(y));
    if (t === "jit") return jit(f)(x);
    if (t === "vmap") return vmap(f)(x);
    if (t === "vmapjit") return vmap(jit(f))(x);
    if (t === "grad") return grad(sumOf)(x);
    if (t === "jitgrad") return jit(grad(sumOf))(x);
    if (t === "jvp") return jvp(f, [x], [np.onesLike(x.ref)]);
    if (t === "vjp") {
      const [y, back] = vjp(f, [x]);
      const g = back(np.onesLike(y.ref));
      back.dispose?.();
      return [y, g];
    }
    return f(x);
  };
  const beyond = p.beyondUnderJit?.transforms.includes(transform) ? p.beyondUnderJit.reason : undefined;
  const withoutJit: Record<string, Transform> = { jit: "none", vmapjit: "vmap", jitgrad: "grad" };
  return {
    name: `seed ${seed}: ${family} ${transform} ${p.dtype}[${inShape}] ${p.text}`,
    tol: p.tol,
    oracleNeeds: needs,
    run: run(transform),
    ...(beyond === undefined ? {} : { beyondJaxjs: beyond, sameAs: run(withoutJit[transform]) }),
  };
}

/**
 * The program of `seed`: an elementwise chain (random_programs.ts) for about half the seeds,
 * else one of the families above, chosen by a second generator so that a seed's elementwise
 * program stays the one it was before the families existed.
 */
export function mixedCase(seed: number): DiffCase {
  const u = rng(seed ^ 0x5bd1e995)();
  if (u < 0.5) return randomCase(seed);
  return familyCase(u < 0.7 ? "indexing" : u < 0.85 ? "linalg" : "dtype", seed);
}
