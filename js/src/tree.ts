// JsTree: jax-js's pytrees (nested JS arrays and plain objects, in insertion order) with
// flatten/unflatten/map and the ownership helpers ref and dispose.
/**
 * Pytrees (jax-js's JsTree): nested JS arrays and plain objects whose leaves are Arrays or
 * other values, with flatten, unflatten and map. The transformations take and return them.
 * @module
 */
import { Array } from "./array.js";

/** The kind of a tree node: a JS array, a plain object, or a leaf. */
export enum NodeType {
  Array = "Array",
  Object = "Object",
  Leaf = "Leaf",
}

/**
 * A pytree: a leaf of type T, a JS array of trees, or a plain object of trees (keys in insertion order).
 */
export type JsTree<T> = T | JsTree<T>[] | { [key: string]: JsTree<T> };

function isPlainObject(x: any): boolean {
  if (x === null || typeof x !== "object" || x instanceof Array) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** The structure of a JsTree. */
export class JsTreeDef {
  static leaf = new JsTreeDef(NodeType.Leaf, null, []);
  /** A node: its type, its metadata (an object's keys, else null) and its children's structures. */
  constructor(
    readonly nodeType: NodeType,
    readonly nodeMetadata: any,
    readonly childTreedefs: JsTreeDef[],
  ) {}
  /** The number of leaves. */
  get size(): number {
    if (this.nodeType === NodeType.Leaf) return 1;
    return this.childTreedefs.reduce((a, c) => a + c.size, 0);
  }
  /** The structure as text, `JsTreeDef({a: *, b: [*, *]})` (`*` a leaf). */
  toString(root = true): string {
    let s: string;
    if (this.nodeType === NodeType.Leaf) s = "*";
    else if (this.nodeType === NodeType.Array) s = `[${this.childTreedefs.map((c) => c.toString(false)).join(", ")}]`;
    else
      s = `{${(this.nodeMetadata as string[]).map((k, i) => `${k}: ${this.childTreedefs[i].toString(false)}`).join(", ")}}`;
    return root ? `JsTreeDef(${s})` : s;
  }
  /** Whether two structures are the same. */
  equals(other: JsTreeDef): boolean {
    return this.toString() === other.toString();
  }
}

/**
 * The leaves of `tree` in order (arrays by index, objects in key order) and its structure.
 *
 * @example
 * ```ts
 * const [leaves, def] = tree.flatten({ w: w0, b: [b0, b1] }); // [w0, b0, b1], JsTreeDef({w: *, b: [*, *]})
 * ```
 */
export function flatten<T>(tree: JsTree<T>): [T[], JsTreeDef] {
  const leaves: T[] = [];
  const rec = (t: any): JsTreeDef => {
    if (globalThis.Array.isArray(t)) return new JsTreeDef(NodeType.Array, null, t.map(rec));
    if (isPlainObject(t)) {
      const keys = Object.keys(t);
      return new JsTreeDef(NodeType.Object, keys, keys.map((k) => rec(t[k])));
    }
    leaves.push(t);
    return JsTreeDef.leaf;
  };
  const def = rec(tree);
  return [leaves, def];
}

/** The leaves of `tree` in flatten order. */
export function leaves<T>(tree: JsTree<T>): T[] {
  return flatten(tree)[0];
}
/** The structure of `tree` without its leaves. */
export function structure<T>(tree: JsTree<T>): JsTreeDef {
  return flatten(tree)[1];
}

/**
 * The tree of structure `treedef` with the given leaves in flatten order.
 *
 * @throws Error when there are too few or too many leaves.
 */
export function unflatten<T>(treedef: JsTreeDef, leaves: Iterable<T>): JsTree<T> {
  const it = leaves[Symbol.iterator]();
  const rec = (d: JsTreeDef): any => {
    if (d.nodeType === NodeType.Leaf) {
      const n = it.next();
      if (n.done) throw new Error(`tree.unflatten: too few leaves for ${treedef.toString()}`);
      return n.value;
    }
    if (d.nodeType === NodeType.Array) return d.childTreedefs.map(rec);
    const out: any = {};
    (d.nodeMetadata as string[]).forEach((k, i) => (out[k] = rec(d.childTreedefs[i])));
    return out;
  };
  const out = rec(treedef);
  if (!it.next().done) throw new Error(`tree.unflatten: too many leaves for ${treedef.toString()}`);
  return out;
}

/**
 * A tree of the same structure with `fn` applied to each leaf (and the matching leaves of `rest`).
 *
 * @throws Error when the structures of `tree` and `rest` differ.
 */
export function map<T, U>(fn: (...args: T[]) => U, tree: JsTree<T>, ...rest: JsTree<T>[]): JsTree<U> {
  const [ls, def] = flatten(tree);
  const others = rest.map((r) => {
    const [l, d] = flatten(r);
    if (!d.equals(def)) throw new Error(`tree.map: structures differ: ${def.toString()} vs ${d.toString()}`);
    return l;
  });
  return unflatten(def, ls.map((x, i) => fn(x, ...others.map((o) => o[i]))));
}

/** Takes a reference of every Array in a tree. */
export function ref<Tree extends JsTree<any>>(tree: Tree): Tree {
  return map((x: any) => (x instanceof Array ? x.ref : x), tree) as Tree;
}
/** Disposes every Array in a tree. */
export function dispose<Tree extends JsTree<any>>(tree: Tree | null | undefined): void {
  if (tree === null || tree === undefined) return;
  for (const x of leaves(tree)) if (x instanceof Array) x.dispose();
}
