// The JS half of kiln's webgpu device: owns the GPUDevice and every GPUBuffer behind integer
// handles, caches pipelines by WGSL text, records many dispatches into one command encoder,
// and submits on readback. The C++ backend (src/backend/webgpu/webgpu_backend.cpp) calls the
// methods below; none throws: failures return -1 (or null) and leave `lastError`.
/// <reference types="@webgpu/types" />
import { BufferPool } from "./buffer_pool.js";
import { Pipelines, type PipelineEntry } from "./pipelines.js";

// The spec's GPUBufferUsage values, as numbers: in Node.js the GPUBufferUsage global exists
// only after Dawn loaded, and this module is imported before that.
const MAP_READ = 0x1, COPY_SRC = 0x4, COPY_DST = 0x8, UNIFORM = 0x40, STORAGE = 0x80;
const STORAGE_USAGE = STORAGE | COPY_SRC | COPY_DST;
const STAGING_USAGE = MAP_READ | COPY_DST;
// Encoders are submitted at least this often even without a readback, so a long eager loop
// keeps the GPU busy and its command buffers bounded.
const MAX_DISPATCHES_PER_SUBMIT = 256;

interface DeviceBuffer {
  buffer: GPUBuffer;
  bytes: number;
  epoch: number; // the encoder epoch that last used it (see #epoch)
  // Pipelines not yet known to have compiled whose output reaches this buffer: a read waits
  // for them and fails if one did not compile.
  taint: PipelineEntry[];
  error: string | null; // out of memory when it was created
}

export interface RuntimeStats {
  buffers: number; // live handles (the C++ backend's buffers)
  bytes: number; // their GPUBuffers' bytes (size classes)
  pooledBuffers: number; // free storage buffers kept for reuse
  pooledBytes: number;
  pendingBuffers: number; // freed, pooled once the open encoder is submitted
  stagingBuffers: number; // free readback buffers kept for reuse
  stagingBytes: number;
  uniformBuffers: number; // one small uniform per output size
  pipelines: number;
  dispatches: number;
  submits: number;
}

export class WebGpuRuntime {
  readonly device: GPUDevice;
  /** When set, WGSL compilation errors carry the whole WGSL text. */
  debug = false;
  lastError = "";
  #lost: string | null = null;
  #deviceErrors: string[] = [];
  #buffers = new Map<number, DeviceBuffer>();
  #nextHandle = 1;
  #storage: BufferPool;
  #staging: BufferPool;
  #pipelines: Pipelines;
  #uniforms = new Map<number, GPUBuffer>();
  // Buffers freed while the open encoder may still use them: pooled only after it is submitted,
  // or a writeBuffer into a reused buffer would land before the dispatches that read it.
  #freedInEpoch: GPUBuffer[] = [];
  #encoder: GPUCommandEncoder | null = null;
  #pass: GPUComputePassEncoder | null = null;
  #inEncoder = 0;
  #encoderPipelines = new Set<PipelineEntry>(); // those not yet known to compile
  #epoch = 1; // increments at each submit
  #flushQueued = false;
  #scopes: Promise<void>[] = [];
  #stats = { dispatches: 0, submits: 0 };

  /** `adapter`: the adapter's description, for messages and tests ("SwiftShader ..."). */
  constructor(device: GPUDevice, readonly adapter = "") {
    this.device = device;
    this.#storage = new BufferPool(device, STORAGE_USAGE, 512 << 20);
    this.#staging = new BufferPool(device, STAGING_USAGE, 64 << 20);
    this.#pipelines = new Pipelines(device, () => this.debug);
    device.lost.then((info) => {
      this.#lost = `webgpu: the device was lost (${info.reason}${info.message ? `: ${info.message}` : ""}); create a new one with init("webgpu") in a new process`;
    });
    device.addEventListener?.("uncapturederror", (ev: any) => {
      this.#deviceErrors.push(`webgpu: device error: ${ev.error?.message ?? String(ev.error)}`);
    });
  }

