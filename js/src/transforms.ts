// The transformations on JS functions and JsTrees: jvp, vjp, grad, valueAndGrad, vmap, jit,
// makeJaxpr, linearize, jacfwd, jacrev, hessian. Trees are flattened here; the core sees
// one list of leaves per argument and calls back into JS with tracer Arrays.
import { Array, describeValue } from "./array.js";
import { check, core, coreCallback, type Func } from "./core.js";
import { flatten, unflatten, type JsTree, JsTreeDef } from "./tree.js";

/** A function holding compiled programs: `dispose()` frees them (jit's result). */
export type OwnedFunction<F extends Function> = F & { dispose: () => void };

type State = { outDef?: JsTreeDef; auxDef?: JsTreeDef };

function wrapLeaf(h: any): any {
  return h === null || h === undefined ? h : new Array(h);
}
function leafToCore(x: any, op: string): any {
  if (x instanceof Array) return x._h();
  if (typeof x === "number" || typeof x === "boolean" || x === null) return x;
  throw new TypeError(`${op}: got ${describeValue(x)} as a leaf, expected an Array, a number or a boolean`);
}
/**
 * Checks what a transformation is given, when it is given (as JAX does): the function, and
 * the argument list of those that take one (jvp, vjp, linearize). A bad one is an Error
 * naming the transformation, before any argument is converted.
 */
function checkFunction(op: string, f: unknown) {
  if (typeof f !== "function") throw new TypeError(`${op}: got ${describeValue(f)}, expected a function`);
}
function checkArgList(op: string, what: string, args: unknown) {
  if (!globalThis.Array.isArray(args)) throw new TypeError(`${op}: got ${describeValue(args)} as ${what}, expected a JS array with one entry per argument`);
}
function flattenArgs(args: any[]): [any[][], JsTreeDef[]] {
  const leaves: any[][] = [];
  const defs: JsTreeDef[] = [];
  for (const a of args) {
    const [l, d] = flatten(a);
    leaves.push(l);
    defs.push(d);
  }
  return [leaves, defs];
}
function toCore(leaves: any[][], op: string): any[][] {
  return leaves.map((l) => l.map((x) => leafToCore(x, op)));
}
/** Disposes the Array leaves once each: the transformation consumed its arguments. */
function consume(leaves: any[][]) {
  for (const l of leaves) for (const x of l) if (x instanceof Array && x._alive) x.dispose();
}
function fromCore(def: JsTreeDef, hs: any[]): any {
  return unflatten(def, hs.map(wrapLeaf));
}


/**
 * f as the core sees it: called with one list of leaf handles per argument, it rebuilds the
 * trees as Arrays, calls f and returns its output leaves (one handle for scalarOut, a pair
 * [out, aux] with hasAux). It never throws into the core: it keeps the error and returns it.
 */
function flatFn(f: (...a: any[]) => any, defs: JsTreeDef[], state: State, opts: { hasAux?: boolean; scalarOut?: boolean; op: string }) {
  return coreCallback((cargs) => {
    const args = cargs.map((ls, i) => fromCore(defs[i], ls));
    let out = f(...args);
    let aux: any;
    if (opts.hasAux) {
      if (!globalThis.Array.isArray(out) || out.length !== 2) throw new Error(`${opts.op}: with hasAux the function must return [out, aux]`);
      [out, aux] = out;
    }
    const [ol, od] = flatten(out);
    state.outDef = od;
    const pending = ol.filter((x): x is Array => x instanceof Array);
    let result: any = ol.map((x) => leafToCore(x, opts.op));
    if (opts.scalarOut) {
      if (ol.length !== 1 || !(ol[0] instanceof Array)) throw new Error(`${opts.op}: the function must return one scalar Array, got ${od.toString()}`);
      result = result[0];
    }
    if (opts.hasAux) {
      const [al, ad] = flatten(aux);
      state.auxDef = ad;
      pending.push(...al.filter((x): x is Array => x instanceof Array));
      result = [result, al.map((x) => leafToCore(x, opts.op))];
    }
    return [result, pending];
  });
}

