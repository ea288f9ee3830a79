// init("webgpu"): one runtime per process, attached to the core as Module.kilnGpu (where the
// C++ backend's EM_JS calls find it) and registered as the `webgpu` device.
/// <reference types="@webgpu/types" />
import { check, core } from "../core.js";
import { adapterDescription, noDeviceReason, requestWebGpuDevice } from "./device.js";
import { WebGpuRuntime } from "./runtime.js";

let runtime: WebGpuRuntime | null = null;
let pending: Promise<WebGpuRuntime | null> | null = null;
let reason = "";

/** Starts the webgpu device once; null (and `webGpuUnavailableReason()`) when there is none. */
export function initWebGpu(): Promise<WebGpuRuntime | null> {
  pending ??= (async () => {
    let device: GPUDevice | null = null;
    try {
      device = await requestWebGpuDevice();
    } catch (e: any) {
      reason = `requestDevice failed: ${e?.message ?? e}`;
      return null;
    }
    if (!device) {
      reason = noDeviceReason;
      return null;
    }
    runtime = new WebGpuRuntime(device, adapterDescription);
    const env = (globalThis as any).process?.env;
    runtime.debug = !!env?.KILN_WEBGPU_DEBUG && env.KILN_WEBGPU_DEBUG !== "0";
    core.kilnGpu = runtime;
    check(core.enableWebGpu(runtime.codegenLimits()));
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
