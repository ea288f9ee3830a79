// memory(): live-memory counters for finding leaks, as tfjs's tf.memory() (jax-js has none).
// The core counts arrays and each device's buffers where every allocation passes (the C++
// backend layer); this adds the JS Arrays, the Wasm heap and the webgpu runtime's GPUBuffers.
import { liveArrayCount } from "./array.js";
import { core } from "./core.js";
import { webGpuRuntime } from "./webgpu/attach.js";

/** One device's buffers, as the core's backend layer counts them. */
export interface DeviceMemoryInfo {
  /** Live buffers: arrays' data, jit constants, and the jit pool's free buffers. */
  numBuffers: number;
  /** Their bytes (as requested; a pooled buffer counts its size class). */
  numBytes: number;
  /** The most bytes live at once since the core was loaded. */
  peakBytes: number;
  /** Buffers ever allocated. */
  numAllocations: number;
  /** Of numBuffers: free buffers that jit keeps for reuse (no array owns them). */
  numPooledBuffers: number;
  numPooledBytes: number;
  /**
   * The buffers the device's own table holds (wasm: allocations in the heap; webgpu: the
   * runtime's handles); equal to numBuffers unless a release went missing. -1 where the
   * device keeps no table.
   */
  numBackendBuffers: number;
}

/** The webgpu runtime's GPUBuffers (present after init("webgpu")). */
export interface WebGpuMemoryInfo {
  /** GPUBuffers behind live handles, and their bytes (size classes). */
  numBuffers: number;
  numBytes: number;
  /** Free storage buffers the runtime's pool keeps for reuse, and their bytes. */
  numPooledBuffers: number;
  numPooledBytes: number;
  /** Freed while the open command encoder may use them: pooled at its submit. */
  numPendingBuffers: number;
  /** Free readback (staging) buffers kept for reuse, and their bytes. */
  numStagingBuffers: number;
  numStagingBytes: number;
  /** Small uniform buffers, one per kernel output size. */
  numUniformBuffers: number;
  /** Compiled compute pipelines, cached by WGSL text. */
  numPipelines: number;
}

/** What {@link memory} returns: live arrays and buffers, in total and per device. */
export interface MemoryInfo {
  /** Live JS Arrays (reference count above zero). */
  numArrays: number;
  /** Live arrays in the core: those of JS Arrays, constants held by jit functions, pending reads. */
  numCoreArrays: number;
  /** Live buffers and their bytes, summed over devices. */
  numBuffers: number;
  numBytes: number;
  /** The core's WebAssembly memory: its size (it never shrinks) and the bytes malloc has handed out. */
  wasmHeapBytes: number;
  wasmHeapUsedBytes: number;
  /** Per device, as `numBuffers` above. */
  devices: Partial<Record<string, DeviceMemoryInfo>>;
  webgpu?: WebGpuMemoryInfo;
}

/**
 * Live memory right now: Arrays, buffers per device, the Wasm heap and WebGPU buffers. Cheap
 * (waits on no device), so it can be read every step: a loop that leaks nothing shows the same
 * numbers at every step once its caches and pools are warm.
 */
export function memory(): MemoryInfo {
  const s = core.memoryStats();
  const devices: Record<string, DeviceMemoryInfo> = {};
  let numBuffers = 0, numBytes = 0;
  for (const [name, d] of Object.entries<any>(s.devices)) {
    devices[name] = {
      numBuffers: d.buffers, numBytes: d.bytes, peakBytes: d.peakBytes, numAllocations: d.allocations,
      numPooledBuffers: d.pooledBuffers, numPooledBytes: d.pooledBytes, numBackendBuffers: d.backendBuffers,
    };
    numBuffers += d.buffers;
    numBytes += d.bytes;
  }
  const info: MemoryInfo = {
    numArrays: liveArrayCount(), numCoreArrays: s.arrays, numBuffers, numBytes,
    wasmHeapBytes: s.heapBytes, wasmHeapUsedBytes: s.heapUsedBytes, devices,
  };
  const rt = webGpuRuntime();
  if (rt) {
    const g = rt.stats();
    info.webgpu = {
      numBuffers: g.buffers, numBytes: g.bytes, numPooledBuffers: g.pooledBuffers, numPooledBytes: g.pooledBytes,
      numPendingBuffers: g.pendingBuffers, numStagingBuffers: g.stagingBuffers, numStagingBytes: g.stagingBytes,
      numUniformBuffers: g.uniformBuffers, numPipelines: g.pipelines,
    };
  }
  return info;
}

/**
 * Frees the buffers jit keeps pooled for reuse and restarts every device's `peakBytes` at
 * the bytes live now, so that `peakBytes - numBytes` read after some work is the most memory
 * that work held at once (as kiln::reset_peak_memory in C++).
 */
export function resetPeakMemory(): void {
  core.resetPeakMemory();
}