function callFunc(func: Func, leaves: any[][], op: string): any {
  return check(func.call(toCore(leaves, op)));
}
function once(kind: string, f: any, defs: JsTreeDef[], state: State, opts: any, leaves: any[][], ffOpts: any): any {
  const func: Func = check(core.transform(kind, flatFn(f, defs, state, ffOpts), opts));
  try {
    return callFunc(func, leaves, ffOpts.op);
  } finally {
    func.delete();
  }
}

type GradOpts = { argnums?: number | number[]; hasAux?: boolean };

function gradsOf(r: any, argnums: number | number[], defs: JsTreeDef[]): any {
  const n = defs.length;
  const norm = (i: number) => (i < 0 ? i + n : i);
  if (globalThis.Array.isArray(argnums)) return argnums.map((a, j) => fromCore(defs[norm(a)], r[j]));
  return fromCore(defs[norm(argnums)], r);
}

/**
 * The gradient of a scalar-valued f with respect to argument(s) `argnums` (default 0; an
 * array gives a list of gradients), each of the argument's tree structure. With `hasAux`, f
 * returns [value, aux] and the result is [grads, aux]. The returned function consumes its
 * arguments, as any kiln function.
 *
 * @throws Error when f does not return a scalar (shape []) Array, or `f` is not a function.
 * @example
 * ```ts
 * import { grad, numpy as np } from "kiln";
 * const df = grad((x: np.Array) => np.sum(np.square(x)));
 * console.log(await df(np.array([1, 2, 3])).jsAsync()); // [2, 4, 6]
 * ```
 */
export function grad(f: (...args: any[]) => any, opts: GradOpts = {}) {
  checkFunction("grad", f);
  const { argnums = 0, hasAux = false } = opts;
  return (...primals: any[]): any => {
    const [leaves, defs] = flattenArgs(primals);
    const state: State = {};
    const r = once("grad", f, defs, state, { argnums, hasAux }, leaves, { hasAux, scalarOut: true, op: "grad" });
    consume(leaves);
    if (hasAux) return [gradsOf(r[0], argnums, defs), fromCore(state.auxDef!, r[1])];
    return gradsOf(r, argnums, defs);
  };
}

/**
 * [f(x), grad f(x)] in one pass; with hasAux, [[f(x), aux], grad]. Options and errors as {@link grad}.
 */
export function valueAndGrad(f: (...args: any[]) => any, opts: GradOpts = {}) {
  checkFunction("valueAndGrad", f);
  const { argnums = 0, hasAux = false } = opts;
  return (...primals: any[]): any => {
    const [leaves, defs] = flattenArgs(primals);
    const state: State = {};
    const r = once("value_and_grad", f, defs, state, { argnums, hasAux }, leaves, { hasAux, scalarOut: true, op: "valueAndGrad" });
    consume(leaves);
    const grads = gradsOf(r[1], argnums, defs);
    if (hasAux) return [[wrapLeaf(r[0][0]), fromCore(state.auxDef!, r[0][1])], grads];
    return [wrapLeaf(r[0]), grads];
  };
}

/** Per-leaf axes of one argument from its inAxes entry (a number, null, or a tree prefix). */
function axesFor(spec: any, tree: any, op: string): any[] {
  if (spec === null || typeof spec === "number") return flatten(tree)[0].map(() => spec);
  if (globalThis.Array.isArray(spec)) {
    if (!globalThis.Array.isArray(tree) || tree.length !== spec.length) throw new Error(`${op}: inAxes entry [${spec}] does not match its argument's structure`);
    return spec.flatMap((s, i) => axesFor(s, tree[i], op));
  }
  if (typeof spec === "object") {
    if (tree === null || typeof tree !== "object" || tree instanceof Array) throw new Error(`${op}: an inAxes object does not match its argument's structure`);
    return Object.keys(tree).flatMap((k) => axesFor(k in spec ? spec[k] : 0, tree[k], op));
  }
  throw new Error(`${op}: got inAxes entry ${String(spec)}, expected a number, null or a tree of them`);
}

