// Specific rows of bad_input.test.ts: wrong shapes, dtypes and axes, unknown dtype strings,
// absurd sizes, foreign objects where options or functions are expected, and the valid edge
// cases (NaN/Inf compute IEEE results, empty arrays stay empty), by family.
import { expect } from "vitest";
import * as kiln from "../dist/index.js";
import * as optax from "../dist/optax/index.js";
import * as io from "../dist/io.js";
import { webGpuRuntime } from "../dist/webgpu/attach.js";
import { err, ok, refErr, type Row } from "./bad_input_harness.js";

const { numpy: np, lax, nn, random, tree } = kiln;

const values = (a: kiln.Array) => Array.from(a.dataSync() as any, Number);
const same = (got: number[], want: number[]) =>
  expect(got.length === want.length && got.every((x, k) => Object.is(x, want[k]) || (Number.isNaN(x) && Number.isNaN(want[k]))), `${got} vs ${want}`).toBe(true);

function creation(): Row[] {
  return [
    err("numpy.array", () => np.array([[1, 2], [3]]), "ragged"),
    err("numpy.array", () => np.array([1, 2, 3], { shape: [2, 2] })),
    err("numpy.array", () => np.array([1, 2], { dtype: "float8" as any }), "float8"),
    err("numpy.array", () => np.array({} as any)),
    err("numpy.zeros", () => np.zeros([1e12]), "1000000000000"),
    err("numpy.zeros", () => np.zeros([2, -3]), "-3"),
    err("numpy.zeros", () => np.zeros([2.5])),
    err("numpy.zeros", () => np.zeros("abc" as any)),
    err("numpy.zeros", () => np.zeros({} as any)),
    err("numpy.zeros", () => np.zeros([2], { dtype: "complex64" as any }), "complex64"),
    err("numpy.ones", () => np.ones([2 ** 31, 2 ** 31])),
    err("numpy.full", () => np.full([1e12], 1)),
    err("numpy.full", (m) => np.full([2, 3], m.arr([1, 2, 3, 4]))),
    err("numpy.eye", () => np.eye(-1)),
    err("numpy.eye", () => np.eye(1e7)),
    err("numpy.identity", () => np.identity(1e7)),
    err("numpy.arange", () => np.arange(0, 10, 0), "step"),
    err("numpy.arange", () => np.arange(1e15)),
    err("numpy.arange", () => np.arange(NaN)),
    err("numpy.linspace", () => np.linspace(0, 1, -1), "-1"),
    err("numpy.linspace", () => np.linspace(0, 1, 1e12)),
    ok("numpy.linspace", () => np.linspace(0, 1, 0), (r) => expect(r.shape).toEqual([0])),
    err("numpy.logspace", () => np.logspace(0, 1, -1)),
    err("numpy.geomspace", () => np.geomspace(0, 1, 5)),
    err("numpy.tri", () => np.tri(-1)),
    ok("numpy.tri", () => np.tri(0), (r) => expect(r.shape).toEqual([0, 0])),
    err("numpy.indices", () => np.indices([-1])),
    // NumPy returns an empty window for M < 1.
    ok("numpy.hann", () => np.hann(-1), (r) => expect(r.shape).toEqual([0])),
    ok("numpy.bartlett", () => np.bartlett(-1), (r) => expect(r.shape).toEqual([0])),
    ok("numpy.blackman", () => np.blackman(0), (r) => expect(r.shape).toEqual([0])),
    err("numpy.hann", () => np.hann(1e12)),
    err("numpy.diagIndices", () => np.diagIndices(-1)),
    err("numpy.fromfunction", () => np.fromfunction((i: any) => i, [-1])),
    err("numpy.finfo", () => np.finfo("int32" as any)),
    err("numpy.iinfo", () => np.iinfo("float32" as any)),
    err("numpy.promoteTypes", () => np.promoteTypes("float32" as any, "nope" as any), "nope"),
    err("numpy.resultType", () => np.resultType({} as any)),
    ok("numpy.isscalar", () => np.isscalar({} as any), (r) => expect(r).toBe(false)),
    refErr("numpy.shape", (m) => np.shape(m.freed())),
    refErr("numpy.ndim", (m) => np.ndim(m.freed())),
    refErr("numpy.size", (m) => np.size(m.freed())),
    ok("numpy.shape", () => np.shape(3), (r) => expect(r).toEqual([])),
  ];
}

