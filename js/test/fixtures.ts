// Reader for the committed NumPy/JAX fixtures (tests/fixtures/*.txt, format in
// tools/gen_numpy_fixtures.py) and the comparison that the JS tests share.
import { numpy as np } from "../dist/index.js";

/**
 * The host devices a fixture file runs on: cpu and wasm in Node; wasm only in the headless
 * Chromium run (test/browser/run.mjs). The cpu device is the same interpreter in the same
 * core (kiln_core_mt.wasm, on V8 in both), with no worker or browser API of its own, so its
 * cases computed again in a page check nothing Node's run did not; the wasm device's kernels
 * and thread pool (Web Workers there) do differ. For the files whose cpu part is long
 * (JAX fixtures 68 s, fft and decompositions 25 s, sorting and linear algebra 11 s of the
 * Chromium run's page time on the 2-core machine); differential.test.ts does the same.
 */
export const hostDevices: readonly ("cpu" | "wasm")[] = typeof (globalThis as any).process === "undefined" ? ["wasm"] : ["cpu", "wasm"];

export type FixArray = { dtype: string; weak: number; shape: number[]; values: number[] };
export type Case = {
  id: string;
  op: string;
  params: Record<string, string[]>;
  inputs: { name?: string; arr: FixArray; views: string[][] }[];
  expects: FixArray[];
  error?: string[];
  tol: [number, number];
};

function parseValue(t: string): number {
  if (t === "nan") return NaN;
  if (t === "inf") return Infinity;
  if (t === "-inf") return -Infinity;
  return Number(t);
}

/** Parses `<dtype> <weak|-> <dims...> : <values...>` (named: a leading name token). */
function parseArray(tokens: string[]): FixArray {
  const colon = tokens.indexOf(":");
  const [dtype, weak, ...dims] = tokens.slice(0, colon);
  return { dtype, weak: weak === "-" ? -1 : Number(weak), shape: dims.map(Number), values: tokens.slice(colon + 1).map(parseValue) };
}

/** The JAX fixtures' named form: `<name> <dtype> <dims...> : <values...>` (no weak field). */
function parseNamed(tokens: string[]): FixArray {
  return parseArray([tokens[0], "-", ...tokens.slice(1)]);
}

/** Distance in float32 units in the last place. */
export function ulps(a: number, b: number): number {
  const f = new Float32Array([a, b]);
  const i = new Int32Array(f.buffer);
  const key = (x: number) => (x < 0 ? 0x80000000 - x : x);
  return Math.abs(key(i[0]) - key(i[1]));
}

export function parseFixtures(text: string, named = false): Case[] {
  const cases: Case[] = [];
  let c: Case | null = null;
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const t = line.split(" ");
    switch (t[0]) {
      case "case":
        c = { id: t[1], op: t[2], params: {}, inputs: [], expects: [], tol: [0, 0] };
        break;
      case "param":
        c!.params[t[1]] = t.slice(2);
        break;
      case "input":
        if (named) c!.inputs.push({ name: t[1], arr: parseNamed(t.slice(2)), views: [] });
        else c!.inputs.push({ arr: parseArray(t.slice(1)), views: [] });
        break;
      case "view":
        c!.inputs[c!.inputs.length - 1].views.push(t.slice(1));
        break;
      case "expect":
        c!.expects.push(named ? parseNamed(t.slice(2)) : parseArray(t.slice(1)));
        break;
      case "expect_error":
        c!.error = t.slice(1).join(" ").split("|");
        break;
      case "tol":
        c!.tol = [Number(t[1]), Number(t[2])];
        break;
      case "end":
        cases.push(c!);
        c = null;
        break;
    }
  }
  return cases;
}

/** IEEE half bits to a number (Node 20 has no Float16Array; readback gives the bits). */
function halfToNumber(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** The fixture array as a kiln Array: weak scalars become JS numbers, as a jax-js program writes them. */
export function toArray(a: FixArray): np.Array | number {
  if (a.weak === 1) return a.values[0];
  if (a.dtype === "bool") return np.array(a.values.map((v) => v !== 0), { shape: a.shape, dtype: np.bool });
  return np.array(a.values, { shape: a.shape, dtype: a.dtype as np.DType });
}

/** Compares a result with an expectation; returns a message, or null when they agree. */
export function compare(got: np.Array, want: FixArray, tol: [number, number]): string | null {
  if (got.dtype !== want.dtype) return `dtype ${got.dtype}, expected ${want.dtype}`;
  if (got.shape.join(",") !== want.shape.join(",")) return `shape [${got.shape}], expected [${want.shape}]`;
  if (want.weak !== -1 && Number(got.weakType) !== want.weak) return `weakType ${got.weakType}, expected ${want.weak === 1}`;
  return compareData(got.ref.dataSync(), want, tol);
}

/** compare() through the asynchronous read (devices without synchronous reads: webgpu). */
export async function compareAsync(got: np.Array, want: FixArray, tol: [number, number]): Promise<string | null> {
  if (got.dtype !== want.dtype) return `dtype ${got.dtype}, expected ${want.dtype}`;
  if (got.shape.join(",") !== want.shape.join(",")) return `shape [${got.shape}], expected [${want.shape}]`;
  if (want.weak !== -1 && Number(got.weakType) !== want.weak) return `weakType ${got.weakType}, expected ${want.weak === 1}`;
  return compareData(await got.ref.data(), want, tol);
}

function compareData(raw: ArrayLike<number>, want: FixArray, tol: [number, number]): string | null {
  const bits = raw instanceof Uint16Array; // float16 where the engine has no Float16Array (Node 20)
  const vals = Array.from(raw as ArrayLike<number>, (x) => (bits ? halfToNumber(x) : Number(x)));
  const [rtol, atol] = tol;
  for (let i = 0; i < vals.length; i++) {
    const g = vals[i];
    const w = want.dtype === "float32" ? Math.fround(want.values[i]) : want.values[i];
    const isFloat = want.dtype.startsWith("float");
    if (Number.isNaN(w) || Number.isNaN(g)) {
      if (!(Number.isNaN(w) && Number.isNaN(g))) return `element ${i}: ${g}, expected ${w}`;
    } else if (!isFinite(w) || !isFinite(g)) {
      if (g !== w) return `element ${i}: ${g}, expected ${w}`;
    } else if (isFloat ? !(Math.abs(g - w) <= atol + rtol * Math.abs(w)) : g !== w) {
      return `element ${i}: ${g}, expected ${w} (rtol ${rtol}, atol ${atol})`;
    }
  }
  return null;
}

/** A named fixture's `expect` arrays by name (parseFixtures(text, true) keeps them in order). */
export function namedExpects(c: Case, text: string): Record<string, FixArray> {
  const block = text.slice(text.indexOf(`case ${c.id} `));
  const lines = block.slice(0, block.indexOf("\nend")).split("\n");
  const out: Record<string, FixArray> = {};
  let i = 0;
  for (const l of lines) if (l.startsWith("expect ")) out[l.split(" ")[1]] = c.expects[i++];
  return out;
}