/**
 * f mapped over an axis of its arguments: `inAxes` is one axis for every argument, or one
 * entry per argument (an axis, null for an unmapped argument, or a tree prefix of the
 * argument). Outputs are stacked along axis 0.
 *
 * @throws Error when inAxes does not match the arguments, or the mapped sizes differ.
 * @example
 * ```ts
 * import { vmap, numpy as np } from "kiln";
 * const rowSums = vmap((row: np.Array) => np.sum(row));
 * rowSums(np.ones([4, 3]));                                 // [3, 3, 3, 3]
 * const scaled = vmap((x: np.Array, s: np.Array) => x.mul(s), [0, null]);
 * ```
 */
export function vmap(f: (...args: any[]) => any, inAxes: number | (number | null | JsTree<number | null>)[] = 0) {
  checkFunction("vmap", f);
  return (...args: any[]): any => {
    const [leaves, defs] = flattenArgs(args);
    let axes: any[][];
    if (typeof inAxes === "number") axes = leaves.map((l) => l.map(() => inAxes));
    else {
      if (!globalThis.Array.isArray(inAxes) || inAxes.length !== args.length)
        throw new Error(`vmap: got ${globalThis.Array.isArray(inAxes) ? inAxes.length : "a non-array"} inAxes for ${args.length} arguments`);
      axes = args.map((a, i) => axesFor(inAxes[i], a, "vmap"));
    }
    const state: State = {};
    const r = once("vmap", f, defs, state, { inAxes: axes, outAxes: 0 }, leaves, { op: "vmap" });
    consume(leaves);
    return fromCore(state.outDef!, r);
  };
}

/**
 * f compiled: traced once per argument structure, shapes, dtypes and static values, then
 * run as fused kernels. The core caches by signature; trees of different structure get
 * their own entry here. dispose() frees the compiled programs. `staticArgnums` lists
 * arguments passed as JS values (traced as constants: a new value compiles again).
 *
 * @throws Error when f is not a function; errors of the trace (shapes, dtypes) at the call.
 * @example
 * ```ts
 * import { jit, numpy as np } from "kiln";
 * const f = jit((x: np.Array, w: np.Array) => np.tanh(np.matmul(x, w)));  // fused kernels
 * const y = f(np.ones([8, 4]), np.ones([4, 2]));
 * f.dispose();
 * ```
 */
export function jit<F extends (...args: any[]) => any>(f: F, opts: { staticArgnums?: number[] } = {}): OwnedFunction<(...args: any[]) => ReturnType<F>> {
  checkFunction("jit", f);
  const cache = new Map<string, { func: Func; state: State }>();
  const statics = opts.staticArgnums ?? [];
  const fn: any = (...args: any[]) => {
    const n = args.length;
    const isStatic = new Set(statics.map((i) => (i < 0 ? i + n : i)));
    const dyn = args.filter((_, i) => !isStatic.has(i));
    const staticVals = args.filter((_, i) => isStatic.has(i));
    const [leaves, defs] = flattenArgs(dyn);
    const key = defs.map((d) => d.toString()).join("|") + "#" + JSON.stringify(staticVals) + "#" + [...isStatic].join(",");
    let entry = cache.get(key);
    if (entry === undefined) {
      const state: State = {};
      const merged = (...d: any[]) => {
        const all: any[] = [];
        let di = 0, si = 0;
        for (let i = 0; i < n; i++) all.push(isStatic.has(i) ? staticVals[si++] : d[di++]);
        return f(...all);
      };
      const func: Func = check(core.transform("jit", flatFn(merged, defs, state, { op: "jit" }), {}));
      entry = { func, state };
      cache.set(key, entry);
    }
    const r = callFunc(entry.func, leaves, "jit");
    consume(leaves);
    return fromCore(entry.state.outDef!, r);
  };
  fn.dispose = () => {
    for (const e of cache.values()) e.func.delete();
    cache.clear();
  };
  return fn;
}

