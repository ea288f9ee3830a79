// The differential harness (issue 22): one JS program runs against @jax-js/jax (the oracle,
// live in this process) and against kiln, and the two outcomes are compared.
//
// A program is a function of the library namespace (`{ numpy, lax, nn, grad, ... }`), written
// as a jax-js user would (arguments consumed, `.ref` to keep one). Its outcome is either the
// result (any pytree of Arrays, numbers, booleans and strings) read back to plain values, or
// the class of the error it threw. On kiln the live-array count must come back to where it
// was: a program that follows jax-js's ownership rules leaks nothing.
import { memory } from "../../dist/index.js";

/** A library namespace as both packages export it; programs use it untyped, as JS users do. */
export type Lib = any;

export interface Tolerance {
  rtol: number;
  atol: number;
}

export interface DiffCase {
  name: string;
  run: (lib: Lib) => unknown;
  /** Float comparison tolerance; integers and booleans always compare exactly. */
  tol?: Tolerance;
  /** Also run on kiln's webgpu device (SwiftShader is slow: small programs only). */
  webgpu?: boolean;
  /**
   * Where jax-js throws and kiln computes a result (docs/COMPATIBILITY.md lists each): the
   * reason. The case then checks that jax-js still throws and kiln returns without leaking.
   */
  beyondJaxjs?: string;
  /** For a beyondJaxjs case: an equivalent program whose kiln result must equal this one's. */
  sameAs?: (lib: Lib) => unknown;
  /**
   * Where kiln follows JAX/NumPy and jax-js differs (docs/COMPATIBILITY.md lists each): the
   * reason. The case then checks that the two still differ, so a stale note fails.
   */
  knownDifference?: string;
  /** A difference kiln has yet to fix (docs/COMPATIBILITY.md, Open gaps): checked as knownDifference. */
  gap?: string;
  /** Globals the oracle needs from a newer JS runtime (skipped where they are missing). */
  oracleNeeds?: string[];
}

/** float32 arithmetic in a different order (kernels fuse, reductions split) stays within this. */
export const DEFAULT_TOL: Tolerance = { rtol: 2e-5, atol: 1e-6 };

export type Leaf =
  | { kind: "array"; shape: number[]; dtype: string; values: unknown }
  | { kind: "scalar"; value: unknown };

export type Outcome =
  | { kind: "value"; leaves: Leaf[]; structure: string }
  | { kind: "error"; errorClass: string; message: string };

function isArray(x: unknown): x is { shape: number[]; dtype: string; js(): unknown } {
  return typeof x === "object" && x !== null && "shape" in x && "dtype" in x && typeof (x as any).js === "function";
}

/** Flattens a result into its leaves (Arrays and plain values) and a structure string. */
function flattenResult(x: unknown, leaves: unknown[]): string {
  if (isArray(x)) {
    leaves.push(x);
    return "A";
  }
  if (globalThis.Array.isArray(x)) return `[${x.map((v) => flattenResult(v, leaves)).join(",")}]`;
  if (typeof x === "object" && x !== null) {
    return `{${Object.entries(x).map(([k, v]) => `${k}:${flattenResult(v, leaves)}`).join(",")}}`;
  }
  leaves.push(x);
  return "s";
}

/** A leaf's shape and dtype (an Array's values are read after: reading consumes it). */
function leafHeader(x: unknown): Leaf {
  return isArray(x) ? { kind: "array", shape: [...x.shape], dtype: String(x.dtype), values: undefined } : { kind: "scalar", value: x };
}

function errorOutcome(e: unknown): Outcome {
  return { kind: "error", errorClass: errorClassOf(e), message: e instanceof Error ? e.message : String(e) };
}

/** The error class compared: the constructor's name (Error, TypeError, UseAfterFreeError, ...). */
function errorClassOf(e: unknown): string {
  return e instanceof Error ? e.constructor.name : typeof e;
}

/**
 * runProgram for programs that may return a Promise (init, blockUntilReady, devicePut), reading
 * each Array back with `jsAsync()` where `asyncReads` (kiln's webgpu device) else `js()`.
 */
