// Randomized differential programs (issue 22): from a seed, a random input (rank 0-3, sizes
// 0-3 so zero-size and 0-d arrays occur, float32/int32/bool), a short chain of elementwise
// ops (numbers and broadcast operands included) and shape ops (transpose, flip, ravel,
// expandDims, cumsum, sort), maybe a reduction, under no transformation, jit, vmap, grad,
// jvp, vmap of jit or jit of grad. Each becomes a DiffCase whose name spells the program out.
import type { DiffCase, Lib } from "./harness.js";

/** mulberry32: a small seeded generator, so a seed names the same programs everywhere. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type DT = "float32" | "int32" | "bool";
type Step =
  | { kind: "unary"; op: string }
  | { kind: "binary"; op: string; other: "number" | number[]; otherValues: number[] }
  | { kind: "shape"; op: string; axis: number }
  | { kind: "reduce"; op: string; axis: number | null; keepdims: boolean };
const TRANSFORMS = ["none", "jit", "vmap", "grad", "jvp", "vmapjit", "jitgrad"] as const;
type Transform = (typeof TRANSFORMS)[number];
type Program = { dtype: DT; shape: number[]; values: number[]; steps: Step[]; transform: Transform };
// Transformations that differentiate (float32 inputs, smooth ops only) and that map the first axis.
const DIFFERENTIATES = new Set<Transform>(["grad", "jvp", "jitgrad"]);
const MAPS = new Set<Transform>(["vmap", "vmapjit"]);

// Ops defined on every value the generator makes, where jax-js 0.1.25 and kiln agree by
// design (docs/COMPATIBILITY.md lists what is left out and why: logical ops with numbers,
// int32 power and sign, max/min over zero-length axes).
const UNARY: Record<DT, string[]> = {
  float32: ["sin", "cos", "tanh", "negative", "square", "abs", "arctan", "floor", "ceil", "sinh", "exp"],
  int32: ["negative", "square", "abs", "invert"],
  bool: ["logicalNot"],
};
const BINARY: Record<DT, string[]> = {
  float32: ["add", "subtract", "multiply", "divide", "maximum", "minimum", "arctan2", "hypot"],
  int32: ["add", "subtract", "multiply", "maximum", "minimum", "bitwiseAnd", "bitwiseOr", "bitwiseXor"],
  bool: ["logicalAnd", "logicalOr", "logicalXor", "equal", "notEqual"],
};
// Shape ops and the shape each leaves (axis: a random axis of the current shape, for cumsum
// and sort). cumsum and sort are not taken for bool (cumsum changes the dtype, jax-js sorts
// no bool); sort is not differentiated (ties among the generator's values).
const SHAPE_OPS: Record<string, (shape: number[], axis: number) => number[]> = {
  transpose: (s) => [...s].reverse(),
  flip: (s) => s,
  ravel: (s) => [s.reduce((a, b) => a * b, 1)],
  expandDims: (s) => [1, ...s],
  cumsum: (s) => s,
  sort: (s) => s,
};
const NEEDS_AXIS = new Set(["cumsum", "sort"]);
const REDUCE: Record<DT, string[]> = { float32: ["sum", "max", "min", "prod"], int32: ["sum", "max", "min"], bool: ["any", "all"] };
// Differentiable everywhere on the generator's floats (k/4 + 0.1: never 0, no ties). Not
// arctan2 and prod: where an operand is 0 (x - x) jax-js's derivatives are NaN, JAX's are
// not (docs/COMPATIBILITY.md).
const SMOOTH = new Set(["sin", "cos", "tanh", "negative", "square", "arctan", "sinh", "exp", "add", "subtract", "multiply", "sum", "transpose", "flip", "ravel", "expandDims", "cumsum"]);
// Rounding steps meet a value near an integer only as the first step: after float32
// arithmetic, jax-js's cpu device (JS doubles inside its kernels) rounds differently.
const ROUNDING = new Set(["floor", "ceil"]);

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function valuesFor(r: () => number, dtype: DT, n: number): number[] {
  return Array.from({ length: n }, () => (dtype === "float32" ? Math.floor(r() * 17 - 8) / 4 + 0.1 : dtype === "int32" ? Math.floor(r() * 17 - 8) : r() < 0.5 ? 0 : 1));
}

export function makeProgram(seed: number): Program {
  const r = rng(seed);
  const transform = pick(r, TRANSFORMS);
  // vmap of jit takes float32 only: jax-js 0.1.25 computes int32 and bool there as float32
  // (docs/COMPATIBILITY.md).
  const dtype = DIFFERENTIATES.has(transform) || transform === "vmapjit" ? "float32" : pick(r, ["float32", "float32", "int32", "bool"] as const);
  const shape = Array.from({ length: (MAPS.has(transform) ? 1 : 0) + Math.floor(r() * 4) }, () => Math.floor(r() * 4));
  // The shape each step sees (vmap maps over the first axis), updated by shape ops.
  let seen = MAPS.has(transform) ? shape.slice(1) : shape;
  const allowed = (op: string) => !DIFFERENTIATES.has(transform) || SMOOTH.has(op);
  const steps: Step[] = [];
  const nSteps = 1 + Math.floor(r() * 3);
  for (let i = 0; i < nSteps; i++) {
    const u = r();
    if (u < 0.3) {
      // jax-js 0.1.25's jit sorts along the last axis only, and only its input as given (a
      // flipped, transposed, raveled or sorted operand throws): under jit, sort is the first
      // step or none (docs/COMPATIBILITY.md).
      const jits = transform === "jit" || transform === "vmapjit";
      const noSort = jits && steps.length > 0;
      const ops = Object.keys(SHAPE_OPS).filter((op) => allowed(op) && !(NEEDS_AXIS.has(op) && (seen.length === 0 || dtype === "bool")) && !(noSort && op === "sort"));
      const op = pick(r, ops);
      const axis = jits && op === "sort" ? seen.length - 1 : Math.floor(r() * Math.max(seen.length, 1));
      steps.push({ kind: "shape", op, axis });
      seen = SHAPE_OPS[op](seen, axis);
    } else if (u < 0.65) steps.push({ kind: "unary", op: pick(r, UNARY[dtype].filter((op) => allowed(op) && (i === 0 || !ROUNDING.has(op)))) });
    else {
      // The other operand: a JS number, or an Array of a shape that broadcasts to ours.
      const other = dtype !== "bool" && r() < 0.3 ? "number" : seen.slice(Math.floor(r() * (seen.length + 1))).map((d) => (r() < 0.3 ? 1 : d));
      const n = other === "number" ? 1 : other.reduce((a, b) => a * b, 1);
      steps.push({ kind: "binary", op: pick(r, BINARY[dtype].filter(allowed)), other, otherValues: valuesFor(r, dtype, n) });
    }
  }
  if (seen.length > 0 && r() < 0.5) {
    const axis = r() < 0.3 ? null : Math.floor(r() * seen.length);
    const reduced = axis === null ? seen : [seen[axis]];
    const ops = REDUCE[dtype].filter((op) => allowed(op) && !(["max", "min"].includes(op) && reduced.includes(0)));
    steps.push({ kind: "reduce", op: pick(r, ops), axis, keepdims: r() < 0.3 });
  }
  const size = shape.reduce((a, b) => a * b, 1);
  return { dtype, shape, values: valuesFor(r, dtype, size), steps, transform };
}

function describe(p: Program): string {
  const steps = p.steps.map((s) =>
    s.kind === "unary" ? s.op
    : s.kind === "binary" ? `${s.op}(${s.other === "number" ? s.otherValues[0] : `[${s.other}]`})`
    : s.kind === "shape" ? (NEEDS_AXIS.has(s.op) ? `${s.op}(axis ${s.axis})` : s.op)
    : `${s.op}(axis ${s.axis}${s.keepdims ? ", keepdims" : ""})`);
  return `${p.transform} ${p.dtype}[${p.shape}] ${steps.join(" ")}`;
}

function build(np: Lib, dtype: DT, shape: number[], values: number[]): any {
  const flat = np.array(dtype === "bool" ? values.map(Boolean) : values, { dtype: np[dtype] });
  return np.reshape(flat, shape);
}

function chain(np: Lib, p: Program) {
  return (x: any) => {
    for (const s of p.steps) {
      if (s.kind === "unary") x = np[s.op](x);
      else if (s.kind === "binary") x = np[s.op](x, s.other === "number" ? s.otherValues[0] : build(np, p.dtype, s.other, s.otherValues));
      else if (s.kind === "shape") x = s.op === "expandDims" ? np.expandDims(x, 0) : NEEDS_AXIS.has(s.op) ? np[s.op](x, s.axis) : np[s.op](x);
      else x = np[s.op](x, s.axis, { keepdims: s.keepdims });
    }
    return x;
  };
}

export function randomCase(seed: number): DiffCase {
  const p = makeProgram(seed);
  return {
    name: `seed ${seed}: ${describe(p)}`,
    tol: { rtol: 1e-4, atol: 1e-5 },
    run: ({ numpy: np, jit, vmap, grad, jvp }: Lib) => {
      const f = chain(np, p);
      const x = build(np, p.dtype, p.shape, p.values);
      const sumOf = (y: any) => np.sum(f(y));
      if (p.transform === "jit") return jit(f)(x);
      if (p.transform === "vmap") return vmap(f)(x);
      if (p.transform === "vmapjit") return vmap(jit(f))(x);
      if (p.transform === "grad") return grad(sumOf)(x);
      if (p.transform === "jitgrad") return jit(grad(sumOf))(x);
      if (p.transform === "jvp") return jvp(f, [x], [np.ones(p.shape)]);
      return f(x);
    },
  };
}
