// Bad input never corrupts state (issue 17, item 4): every function the package exports gets
// bad calls (disposed Arrays, plain objects, strings, wrong shapes/dtypes/axes, absurd
// sizes, unknown dtypes) and valid edge cases (NaN/Inf, empty arrays). Each bad call must
// throw an Error naming the function (a ReferenceError for a disposed Array, as jax-js),
// the sentinel arrays made before must read back unchanged, and memory() must be back
// where it was. The harness (bad_input_harness.ts) enumerates the exports at run time: a
// new export without a row, or a row for no export, fails the coverage test.
import { describe, expect, test } from "vitest";
import * as kiln from "../dist/index.js";
import { err, exportedFunctions, expectRows, expectRowsAsync, ok, refErr, type Row } from "./bad_input_harness.js";
import { specificRows } from "./bad_input_rows.js";
import { knownGaps } from "./bad_input_gaps.js";

const { numpy: np } = kiln;

// Functions whose first parameter is not an Array: the generic rows below do not apply;
// each has specific rows in bad_input_rows.ts (the coverage test checks that).
const notArrayFirst = new Set([
  "init", "getWebGPUDevice", "webgpuDebug", "setDebug", "defaultDevice", "devicePut", "blockUntilReady", "memory",
  "grad", "valueAndGrad", "vmap", "jit", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "jacobian", "hessian", "makeJaxpr",
  "customJvp", "customVjp", "checkpoint", "remat", "resetPeakMemory", "exportOnnx", "exportStablehlo",
  "lax.scan", "lax.whileLoop", "lax.foriLoop", "lax.cond", "lax.switch", "lax.map",
  "numpy.array", "numpy.zeros", "numpy.ones", "numpy.full", "numpy.eye", "numpy.identity", "numpy.arange", "numpy.linspace",
  "numpy.logspace", "numpy.geomspace", "numpy.tri", "numpy.broadcastShapes", "numpy.broadcastArrays", "numpy.concatenate",
  "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.dstack", "numpy.columnStack", "numpy.einsum", "numpy.meshgrid",
  "numpy.select", "numpy.promoteTypes", "numpy.resultType", "numpy.finfo", "numpy.iinfo", "numpy.indices", "numpy.hann",
  "numpy.bartlett", "numpy.blackman", "numpy.diagIndices", "numpy.fromfunction", "numpy.applyAlongAxis",
  "numpy.applyOverAxes", "numpy.isscalar", "numpy.shape", "numpy.ndim", "numpy.size", "numpy.linalg.multiDot",
  "numpy.fft.fftfreq", "numpy.fft.rfftfreq", "numpy.polyval",
  // ComplexPair { real, imag } first, not an Array:
  "numpy.fft.fft", "numpy.fft.fftn", "numpy.fft.fft2", "numpy.fft.ifft", "numpy.fft.ifftn", "numpy.fft.ifft2",
  "numpy.fft.irfft", "numpy.fft.irfftn", "numpy.fft.irfft2", "numpy.fft.hfft",
  "random.key", "tree.flatten", "tree.leaves", "tree.structure", "tree.unflatten", "tree.map", "tree.ref", "tree.dispose",
  "profiler.startTrace", "profiler.stopTrace", "profiler.webgpuCounters",
  "optax.adam", "optax.adamw", "optax.rmsprop", "optax.sgd", "optax.applyUpdates", "optax.identity", "optax.setToZero",
  "optax.chain", "optax.addDecayedWeights", "optax.clip", "optax.clipByGlobalNorm", "optax.globalNorm", "optax.scale",
  "optax.scaleByAdam", "optax.scaleByLearningRate", "optax.scaleByRms", "optax.scaleByStddev", "optax.scaleBySchedule",
  "optax.trace", "optax.constantSchedule", "optax.cosineDecaySchedule", "optax.exponentialDecay", "optax.joinSchedules",
  "optax.linearSchedule", "optax.piecewiseConstantSchedule", "optax.polynomialSchedule", "optax.warmupCosineDecaySchedule",
  "io.parseIdx", "io.idxToArray", "llm.load",
]);

// Exports with no bad input to give, and why (they still get a valid row in bad_input_rows.ts).
export const exempt: Record<string, string> = {};