export async function runProgramAsync(lib: Lib, c: DiffCase, asyncReads = false): Promise<Outcome> {
  try {
    const raw: unknown[] = [];
    const structure = flattenResult(await c.run(lib), raw);
    const leaves: Leaf[] = [];
    for (const x of raw) leaves.push(isArray(x) ? { ...leafHeader(x), values: asyncReads ? await (x as any).jsAsync() : x.js() } : leafHeader(x));
    return { kind: "value", leaves, structure };
  } catch (e) {
    return errorOutcome(e);
  }
}

/** checkOnKiln for programs that may return a Promise; `asyncReads` as in runProgramAsync. */
export async function checkOnKilnAsync(lib: Lib, c: DiffCase, want: Outcome, asyncReads = true): Promise<string | null> {
  const before = memory().numArrays;
  const outcome = await runProgramAsync(lib, c, asyncReads);
  const d = diffCase(c, outcome, memory().numArrays - before, want);
  if (d !== null || c.sameAs === undefined) return d;
  const same = diffOutcomes(outcome, await runProgramAsync(lib, { name: `${c.name} (equivalent)`, run: c.sameAs }, asyncReads), c.tol ?? DEFAULT_TOL);
  return same === null ? null : `against the equivalent program: ${same}`;
}

export function runProgram(lib: Lib, c: DiffCase): Outcome {
  try {
    const raw: unknown[] = [];
    const structure = flattenResult(c.run(lib), raw);
    return { kind: "value", leaves: raw.map((x) => (isArray(x) ? { ...leafHeader(x), values: x.js() } : leafHeader(x))), structure };
  } catch (e) {
    return errorOutcome(e);
  }
}

/** Runs the program on kiln; also reports the JS Arrays it left alive. */
function runOnKiln(lib: Lib, c: DiffCase): { outcome: Outcome; leaked: number } {
  const before = memory().numArrays;
  const outcome = runProgram(lib, c);
  return { outcome, leaked: memory().numArrays - before };
}

/** Runs a case on kiln and compares it with jax-js's outcome: the difference, or null. */
export function checkOnKiln(lib: Lib, c: DiffCase, want: Outcome): string | null {
  const { outcome, leaked } = runOnKiln(lib, c);
  const d = diffCase(c, outcome, leaked, want);
  if (d !== null || c.sameAs === undefined) return d;
  const same = diffOutcomes(outcome, runProgram(lib, { name: `${c.name} (equivalent)`, run: c.sameAs }), c.tol ?? DEFAULT_TOL);
  return same === null ? null : `against the equivalent program: ${same}`;
}

function close(a: number, b: number, tol: Tolerance): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= tol.atol + tol.rtol * Math.abs(b);
}

