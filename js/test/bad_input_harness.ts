// The harness of bad_input.test.ts (issue 17, item 4): rows of bad calls, the functions the
// package exports (enumerated at run time), sentinel arrays and the memory counters.
import { expect } from "vitest";
import * as kiln from "../dist/index.js";
import * as optax from "../dist/optax/index.js";
import * as io from "../dist/io.js";

const { numpy: np } = kiln;

/** Makes arrays for one row and disposes, after it, those the call left alive. */
export class Maker {
  made: kiln.Array[] = [];
  arr(values: any, opts: any = {}): kiln.Array {
    const a = np.array(values, opts);
    this.made.push(a);
    return a;
  }
  /** An array made elsewhere, cleaned up with the row's own. */
  keep(a: kiln.Array): kiln.Array {
    this.made.push(a);
    return a;
  }
  f23(): kiln.Array {
    return this.arr([[0, 1, 2], [3, 4, 5]]);
  }
  /** A disposed Array: every use is a ReferenceError, as jax-js. */
  freed(): kiln.Array {
    const a = np.array([1, 2, 3]);
    a.dispose();
    return a;
  }
  cleanup() {
    // The owner's one reference: a call that failed did not consume its arguments (or did,
    // then refCount is 0); a reference a failed call took and kept shows as a leak.
    for (const a of this.made) if (a.refCount > 0) a.dispose();
    this.made = [];
  }
}

export type Expect = { error: string[] } | { referenceError: true } | { valid: (result: any) => void };
export interface Row {
  fn: string; // the exported path, e.g. "numpy.add", "optax.adam", "jit"
  call: (m: Maker) => any;
  expect: Expect;
}

export const err = (fn: string, call: (m: Maker) => any, ...parts: string[]): Row => ({ fn, call, expect: { error: parts } });
export const refErr = (fn: string, call: (m: Maker) => any): Row => ({ fn, call, expect: { referenceError: true } });
export const ok = (fn: string, call: (m: Maker) => any, check: (r: any) => void = () => {}): Row => ({ fn, call, expect: { valid: check } });

/** The module objects whose functions the tables must cover, by the path users write. */
export function modules(): Record<string, any> {
  return {
    "": kiln,
    numpy: kiln.numpy,
    "numpy.linalg": kiln.numpy.linalg,
    "numpy.fft": kiln.numpy.fft,
    lax: kiln.lax,
    "lax.linalg": kiln.lax.linalg,
    nn: kiln.nn,
    random: kiln.random,
    tree: kiln.tree,
    scipySpecial: kiln.scipySpecial,
    profiler: kiln.profiler,
    optax,
    io,
    llm: kiln.llm,
  };
}

/** Every exported function (classes excluded) as "path.name", and the function itself. */
export function exportedFunctions(): Map<string, Function> {
  const out = new Map<string, Function>();
  for (const [path, mod] of Object.entries(modules())) {
    for (const [name, v] of Object.entries(mod)) {
      if (typeof v !== "function") continue;
      if (/^[A-Z]/.test(name)) continue; // classes (Array, ClosedJaxpr, JsTreeDef, ...) and DType
      out.set(path ? `${path}.${name}` : name, v as Function);
    }
  }
  return out;
}

/** The spellings a message may use for a function: its JS name, snake_case, or the C++ op's. */
export function namesOf(fn: string, aliases: Record<string, string[]>): string[] {
  const name = fn.split(".").pop()!;
  const snake = name.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase()).replace(/_$/, "");
  return [name, snake, ...(aliases[fn] ?? [])];
}

function flatCounters(): string {
  const m = kiln.memory();
  const devices = Object.entries(m.devices).map(([k, d]) => `${k}: ${d!.numBuffers - d!.numPooledBuffers} buffers, ${d!.numBytes - d!.numPooledBytes} bytes`);
  return `arrays ${m.numArrays}, core arrays ${m.numCoreArrays}, ${devices.join("; ")}`;
}

/** Arrays made before every row: they must read back unchanged after it. */
export class Sentinels {
  f = np.array([[0, 1.5], [-2, 3]]);
  i = np.array([7, -8, 9], { dtype: np.int32 });
  b = np.array([true, false]);
  special = np.array([NaN, Infinity, -Infinity]);
  lazy = np.add(np.multiply(this.f.ref, 2), 1);
  view = np.transpose(this.f.ref);
  check(): string {
    const want: [string, kiln.Array, number[]][] = [
      ["f", this.f, [0, 1.5, -2, 3]],
      ["i", this.i, [7, -8, 9]],
      ["b", this.b, [1, 0]],
      ["special", this.special, [NaN, Infinity, -Infinity]],
      ["lazy", this.lazy, [1, 4, -3, 7]],
      ["view", this.view, [0, -2, 1.5, 3]],
    ];
    const bad: string[] = [];
    for (const [name, a, v] of want) {
      let got: number[];
      try {
        got = Array.from(a.ref.dataSync() as any, Number); // dataSync consumes, as jax-js
      } catch (e) {
        bad.push(`${name} unreadable: ${e}`);
        continue;
      }
      if (got.length !== v.length || got.some((x, k) => !Object.is(x, v[k]) && !(Number.isNaN(x) && Number.isNaN(v[k])))) bad.push(`${name} = ${got}`);
    }
    return bad.join("; ");
  }
  dispose() {
    for (const a of [this.f, this.i, this.b, this.special, this.lazy, this.view]) a.dispose();
  }
}