  /** The limits the WGSL generator needs (see webgpu::WgslParams). */
  codegenLimits(): {
    workgroup: number; maxGroupsX: number; workgroupStorage: number; maxInvocations: number; treeMaxOutputs: number; tiles?: number[][]; staging?: number; bandRows?: number;
  } {
    const l = this.device.limits;
    // SwiftShader runs workgroups on CPU threads, where a 256-invocation tree reduction with
    // 8 barriers per output costs far more than a serial loop; GPUs want the tree for
    // reductions with up to many thousands of outputs (a matvec 4096, softmax rows).
    const cpuAdapter = /swiftshader/i.test(this.adapter);
    return {
      workgroup: 256, maxGroupsX: l.maxComputeWorkgroupsPerDimension, treeMaxOutputs: cpuAdapter ? 1024 : 1 << 16,
      workgroupStorage: l.maxComputeWorkgroupStorageSize,
      maxInvocations: Math.min(l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX),
      tiles: tilesFromEnv(), ...stagingFromEnv(), ...bandFromEnv(),
    };
  }

  stats(): RuntimeStats {
    let bytes = 0;
    for (const r of this.#buffers.values()) bytes += r.buffer.size;
    return {
      buffers: this.#buffers.size, bytes,
      pooledBuffers: this.#storage.pooledBuffers, pooledBytes: this.#storage.pooledBytes,
      pendingBuffers: this.#freedInEpoch.length,
      stagingBuffers: this.#staging.pooledBuffers, stagingBytes: this.#staging.pooledBytes,
      uniformBuffers: this.#uniforms.size, pipelines: this.#pipelines.size, ...this.#stats,
    };
  }

  /** The live handles (what the C++ backend reports as its table's buffers). */
  liveBuffers(): number {
    return this.#buffers.size;
  }

  #fail(msg: string): -1 {
    this.lastError = msg;
    return -1;
  }

  // ---- buffers ----------------------------------------------------------------------------