function compareValues(got: unknown, want: unknown, exact: boolean, tol: Tolerance, path: string): string | null {
  if (globalThis.Array.isArray(want)) {
    if (!globalThis.Array.isArray(got) || got.length !== want.length) return `${path}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
    for (let i = 0; i < want.length; i++) {
      const d = compareValues(got[i], want[i], exact, tol, `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (typeof want === "number" && typeof got === "number") {
    const same = exact ? Object.is(got, want) || got === want : close(got, want, tol);
    return same ? null : `${path}: got ${got}, want ${want}`;
  }
  return Object.is(got, want) ? null : `${path}: got ${String(got)}, want ${String(want)}`;
}

/**
 * The first difference between kiln's outcome and jax-js's, or null. Leaks count only when
 * both returned: a program that throws half-way leaves its own arrays behind in both.
 */
export function diffCase(c: DiffCase, got: Outcome, leaked: number, want: Outcome): string | null {
  if (c.beyondJaxjs !== undefined) {
    if (want.kind !== "error") return `jax-js now returns a value (the case says: ${c.beyondJaxjs})`;
    if (got.kind === "error") return `kiln threw ${got.errorClass}: ${got.message}`;
  } else if (c.knownDifference !== undefined || c.gap !== undefined) {
    if (diffOutcomes(got, want, c.tol ?? DEFAULT_TOL) === null) return `kiln and jax-js now agree (the case says: ${c.knownDifference ?? c.gap})`;
  } else {
    const d = diffOutcomes(got, want, c.tol ?? DEFAULT_TOL);
    if (d !== null) return d;
  }
  return got.kind === "value" && leaked !== 0 ? `kiln left ${leaked} arrays alive` : null;
}

export function diffOutcomes(got: Outcome, want: Outcome, tol: Tolerance = DEFAULT_TOL): string | null {
  if (want.kind === "error" || got.kind === "error") {
    if (got.kind !== want.kind) {
      return got.kind === "error"
        ? `kiln threw ${got.errorClass}: ${got.message}; jax-js returned a value`
        : `kiln returned a value; jax-js threw ${(want as any).errorClass}: ${(want as any).message}`;
    }
    const [g, w] = [got as { errorClass: string; message: string }, want as { errorClass: string; message: string }];
    return g.errorClass === w.errorClass ? null : `kiln threw ${g.errorClass} (${g.message}); jax-js threw ${w.errorClass} (${w.message})`;
  }
  if (got.structure !== want.structure) return `structure: got ${got.structure}, want ${want.structure}`;
  for (let i = 0; i < want.leaves.length; i++) {
    const [g, w] = [got.leaves[i], want.leaves[i]];
    if (w.kind === "scalar" || g.kind === "scalar") {
      const d = compareValues((g as any).value, (w as any).value, false, tol, `leaf ${i}`);
      if (d) return d;
      continue;
    }
    if (JSON.stringify(g.shape) !== JSON.stringify(w.shape)) return `leaf ${i} shape: got [${g.shape}], want [${w.shape}]`;
    if (g.dtype !== w.dtype) return `leaf ${i} dtype: got ${g.dtype}, want ${w.dtype}`;
    const exact = !w.dtype.startsWith("float");
    const d = compareValues(g.values, w.values, exact, tol, `leaf ${i}`);
    if (d) return d;
  }
  return null;
}

const NAMESPACES = new Set(["numpy", "linalg", "fft", "lax", "nn", "random", "tree", "scipySpecial"]);

/**
 * `lib` with every exported name that a program reads recorded in `used` as coverage.mjs
 * writes it ("numpy.linalg.svd", "grad"): what the corpus exercises, for docs/COMPATIBILITY.md.
 */
export function recordingLib(lib: Lib, used: Set<string>, prefix = ""): Lib {
  return new Proxy(lib, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof key !== "string") return value;
      const name = `${prefix}${key}`;
      used.add(name);
      if (NAMESPACES.has(key) && typeof value === "object" && value !== null) return recordingLib(value, used, `${name}.`);
      return value;
    },
  });
}

// jax-js 0.1.25 calls iterator helpers (Node 22+) in einsum's parser; on older Node the
// oracle gets the ones it uses (map, filter), so that it runs as on a current runtime.
export function provideIteratorHelpers() {
  const iteratorProto = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  const helpers: Record<string, (this: Iterator<unknown>, f: (v: unknown, i: number) => unknown) => Generator<unknown>> = {
    *map(f) {
      let i = 0;
      for (let r = this.next(); !r.done; r = this.next()) yield f(r.value, i++);
    },
    *filter(f) {
      let i = 0;
      for (let r = this.next(); !r.done; r = this.next()) if (f(r.value, i++)) yield r.value;
    },
  };
  for (const [name, value] of Object.entries(helpers))
    if (typeof iteratorProto[name] !== "function") Object.defineProperty(iteratorProto, name, { configurable: true, writable: true, value });
}

/**
 * jax-js 0.1.25 stores float16 (and names Float16Array for float64) through the runtime's
 * Float16Array, which Node 20 lacks: the oracle gets a standard polyfill (IEEE half rounding
 * on every store) while the test runs. Returns the function that takes it away again, so
 * later test files in the same process see the runtime as it is.
 */
export async function provideFloat16Array(): Promise<() => void> {
  if ("Float16Array" in globalThis) return () => {};
  const { Float16Array } = await import("@petamoriken/float16");
  (globalThis as any).Float16Array = Float16Array;
  return () => delete (globalThis as any).Float16Array;
}
