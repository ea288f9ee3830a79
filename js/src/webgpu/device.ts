// Finding a GPUDevice: navigator.gpu in browsers, the npm package `webgpu` (Dawn) in Node.js.
// The object Dawn's create() returns stays referenced here for the life of the process: Dawn
// aborts when it is garbage-collected while a device lives.
/// <reference types="@webgpu/types" />

let nodeGpu: GPU | null = null;

async function gpuObject(): Promise<GPU | null> {
  const nav = (globalThis as any).navigator;
  if (nav?.gpu) return nav.gpu as GPU;
  if (typeof (globalThis as any).process?.versions?.node !== "string") return null;
  if (nodeGpu) return nodeGpu;
  // A variable specifier, so bundlers for the web leave this Node-only import alone.
  const name = "webgpu";
  let mod: any;
  try {
    mod = await import(/* @vite-ignore */ name);
  } catch {
    return null; // the optional dependency is not installed
  }
  Object.assign(globalThis, mod.globals); // GPUBufferUsage, GPUMapMode, GPUShaderStage
  nodeGpu = mod.create([]) as GPU;
  return nodeGpu;
}

/** Why the last requestWebGpuDevice() found none (for init's message). */
export let noDeviceReason = "";
/** The adapter's vendor/architecture/description ("SwiftShader ..." on the CPU fallback). */
export let adapterDescription = "";

/**
 * A device with the adapter's largest buffer and binding limits (the defaults allow only
 * 128 MiB bindings and 8 storage buffers per kernel), or null when there is no adapter.
 */
export async function requestWebGpuDevice(): Promise<GPUDevice | null> {
  const gpu = await gpuObject();
  if (!gpu) {
    noDeviceReason = "no navigator.gpu, and in Node.js the optional dependency `webgpu` did not load";
    return null;
  }
  const adapter = await gpu.requestAdapter();
  if (!adapter) {
    noDeviceReason = "requestAdapter() found no adapter (in Node.js without a GPU, point VK_ICD_FILENAMES at SwiftShader's ICD)";
    return null;
  }
  const info: any = (adapter as any).info ?? {};
  adapterDescription = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ");
  const want = [
    "maxBufferSize", "maxStorageBufferBindingSize", "maxStorageBuffersPerShaderStage", "maxComputeWorkgroupsPerDimension",
    "maxComputeWorkgroupStorageSize", "maxComputeInvocationsPerWorkgroup", "maxComputeWorkgroupSizeX",
  ];
  const requiredLimits: Record<string, number> = {};
  for (const k of want) requiredLimits[k] = (adapter.limits as any)[k];
  return adapter.requestDevice({ requiredLimits });
}