function manyArrays(): Row[] {
  return [
    err("numpy.broadcastShapes", () => np.broadcastShapes([2, 3], [4]), "[2,3]"),
    err("numpy.broadcastArrays", (m) => np.broadcastArrays(m.f23(), m.arr([1, 2]))),
    refErr("numpy.broadcastArrays", (m) => np.broadcastArrays(m.freed(), m.arr([1, 2]))),
    err("numpy.concatenate", (m) => np.concatenate([m.f23(), m.arr([1, 2])])),
    err("numpy.concatenate", () => np.concatenate([])),
    err("numpy.concatenate", (m) => np.concatenate([m.f23(), m.f23()], 5), "5"),
    refErr("numpy.concatenate", (m) => np.concatenate([m.freed(), m.f23()])),
    err("numpy.stack", (m) => np.stack([m.f23(), m.arr([1, 2])])),
    err("numpy.stack", () => np.stack([])),
    err("numpy.vstack", (m) => np.vstack([m.f23(), m.arr([1, 2])])),
    err("numpy.hstack", (m) => np.hstack([m.f23(), m.arr([1, 2])])),
    err("numpy.dstack", (m) => np.dstack([m.f23(), m.arr([1, 2])])),
    err("numpy.columnStack", (m) => np.columnStack([m.f23(), m.arr([1, 2, 3])])),
    // What these make from a number or a reshape before the failing step is freed.
    err("numpy.vstack", (m) => np.vstack([m.f23(), 5])),
    err("numpy.matvec", (m) => np.matvec(m.f23(), m.arr([1, 2]))),
    err("numpy.einsum", (m) => np.einsum("ij,jk->ik", m.f23(), m.f23())),
    err("numpy.einsum", (m) => np.einsum("i$->i", m.f23())),
    err("numpy.einsum", (m) => np.einsum({} as any, m.f23())),
    err("numpy.meshgrid", (m) => np.meshgrid([m.f23(), m.arr([1])], { indexing: "zz" as any })),
    err("numpy.select", (m) => np.select([m.arr([true, false])], [m.arr([1, 2]), m.arr([3, 4])])),
    err("numpy.applyAlongAxis", (m) => np.applyAlongAxis((x: any) => x, 5, m.f23()), "5"),
    err("numpy.applyOverAxes", (m) => np.applyOverAxes((x: any) => x, m.f23(), [7])),
    err("numpy.linalg.multiDot", (m) => np.linalg.multiDot([m.f23(), m.f23()])),
    err("numpy.linalg.multiDot", () => np.linalg.multiDot([])),
    err("numpy.polyval", (m) => np.polyval({} as any, m.f23())),
    ...["fft", "fftn", "fft2", "ifft", "ifftn", "ifft2", "irfft", "irfftn", "irfft2", "hfft"].flatMap((name) => {
      const f = (np.fft as any)[name];
      return [
        refErr(`numpy.fft.${name}`, (m) => f({ real: m.freed(), imag: m.arr([[1, 2], [3, 4]]) })),
        err(`numpy.fft.${name}`, () => f({} as any), "ComplexPair"),
        err(`numpy.fft.${name}`, (m) => f({ real: m.f23(), imag: m.arr([1]) })),
      ];
    }),
    err("numpy.fft.fftfreq", () => np.fft.fftfreq(0)),
    err("numpy.fft.rfftfreq", () => np.fft.rfftfreq(-2)),
  ];
}