/** [f(primals), the derivative of f at primals along tangents] (with hasAux, aux third). */
export function jvp(f: (...args: any[]) => any, primals: any[], tangents: any[], opts: { hasAux?: boolean } = {}): any {
  checkFunction("jvp", f);
  checkArgList("jvp", "primals", primals);
  checkArgList("jvp", "tangents", tangents);
  const [pl, defs] = flattenArgs(primals);
  const [tl, tdefs] = flattenArgs(tangents);
  tdefs.forEach((d, i) => {
    if (!d.equals(defs[i])) throw new Error(`jvp: tangent ${i} has structure ${d.toString()}, expected ${defs[i].toString()}`);
  });
  const state: State = {};
  const r = check(core.jvp(flatFn(f, defs, state, { hasAux: opts.hasAux, op: "jvp" }), toCore(pl, "jvp"), toCore(tl, "jvp")));
  consume(pl);
  consume(tl);
  if (opts.hasAux) {
    for (const h of r[1][1]) h?.delete?.();
    return [fromCore(state.outDef!, r[0][0]), fromCore(state.outDef!, r[1][0]), fromCore(state.auxDef!, r[0][1])];
  }
  return [fromCore(state.outDef!, r[0]), fromCore(state.outDef!, r[1])];
}

/** [f(primals), the pullback (cotangent -> one cotangent per primal)] (with hasAux, aux third). */
export function vjp(f: (...args: any[]) => any, primals: any[], opts: { hasAux?: boolean } = {}): any {
  checkFunction("vjp", f);
  checkArgList("vjp", "primals", primals);
  const [pl, defs] = flattenArgs(primals);
  const state: State = {};
  const hasAux = opts.hasAux ?? false;
  const r = check(core.vjp(flatFn(f, defs, state, { hasAux, op: "vjp" }), toCore(pl, "vjp"), hasAux));
  consume(pl);
  const pbFunc: Func = r[1];
  const pullback: any = (cotangents: any) => {
    const [cl, cd] = flatten(cotangents);
    if (!cd.equals(state.outDef!)) throw new Error(`vjp: cotangent has structure ${cd.toString()}, expected ${state.outDef!.toString()}`);
    const g = callFunc(pbFunc, [cl], "vjp");
    consume([cl]);
    return defs.map((d, i) => fromCore(d, g[i]));
  };
  pullback.dispose = () => pbFunc.delete();
  const out = fromCore(state.outDef!, r[0]);
  if (hasAux) return [out, pullback, fromCore(state.auxDef!, r[2])];
  return [out, pullback];
}

/** [f(primals), the linear map tangents -> derivative], evaluated once. */
export function linearize(f: (...args: any[]) => any, primals: any[], opts: { hasAux?: boolean } = {}): any {
  checkFunction("linearize", f);
  checkArgList("linearize", "primals", primals);
  const [pl, defs] = flattenArgs(primals);
  const state: State = {};
  const hasAux = opts.hasAux ?? false;
  const r = check(core.linearize(flatFn(f, defs, state, { hasAux, op: "linearize" }), toCore(pl, "linearize")));
  consume(pl);
  const linFunc: Func = r[1];
  const lin: any = (...tangents: any[]) => {
    const [tl] = flattenArgs(tangents);
    const t = callFunc(linFunc, tl, "linearize");
    consume(tl);
    if (hasAux) {
      for (const h of t[1]) h?.delete?.();
      return fromCore(state.outDef!, t[0]);
    }
    return fromCore(state.outDef!, t);
  };
  lin.dispose = () => linFunc.delete();
  if (hasAux) return [fromCore(state.outDef!, r[0][0]), lin, fromCore(state.auxDef!, r[0][1])];
  return [fromCore(state.outDef!, r[0]), lin];
}

/**
 * jacfwd, jacrev or hessian with respect to argument `argnums` (one integer, default 0,
 * negative from the end); an argnums out of range for the call is an Error naming `kind`.
 */
