// init("webgpu"): one runtime at a time, attached to the core as Module.kilnGpu (where the
// C++ backend's EM_JS calls find it) and registered as the `webgpu` device. After the device
// is lost, init("webgpu") again makes a new runtime on a new device and resets the backend
// (its kernels are prepared again; buffers of the lost device are never reused).
/// <reference types="@webgpu/types" />
import { check, core } from "../core.js";
import { adapterDescription, noDeviceReason, requestWebGpuDevice } from "./device.js";
import { WebGpuRuntime } from "./runtime.js";

let runtime: WebGpuRuntime | null = null;
let pending: Promise<WebGpuRuntime | null> | null = null;
let reason = "";
let starting = false; // a request for a device is in flight: callers share it

/**
 * Starts the webgpu device, once while it works and again after it was lost; null (and
 * `webGpuUnavailableReason()`) when there is none.
 */
export function initWebGpu(): Promise<WebGpuRuntime | null> {
  if (runtime?.lost && !starting) pending = null;
  pending ??= (async () => {
    let device: GPUDevice | null = null;
    starting = true;
    try {
      device = await requestWebGpuDevice();
    } catch (e: any) {
      reason = `requestDevice failed: ${e?.message ?? e}`;
      return null;
    } finally {
      starting = false;
    }
    if (!device) {
      reason = noDeviceReason;
      return null;
    }
    const previous = runtime;
    runtime = new WebGpuRuntime(device, adapterDescription);
    const env = (globalThis as any).process?.env;
    runtime.debug = previous?.debug ?? (!!env?.KILN_WEBGPU_DEBUG && env.KILN_WEBGPU_DEBUG !== "0");
    core.kilnGpu = runtime;
    check(core.enableWebGpu({ ...runtime.codegenLimits(), firstHandle: runtime.firstHandle }));
    return runtime;
  })();
  return pending;
}

export function webGpuRuntime(): WebGpuRuntime | null {
  return runtime;
}

export function webGpuUnavailableReason(): string {
  return reason;
}
