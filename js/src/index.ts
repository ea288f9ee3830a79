// The npm package `kiln`: the public API of @jax-js/jax 0.1.x over kiln's C++ core.
// Devices, the default device, devicePut and blockUntilReady live here; the rest is re-exported.
import { Array, DType, type Device } from "./array.js";
import { check, core } from "./core.js";
import * as numpy from "./numpy.js";
import * as lax from "./lax.js";
import * as nn from "./nn.js";
import * as random from "./random.js";
import * as tree from "./tree.js";
import * as scipySpecial from "./scipy_special.js";
import * as llm from "./llm.js";
import * as executorch from "./executorch.js";
import * as onnx from "./onnx.js";
import { JsTreeDef, type JsTree } from "./tree.js";
import { initWebGpu, webGpuRuntime, webGpuUnavailableReason } from "./webgpu/attach.js";
import { readBytes } from "./array.js";

export { Array, DType, type Device, numpy, lax, nn, random, tree, scipySpecial, llm, executorch, onnx, JsTreeDef, type JsTree };
export { memory, resetPeakMemory, type MemoryInfo, type DeviceMemoryInfo, type WebGpuMemoryInfo } from "./memory.js";
export { grad, valueAndGrad, vmap, jit, jvp, vjp, linearize, customJvp, customVjp, checkpoint, remat, checkpointPolicies, type CheckpointPolicy, jacfwd, jacrev, jacrev as jacobian, hessian, makeJaxpr, ClosedJaxpr, Jaxpr, exportOnnx, exportStablehlo, type OwnedFunction } from "./transforms.js";

/** Every device name jax-js knows; those kiln has are returned by init(). */
export const devices: Device[] = ["cpu", "wasm", "webgpu", "webgl"];

const available = (): Device[] => core.devices() as Device[];

// jax-js's default device is wasm; kiln's core starts on cpu, so switch once at load.
if (available().includes("wasm")) check(core.setDefaultDevice("wasm"));

/**
 * Initializes devices (all by default) and returns those available. `webgpu` needs an
 * adapter: navigator.gpu in browsers, the optional dependency `webgpu` (Dawn) in Node.js.
 * After the webgpu device was lost, init("webgpu") creates a new one.
 */
export async function init(...devicesToInit: Device[]): Promise<Device[]> {
  if (devicesToInit.length === 0 || devicesToInit.includes("webgpu")) await initWebGpu();
  // A lost webgpu device that could not be replaced stays registered, but is not available.
  const have = available().filter((d) => d !== "webgpu" || !webGpuRuntime()?.lost);
  return devicesToInit.length === 0 ? have : devicesToInit.filter((d) => have.includes(d));
}

/** The GPUDevice behind the `webgpu` device (after init), as jax-js's getWebGPUDevice. */
export function getWebGPUDevice(): GPUDevice {
  const rt = webGpuRuntime();
  if (!rt) throw new Error(`getWebGPUDevice: the webgpu device is not initialized (await init("webgpu") first${webGpuUnavailableReason() ? `; ${webGpuUnavailableReason()}` : ""})`);
  return rt.device;
}

/** Includes each kernel's WGSL text in webgpu compilation errors (also KILN_WEBGPU_DEBUG=1). */
export function webgpuDebug(on: boolean): void {
  const rt = webGpuRuntime();
  if (rt) rt.debug = on;
}

/**
 * Sets the debug level of the logs kiln prints to the console (stderr in Node.js):
 * 0 off, 1 compilations (jit programs, backend kernels), 2 generated code (WGSL; Wasm module
 * sizes), 3 kernel expressions, 4 jit programs as jaxprs, 5 every dispatch. As jax-js's
 * setDebug, an experimental API. KILN_DEBUG sets the starting level in Node.js.
 */
export function setDebug(level: number): void {
  if (!Number.isInteger(level)) throw new Error(`setDebug: got ${level}, expected an integer level 0 to 5`);
  check(core.setDebug(level));
}

// The core's getenv does not see Node's environment, so KILN_DEBUG is applied here.
const debugFromEnv = (globalThis as any).process?.env?.KILN_DEBUG;
if (debugFromEnv) setDebug(Number(debugFromEnv));

/** A kernel dispatch the profiler saw: milliseconds on performance.now()'s clock. */
export interface TraceEvent {
  name: string;
  start: number;
  duration: number;
}

