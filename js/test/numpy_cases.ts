// The NumPy fixture cases (tests/fixtures/numpy_ops.txt, tools/gen_numpy_fixtures.py) as JS
// API calls, and the runner that checks one case on one device; numpy_fixtures.test.ts and
// webgpu.test.ts share them.
import { expect } from "vitest";
import { numpy as np, lax } from "../dist/index.js";
import text from "../../tests/fixtures/numpy_ops.txt?raw";
import { parseFixtures, toArray, type Case, type FixArray } from "./fixtures.js";

export type Compare = (got: np.Array, want: FixArray, tol: [number, number]) => string | null | Promise<string | null>;

const p = (c: Case, k: string) => c.params[k];
const axis = (c: Case, k = "axis"): any => {
  const v = p(c, k);
  if (v === undefined || v[0] === "none") return null;
  if (v[0] === "list") return v.slice(1).map(Number);
  return Number(v[0]);
};
const ints = (c: Case, k: string) => (p(c, k) ?? []).map(Number);
const kd = (c: Case) => ({ keepdims: p(c, "keepdims")?.[0] === "1" });
const dt = (c: Case) => (p(c, "dtype") && p(c, "dtype")[0] !== "none" ? (p(c, "dtype")[0] as np.DType) : undefined);

const UNARY: Record<string, (x: any) => np.Array> = {
  abs: np.abs, absolute: np.absolute, negative: np.negative, positive: np.positive, sign: np.sign,
  exp: np.exp, exp2: np.exp2, expm1: np.expm1, log: np.log, log1p: np.log1p, log2: np.log2,
  log10: np.log10, sqrt: np.sqrt, square: np.square, reciprocal: np.reciprocal, sin: np.sin,
  cos: np.cos, tan: np.tan, arcsin: np.arcsin, arccos: np.arccos, arctan: np.arctan, sinh: np.sinh,
  cosh: np.cosh, tanh: np.tanh, arcsinh: np.arcsinh, arccosh: np.arccosh, arctanh: np.arctanh,
  erf: lax.erf, floor: np.floor, ceil: np.ceil, round: np.round, trunc: np.trunc,
  logical_not: np.logicalNot, invert: np.invert, bitwise_not: np.bitwiseNot, isnan: np.isnan,
  isinf: np.isinf, isfinite: np.isfinite, ravel: np.ravel,
};
const BINARY: Record<string, (x: any, y: any) => np.Array> = {
  add: np.add, subtract: np.subtract, multiply: np.multiply, divide: np.divide,
  true_divide: np.trueDivide, floor_divide: np.floorDivide, remainder: np.remainder,
  mod: np.remainder, power: np.power, maximum: np.maximum, minimum: np.minimum,
  arctan2: np.arctan2, logaddexp: np.logaddexp, equal: np.equal, not_equal: np.notEqual, less: np.less,
  less_equal: np.lessEqual, greater: np.greater, greater_equal: np.greaterEqual,
  logical_and: np.logicalAnd, logical_or: np.logicalOr, logical_xor: np.logicalXor,
  bitwise_and: np.bitwiseAnd, bitwise_or: np.bitwiseOr, bitwise_xor: np.bitwiseXor,
  left_shift: np.leftShift, right_shift: np.rightShift, matmul: np.matmul, dot: np.dot,
  vdot: np.vdot, inner: np.inner, outer: np.outer,
};
const REDUCE: Record<string, (x: any, a: any, o: any) => np.Array> = {
  sum: np.sum, prod: np.prod, max: np.max, min: np.min, mean: np.mean, any: np.any, all: np.all,
};

// One runner per fixture op; undefined: not part of the jax-js API.
const OPS: Record<string, (c: Case, x: any[]) => np.Array | np.Array[]> = {
  var: (c, x) => np.var_(x[0], axis(c), { ...kd(c), correction: Number(p(c, "ddof")[0]) }),
  std: (c, x) => np.std(x[0], axis(c), { ...kd(c), correction: Number(p(c, "ddof")[0]) }),
  argmax: (c, x) => np.argmax(x[0], axis(c) ?? undefined, kd(c)),
  argmin: (c, x) => np.argmin(x[0], axis(c) ?? undefined, kd(c)),
  cumsum: (c, x) => np.cumsum(x[0], axis(c) ?? undefined),
  cumprod: (c, x) => np.cumprod(x[0], axis(c) ?? undefined),
  reshape: (c, x) => np.reshape(x[0], ints(c, "shape")),
  transpose: (c, x) => np.transpose(x[0], axis(c, "axes") ?? undefined),
  where: (_, x) => np.where(x[0], x[1], x[2]),
  concatenate: (c, x) => np.concatenate(x, axis(c)),
  stack: (c, x) => np.stack(x, axis(c)),
  einsum: (c, x) => np.einsum(p(c, "subscripts")[0], ...x),
  take: (c, x) => np.take(x[0], x[1], axis(c)),
  take_along_axis: (c, x) => np.takeAlongAxis(x[0], x[1], axis(c)),
  tile: (c, x) => np.tile(x[0], ints(c, "reps")),
  flip: (c, x) => np.flip(x[0], axis(c)),
  squeeze: (c, x) => np.squeeze(x[0], axis(c)),
  expand_dims: (c, x) => np.expandDims(x[0], axis(c)),
  swapaxes: (c, x) => np.swapaxes(x[0], Number(p(c, "axis1")[0]), Number(p(c, "axis2")[0])),
  broadcast_to: (c, x) => np.broadcastTo(x[0], ints(c, "shape")),
  "Array.astype": (c, x) => x[0].astype(dt(c)),
  "Array.reshape": (c, x) => x[0].reshape(ints(c, "shape")),
  "Array.transpose": (_, x) => x[0].transpose(),
  zeros: (c) => np.zeros(ints(c, "shape"), { dtype: dt(c) }),
  ones: (c) => np.ones(ints(c, "shape"), { dtype: dt(c) }),
  linspace: (c) =>
    np.linspace(Number(p(c, "start")[0]), Number(p(c, "stop")[0]), Number(p(c, "num")[0]), p(c, "endpoint")[0] === "1", { dtype: dt(c) }),
  "split(sections)": (c, x) => np.split(x[0], Number(p(c, "sections")[0]), axis(c)),
  "split(indices)": (c, x) => np.split(x[0], ints(c, "indices"), axis(c)),
  "tensordot(int)": (c, x) => np.tensordot(x[0], x[1], Number(p(c, "axes")[0])),
  "moveaxis(int)": (c, x) => np.moveaxis(x[0], Number(p(c, "source")[0]), Number(p(c, "destination")[0])),
};
for (const [k, f] of Object.entries(UNARY)) OPS[k] = (_, x) => f(x[0]);
for (const [k, f] of Object.entries(BINARY)) OPS[k] = (_, x) => f(x[0], x[1]);
for (const [k, f] of Object.entries(REDUCE)) OPS[k] = (c, x) => f(x[0], axis(c), kd(c));

