// Compute pipelines cached by WGSL text (kernels that differ only in size share one), with
// explicit bind group layouts (uniform size, out, inputs) so that a kernel that ignores an
// input still binds it. Compilation is asynchronous in WebGPU: each entry learns whether its
// shader compiled from an error scope (createComputePipeline) or from the settled promise
// (createComputePipelineAsync, whose pipeline object exists only then), and reads of its
// outputs wait for that.
/// <reference types="@webgpu/types" />

/**
 * Something WebGPU reports on only later (a pipeline's compilation, a buffer's allocation):
 * `ready` resolves once `state` is known, and `error` says why it failed.
 */
export interface AsyncCheck {
  state: "pending" | "ok" | "failed";
  error: string | null;
  ready: Promise<void>;
}

export interface PipelineEntry extends AsyncCheck {
  id: number;
  /** null while an asynchronous creation is under way, and after it failed. */
  pipeline: GPUComputePipeline | null;
  layout: GPUBindGroupLayout;
  /** Whether creation has begun (create()): a pipeline is only requested until its first dispatch. */
  created: boolean;
  /** Creates the pipeline now (createComputePipeline) if it is still being created asynchronously. */
  now(): void;
}

export class Pipelines {
  #byWgsl = new Map<string, PipelineEntry>();
  #byId: PipelineEntry[] = [];
  #layouts = new Map<number, { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout }>();
  #requested: { entry: PipelineEntry; wgsl: string; ninputs: number }[] = [];
  /** Pipelines created so far with createComputePipelineAsync (a counter for tests and benches). */
  createdAsync = 0;

  /** `async`: whether batches are created asynchronously (the runtime's choice per adapter). */
  constructor(
    private readonly device: GPUDevice,
    private readonly debug: () => boolean,
    public async = true,
  ) {}

  get size(): number {
    return this.#byId.length;
  }

  byId(id: number): PipelineEntry | undefined {
    return this.#byId[id];
  }

  /** Creates every pipeline still being created asynchronously now (a blocking read needs them). */
  createPendingNow(): void {
    for (const e of this.#byId) if (e.created && e.state === "pending" && !e.pipeline) e.now();
  }

  #layout(ninputs: number) {
    let l = this.#layouts.get(ninputs);
    if (!l) {
      const entries: GPUBindGroupLayoutEntry[] = [
        { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: "uniform" } },
        { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: "storage" } },
      ];
      for (let i = 0; i < ninputs; i++)
        entries.push({ binding: 2 + i, visibility: GPUShaderStage.COMPUTE, buffer: { type: "read-only-storage" } });
      const group = this.device.createBindGroupLayout({ entries });
      l = { group, pipeline: this.device.createPipelineLayout({ bindGroupLayouts: [group] }) };
      this.#layouts.set(ninputs, l);
    }
    return l;
  }

  /**
   * The entry of this WGSL, created at its first dispatch (create()): jit prepares all the
   * kernels of a program before it runs any, so the pipelines requested but not created when
   * one is first dispatched are that program's, and they are created together.
   */
  get(wgsl: string, ninputs: number): PipelineEntry {
    const key = `${ninputs}\n${wgsl}`;
    const hit = this.#byWgsl.get(key);
    if (hit) return hit;
    const entry: PipelineEntry = {
      id: this.#byId.length, pipeline: null, layout: this.#layout(ninputs).group, state: "pending", error: null,
      ready: Promise.resolve(), created: false, now: () => {},
    };
    this.#requested.push({ entry, wgsl, ninputs });
    this.#byWgsl.set(key, entry);
    this.#byId.push(entry);
    return entry;
  }

  /**
   * Creates `entry` (if it is only requested) and every other pipeline requested so far:
   * asynchronously when there are several, or when `joinHold` (commands are held for others
   * already), so that they compile in parallel (Dawn runs createComputePipelineAsync on worker
   * threads, measured in bench/results/llm.md) while the runtime holds the commands that need
   * them; synchronously when it is the only one (an eager op: nothing to overlap, and a
   * blocking read in a browser needs it now).
   */
  create(entry: PipelineEntry, joinHold: boolean): void {
    if (entry.created) return;
    const batch = this.#requested;
    this.#requested = [];
    const async = this.async && typeof this.device.createComputePipelineAsync === "function" && (batch.length > 1 || joinHold);
    for (const r of batch) this.#create(r.entry, r.wgsl, r.ninputs, async);
  }

  #create(entry: PipelineEntry, wgsl: string, ninputs: number, async: boolean): void {
    entry.created = true;
    const l = this.#layout(ninputs);
    this.device.pushErrorScope("validation");
    const module = this.device.createShaderModule({ code: wgsl });
    const descriptor: GPUComputePipelineDescriptor = { layout: l.pipeline, compute: { module, entryPoint: "main" } };
    const fail = async (message: string) => {
      let lines = "";
      try {
        const info = await module.getCompilationInfo();
        lines = info.messages
          .filter((m) => m.type === "error")
          .map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`)
          .join("; ");
      } catch {
        // getCompilationInfo is missing on some implementations: the error's message remains.
      }
      entry.state = "failed";
      entry.pipeline = null;
      entry.error =
        `webgpu: a kernel's WGSL did not compile: ${lines || message}` +
        (this.debug() ? `\n--- WGSL ---\n${wgsl}` : " (set KILN_WEBGPU_DEBUG=1 or webgpuDebug(true) to include the WGSL text)");
    };
    if (async) {
      // A WGSL that does not parse also rejects the pipeline's promise: the module's own
      // scope is popped and dropped, so the error is reported once.
      this.device.popErrorScope().catch(() => null);
      this.createdAsync++;
      let sync = false; // now() created it: the asynchronous result is dropped
      entry.now = () => {
        if (entry.state !== "pending" || sync) return;
        sync = true;
        // Its validation error, if any, is the async creation's to report (it rejects too).
        this.device.pushErrorScope("validation");
        entry.pipeline = this.device.createComputePipeline(descriptor);
        this.device.popErrorScope().catch(() => null);
      };
      entry.ready = this.device.createComputePipelineAsync(descriptor).then(
        (p) => {
          if (!sync) entry.pipeline = p;
          entry.state = "ok";
        },
        (e: any) => fail(e?.message ?? String(e)),
      );
    } else {
      entry.pipeline = this.device.createComputePipeline(descriptor);
      entry.ready = this.device.popErrorScope().then((err) => (err ? fail(err.message) : void (entry.state = "ok")));
    }
  }
}