function shapesAxesDtypes(): Row[] {
  return [
    err("numpy.add", (m) => np.add(m.f23(), m.arr([1, 2, 3, 4])), "(2, 3)", "(4,)"),
    err("numpy.matmul", (m) => np.matmul(m.f23(), m.f23()), "matmul"),
    err("numpy.sum", (m) => np.sum(m.f23(), 2), "axis 2"),
    err("numpy.sum", (m) => np.sum(m.f23(), { axis: "x" as any })),
    err("numpy.sum", (m) => np.sum(m.f23(), { axis: 1.5 })),
    err("numpy.sum", (m) => np.sum(m.f23(), { keepdims: "yes" as any })),
    err("numpy.argmax", (m) => np.argmax(m.f23(), -3), "axis -3"),
    err("numpy.reshape", (m) => np.reshape(m.f23(), [4]), "(4,)"),
    err("numpy.reshape", (m) => np.reshape(m.f23(), [1e12, 0])),
    err("numpy.transpose", (m) => np.transpose(m.f23(), [0, 0])),
    err("numpy.astype", (m) => np.astype(m.f23(), "float8" as any), "float8"),
    err("numpy.astype", (m) => np.astype(m.f23(), undefined as any), "dtype"),
    err("numpy.astype", (m) => np.astype(m.f23(), 7 as any)),
    err("lax.bitcastConvertType", (m) => lax.bitcastConvertType(m.f23(), "uint8" as any), "uint8"),
    err("lax.bitcastConvertType", (m) => lax.bitcastConvertType(m.f23(), undefined as any), "dtype"),
    err("numpy.take", (m) => np.take(m.f23(), m.arr([0], { dtype: np.int32 }), 3 as any)),
    err("numpy.pad", (m) => np.pad(m.f23(), [[1, 1], [1]] as any)),
    err("numpy.pad", (m) => np.pad(m.f23(), 1e12)),
    err("numpy.tile", (m) => np.tile(m.f23(), [1e7, 1e7])),
    err("numpy.repeat", (m) => np.repeat(m.f23(), -1)),
    err("numpy.split", (m) => np.split(m.f23(), 4, 1)),
    err("lax.convGeneralDilated", (m) => lax.convGeneralDilated(m.arr([[[[1]]]]), m.arr([[[[1]]]]), [1, 1], "BOGUS" as any), "BOGUS"),
    err("lax.reduceWindow", (m) => lax.reduceWindow(m.f23(), "median" as any, [2, 2], [1, 1]), "median"),
    err("nn.oneHot", (m) => nn.oneHot(m.arr([1], { dtype: np.int32 }), -1)),
    err("nn.softmax", (m) => nn.softmax(m.f23(), 5), "axis 5"),
    err("numpy.linalg.inv", (m) => np.linalg.inv(m.f23()), "(2, 3)"),
    err("numpy.fft.fft", (m) => np.fft.fft({ real: m.f23(), imag: m.arr([1]) } as any)),
    err("random.split", (m) => random.split(m.arr([1, 2, 3], { dtype: np.uint32 })), "key"),
    err("random.uniform", (m) => random.uniform(m.keep(random.key(0)), [2], { dtype: np.int32 }), "int32"),
    err("random.randint", (m) => random.randint(m.keep(random.key(0)), { minval: m.arr(0), maxval: 5, shape: [-1] })),
    err("random.triangular", (m) => random.triangular(m.keep(random.key(0)), 0, 1, 2, [-1])),
    err("random.normal", (m) => random.normal(m.keep(random.key(0)), [1e12])),
    err("random.key", () => random.key({} as any)),
    ok("random.key", () => random.key(-1), (r) => expect(r.shape).toEqual([2])),
  ];
}