function jacobian(kind: string, depth: number) {
  return (f: (...args: any[]) => any, { argnums = 0 }: { argnums?: number } = {}) => {
    checkFunction(kind, f);
    if (!Number.isInteger(argnums)) throw new TypeError(`${kind}: got argnums ${describeValue(argnums)}, expected one integer`);
    return (...args: any[]): any => {
      const n = args.length;
      if (argnums < -n || argnums >= n) throw new Error(`${kind}: argnums ${argnums} is out of range for ${n} arguments`);
      const wrt = (argnums + n) % n;
      const [leaves, defs] = flattenArgs(args);
      const state: State = {};
      const r = once(kind, f, defs, state, { argnums: wrt }, leaves, { op: kind });
      consume(leaves);
      // Each output leaf holds the input tree (hessian: the input tree of input trees).
      const inner = (x: any, d: number): any => (d === 0 ? wrapLeaf(x) : unflatten(defs[wrt], x.map((y: any) => inner(y, d - 1))));
      return unflatten(state.outDef!, r.map((x: any) => inner(x, depth)));
    };
  };
}
/** The Jacobian by forward mode: output shape + input shape. */
export const jacfwd = jacobian("jacfwd", 1);
/** The Jacobian by reverse mode. */
export const jacrev = jacobian("jacrev", 1);
/** The Hessian of a scalar-valued function (jacfwd of jacrev). */
export const hessian = jacobian("hessian", 2);

/** A traced program, printed as text. */
export class ClosedJaxpr {
  /** Wraps the text the core printed. */
  constructor(readonly text: string) {}
  /** The jaxpr's text. */
  toString(): string {
    return this.text;
  }
  /**
   * Releases the jaxpr, as jax-js's ClosedJaxpr.dispose (which frees its constants): kiln's
   * holds only its text, so there is nothing to free; jax-js programs that call it run unchanged.
   */
  dispose(): void {}
}
export { ClosedJaxpr as Jaxpr };

/** Traces f on the given arguments (not consumed) into a jaxpr. */
export function makeJaxpr(f: (...args: any[]) => any) {
  checkFunction("makeJaxpr", f);
  return (...args: any[]): { jaxpr: ClosedJaxpr; treedef: JsTreeDef } => {
    const [leaves, defs] = flattenArgs(args);
    const state: State = {};
    const text = check(core.makeJaxpr(flatFn(f, defs, state, { op: "makeJaxpr" }), toCore(leaves, "makeJaxpr")));
    return { jaxpr: new ClosedJaxpr(text), treedef: state.outDef! };
  };
}

/**
 * A rule the core calls with one list of leaf handles per argument: `body` gets the Arrays
 * (as trees, consumed by it) and returns lists of output leaves; the Arrays it returns are
 * disposed once the core holds them (`done`). Errors are kept, never thrown into the core.
 */
function ruleFn(body: (cargs: any[][]) => (any[] | null)[], op: string) {
  return coreCallback((cargs) => {
    const lists = body(cargs);
    const returned = lists.flatMap((l) => l ?? []).filter((x): x is Array => x instanceof Array);
    return [lists.map((l) => (l === null ? null : l.map((x) => leafToCore(x, op)))), returned];
  });
}

function leavesOf(t: any, def: JsTreeDef | undefined, op: string, what: string): any[] {
  const [l, d] = flatten(t);
  if (def !== undefined && !d.equals(def)) throw new Error(`${op}: ${what} has structure ${d.toString()}, expected ${def.toString()}`);
  return l;
}
/** The leaves of a rule's output; it defines f's output structure when f itself did not run. */
function outLeaves(t: any, state: State, op: string, what: string): any[] {
  if (state.outDef === undefined) state.outDef = flatten(t)[1];
  return leavesOf(t, state.outDef, op, what);
}

/** Calls the core's custom_jvp/custom_vjp of f with the given rules on `args`. */
function callCustom(kind: string, op: string, f: (...a: any[]) => any, args: any[], rules: (defs: JsTreeDef[], state: State) => any): any {
  const [leaves, defs] = flattenArgs(args);
  const state: State = {};
  const func: Func = check(core.transform(kind, flatFn(f, defs, state, { op }), rules(defs, state)));
  try {
    const r = callFunc(func, leaves, op);
    consume(leaves);
    return fromCore(state.outDef!, r);
  } finally {
    func.delete();
  }
}

