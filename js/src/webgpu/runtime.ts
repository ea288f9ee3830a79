// The JS half of kiln's webgpu device: owns the GPUDevice and every GPUBuffer behind integer
// handles, caches pipelines by WGSL text, records many dispatches into one command encoder,
// and submits on readback. The C++ backend (src/backend/webgpu/webgpu_backend.cpp) calls the
// methods below; none throws: failures return -1 (or null) and leave `lastError`.
//
// Faults (docs/ARCHITECTURE.md, "WebGPU runtime"): when the device is lost, every call fails
// with a message that says so and every pending read rejects; init("webgpu") then makes a new
// runtime, whose handles continue this one's numbering so that a lost array's handle is never
// taken for a new one. Out of memory is found late (an error scope of createBuffer): such a
// buffer is an AsyncCheck that reads of everything computed from it wait for and report.
/// <reference types="@webgpu/types" />
import { BindGroupCache } from "./bind_groups.js";
import { BufferPool } from "./buffer_pool.js";
import { CommandLog } from "./command_log.js";
import { Pipelines, type AsyncCheck, type PipelineEntry } from "./pipelines.js";
import { CanvasReader } from "./sync_read.js";

// The spec's GPUBufferUsage values, as numbers: in Node.js the GPUBufferUsage global exists
// only after Dawn loaded, and this module is imported before that.
const MAP_READ = 0x1, COPY_SRC = 0x4, COPY_DST = 0x8, UNIFORM = 0x40, STORAGE = 0x80;
const STORAGE_USAGE = STORAGE | COPY_SRC | COPY_DST;
const STAGING_USAGE = MAP_READ | COPY_DST;
// Encoders are submitted at least this often even without a readback, so a long eager loop
// keeps the GPU busy and its command buffers bounded. High enough that a whole LLM decode
// step (~800 dispatches for SmolLM2's 30 layers, ~500 for Gemma 3 270M's 18) and its logits'
// readback go to the GPU as one command buffer in one submit.
const MAX_DISPATCHES_PER_SUBMIT = 2048;
const VERIFIED: AsyncCheck = { state: "ok", error: null, ready: Promise.resolve() };
const NO_TAINT: AsyncCheck[] = Object.freeze([]) as unknown as AsyncCheck[]; // shared, never mutated
// Buffer handles of every runtime of this process: after a device loss, the arrays of the
// old device keep their handles, which the new runtime must recognize as not its own.
let nextHandle = 1;

interface DeviceBuffer {
  buffer: GPUBuffer;
  bytes: number;
  bindId: number; // the BindGroupCache's id of `buffer` (kept: a dispatch then looks nothing up)
  epoch: number; // the encoder epoch that last used it (see #epoch)
  written: number; // the encoder epoch that last wrote it (a dispatch's output, a copy's destination)
  // Pipelines and buffer allocations not yet known to have succeeded whose output reaches
  // this buffer: a read waits for them and fails if one did not (WGSL, out of memory).
  taint: AsyncCheck[];
  created: AsyncCheck; // this buffer's own allocation (VERIFIED for a reused one)
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
  asyncPipelines: number; // of those, created with createComputePipelineAsync (jit programs)
  holds: number; // times commands were held for pipelines still being created
  dispatches: number; // recorded since the runtime started
  submits: number; // command buffers submitted since then
  createdBuffers: number; // GPUBuffers created since then (storage, staging, uniform)
  bindGroups: number; // bind groups created since then (the cache's misses and unsettled buffers' groups)
  reads: number; // asynchronous reads started
  syncReads: number; // blocking reads (readSync): dataSync, while_loop's predicate
  readBytes: number; // bytes copied back to the host by both kinds of read (unpadded)
}