function ieee(): Row[] {
  const specials = (m: any) => m.arr([NaN, Infinity, -Infinity, 0]);
  const unary: [string, (a: any) => any, (x: number) => number][] = [
    ["numpy.exp", np.exp, Math.exp], ["numpy.log", np.log, Math.log], ["numpy.sqrt", np.sqrt, Math.sqrt],
    ["numpy.tanh", np.tanh, Math.tanh], ["numpy.abs", np.abs, Math.abs], ["numpy.sign", np.sign, Math.sign],
    ["numpy.floor", np.floor, Math.floor], ["numpy.arctan", np.arctan, Math.atan], ["numpy.negative", np.negative, (x) => -x],
    ["nn.relu", nn.relu, (x) => (Number.isNaN(x) ? NaN : Math.max(x, 0))], ["nn.sigmoid", nn.sigmoid, (x) => 1 / (1 + Math.exp(-x))],
  ];
  const rows: Row[] = unary.map(([fn, f, host]) =>
    ok(fn, (m) => f(specials(m)), (r) => same(values(r), [NaN, Infinity, -Infinity, 0].map((x) => Math.fround(host(x))))),
  );
  rows.push(
    ok("numpy.divide", (m) => np.divide(m.arr([1, -1, 0]), 0), (r) => same(values(r), [Infinity, -Infinity, NaN])),
    ok("numpy.max", (m) => np.max(specials(m)), (r) => expect(Number.isNaN(r.item())).toBe(true)),
    err("numpy.max", (m) => np.max(m.arr([])), "empty"),
    ok("numpy.sum", (m) => np.sum(m.arr([Infinity, -Infinity])), (r) => expect(Number.isNaN(r.item())).toBe(true)),
    ok("numpy.sort", (m) => np.sort(m.arr([NaN, 1, -Infinity])), (r) => same(values(r), [-Infinity, 1, NaN])),
    ok("numpy.sum", () => np.sum(np.zeros([0, 3])), (r) => expect(r.item()).toBe(0)),
    ok("numpy.exp", () => np.exp(np.zeros([0, 2])), (r) => expect(r.shape).toEqual([0, 2])),
    ok("numpy.matmul", () => np.matmul(np.zeros([2, 0]), np.zeros([0, 3])), (r) => same(values(r), [0, 0, 0, 0, 0, 0])),
    ok("nn.logsumexp", (m) => nn.logsumexp(m.arr([-Infinity, -Infinity])), (r) => expect(r.item()).toBe(-Infinity)),
  );
  return rows;
}

const sq = (x: kiln.Array) => np.sum(np.multiply(x.ref, x));

