// lax control flow under jax-js naming: scan, whileLoop, foriLoop, cond, switch, map. Trees
// are flattened here; the core (js/src/core/bindings.cpp, frontend/control.h) traces each
// body once into a closed jaxpr and runs it compiled. Ownership as the transformations: the
// operands (init, xs, operands) are consumed, a body owns the Arrays it is given and the
// Arrays it returns are released once the core holds them.
import { Array, describeValue } from "./array.js";
import { check, core, coreCallback } from "./core.js";
import { array } from "./numpy_ops.js";
import { flatten, unflatten, type JsTreeDef } from "./tree.js";

// null/undefined stand for "no value" (JAX's None): no leaves.
type Flat = { leaves: any[]; def: JsTreeDef | null };
function flat(t: any): Flat {
  if (t === null || t === undefined) return { leaves: [], def: null };
  const [leaves, def] = flatten(t);
  return { leaves, def };
}
function rebuild(def: JsTreeDef | null, hs: any[]): any {
  return def === null ? null : unflatten(def, hs.map((h) => (h === null || h === undefined ? h : new Array(h))));
}
function toCore(x: any, op: string): any {
  if (x instanceof Array) return x._h();
  if (typeof x === "number" || typeof x === "boolean") return x;
  throw new TypeError(`${op}: got ${describeValue(x)} as a leaf, expected an Array, a number or a boolean`);
}
function consume(leaves: any[]) {
  for (const x of leaves) if (x instanceof Array && x._alive) x.dispose();
}
function sameDef(a: JsTreeDef | null, b: JsTreeDef | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}
const defStr = (d: JsTreeDef | null) => (d === null ? "null" : d.toString());

/**
 * A JS body as the core calls it: one leaf-handle list per argument in, a list of leaf
 * lists out. It never throws into the core: it keeps the error and returns it.
 */
function body(op: string, defs: (JsTreeDef | null)[], f: (...args: any[]) => any[]) {
  return coreCallback((cargs) => {
    const outs = f(...cargs.map((hs, i) => rebuild(defs[i], hs)));
    const returned: Array[] = [];
    const lists = outs.map((o: Flat) => {
      returned.push(...o.leaves.filter((x): x is Array => x instanceof Array));
      return o.leaves.map((x) => toCore(x, op));
    });
    return [lists, returned];
  });
}

function checkFn(op: string, f: unknown) {
  if (typeof f !== "function") throw new TypeError(`${op}: got ${describeValue(f)}, expected a function`);
}

/**
 * lax.scan: f(carry, x) -> [carry, y] over the leading axis of xs (a tree, or null with
 * `length`). Returns [final carry, ys stacked on a new leading axis].
 */
export function scan(
  f: (carry: any, x: any) => [any, any],
  init: any,
  xs: any = null,
  { length, reverse = false, unroll = 1 }: { length?: number; reverse?: boolean; unroll?: number } = {},
): [any, any] {
  checkFn("scan", f);
  const c = flat(init), x = flat(xs);
  let n = length;
  for (const l of x.leaves) {
    if (!(l instanceof Array) || l.ndim === 0) throw new Error(`scan: xs leaves must be Arrays with a leading axis, got ${describeValue(l)}`);
    if (n === undefined) n = l.shape[0];
    else if (l.shape[0] !== n) throw new Error(`scan: xs has leading axes of lengths ${n} and ${l.shape[0]}, expected one length`);
  }
  if (n === undefined) throw new Error("scan: got no xs and no length, expected one of them");
  let ydef: JsTreeDef | null = null;
  const jsfn = body("scan", [c.def, x.def], (carry, xi) => {
    const out = f(carry, xi);
    if (!globalThis.Array.isArray(out) || out.length !== 2) throw new Error("scan: the body must return [carry, y]");
    const c2 = flat(out[0]), y = flat(out[1]);
    if (!sameDef(c2.def, c.def))
      throw new Error(`scan: the body returned a carry of structure ${defStr(c2.def)}, expected ${defStr(c.def)} (the structure of the initial carry)`);
    ydef = y.def;
    return [c2, y];
  });
  const r = check(core.scan(jsfn, c.leaves.map((l) => toCore(l, "scan")), x.leaves.map((l) => toCore(l, "scan")), n, reverse, unroll)) as any[];
  consume(c.leaves);
  consume(x.leaves);
  const nk = c.leaves.length;
  return [rebuild(c.def, r.slice(0, nk)), rebuild(ydef, r.slice(nk))];
}