// Message spellings besides the JS name and its snake_case (the core op a function is).
const aliases: Record<string, string[]> = {
  "numpy.trueDivide": ["divide"], "numpy.remainder": ["mod"], "numpy.asin": ["arcsin"], "numpy.asinh": ["arcsinh"],
  "numpy.var_": ["var"], "numpy.permuteDims": ["transpose"], "numpy.cumulativeSum": ["cumsum"], "numpy.cumulativeProd": ["cumprod"],
  "numpy.bitwiseLeftShift": ["left_shift"], "numpy.atan2": ["arctan2"], "numpy.logicalNot": ["logical_not"],
  // The same function object under a second name (numpy_ops.ts, nn.ts, numpy_composite.ts).
  "numpy.absolute": ["abs"], "numpy.acos": ["arccos"], "numpy.atan": ["arctan"], "numpy.acosh": ["arccosh"],
  "numpy.atanh": ["arctanh"], "numpy.around": ["round"], "numpy.rint": ["round"], "numpy.bitwiseNot": ["invert"],
  "numpy.bitwiseInvert": ["invert"], "numpy.bitwiseRightShift": ["right_shift"], "numpy.radians": ["deg2rad"],
  "numpy.degrees": ["rad2deg"], "nn.swish": ["silu"], "nn.hardSwish": ["hardSilu"], "jacobian": ["jacrev"],
};

/** Generic rows for a function whose first parameter is an Array. */
function genericRows(fn: string, f: Function): Row[] {
  return [
    refErr(fn, (m) => f(m.freed(), 1)),
    err(fn, () => f({}, 1)),
    err(fn, () => f("abc", 1)),
  ];
}

const fns = exportedFunctions();
const generic: Row[] = [];
for (const [fn, f] of fns) if (!notArrayFirst.has(fn)) generic.push(...genericRows(fn, f));
const specific = specificRows();

describe("bad input", () => {
  test("every exported function has rows", () => {
    const covered = new Set([...generic, ...specific].map((r) => r.fn));
    const missing = [...fns.keys()].filter((f) => !covered.has(f) && !(f in exempt));
    const unknown = [...covered].filter((f) => !fns.has(f));
    expect(missing, "exported functions without a bad-input row").toEqual([]);
    expect(unknown, "rows naming no export").toEqual([]);
    // Every function that skips the generic rows has specific ones.
    expect([...notArrayFirst].filter((f) => !specific.some((r) => r.fn === f) && fns.has(f))).toEqual([]);
    expect(fns.size).toBeGreaterThan(300);
  });

  const byFamily = new Map<string, Row[]>();
  for (const r of [...generic, ...specific]) {
    const family = r.fn.includes(".") ? r.fn.split(".")[0] : "top";
    byFamily.set(family, [...(byFamily.get(family) ?? []), r]);
  }
  // Families of async exports (llm.load returns a Promise) await each row.
  const asyncFamilies = new Set(["llm"]);
  for (const [family, rows] of byFamily)
    test(`${family}: ${rows.length} rows`, () => (asyncFamilies.has(family) ? expectRowsAsync : expectRows)(rows, aliases, knownGaps));

  test("the harness can fail", async () => {
    // A row that throws nothing, one whose message names another function, and a valid row
    // that keeps an array alive must each be reported.
    expect(() => expectRows([err("numpy.add", () => np.add(1, 2).dispose())], aliases)).toThrow();
    expect(() => expectRows([err("numpy.add", () => np.sum(np.zeros([2]), { axis: 3 }))], aliases)).toThrow();
    const kept: kiln.Array[] = [];
    expect(() => expectRows([ok("numpy.add", () => void kept.push(np.zeros([2]).ref))], aliases)).toThrow();
    for (const a of kept) while (a.refCount > 0) a.dispose();
    // An async row that resolves, or rejects naming another function, is reported too.
    await expect(expectRowsAsync([err("llm.load", async () => 1)], aliases)).rejects.toThrow();
    await expect(expectRowsAsync([err("llm.load", async () => np.sum(np.zeros([2]), { axis: 3 }))], aliases)).rejects.toThrow();
  });
});