function transforms(): Row[] {
  return [
    err("grad", (m) => kiln.grad({} as any)(m.arr([1, 2]))),
    err("grad", (m) => kiln.grad((x: any) => x)(m.arr([1, 2])), "scalar"),
    err("grad", (m) => kiln.grad(sq, { argnums: 3 })(m.arr([1, 2])), "argnums"),
    err("grad", (m) => kiln.grad(sq, { argnums: "0" as any })(m.arr([1, 2]))),
    refErr("grad", (m) => kiln.grad(sq)(m.freed())),
    err("valueAndGrad", (m) => kiln.valueAndGrad((x: any) => x)(m.arr([1, 2])), "scalar"),
    err("vmap", (m) => kiln.vmap((x: any) => x, 2)(m.f23()), "2"),
    err("vmap", (m) => kiln.vmap((x: any, y: any) => np.add(x, y))(m.f23(), m.arr([1, 2, 3]))),
    err("vmap", (m) => kiln.vmap("abc" as any)(m.arr([1, 2]))),
    // Bad arguments to the transformed functions, not a traced function that fails on its own
    // (its error passes unchanged, as jax-js's, and what it made is its own).
    err("jit", (m) => kiln.jit((x: any, y: any) => np.add(x, y))(m.f23(), "abc" as any), "string"),
    err("jit", (m) => kiln.jit(5 as any)(m.arr([1, 2]))),
    refErr("jit", (m) => kiln.jit((x: any) => x)(m.freed())),
    err("jvp", (m) => kiln.jvp(sq, [m.arr([1, 2])], [m.arr([1, 2, 3])])),
    err("jvp", (m) => kiln.jvp(sq, [m.arr([1, 2])], [])),
    err("vjp", (m) => kiln.vjp(sq, {} as any)),
    err("linearize", (m) => kiln.linearize((x: any, y: any) => sq(np.add(x, y)), [m.arr([1, 2]), "abc" as any]), "string"),
    err("linearize", (m) => kiln.linearize(sq, m.arr([1, 2]) as any), "primals"),
    refErr("linearize", (m) => kiln.linearize(sq, [m.freed()])),
    err("jacfwd", (m) => kiln.jacfwd(sq, { argnums: 4 } as any)(m.arr([1, 2]))),
    err("jacfwd", () => kiln.jacfwd(sq, { argnums: 0.5 } as any), "argnums"),
    err("jacrev", (m) => kiln.jacrev(sq, { argnums: 4 } as any)(m.arr([1, 2]))),
    err("jacobian", (m) => kiln.jacobian(sq, { argnums: 4 } as any)(m.arr([1, 2]))),
    err("hessian", (m) => kiln.hessian(sq, { argnums: 4 } as any)(m.arr([1, 2]))),
    err("makeJaxpr", (m) => kiln.makeJaxpr((x: any, y: any) => np.add(x, y))(m.f23(), "abc" as any), "string"),
    err("makeJaxpr", () => kiln.makeJaxpr({} as any)),
    err("customJvp", () => kiln.customJvp({} as any)),
    err("customJvp", (m) => kiln.customJvp(sq)(m.arr([1, 2])), "defjvp"),
    refErr("customJvp", (m) => kiln.customJvp(sq).defjvp(([x]: any, [t]: any) => [sq(x), np.sum(t)])(m.freed())),
    err("customVjp", () => kiln.customVjp({} as any)),
    err("customVjp", (m) => kiln.customVjp(sq)(m.arr([1, 2])), "defvjp"),
    refErr("customVjp", (m) => kiln.customVjp(sq).defvjp((x: any) => [sq(x), null], () => [null])(m.freed())),
    err("checkpoint", () => kiln.checkpoint({} as any)),
    err("checkpoint", () => kiln.checkpoint(sq, { policy: "some" as any }), "policy some"),
    refErr("checkpoint", (m) => kiln.checkpoint(sq)(m.freed())),
    err("remat", () => kiln.remat(sq, { policy: 3 as any }), "policy 3"),
    // Control flow and export: functions, trees and arrays are checked before anything runs.
    err("lax.scan", () => lax.scan({} as any, 0, null, { length: 2 })),
    err("lax.scan", (m) => lax.scan((c: any, x: any) => [c, x], m.arr(0), m.arr(1)), "leading axis"),
    refErr("lax.scan", (m) => lax.scan((c: any, x: any) => [c, x], m.freed(), null, { length: 2 })),
    err("lax.whileLoop", (m) => lax.whileLoop({} as any, (c: any) => c, m.arr(0))),
    refErr("lax.whileLoop", (m) => lax.whileLoop((c: any) => np.less(c, 3), (c: any) => np.add(c, 1), m.freed())),
    err("lax.foriLoop", (m) => lax.foriLoop(0, 3, {} as any, m.arr(0))),
    refErr("lax.foriLoop", (m) => lax.foriLoop(0, 3, (_i: any, c: any) => c, m.freed())),
    err("lax.cond", (m) => lax.cond(true, {} as any, (x: any) => x, m.arr(1))),
    refErr("lax.cond", (m) => lax.cond(m.freed(), (x: any) => x, (x: any) => x, m.arr(1))),
    err("lax.switch", (m) => lax.switch(0, [], m.arr(1)), "branches"),
    refErr("lax.switch", (m) => lax.switch(m.freed(), [(x: any) => x], m.arr(1))),
    err("lax.map", (m) => lax.map({} as any, m.arr([1, 2]))),
    refErr("lax.map", (m) => lax.map((x: any) => x, m.freed())),
    err("exportOnnx", () => kiln.exportOnnx({} as any)),
    err("exportOnnx", (m) => kiln.exportOnnx(sq, { opset: 13 })(m.arr([1, 2])), "opset 13"),
    refErr("exportOnnx", (m) => kiln.exportOnnx(sq)(m.freed())),
    err("exportStablehlo", () => kiln.exportStablehlo({} as any)),
    refErr("exportStablehlo", (m) => kiln.exportStablehlo(sq)(m.freed())),
    refErr("makeJaxpr", (m) => kiln.makeJaxpr(sq)(m.freed())),
    err("setDebug", () => kiln.setDebug(9)),
    err("setDebug", () => kiln.setDebug("x" as any)),
    err("defaultDevice", () => kiln.defaultDevice("tpu" as any), "tpu"),
    // An error naming it only before init("webgpu"): the Chromium run imports every test
    // file first, and webgpu.test.ts initializes the device at import.
    ok("getWebGPUDevice", () => {
      if (webGpuRuntime()) return kiln.getWebGPUDevice();
      expect(() => kiln.getWebGPUDevice()).toThrow(/^getWebGPUDevice: .*webgpu/);
      return true;
    }, (r) => expect(r).toBeTruthy()),
    // Off, as it starts: the page shares this state with webgpu.test.ts's error texts.
    ok("webgpuDebug", () => kiln.webgpuDebug(false)),
    ok("init", () => void kiln.init("tpu" as any)),
    ok("memory", () => kiln.memory(), (r) => expect(r.numArrays).toBeGreaterThan(0)),
    ok("resetPeakMemory", () => kiln.resetPeakMemory()),
    ok("blockUntilReady", () => void kiln.blockUntilReady({} as any)),
    ok("devicePut", () => void kiln.devicePut({} as any)),
    ok("profiler.startTrace", () => kiln.profiler.startTrace()),
    ok("profiler.stopTrace", () => kiln.profiler.stopTrace()),
    ok("profiler.webgpuCounters", () => kiln.profiler.webgpuCounters()),
  ];
}