/** What {@link checkpoint} saves for the backward pass (JAX's `jax.checkpoint_policies`). */
export type CheckpointPolicy = "nothing_saveable" | "dots_saveable" | "everything_saveable";

/**
 * The policies of {@link checkpoint}, named as jax-js names JAX's: `nothingSaveable` (the
 * default: every intermediate is recomputed), `dotsSaveable` (matmul results are kept) and
 * `everythingSaveable` (nothing is recomputed).
 */
export const checkpointPolicies = {
  nothingSaveable: "nothing_saveable",
  dotsSaveable: "dots_saveable",
  everythingSaveable: "everything_saveable",
} as const satisfies Record<string, CheckpointPolicy>;

/**
 * JAX's `jax.checkpoint` (`remat`): f with the same values and derivatives, but reverse mode
 * (grad, vjp) keeps only what `policy` saves of f's forward pass and recomputes the rest
 * from f's arguments in the backward pass, trading compute for memory: checkpoint each layer
 * of a deep network to keep one activation per layer alive. Like f, the result consumes its
 * arguments (pytrees of Arrays); it composes with jit, vmap, jvp and nesting.
 *
 * @throws Error when `f` is not a function or `policy` is not a {@link CheckpointPolicy}.
 * @example
 * ```ts
 * import { checkpoint, checkpointPolicies, grad, numpy as np } from "kiln";
 * const layer = checkpoint((w: np.Array, h: np.Array) => np.tanh(np.matmul(h, w)), { policy: checkpointPolicies.dotsSaveable });
 * ```
 */
export function checkpoint<F extends (...args: any[]) => any>(f: F, opts: { policy?: CheckpointPolicy } = {}): F {
  return rematAs("checkpoint", f, opts);
}

/** Another name for {@link checkpoint}, as in JAX (`jax.remat`); its errors name remat. */
export function remat<F extends (...args: any[]) => any>(f: F, opts: { policy?: CheckpointPolicy } = {}): F {
  return rematAs("remat", f, opts);
}

function rematAs<F extends (...args: any[]) => any>(op: string, f: F, opts: { policy?: CheckpointPolicy }): F {
  checkFunction(op, f);
  const policy = opts.policy ?? "nothing_saveable";
  if (!(Object.values(checkpointPolicies) as string[]).includes(policy))
    throw new Error(`${op}: got policy ${String(policy)}, expected one of ${Object.values(checkpointPolicies).join(", ")}`);
  return ((...args: any[]) => callCustom("checkpoint", op, f, args, () => ({ policy }))) as F;
}

export type CustomJvpFunction<F extends (...args: any[]) => any> = F & {
  defjvp(rule: (primals: any[], tangents: any[]) => [any, any]): CustomJvpFunction<F>;
};
export type CustomVjpFunction<F extends (...args: any[]) => any> = F & {
  defvjp(fwd: (...args: any[]) => [any, any], bwd: (residuals: any, cotangent: any) => any[]): CustomVjpFunction<F>;
};

/**
 * JAX's custom_jvp: `customJvp(f).defjvp((primals, tangents) => [out, tangentOut])` is f
 * whose derivatives (forward and reverse) come from the rule. Like f, it consumes its
 * arguments; the rule consumes the primals and tangents it is given.
 */
export function customJvp<F extends (...args: any[]) => any>(f: F): CustomJvpFunction<F> {
  checkFunction("customJvp", f);
  let rule: ((primals: any[], tangents: any[]) => [any, any]) | null = null;
  const wrapped: any = (...args: any[]) => {
    if (rule === null) throw new Error("customJvp: call defjvp(rule) before calling the function");
    const r = rule;
    return callCustom("custom_jvp", "customJvp", f, args, (defs, state) => ({
      jvp: ruleFn((cargs) => {
        const n = defs.length;
        const trees = cargs.map((ls, i) => fromCore(defs[i % n], ls));
        const out = r(trees.slice(0, n), trees.slice(n));
        if (!globalThis.Array.isArray(out) || out.length !== 2) throw new Error("customJvp: the rule must return [out, tangentOut]");
        return [outLeaves(out[0], state, "customJvp", "the rule's output"), leavesOf(out[1], state.outDef, "customJvp", "the rule's tangent")];
      }, "customJvp"),
    }));
  };
  wrapped.defjvp = (r: any) => {
    checkFunction("customJvp.defjvp", r);
    rule = r;
    return wrapped;
  };
  return wrapped;
}