/** Cumulative work of the webgpu device since it was created (see {@link profiler}). */
export interface WebGpuCounters {
  /** Kernels dispatched. */
  dispatches: number;
  /** Command buffers submitted. */
  submits: number;
  /** Compute pipelines compiled (cached by WGSL text, so a warm loop adds none). */
  pipelines: number;
  /** GPUBuffers created: storage, readback and uniform (a loop whose pools are warm adds none). */
  createdBuffers: number;
  /**
   * Bind groups created. They are kept by the buffers they bind, and jit hands a program's
   * temporaries out by age, so a warm jitted loop (an LLM decode step) adds none.
   */
  bindGroups: number;
  /** Reads of arrays back to the host (asynchronous and blocking). */
  reads: number;
  /** Bytes those reads returned (a greedy LLM decode step: 4, its token id). */
  readBytes: number;
}

/**
 * Kernel traces, as jax-js's profiler: between startTrace() and stopTrace() every kernel
 * dispatch is timed on the host (its run on cpu/wasm; its encoding on webgpu, whose GPU runs
 * it later) and becomes a `performance.measure` entry ("Performance" tab of the developer
 * tools; perf_hooks in Node.js). stopTrace() also returns the events.
 */
export const profiler = {
  /** Starts recording kernel dispatches. */
  startTrace(): void {
    core.startTrace();
  },
  /** Stops recording, adds the performance.measure entries, and returns the events. */
  stopTrace(): TraceEvent[] {
    const events = core.stopTrace() as TraceEvent[];
    const perf = (globalThis as any).performance;
    if (perf?.measure) for (const e of events) perf.measure(e.name, { start: e.start, duration: e.duration });
    return events;
  },
  /**
   * The webgpu device's counters (null before init("webgpu")): the difference between two
   * calls is the work in between, e.g. one LLM decode step's kernels and submits.
   */
  webgpuCounters(): WebGpuCounters | null {
    const s = webGpuRuntime()?.stats();
    return s ? { dispatches: s.dispatches, submits: s.submits, pipelines: s.pipelines, createdBuffers: s.createdBuffers, bindGroups: s.bindGroups, reads: s.reads + s.syncReads, readBytes: s.readBytes } : null;
  },
};

/** Returns the default device, after setting it when one is given. */
export function defaultDevice(device?: Device): Device {
  if (device !== undefined) {
    if (!available().includes(device)) {
      const hint = device === "webgpu" ? (webGpuUnavailableReason() ? `; ${webGpuUnavailableReason()}` : '; call await init("webgpu") first') : "";
      throw new Error(`defaultDevice: device '${device}' is not available (have ${available().join(", ")})${hint}`);
    }
    check(core.setDefaultDevice(device));
  }
  return core.defaultDevice() as Device;
}

/**
 * Copies every Array (and number) of x to `device`; the inputs are consumed. Reads from
 * devices without synchronous reads (webgpu) are awaited, all leaves at once.
 */
export async function devicePut<T extends JsTree<any>>(x: T, device?: Device): Promise<any> {
  if (device !== undefined && !available().includes(device)) defaultDevice(device); // throws the clear error
  const moved = new Map<Array, Promise<Uint8Array>>();
  tree.map((leaf: any) => {
    if (leaf instanceof Array && device !== undefined && leaf.device !== device && !moved.has(leaf))
      moved.set(leaf, readBytes(leaf._h()));
    return leaf;
  }, x);
  const bytes = new Map<Array, Uint8Array>();
  for (const [a, p] of moved) bytes.set(a, await p);
  return tree.map((leaf: any) => {
    if (leaf instanceof Array) {
      const b = bytes.get(leaf);
      if (b === undefined) return leaf;
      const h = leaf._h();
      const out = new Array(check(core.fromBytes(b, h.shape(), h.dtype(), device)));
      leaf.dispose();
      return out;
    }
    if (typeof leaf === "number" || typeof leaf === "boolean") return numpy.array(leaf, { device });
    return leaf;
  }, x);
}

/** Waits until every Array leaf is computed; does not consume them. */
export async function blockUntilReady<T extends JsTree<any>>(x: T): Promise<T> {
  for (const leaf of tree.leaves(x)) if (leaf instanceof Array) await leaf.blockUntilReady();
  return x;
}