function treesOptaxIo(): Row[] {
  const params = (m: any) => ({ w: m.f23() });
  const badUpdate = (gt: any) => (m: any) => {
    const p = params(m);
    const state = gt.init(tree.ref(p));
    try {
      return gt.update({ v: m.f23() }, state, p);
    } finally {
      tree.dispose(state);
    }
  };
  const rows: Row[] = [
    ok("tree.flatten", () => tree.flatten({ a: [1, 2] } as any)[0], (r) => expect(r).toEqual([1, 2])),
    ok("tree.leaves", () => tree.leaves({ a: 1, b: [2, 3] } as any), (r) => expect(r).toEqual([1, 2, 3])),
    ok("tree.structure", () => tree.structure(null as any)),
    err("tree.unflatten", () => tree.unflatten(tree.structure([1, 2] as any), [1])),
    err("tree.map", () => tree.map((a: any, b: any) => a, [1, 2] as any, [1] as any)),
    err("tree.ref", (m) => tree.ref([m.freed()])),
    ok("tree.dispose", () => tree.dispose(null)),
    err("optax.applyUpdates", (m) => optax.applyUpdates(params(m), { v: m.f23() } as any)),
    err("optax.applyUpdates", (m) => optax.applyUpdates(params(m), { w: m.arr([1, 2, 3, 4]) })),
    // A bad second leaf: nothing of the first is consumed or left behind.
    err("optax.applyUpdates", (m) => optax.applyUpdates({ a: m.f23(), b: m.f23() }, { a: m.f23(), b: m.arr([1, 2, 3, 4]) })),
    err("optax.globalNorm", () => optax.globalNorm({ a: "x" } as any)),
    err("optax.chain", () => optax.chain({} as any).init({})),
    err("optax.scaleBySchedule", (m) => {
      const gt = optax.scaleBySchedule(5 as any);
      const state = gt.init({});
      try {
        return gt.update({ w: m.arr([1, 2]) }, state);
      } finally {
        tree.dispose(state);
      }
    }),
    err("optax.joinSchedules", () => optax.joinSchedules([optax.constantSchedule(1)], [5, 6])),
    err("optax.cosineDecaySchedule", () => optax.cosineDecaySchedule(1, 0), "decay"),
    err("optax.warmupCosineDecaySchedule", () => optax.warmupCosineDecaySchedule(0, 1, 10, 5)),
    err("io.parseIdx", () => io.parseIdx(new Uint8Array([0, 0, 8, 3, 0, 0, 0, 9]))),
    err("io.parseIdx", () => io.parseIdx({} as any)),
    err("io.idxToArray", () => io.idxToArray({} as any)),
  ];
  const opts: [string, () => any][] = [
    ["optax.adam", () => optax.adam(0.1)], ["optax.adamw", () => optax.adamw(0.1)], ["optax.rmsprop", () => optax.rmsprop(0.1)],
    ["optax.sgd", () => optax.sgd(0.1, { momentum: 0.9 })], ["optax.scaleByAdam", () => optax.scaleByAdam()],
    ["optax.scaleByRms", () => optax.scaleByRms()], ["optax.scaleByStddev", () => optax.scaleByStddev()],
    ["optax.trace", () => optax.trace()], ["optax.addDecayedWeights", () => optax.addDecayedWeights({ weightDecay: 0.1 })],
    ["optax.identity", () => optax.identity()], ["optax.setToZero", () => optax.setToZero()], ["optax.scale", () => optax.scale(2)],
    ["optax.scaleByLearningRate", () => optax.scaleByLearningRate(0.1)], ["optax.clip", () => optax.clip(1)],
    ["optax.clipByGlobalNorm", () => optax.clipByGlobalNorm(1)],
  ];
  const stateless = new Set(["optax.identity", "optax.setToZero", "optax.scale", "optax.scaleByLearningRate", "optax.clip", "optax.clipByGlobalNorm"]);
  for (const [fn, make] of opts) {
    if (!stateless.has(fn)) rows.push(err(fn, badUpdate(make())));
    else if (fn === "optax.identity") rows.push(ok(fn, (m) => make().update({ w: m.arr([NaN]) }, [])[0].w, (r) => expect(Number.isNaN(r.item())).toBe(true)));
    else rows.push(refErr(fn, (m) => make().update({ w: m.freed() }, make().init({}))));
  }
  for (const [fn, make] of [
    ["optax.constantSchedule", () => optax.constantSchedule(NaN)], ["optax.linearSchedule", () => optax.linearSchedule(1, 0, 0)],
    ["optax.polynomialSchedule", () => optax.polynomialSchedule(1, 0, 1, 0)],
    ["optax.exponentialDecay", () => optax.exponentialDecay(1, 0, 0.5)], ["optax.piecewiseConstantSchedule", () => optax.piecewiseConstantSchedule(1, {})],
  ] as [string, () => any][])
    rows.push(ok(fn, () => make()(5), (r) => r?.dispose?.()));
  return rows;
}