export class WebGpuRuntime {
  readonly device: GPUDevice;
  /** When set, WGSL compilation errors carry the whole WGSL text. */
  debug = false;
  lastError = "";
  /** Handles below this one belong to runtimes of devices that were lost. */
  readonly firstHandle = nextHandle;
  #lost: string | null = null;
  #deviceErrors: string[] = [];
  #buffers = new Map<number, DeviceBuffer>();
  #liveBytes = 0; // the GPUBuffers' sizes of #buffers, kept as they come and go (stats() is per token in benches)
  // Rejects the reads and idle() waits in flight, so that none hangs when the device is lost.
  #inFlight = new Set<(e: Error) => void>();
  #storage: BufferPool;
  #staging: BufferPool;
  #pipelines: Pipelines;
  #uniforms = new Map<number | string, { buffer: GPUBuffer; bindId: number }>();
  #bindGroups = new BindGroupCache();
  #boundScratch: GPUBuffer[] = []; // dispatch()'s bound buffers (uniform, out, inputs)
  #inputScratch: DeviceBuffer[] = []; // and its inputs' records
  // Buffers freed while the open encoder may still use them: pooled only after it is submitted,
  // or a writeBuffer into a reused buffer would land before the dispatches that read it.
  #freedInEpoch: DeviceBuffer[] = [];
  // The Dawn encoder and pass: touched only by commands that #log runs (at once, or replayed
  // after a hold), so they lag the bookkeeping below while commands are held.
  #encoder: GPUCommandEncoder | null = null;
  #log = new CommandLog((e: any) => this.#deviceErrors.push(`webgpu: a held command failed: ${e?.message ?? e}`));
  #open = false; // commands were recorded since the last submit (held ones included)
  #pass: GPUComputePassEncoder | null = null; // begun at the first dispatch after the encoder or a copy
  // What the open pass last set: a dispatch of the same pipeline or group skips the call.
  #passPipeline: GPUComputePipeline | null = null;
  #passGroup: GPUBindGroup | null = null;
  #inEncoder = 0;
  #encoderChecks = new Set<AsyncCheck>(); // pipelines and allocations not yet known to succeed
  #epoch = 1; // increments at each submit
  #flushQueued = false;
  #scopes: Promise<void>[] = [];
  #stats = { dispatches: 0, submits: 0, reads: 0, syncReads: 0, readBytes: 0, bindGroups: 0 };
  #uniformsCreated = 0;
  #reader: CanvasReader | null | undefined; // the blocking path, found on first use