/** Runs one row; returns why it failed, or "". */
export function runRow(row: Row, aliases: Record<string, string[]>): string {
  const m = new Maker();
  const before = flatCounters();
  let result: any;
  let thrown: unknown = undefined;
  try {
    result = row.call(m);
  } catch (e) {
    thrown = e;
  }
  return judge(row, aliases, m, before, result, thrown);
}

/** runRow for an async export (llm.load): the call's Promise is awaited, a rejection is what it threw. */
export async function runRowAsync(row: Row, aliases: Record<string, string[]>): Promise<string> {
  const m = new Maker();
  const before = flatCounters();
  let result: any;
  let thrown: unknown = undefined;
  try {
    result = await row.call(m);
  } catch (e) {
    thrown = e;
  }
  return judge(row, aliases, m, before, result, thrown);
}

function judge(row: Row, aliases: Record<string, string[]>, m: Maker, before: string, result: any, thrown: unknown): string {
  let why = "";
  const ex = row.expect;
  if ("valid" in ex) {
    if (thrown !== undefined) why = `threw on a valid input: ${thrown}`;
    else {
      try {
        ex.valid(result);
      } catch (e) {
        why = `wrong result: ${(e as Error).message}`;
      }
    }
  } else if (thrown === undefined) {
    why = "nothing was thrown";
  } else if ("referenceError" in ex) {
    if (!(thrown instanceof ReferenceError)) why = `threw ${thrown}, expected a ReferenceError`;
  } else if (!(thrown instanceof Error)) {
    why = `threw a non-Error: ${String(thrown)}`;
  } else {
    const msg = thrown.message;
    const names = namesOf(row.fn, aliases);
    if (!names.some((n) => msg.includes(n))) why = `message '${msg}' names none of ${names.join(", ")}`;
    for (const p of ex.error) if (!msg.includes(p)) why ||= `message '${msg}' lacks '${p}'`;
  }
  disposeTree(result);
  m.cleanup();
  const after = flatCounters();
  if (after !== before) why += `${why ? "; " : ""}counters ${before} -> ${after}`;
  return why;
}

function disposeTree(x: any) {
  if (x instanceof kiln.Array) {
    if (x.refCount > 0) x.dispose();
  } else if (Array.isArray(x)) x.forEach(disposeTree);
  else if (x && typeof x === "object" && Object.getPrototypeOf(x) === Object.prototype) Object.values(x).forEach(disposeTree);
}

/**
 * Runs the rows against sentinels. `known` lists functions with failures not fixed yet (the
 * reason for each is in bad_input.test.ts): their failing rows are not reported, but each
 * must still fail somewhere, so that a fixed one is taken off the list.
 */
export function expectRows(rows: Row[], aliases: Record<string, string[]>, known: Record<string, string> = {}) {
  const s = new Sentinels();
  const whys: string[] = [];
  try {
    for (const r of rows) whys.push(runRow(r, aliases) + sentinelsBroken(s));
  } finally {
    s.dispose();
  }
  report(rows, whys, known);
}

/** expectRows for rows of async exports, awaited one after the other. */
export async function expectRowsAsync(rows: Row[], aliases: Record<string, string[]>, known: Record<string, string> = {}) {
  const s = new Sentinels();
  const whys: string[] = [];
  try {
    for (const r of rows) whys.push((await runRowAsync(r, aliases)) + sentinelsBroken(s));
  } finally {
    s.dispose();
  }
  report(rows, whys, known);
}

const SENTINELS = "sentinels: ";
function sentinelsBroken(s: Sentinels): string {
  const broken = s.check();
  return broken ? `; ${SENTINELS}${broken}` : "";
}

function report(rows: Row[], whys: string[], known: Record<string, string>) {
  const failures: string[] = [];
  const stillFailing = new Set<string>();
  rows.forEach((r, k) => {
    const why = whys[k].replace(/^; /, "");
    const broken = why.includes(SENTINELS);
    if (why && r.fn in known && !broken) stillFailing.add(r.fn);
    else if (why) failures.push(`${r.fn} (row ${k}): ${why}`);
  });
  for (const fn of new Set(rows.map((r) => r.fn)))
    if (fn in known && !stillFailing.has(fn)) failures.push(`${fn}: passes now, take it off the known gaps`);
  // The rows in the message too: the browser run prints only the message, not the diff.
  expect(failures, `${failures.length} of ${rows.length} rows failed: ${failures.join("; ")}`).toEqual([]);
}