// llm.load is async: its rows run through expectRowsAsync (a rejection is what it threw).
// Valid loads need the model file; test/llm.test.ts loads it.
function llmRows(): Row[] {
  const { llm } = kiln;
  const notGguf = new Uint8Array([1, 2, 3, 4, 0, 0, 0, 0]);
  return [
    err("llm.load", () => llm.load(5 as any), "got a number, expected a Uint8Array"),
    err("llm.load", () => llm.load({} as any), "expected a Uint8Array"),
    err("llm.load", () => llm.load(notGguf), "GGUF"),
    err("llm.load", () => llm.load(new Uint8Array(0)), "gguf"),
    err("llm.load", () => llm.load(new ArrayBuffer(3)), "gguf"),
    err("llm.load", () => llm.load("no/such/model.gguf"), "no/such/model.gguf"),
    err("llm.load", () => llm.load(notGguf, 5 as any), "options got a number"),
    err("llm.load", () => llm.load(notGguf, { nCtx: "x" } as any), "option 'nCtx'"),
    err("llm.load", () => llm.load(notGguf, { nctx: 5 } as any), "unknown option 'nctx'"),
    err("llm.load", () => llm.load(notGguf, { device: "gpu" as any }), "device 'gpu' is not available"),
    err("llm.load", () => llm.load(notGguf, { prefillBucket: 0 }), "prefillBucket is 0"),
  ];
}

export function specificRows(): Row[] {
  return [...creation(), ...manyArrays(), ...shapesAxesDtypes(), ...ieee(), ...transforms(), ...treesOptaxIo(), ...llmRows()];
}