  /** `adapter`: the adapter's description, for messages and tests ("SwiftShader ..."). */
  constructor(device: GPUDevice, readonly adapter = "") {
    this.device = device;
    // A buffer is destroyed after the held commands that may still use it.
    const destroy = (b: GPUBuffer) => this.#log.run(() => b.destroy());
    this.#storage = new BufferPool(device, STORAGE_USAGE, 512 << 20, destroy);
    this.#staging = new BufferPool(device, STAGING_USAGE, 64 << 20, destroy);
    // SwiftShader compiles pipelines on the CPU, and measured no faster in parallel: a SmolLM2
    // first call's 33-pipeline batch took 103 s created asynchronously against 47 s one after
    // another (2-core machine, 2026-12-07; bench/results/llm.md). GPU drivers compile on the
    // host's cores in parallel (Dawn's worker threads).
    this.#pipelines = new Pipelines(device, () => this.debug, asyncPipelinesFromEnv() ?? !/swiftshader/i.test(adapter));
    device.lost.then((info) => {
      this.#lost =
        `webgpu: the device was lost (${info.reason}${info.message ? `: ${info.message}` : ""}); ` +
        `its arrays are gone, and await init("webgpu") creates a new device`;
      const waiting = [...this.#inFlight];
      this.#inFlight.clear();
      for (const reject of waiting) reject(new Error(this.#lost));
    });
    device.addEventListener?.("uncapturederror", (ev: any) => {
      this.#deviceErrors.push(`webgpu: device error: ${ev.error?.message ?? String(ev.error)}`);
    });
  }

  /** The limits the WGSL generator needs (see webgpu::WgslParams). */
  codegenLimits(): {
    workgroup: number; maxGroupsX: number; workgroupStorage: number; maxInvocations: number; maxStorageBuffers: number; treeMaxOutputs: number; tiles?: number[][]; staging?: number; bandRows?: number; rowLanes?: number; rowOutputs?: number; vec4Loads?: number;
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
      maxStorageBuffers: l.maxStorageBuffersPerShaderStage,
      tiles: tilesFromEnv(), ...stagingFromEnv(), ...bandFromEnv(), ...rowLanesFromEnv(), ...rowOutputsFromEnv(), ...vec4LoadsFromEnv(),
    };
  }

  stats(): RuntimeStats {
    return {
      buffers: this.#buffers.size, bytes: this.#liveBytes,
      pooledBuffers: this.#storage.pooledBuffers, pooledBytes: this.#storage.pooledBytes,
      pendingBuffers: this.#freedInEpoch.length,
      stagingBuffers: this.#staging.pooledBuffers, stagingBytes: this.#staging.pooledBytes,
      uniformBuffers: this.#uniforms.size, pipelines: this.#pipelines.size, ...this.#stats,
      asyncPipelines: this.#pipelines.createdAsync, holds: this.#log.holds,
      createdBuffers: this.#storage.created + this.#staging.created + this.#uniformsCreated,
    };
  }

  /**
   * Whether a batch of new pipelines (a jit program's) is created asynchronously while the
   * commands that need them are held (default: on, except on SwiftShader; the Node.js
   * environment's KILN_WEBGPU_ASYNC_PIPELINES=0/1 decides first). Tests set it.
   */
  get asyncPipelines(): boolean {
    return this.#pipelines.async;
  }
  set asyncPipelines(on: boolean) {
    this.#pipelines.async = on;
  }

  /** The live handles (what the C++ backend reports as its table's buffers). */
  liveBuffers(): number {
    return this.#buffers.size;
  }

  /** Why the device is gone (null while it works): then init("webgpu") makes a new one. */
  get lost(): string | null {
    return this.#lost;
  }

  #fail(msg: string): -1 {
    this.lastError = msg;
    return -1;
  }

  /** The buffer behind a handle, or null (and lastError; C++ prefixes the operation) when there is none. */
  #get(handle: number): DeviceBuffer | null {
    const rec = this.#buffers.get(handle);
    if (rec) return rec;
    this.#fail(
      handle > 0 && handle < this.firstHandle
        ? `buffer ${handle} was on a webgpu device that was lost, so its contents are gone; create the array again on the new device`
        : `buffer ${handle} does not exist`,
    );
    return null;
  }

  /** `work`, rejected as soon as the device is lost (Dawn may never settle it then). */
  #untilLost<T>(work: Promise<T>): Promise<T> {
    if (this.#lost) return Promise.reject(new Error(this.#lost));
    return new Promise<T>((resolve, reject) => {
      this.#inFlight.add(reject);
      work.then(resolve, reject).finally(() => this.#inFlight.delete(reject));
    });
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
    const rec: DeviceBuffer = { buffer, bytes, bindId: this.#bindGroups.idOf(buffer), epoch: 0, written: 0, taint: [], created: VERIFIED };
    if (creates) {
      const check: AsyncCheck = { state: "pending", error: null, ready: Promise.resolve() };
      check.ready = this.device.popErrorScope().then(
        (e) => {
          check.state = e ? "failed" : "ok";
          if (e) check.error = `webgpu: out of memory: the device could not allocate a buffer of ${bytes} bytes (${e.message.split("\n")[0]})`;
        },
        () => void (check.state = "ok"), // a lost device: its own error is reported instead
      );
      rec.created = check;
    }
    const h = nextHandle++;
    this.#buffers.set(h, rec);
    this.#liveBytes += rec.buffer.size;
    return h;
  }

  free(handle: number): void {
    const rec = this.#buffers.get(handle);
    if (!rec) return;
    this.#buffers.delete(handle);
    this.#liveBytes -= rec.buffer.size;
    if (this.#lost) return;
    if (rec.epoch === this.#epoch && this.#open) this.#freedInEpoch.push(rec);
    else this.#release(rec);
  }

  /** Pools a buffer that no unsubmitted work uses; one whose allocation failed is dropped. */
  #release(rec: DeviceBuffer): void {
    if (rec.created.state === "pending") rec.created.ready.then(() => this.#release(rec));
    else if (rec.created.state === "failed") this.#log.run(() => rec.buffer.destroy());
    else if (!this.#lost) this.#storage.give(rec.buffer);
  }

  write(handle: number, offset: number, data: Uint8Array): number {
    if (this.#lost) return this.#fail(this.#lost);
    const rec = this.#get(handle);
    if (!rec) return -1;
    if (rec.created.state === "failed") return this.#fail(rec.created.error!);
    if (offset % 4 !== 0) return this.#fail(`webgpu.write: offset ${offset} is not a multiple of 4`);
    if (offset + data.byteLength > rec.buffer.size)
      return this.#fail(`webgpu.write: range [${offset}, ${offset + data.byteLength}) is outside a buffer of ${rec.bytes} bytes`);
    // The open encoder's commands run after any writeBuffer issued now; submit them first
    // when they use this buffer.
    if (rec.epoch === this.#epoch && this.#open) this.flush();
    // writeBuffer copies `data` now, so a view of the core's memory is safe; sizes must be
    // multiples of 4. The threaded core's memory is a SharedArrayBuffer, which writeBuffer
    // does not take: such data is copied to an unshared buffer first.
    const n = data.byteLength;
    const shared = typeof SharedArrayBuffer !== "undefined" && data.buffer instanceof SharedArrayBuffer;
    // Held writes run later, when the core's memory holds other bytes: those copy too.
    const src = n % 4 === 0 && !shared && !this.#log.holding ? data : (() => {
      const p = new Uint8Array(Math.ceil(n / 4) * 4);
      p.set(data);
      return p;
    })();
    const write = () => this.device.queue.writeBuffer(rec.buffer, offset, src.buffer, src.byteOffset, src.byteLength);
    if (rec.created.state === "ok") this.#log.run(write);
    else this.#log.run(() => this.#scoped([rec.created], "a write", write));
    return 0;
  }

  /**
   * Copies `bytes` from one buffer to another in the open encoder, between the dispatches
   * recorded before and after it (WebGPU orders a command encoder's passes and copies).
   */
  copy(src: number, srcOffset: number, dst: number, dstOffset: number, bytes: number): number {
    if (this.#lost) return this.#fail(this.#lost);
    const s = this.#get(src), d = this.#get(dst);
    if (!s || !d) return -1;
    const bad = copyRangeError(s, srcOffset, bytes) ?? copyRangeError(d, dstOffset, bytes);
    if (bad) return this.#fail(bad);
    // The usual case (a decode step's KV cache rows: both buffers settled) allocates nothing.
    const unsettled = s.created.state === "ok" && d.created.state === "ok" ? NO_TAINT : [s, d].map((r) => r.created).filter((c) => c.state !== "ok");
    const failed = unsettled.find((c) => c.state === "failed");
    if (failed) return this.#fail(failed.error!);
    if (unsettled.length) this.flush();
    // The next dispatch begins a new pass, so consecutive copies (a decode step's KV cache
    // rows, 2 per layer) share the gap between two passes instead of a pass each.
    const encodeCopy = () => {
      if (!this.#encoder) this.#encoder = this.device.createCommandEncoder();
      this.#endPass();
      this.#encoder.copyBufferToBuffer(s.buffer, srcOffset, d.buffer, dstOffset, bytes);
    };
    if (this.#log.holding) this.#log.run(encodeCopy);
    else encodeCopy(); // the usual case: no closure is made
    this.#open = true;
    for (const c of unsettled) this.#encoderChecks.add(c);
    s.epoch = d.epoch = d.written = this.#epoch;
    // Part of d now comes from s: a failure that spoils s spoils d.
    if (d.taint.length || s.taint.length || unsettled.length)
      d.taint = [...new Set([...d.taint, ...s.taint, ...unsettled])].filter((t) => t.state !== "ok");
    this.#afterRecording(unsettled.length > 0);
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

  /**
   * Records pipeline `pipelineId` over `output` and the input handles `inputs[first,
   * first + count)` (the C++ backend passes its whole heap and a range: no view is made per
   * dispatch), with the output size in the uniform and a grid of gx x gy workgroups. w1..w3:
   * the uniform's other words (load offsets the C++ backend lifted out of the WGSL text, so
   * that kernels reading other parts of a buffer share one pipeline).
   */
  dispatch(
    pipelineId: number, inputs: Int32Array, output: number, size: number, gx: number, gy: number, first = 0, count = inputs.length - first,
    w1 = 0, w2 = 0, w3 = 0,
  ): number {
    if (this.#lost) return this.#fail(this.#lost);
    const p = this.#pipelines.byId(pipelineId);
    if (!p) return this.#fail(`webgpu.dispatch: pipeline ${pipelineId} does not exist`);
    if (p.error) return this.#fail(p.error);
    const out = this.#get(output);
    if (!out) return -1;
    // The first dispatch of a pipeline creates it, with the others requested since (a jit
    // program's: pipelines.ts); asynchronously created ones hold the commands (#record).
    if (!p.created) this.#pipelines.create(p, this.#log.holding);
    // A decode step records ~400 of these per token, so the usual case (every buffer known to
    // exist, no unsettled pipeline upstream) allocates nothing: the bound buffers and input
    // records go into arrays kept for this, which no later call reads, and the bind-group
    // cache gets the ids the records keep.
    const n = count;
    const buffers = this.#boundScratch, ins = this.#inputScratch, groups = this.#bindGroups;
    const u = this.#uniform(size, w1, w2, w3);
    buffers[0] = u.buffer;
    buffers[1] = out.buffer;
    groups.setId(0, u.bindId);
    groups.setId(1, out.bindId);
    let settled = out.created.state === "ok";
    let clean = p.state === "ok";
    for (let i = 0; i < n; i++) {
      const r = this.#get(inputs[first + i]);
      if (!r) return -1;
      ins[i] = r;
      buffers[i + 2] = r.buffer;
      groups.setId(i + 2, r.bindId);
      settled &&= r.created.state === "ok";
      for (const t of r.taint) clean &&= t.state === "ok";
    }
    if (settled && clean) {
      let group = groups.find(p.id, n + 2);
      if (!group) groups.keep(p.id, n + 2, (group = this.#makeGroup(p, buffers.slice(0, n + 2))));
      this.#record(p, group, gx, gy);
      out.epoch = out.written = this.#epoch;
      for (let i = 0; i < n; i++) ins[i].epoch = this.#epoch;
      out.taint = NO_TAINT;
      this.#afterRecording(false);
      return 0;
    }
    return this.#dispatchUnsettled(p, out, ins.slice(0, n), buffers.slice(0, n + 2), gx, gy);
  }

  /** dispatch() where a buffer's allocation or a pipeline upstream is not yet known to have succeeded. */
  #dispatchUnsettled(p: PipelineEntry, out: DeviceBuffer, ins: DeviceBuffer[], buffers: GPUBuffer[], gx: number, gy: number): number {
    // Buffers whose allocation is not known to have succeeded: one known to have failed fails
    // the dispatch now. An unsettled one gets a command buffer of its own, so that if it did
    // fail, the submit that fails with it holds no other array's work.
    const unsettled = [out, ...ins].map((r) => r.created).filter((c) => c.state !== "ok");
    const failed = unsettled.find((c) => c.state === "failed");
    if (failed) return this.#fail(failed.error!);
    if (unsettled.length) this.flush();
    let group: GPUBindGroup | null = null;
    // Buffers not known to exist get a group of their own, made under an error scope.
    if (unsettled.length) this.#scoped(unsettled, "a bind group", () => void (group = this.#makeGroup(p, buffers)));
    else group = this.#bindGroups.get(p.id, buffers, () => this.#makeGroup(p, buffers));
    this.#record(p, group!, gx, gy);
    for (const c of [p, ...unsettled]) if (c.state !== "ok") this.#encoderChecks.add(c);
    for (const r of [out, ...ins]) r.epoch = this.#epoch;
    out.written = this.#epoch;
    const taint = new Set<AsyncCheck>(unsettled);
    if (p.state !== "ok") taint.add(p);
    for (const r of ins) for (const t of r.taint) if (t.state !== "ok") taint.add(t);
    out.taint = [...taint];
    this.#afterRecording(unsettled.length > 0);
    return 0;
  }

  #makeGroup(p: { layout: GPUBindGroupLayout }, buffers: GPUBuffer[]): GPUBindGroup {
    this.#stats.bindGroups++;
    return this.device.createBindGroup({ layout: p.layout, entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })) });
  }

  /**
   * One dispatch into the open pass (begun here if there is none). A pass keeps its pipeline
   * and bind group between dispatches, so an unchanged one is not set again: each call into
   * Dawn costs host time, and decode steps run a pipeline or bind the same buffers twice in a
   * row at times.
   */
  #record(p: PipelineEntry, group: GPUBindGroup, gx: number, gy: number): void {
    this.#stats.dispatches++;
    this.#open = true;
    const pipeline = p.pipeline;
    if (pipeline && !this.#log.holding) return this.#encode(pipeline, group, gx, gy);
    // A pipeline still being created (or commands held for one): this dispatch waits for it.
    // One whose creation failed is never encoded: its outputs carry it as a taint.
    const encode = () => void (p.pipeline && this.#encode(p.pipeline, group, gx, gy));
    if (pipeline) this.#log.run(encode);
    else this.#log.after(p, encode);
  }

  #encode(pipeline: GPUComputePipeline, group: GPUBindGroup, gx: number, gy: number): void {
    if (!this.#encoder) this.#encoder = this.device.createCommandEncoder();
    let pass = this.#pass;
    if (!pass) {
      pass = this.#pass = this.#encoder.beginComputePass();
      this.#passPipeline = this.#passGroup = null;
    }
    if (this.#passPipeline !== pipeline) pass.setPipeline((this.#passPipeline = pipeline));
    if (this.#passGroup !== group) pass.setBindGroup(0, (this.#passGroup = group));
    pass.dispatchWorkgroups(gx, gy);
  }

  /** Ends the open pass, if any (before a copy or a submit). */
  #endPass(): void {
    if (!this.#pass) return;
    this.#pass.end();
    this.#pass = null;
    this.#passPipeline = this.#passGroup = null;
  }

  /** After a command was recorded: submit now, or once the current synchronous JS is done. */
  #afterRecording(unsettled: boolean): void {
    if (unsettled || ++this.#inEncoder >= MAX_DISPATCHES_PER_SUBMIT) this.flush();
    else if (!this.#flushQueued) {
      // Submit once the current synchronous JS is done (e.g. a whole jit program), so the
      // GPU starts without waiting for a readback.
      this.#flushQueued = true;
      queueMicrotask(() => {
        this.#flushQueued = false;
        if (!this.#lost) this.flush();
      });
    }
  }

  /**
   * One uniform buffer per output size (and words, where a kernel has any), kept: they repeat,
   * and they are 16 bytes each. The usual case, no words, looks up the size as a number.
   */
  #uniform(size: number, w1: number, w2: number, w3: number): { buffer: GPUBuffer; bindId: number } {
    const key = w1 || w2 || w3 ? `${size},${w1},${w2},${w3}` : size;
    let u = this.#uniforms.get(key);
    if (!u) {
      if (this.#uniforms.size >= 4096) {
        this.flush(); // no unsubmitted command may still bind the ones destroyed
        const old = [...this.#uniforms.values()];
        this.#log.run(() => old.forEach((b) => b.buffer.destroy()));
        this.#uniforms.clear();
      }
      const buffer = this.device.createBuffer({ size: 16, usage: UNIFORM | COPY_DST });
      this.#uniformsCreated++;
      this.device.queue.writeBuffer(buffer, 0, new Uint32Array([size, w1, w2, w3]));
      u = { buffer, bindId: this.#bindGroups.idOf(buffer) };
      this.#uniforms.set(key, u);
    }
    return u;
  }

  /** Submits the open encoder (the flush point before readbacks and conflicting writes). */
  flush(): void {
    if (!this.#open) return;
    this.#submitOpen([], "a submit");
  }

  /**
   * Ends the open encoder's pass, records `extra` (a readback's copy) after it, and submits the
   * command buffer. `checks`: what else the submit's validation error may belong to.
   */
  #submitOpen(checks: AsyncCheck[], what: string, extra?: (e: GPUCommandEncoder) => void): void {
    // A submit that binds a pipeline whose WGSL did not compile, or a buffer that could not be
    // allocated, fails too; that error belongs to them (reads of their outputs report it).
    const all = [...new Set([...this.#encoderChecks, ...checks])];
    this.#log.run(() => {
      const encoder = this.#encoder ?? this.device.createCommandEncoder();
      this.#endPass();
      extra?.(encoder);
      this.#encoder = null;
      this.#scoped(all, what, () => this.device.queue.submit([encoder.finish()]));
    });
    this.#encoderChecks = new Set();
    this.#open = false;
    this.#inEncoder = 0;
    this.#epoch++;
    this.#stats.submits++;
    for (const b of this.#freedInEpoch) this.#release(b);
    this.#freedInEpoch = [];
  }

  /** Submits `record`'s commands alone, leaving the open encoder (and its epoch) as they are. */
  #submitCopy(checks: AsyncCheck[], record: (e: GPUCommandEncoder) => void): void {
    this.#log.run(() => {
      const encoder = this.device.createCommandEncoder();
      record(encoder);
      this.#scoped(checks, "a read's copy", () => this.device.queue.submit([encoder.finish()]));
    });
    this.#stats.submits++;
  }

  /**
   * Runs `record` in a validation error scope. Its error is reported to the reads waiting
   * then, unless one of `checks` failed: then it is that check's (out of memory, WGSL), which
   * reads of the affected buffers report.
   */
  #scoped(checks: AsyncCheck[], what: string, record: () => void): void {
    this.device.pushErrorScope("validation");
    record();
    this.#watch(
      this.device.popErrorScope().then(async (e) => {
        if (!e) return null;
        await Promise.all(checks.map((c) => c.ready));
        return checks.some((c) => c.state === "failed") ? null : e;
      }),
      (e) => this.#deviceErrors.push(`webgpu: ${what} failed validation: ${e.message}`),
    );
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
    const rec = this.#get(handle);
    if (!rec) return null;
    if (offset % 4 !== 0) return (this.#fail(`webgpu.read: offset ${offset} is not a multiple of 4`), null);
    if (rec.created.state === "failed") return (this.#fail(rec.created.error!), null);
    const padded = Math.max(4, Math.ceil(bytes / 4) * 4);
    // A staging buffer can run out of memory too: then the read fails with that, not with
    // the map's error.
    const stagingCreated = !this.#staging.has(padded);
    if (stagingCreated) this.device.pushErrorScope("out-of-memory");
    const staging = this.#staging.take(padded);
    const stagingError = stagingCreated ? this.device.popErrorScope().catch(() => null) : Promise.resolve(null);
    // When the open encoder's work writes the buffer, the copy goes after it, in the same
    // command buffer (a decode step and the read of its logits are one submit). Otherwise the
    // copy is a command buffer of its own, submitted ahead of that work, so the read waits
    // only for what wrote the buffer: greedy decoding records the next step while the last
    // one's token is read (llm::Generation::speculate).
    const checks = [rec.created, ...rec.taint];
    const copy = (e: GPUCommandEncoder) => e.copyBufferToBuffer(rec.buffer, offset, staging, 0, padded);
    if (this.#open && rec.written === this.#epoch) this.#submitOpen(checks, "a submit", copy);
    else this.#submitCopy(checks, copy);
    this.#stats.reads++;
    this.#stats.readBytes += bytes;
    const held = this.#log.drained(); // the copy may be held (for pipelines being created)
    let scopes = this.#log.holding ? null : this.#scopes.slice();
    return this.#untilLost((async () => {
      const oom = await stagingError;
      await held;
      scopes ??= this.#scopes.slice();
      if (oom) {
        staging.destroy();
        throw new Error(`webgpu: out of memory: the device could not allocate a staging buffer of ${padded} bytes to read an array (${oom.message.split("\n")[0]})`);
      }
      try {
        await staging.mapAsync(1 /* GPUMapMode.READ */, 0, padded);
      } catch (e: any) {
        throw new Error(this.#lost ?? `webgpu: reading a buffer failed: ${e?.message ?? e}`);
      }
      const out = new Uint8Array(staging.getMappedRange(0, padded).slice(0, bytes));
      staging.unmap();
      this.#staging.give(staging);
      for (const t of checks) {
        await t.ready;
        if (t.error) throw new Error(t.error);
      }
      await Promise.all(scopes);
      // Device errors (a failed submit, an uncaptured error) are reported once, to the reads
      // that were waiting when they were found.
      if (this.#deviceErrors.length) throw new Error(this.#deviceErrors.splice(0).join("; "));
      return out;
    })());
  }

  /** Whether readSync works here: in browsers with OffscreenCanvas, not in Node.js (Dawn). */
  canReadSync(): boolean {
    if (this.#reader === undefined) this.#reader = CanvasReader.create(this.device);
    return this.#reader !== null;
  }

  /**
   * Bytes [offset, offset + bytes) of a buffer after all work recorded so far, blocking until
   * the GPU has done it (sync_read.ts: slow, a round trip per call); null when it cannot.
   * Unlike read, it cannot wait for errors still unreported (a WGSL compile, an allocation):
   * those already known fail it, a later one goes to the next asynchronous read.
   */
  readSync(handle: number, offset: number, bytes: number): Uint8Array | null {
    if (this.#lost) return (this.#fail(this.#lost), null);
    if (!this.canReadSync())
      return (this.#fail("webgpu: no synchronous reads here (they need a browser's OffscreenCanvas; Node.js's Dawn has none)"), null);
    const rec = this.#get(handle);
    if (!rec) return null;
    if (offset % 4 !== 0) return (this.#fail(`webgpu.read: offset ${offset} is not a multiple of 4`), null);
    const failed = [rec.created, ...rec.taint].find((c) => c.state === "failed");
    if (failed) return (this.#fail(failed.error!), null);
    if (bytes === 0) return new Uint8Array(0);
    this.flush();
    // A blocking read cannot wait for pipelines being created asynchronously: those are
    // created now (synchronously), and the commands held for them run.
    if (this.#log.holding) {
      this.#pipelines.createPendingNow();
      this.#log.replay();
    }
    let out: Uint8Array;
    try {
      out = this.#reader!.read(this.device, rec.buffer, offset, bytes);
    } catch (e: any) {
      return (this.#fail(this.#lost ?? `webgpu: a synchronous read failed: ${e?.message ?? e}`), null);
    }
    this.#stats.syncReads++;
    this.#stats.readBytes += bytes;
    if (this.#deviceErrors.length) return (this.#fail(this.#deviceErrors.splice(0).join("; ")), null);
    return out;
  }

  /** Resolves when all work recorded so far has run on the GPU (blockUntilReady). */
  async idle(): Promise<void> {
    if (this.#lost) throw new Error(this.#lost);
    this.flush();
    await this.#untilLost(this.#log.drained());
    await this.#untilLost(this.device.queue.onSubmittedWorkDone());
  }

  /** Stops using the device (its buffers become invalid); for tests and page unloads. */
  destroy(): void {
    this.#storage.clear();
    this.#staging.clear();
    this.device.destroy();
  }
}

/** Why copy() cannot use bytes [offset, offset + bytes) of `r`, or null when it can. */
function copyRangeError(r: DeviceBuffer, offset: number, bytes: number): string | null {
  if (offset % 4 !== 0 || bytes % 4 !== 0) return `webgpu.copy: offset ${offset} and size ${bytes} must be multiples of 4`;
  if (offset + bytes > r.buffer.size) return `webgpu.copy: range [${offset}, ${offset + bytes}) is outside a buffer of ${r.bytes} bytes`;
  return null;
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

/**
 * KILN_WEBGPU_ROW_LANES=n (Node.js): invocations per output of tree reductions (a power of two
 * up to 256; 256 = one output per workgroup) instead of the generator's rule; for tuning.
 */
function rowLanesFromEnv(): { rowLanes?: number } {
  const n = powerOfTwoFromEnv("KILN_WEBGPU_ROW_LANES", 256);
  return n === undefined ? {} : { rowLanes: n };
}

/**
 * KILN_WEBGPU_ROW_OUTPUTS=n (Node.js): outputs each lane group of a tree reduction sums at once
 * (1 to 16; a matvec's lanes then load x once for n rows); for tuning.
 */
function rowOutputsFromEnv(): { rowOutputs?: number } {
  const n = powerOfTwoFromEnv("KILN_WEBGPU_ROW_OUTPUTS", 16);
  return n === undefined ? {} : { rowOutputs: n };
}

/**
 * KILN_WEBGPU_ASYNC_PIPELINES=0|1 (Node.js): a jit program's new pipelines created one after
 * another, or together asynchronously (the A/B of bench/llm/first_call.mjs); unset: the
 * adapter's default.
 */
function asyncPipelinesFromEnv(): boolean | undefined {
  const v = (globalThis as any).process?.env?.KILN_WEBGPU_ASYNC_PIPELINES as string | undefined;
  if (v === undefined || v === "") return undefined;
  if (v !== "0" && v !== "1") throw new Error(`KILN_WEBGPU_ASYNC_PIPELINES: "${v}" is not 0 or 1`);
  return v === "1";
}

/** KILN_WEBGPU_VEC4_LOADS=0 (Node.js): no 128-bit loads in reduction chunks (the A/B of a sweep). */
function vec4LoadsFromEnv(): { vec4Loads?: number } {
  const v = (globalThis as any).process?.env?.KILN_WEBGPU_VEC4_LOADS as string | undefined;
  if (v === undefined || v === "") return {};
  if (v !== "0" && v !== "1") throw new Error(`KILN_WEBGPU_VEC4_LOADS: "${v}" is not 0 or 1`);
  return { vec4Loads: Number(v) };
}

function powerOfTwoFromEnv(name: string, max: number): number | undefined {
  const v = (globalThis as any).process?.env?.[name] as string | undefined;
  if (v === undefined || v === "") return undefined; // empty: the rule (a sweep's "after" run)
  const n = Number(v);
  if (!/^[1-9]\d*$/.test(v) || (n & (n - 1)) !== 0 || n > max) throw new Error(`${name}: "${v}" is not a power of two from 1 to ${max}`);
  return n;
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