  alloc(bytes: number): number {
    if (this.#lost) return this.#fail(this.#lost);
    const max = Math.min(this.device.limits.maxStorageBufferBindingSize, this.device.limits.maxBufferSize);
    if (bytes > max)
      return this.#fail(`webgpu: out of memory: cannot allocate ${bytes} bytes, above this device's largest storage buffer (${max} bytes)`);
    // Only a new GPUBuffer can run out of memory; reused ones need no error scope.
    const creates = !this.#storage.has(Math.max(bytes, 4));
    if (creates) this.device.pushErrorScope("out-of-memory");
    const buffer = this.#storage.take(Math.max(bytes, 4));
    const rec: DeviceBuffer = { buffer, bytes, epoch: 0, taint: [], error: null };
    if (creates)
      this.#watch(this.device.popErrorScope(), (e) => {
        rec.error = `webgpu: out of memory allocating ${bytes} bytes (${e.message})`;
      });
    const h = this.#nextHandle++;
    this.#buffers.set(h, rec);
    return h;
  }

  free(handle: number): void {
    const rec = this.#buffers.get(handle);
    if (!rec) return;
    this.#buffers.delete(handle);
    if (this.#lost) return;
    if (rec.epoch === this.#epoch && this.#encoder) this.#freedInEpoch.push(rec.buffer);
    else this.#storage.give(rec.buffer);
  }

  write(handle: number, offset: number, data: Uint8Array): number {
    if (this.#lost) return this.#fail(this.#lost);
    const rec = this.#buffers.get(handle);
    if (!rec) return this.#fail(`webgpu.write: buffer ${handle} does not exist`);
    if (offset % 4 !== 0) return this.#fail(`webgpu.write: offset ${offset} is not a multiple of 4`);
    if (offset + data.byteLength > rec.buffer.size)
      return this.#fail(`webgpu.write: range [${offset}, ${offset + data.byteLength}) is outside a buffer of ${rec.bytes} bytes`);
    // The open encoder's commands run after any writeBuffer issued now; submit them first
    // when they use this buffer.
    if (rec.epoch === this.#epoch && this.#encoder) this.flush();
    // writeBuffer copies `data` now, so a view of the core's memory is safe; sizes must be
    // multiples of 4. The threaded core's memory is a SharedArrayBuffer, which writeBuffer
    // does not take: such data is copied to an unshared buffer first.
    const n = data.byteLength;
    const shared = typeof SharedArrayBuffer !== "undefined" && data.buffer instanceof SharedArrayBuffer;
    const src = n % 4 === 0 && !shared ? data : (() => {
      const p = new Uint8Array(Math.ceil(n / 4) * 4);
      p.set(data);
      return p;
    })();
    this.device.queue.writeBuffer(rec.buffer, offset, src.buffer, src.byteOffset, src.byteLength);
    return 0;
  }

  // ---- kernels ----------------------------------------------------------------------------

  /** A pipeline id for this WGSL (bindings: 0 uniform size, 1 out, 2.. inputs). */
  pipeline(wgsl: string, ninputs: number): number {
    if (this.#lost) return this.#fail(this.#lost);
    const max = this.device.limits.maxStorageBuffersPerShaderStage;
    if (ninputs + 1 > max)
      return this.#fail(`webgpu.prepare: a kernel with ${ninputs} inputs needs ${ninputs + 1} storage buffers, this device allows ${max}`);
    return this.#pipelines.get(wgsl, ninputs).id;
  }

  dispatch(pipelineId: number, inputs: Int32Array, output: number, size: number, gx: number, gy: number): number {
    if (this.#lost) return this.#fail(this.#lost);
    const p = this.#pipelines.byId(pipelineId);
    if (!p) return this.#fail(`webgpu.dispatch: pipeline ${pipelineId} does not exist`);
    if (p.error) return this.#fail(p.error);
    const out = this.#buffers.get(output);
    if (!out) return this.#fail(`webgpu.dispatch: output buffer ${output} does not exist`);
    const ins: DeviceBuffer[] = [];
    for (const h of inputs) {
      const r = this.#buffers.get(h);
      if (!r) return this.#fail(`webgpu.dispatch: input buffer ${h} does not exist`);
      ins.push(r);
    }
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: this.#uniform(size) } },
      { binding: 1, resource: { buffer: out.buffer } },
      ...ins.map((r, i) => ({ binding: 2 + i, resource: { buffer: r.buffer } })),
    ];
    const group = this.device.createBindGroup({ layout: p.layout, entries });
    if (!this.#encoder) {
      this.#encoder = this.device.createCommandEncoder();
      this.#pass = this.#encoder.beginComputePass();
    }
    this.#pass!.setPipeline(p.pipeline);
    this.#pass!.setBindGroup(0, group);
    this.#pass!.dispatchWorkgroups(gx, gy);
    if (p.state !== "ok") this.#encoderPipelines.add(p);
    for (const r of [out, ...ins]) r.epoch = this.#epoch;
    const taint = new Set<PipelineEntry>(p.state === "ok" ? [] : [p]);
    for (const r of ins) for (const t of r.taint) if (t.state !== "ok") taint.add(t);
    out.taint = [...taint];
    this.#stats.dispatches++;
    if (++this.#inEncoder >= MAX_DISPATCHES_PER_SUBMIT) this.flush();
    else if (!this.#flushQueued) {
      // Submit once the current synchronous JS is done (e.g. a whole jit program), so the
      // GPU starts without waiting for a readback.
      this.#flushQueued = true;
      queueMicrotask(() => {
        this.#flushQueued = false;
        if (!this.#lost) this.flush();
      });
    }
    return 0;
  }

  /** One uniform buffer per output size, kept: sizes repeat, and they are 4 bytes each. */
  #uniform(size: number): GPUBuffer {
    let u = this.#uniforms.get(size);
    if (!u) {
      if (this.#uniforms.size >= 4096) {
        this.flush(); // no unsubmitted command may still bind the ones destroyed
        for (const b of this.#uniforms.values()) b.destroy();
        this.#uniforms.clear();
      }
      u = this.device.createBuffer({ size: 16, usage: UNIFORM | COPY_DST });
      this.device.queue.writeBuffer(u, 0, new Uint32Array([size, 0, 0, 0]));
      this.#uniforms.set(size, u);
    }
    return u;
  }

  /** Submits the open encoder (the flush point before readbacks and conflicting writes). */
  flush(): void {
    if (!this.#encoder) return;
    this.#pass!.end();
    this.device.pushErrorScope("validation");
    this.device.queue.submit([this.#encoder.finish()]);
    // A submit that binds a pipeline whose WGSL did not compile fails too; that error belongs
    // to the pipeline (reads of its outputs report it), not to every later read.
    const pending = [...this.#encoderPipelines];
    this.#encoderPipelines = new Set();
    this.#watch(
      this.device.popErrorScope().then(async (e) => {
        if (!e) return null;
        await Promise.all(pending.map((p) => p.ready));
        return pending.some((p) => p.state === "failed") ? null : e;
      }),
      (e) => this.#deviceErrors.push(`webgpu: a submit failed validation: ${e.message}`),
    );
    this.#encoder = null;
    this.#pass = null;
    this.#inEncoder = 0;
    this.#epoch++;
    this.#stats.submits++;
    for (const b of this.#freedInEpoch) this.#storage.give(b);
    this.#freedInEpoch = [];
  }

  #watch(scope: Promise<GPUError | null>, onError: (e: GPUError) => void): void {
    const p = scope.then((e) => {
      if (e) onError(e);
    }, () => {});
    this.#scopes.push(p);
    p.then(() => {
      const i = this.#scopes.indexOf(p);
      if (i >= 0) this.#scopes.splice(i, 1);
    });
  }

  // ---- readback ---------------------------------------------------------------------------

  /** Bytes [offset, offset + bytes) of a buffer, after all work recorded so far; null when it cannot start. */
  read(handle: number, offset: number, bytes: number): Promise<Uint8Array> | null {
    if (this.#lost) return (this.#fail(this.#lost), null);
    const rec = this.#buffers.get(handle);
    if (!rec) return (this.#fail(`webgpu.read: buffer ${handle} does not exist`), null);
    if (offset % 4 !== 0) return (this.#fail(`webgpu.read: offset ${offset} is not a multiple of 4`), null);
    this.flush();
    const padded = Math.max(4, Math.ceil(bytes / 4) * 4);
    const staging = this.#staging.take(padded);
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(rec.buffer, offset, staging, 0, padded);
    this.device.queue.submit([enc.finish()]);
    this.#stats.submits++;
    const taint = rec.taint.slice();
    const scopes = this.#scopes.slice();
    return (async () => {
      try {
        await staging.mapAsync(1 /* GPUMapMode.READ */, 0, padded);
      } catch (e: any) {
        throw new Error(this.#lost ?? `webgpu: reading a buffer failed: ${e?.message ?? e}`);
      }
      const out = new Uint8Array(staging.getMappedRange(0, padded).slice(0, bytes));
      staging.unmap();
      this.#staging.give(staging);
      if (rec.error) throw new Error(rec.error);
      for (const t of taint) {
        await t.ready;
        if (t.error) throw new Error(t.error);
      }
      await Promise.all(scopes);
      // Device errors (a failed submit, an uncaptured error) are reported once, to the reads
      // that were waiting when they were found.
      if (this.#deviceErrors.length) throw new Error(this.#deviceErrors.splice(0).join("; "));
      return out;
    })();
  }

  /** Resolves when all work recorded so far has run on the GPU (blockUntilReady). */
  async idle(): Promise<void> {
    if (this.#lost) throw new Error(this.#lost);
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
  }

  /** Stops using the device (its buffers become invalid); for tests and page unloads. */
  destroy(): void {
    this.#storage.clear();
    this.#staging.clear();
    this.device.destroy();
  }
}

/**
 * KILN_WEBGPU_TILES (Node.js): contraction tiles to use instead of the generator's defaults,
 * largest first, as "BMxBNxBK/TMxTN,..." (e.g. "128x128x16/8x8,64x64x16/4x4"); for tuning.
 */
/** KILN_WEBGPU_STAGING=single|prefetch|double (Node.js): how tiles stage slices; for tuning. */
function stagingFromEnv(): { staging?: number } {
  const v = (globalThis as any).process?.env?.KILN_WEBGPU_STAGING as string | undefined;
  if (v === undefined) return {};
  const i = ["single", "prefetch", "double"].indexOf(v);
  if (i < 0) throw new Error(`KILN_WEBGPU_STAGING: "${v}" is not single, prefetch or double`);
  return { staging: i };
}

/** KILN_WEBGPU_BAND=rows (Node.js): tile rows per band of a tiled kernel's launch order; for tuning. */
function bandFromEnv(): { bandRows?: number } {
  const v = (globalThis as any).process?.env?.KILN_WEBGPU_BAND as string | undefined;
  if (v === undefined) return {};
  if (!/^[1-9]\d*$/.test(v)) throw new Error(`KILN_WEBGPU_BAND: "${v}" is not a positive integer`);
  return { bandRows: Number(v) };
}

function tilesFromEnv(): number[][] | undefined {
  const spec = (globalThis as any).process?.env?.KILN_WEBGPU_TILES as string | undefined;
  if (!spec) return undefined;
  return spec.split(",").map((t) => {
    const m = /^(\d+)x(\d+)x(\d+)\/(\d+)x(\d+)$/.exec(t.trim());
    if (!m) throw new Error(`KILN_WEBGPU_TILES: "${t}" is not BMxBNxBK/TMxTN`);
    return m.slice(1).map(Number);
  });
}