/** lax.while_loop: body(carry) while cond(carry) (a bool scalar) is true. */
export function whileLoop(cond: (carry: any) => Array, bodyFn: (carry: any) => any, init: any): any {
  checkFn("whileLoop", cond);
  checkFn("whileLoop", bodyFn);
  const c = flat(init);
  const cj = body("whileLoop", [c.def], (carry) => [flat(cond(carry))]);
  const bj = body("whileLoop", [c.def], (carry) => {
    const o = flat(bodyFn(carry));
    if (!sameDef(o.def, c.def))
      throw new Error(`whileLoop: the body returned a carry of structure ${defStr(o.def)}, expected ${defStr(c.def)} (the structure of the initial carry)`);
    return [o];
  });
  const r = check(core.whileLoop(cj, bj, c.leaves.map((l) => toCore(l, "whileLoop")))) as any[];
  consume(c.leaves);
  return rebuild(c.def, r);
}

/** lax.switch: `branches[clamp(index, 0, n - 1)](...operands)`; every branch returns one structure. */
export function switch_(index: Array | number, branches: ((...ops: any[]) => any)[], ...operands: any[]): any {
  return branch("switch", index, branches, operands);
}

/** switch and cond: errors name `op`, the function the user called. */
function branch(op: string, index: Array | number, branches: ((...ops: any[]) => any)[], operands: any[]): any {
  if (!globalThis.Array.isArray(branches) || branches.length === 0) throw new Error(`${op}: expected a non-empty list of branches`);
  branches.forEach((b) => checkFn(op, b));
  const o = flat(operands);
  let outDef: JsTreeDef | null | undefined;
  const fns = branches.map((b, i) =>
    body(op, [o.def], (ops) => {
      const out = flat(b(...(ops as any[])));
      if (outDef !== undefined && !sameDef(outDef, out.def))
        throw new Error(`${op}: branch ${i} returned a tree of structure ${defStr(out.def)} and branch 0 ${defStr(outDef)}, expected branches of one output structure`);
      outDef = out.def;
      return [out];
    }),
  );
  let idx = index instanceof Array ? index : array(Math.trunc(index), { dtype: "int32" as any });
  if (idx.dtype !== "int32") idx = idx.astype("int32" as any);
  const r = check(core.switchBranches(idx._h(), fns, o.leaves.map((l) => toCore(l, op)))) as any[];
  idx.dispose();
  consume(o.leaves);
  return rebuild(outDef ?? null, r);
}

/** lax.cond: trueFn(...operands) if pred else falseFn(...operands). */
export function cond(pred: Array | boolean, trueFn: (...ops: any[]) => any, falseFn: (...ops: any[]) => any, ...operands: any[]): any {
  checkFn("cond", trueFn);
  checkFn("cond", falseFn);
  const p = pred instanceof Array ? pred.astype("int32" as any) : pred ? 1 : 0;
  return branch("cond", p, [falseFn, trueFn], operands);
}

/**
 * lax.fori_loop: body(i, x) for i in [lower, upper). Number bounds run a scan (reverse-mode
 * differentiable); Array bounds a while loop.
 */
export function foriLoop(lower: number | Array, upper: number | Array, bodyFn: (i: Array, x: any) => any, init: any): any {
  checkFn("foriLoop", bodyFn);
  // Counters made here; a loop that fails (a disposed init) consumed none of them.
  const made: Array[] = [];
  const int32 = (v: number | Array) => {
    const a = v instanceof Array ? (v.dtype === "int32" ? v : v.astype("int32" as any)) : array(v, { dtype: "int32" as any });
    if (a !== v) made.push(a);
    return a;
  };
  try {
    if (typeof lower === "number" && typeof upper === "number") {
      const [r] = scan(
        ([i, x]: [Array, any]) => [[i.ref.add(1), bodyFn(i, x)], null],
        [int32(lower), init],
        null,
        { length: Math.max(upper - lower, 0) },
      );
      (r[0] as Array).dispose();
      return r[1];
    }
    const r = whileLoop(
      ([i, hi]: [Array, Array]) => i.less(hi),
      ([i, hi, x]: [Array, Array, any]) => [i.ref.add(1), hi, bodyFn(i, x)],
      [int32(lower), int32(upper), init],
    );
    (r[0] as Array).dispose();
    (r[1] as Array).dispose();
    return r[2];
  } catch (e) {
    for (const a of made) if (a._alive) a.dispose();
    throw e;
  }
}

/** lax.map: f over the leading axis of xs. */
export function map(f: (x: any) => any, xs: any): any {
  checkFn("map", f);
  return scan((_c: null, x: any) => [null, f(x)], null, xs)[1];
}