/** Applies a fixture view with the JS API; null when jax-js has no such view. */
function applyView(x: np.Array, v: string[]): np.Array | null {
  const [kind, ...args] = v;
  if (kind === "transpose") return x.transpose(args.map(Number));
  if (kind === "flip") return np.flip(x, args.map(Number));
  if (kind === "broadcast_to") return np.broadcastTo(x, args.map(Number));
  if (kind === "pad") {
    if (Number(args[0]) !== 0) return null; // jax-js pads with zeros only
    const pairs: [number, number][] = [];
    for (let i = 1; i < args.length; i += 2) pairs.push([Number(args[i]), Number(args[i + 1])]);
    return np.pad(x, pairs);
  }
  if (kind === "index") {
    const terms: any[] = [];
    for (const t of args) {
      if (t === "None") terms.push(null);
      else if (!t.includes(":")) terms.push(Number(t));
      else {
        const [a, b, s] = t.split(":");
        if (s !== undefined && s !== "" && s !== "1") return null; // jax-js has no strided slices
        if (a === "" && b === "") terms.push([]);
        else if (b === "") terms.push([Number(a)]);
        else terms.push([a === "" ? 0 : Number(a), Number(b)]);
      }
    }
    if (args.includes("...")) return null;
    return x.slice(...terms);
  }
  return null;
}

// Cases whose semantics jax-js defines differently from JAX (jax-js wins in JS): a JS number
// is always a weak float32 (JAX has weak ints too), and it takes the dtype of the array it
// meets (int32 + 1.5 is int32 in jax-js, float32 in JAX). Those cases are not compared here;
// api.test.ts checks jax-js's rule. jax-js takes float index Arrays in take (truncated to
// int32) where JAX refuses them: differential.test.ts checks jax-js's behaviour.
const JAXJS_DEFINES = new Set(["error_take_float_indices"]);
function jaxOnly(c: Case): boolean {
  if (JAXJS_DEFINES.has(c.id)) return true;
  const weak = c.inputs.filter((i) => i.arr.weak === 1);
  if (weak.some((i) => i.arr.dtype !== "float32")) return true;
  const strongKinds = c.inputs.filter((i) => i.arr.weak !== 1).map((i) => i.arr.dtype);
  return weak.length > 0 && strongKinds.some((d) => !d.startsWith("float") && d !== "bool");
}

export const cases = parseFixtures(text).filter((c) => OPS[c.op] !== undefined && !jaxOnly(c));

/** Runs one case on the default device (`device`), reading results through `cmp`. */
export async function runNumpyCase(c: Case, device: string, cmp: Compare): Promise<void> {
  const inputs: any[] = [];
  for (const inp of c.inputs) {
    let x: any = toArray(inp.arr);
    for (const v of inp.views) {
      const y = applyView(x, v);
      if (y === null) return; // a view jax-js cannot express
      x = y;
    }
    inputs.push(x);
  }
  const held = inputs.filter((x) => x instanceof np.Array) as np.Array[];
  if (c.error) {
    for (const h of held) h.ref;
    let err: any = null;
    try {
      OPS[c.op](c, inputs);
    } catch (e) {
      err = e;
    }
    expect(err, "expected an error").toBeInstanceOf(Error);
    expect(c.error.some((s) => String(err.message).includes(s)), `message "${err.message}" names one of ${c.error}`).toBe(true);
    // Nothing held is corrupted: each input still reads back as it was created.
    for (const [i, inp] of c.inputs.entries()) {
      if (!(inputs[i] instanceof np.Array) || inp.views.length > 0) continue;
      expect(await cmp(inputs[i], inp.arr, [0, 0])).toBeNull();
    }
    for (const h of held) while (h.refCount > 0) h.dispose();
    return;
  }
  let out = OPS[c.op](c, inputs);
  const outs = Array.isArray(out) ? out : [out];
  expect(outs.length).toBe(c.expects.length);
  for (const [i, o] of outs.entries()) {
    expect(await cmp(o, c.expects[i], c.tol), `${c.id} output ${i}`).toBeNull();
    expect(o.device).toBe(device);
    o.dispose();
  }
  // Every input was consumed by the call, as jax-js's ownership model says.
  for (const h of held) expect(h.refCount).toBe(0);
}