/**
 * JAX's custom_vjp: `customVjp(f).defvjp(fwd, bwd)`, fwd(...args) -> [out, residuals] and
 * bwd(residuals, cotangent) -> one cotangent per argument (null: zero). Reverse mode only,
 * as in JAX. fwd and bwd consume what they are given.
 */
export function customVjp<F extends (...args: any[]) => any>(f: F): CustomVjpFunction<F> {
  checkFunction("customVjp", f);
  let rules: [(...args: any[]) => [any, any], (res: any, ct: any) => any[]] | null = null;
  const wrapped: any = (...args: any[]) => {
    if (rules === null) throw new Error("customVjp: call defvjp(fwd, bwd) before calling the function");
    const [fwd, bwd] = rules;
    let resDef: JsTreeDef | undefined;
    return callCustom("custom_vjp", "customVjp", f, args, (defs, state) => ({
      fwd: ruleFn((cargs) => {
        const out = fwd(...cargs.map((ls, i) => fromCore(defs[i], ls)));
        if (!globalThis.Array.isArray(out) || out.length !== 2) throw new Error("customVjp: fwd must return [out, residuals]");
        const [rl, rd] = flatten(out[1]);
        resDef = rd;
        return [outLeaves(out[0], state, "customVjp", "fwd's output"), rl];
      }, "customVjp"),
      bwd: ruleFn((cargs) => {
        const cts = bwd(fromCore(resDef!, cargs[0]), fromCore(state.outDef!, cargs[1]));
        if (!globalThis.Array.isArray(cts) || cts.length !== defs.length)
          throw new Error(`customVjp: bwd must return a JS array of ${defs.length} cotangents, one per argument`);
        return cts.map((c, i) => (c === null ? null : leavesOf(c, defs[i], "customVjp", `cotangent ${i}`)));
      }, "customVjp"),
    }));
  };
  wrapped.defvjp = (fwd: any, bwd: any) => {
    checkFunction("customVjp.defvjp", fwd);
    checkFunction("customVjp.defvjp", bwd);
    rules = [fwd, bwd];
    return wrapped;
  };
  return wrapped;
}

/**
 * Export of a function traced on example arguments (not consumed; only their shapes and
 * dtypes matter): `exportOnnx(f)(...args)` gives an ONNX model (opset 18 unless
 * `options.opset` says later) as bytes for onnxruntime, `exportStablehlo(f)(...args)` a
 * StableHLO MLIR module for XLA. Inputs are the flattened argument leaves (input_0, ...),
 * outputs the flattened result leaves (output_0, ...). Named so as not to clash with
 * JavaScript's `export` keyword or jax-js's API.
 */
export function exportOnnx(f: (...args: any[]) => any, options: { opset?: number } = {}) {
  checkFunction("exportOnnx", f);
  return (...args: any[]): Uint8Array => {
    const [leaves, defs] = flattenArgs(args);
    const state: State = {};
    return check(core.exportOnnx(flatFn(f, defs, state, { op: "exportOnnx" }), toCore(leaves, "exportOnnx"), options.opset ?? 18));
  };
}

/** The StableHLO MLIR module of `f` traced on example arguments (see {@link exportOnnx}). */
export function exportStablehlo(f: (...args: any[]) => any) {
  checkFunction("exportStablehlo", f);
  return (...args: any[]): string => {
    const [leaves, defs] = flattenArgs(args);
    const state: State = {};
    return check(core.exportStablehlo(flatFn(f, defs, state, { op: "exportStablehlo" }), toCore(leaves, "exportStablehlo")));
  };
}
