// Compute pipelines cached by WGSL text (kernels that differ only in size share one), with
// explicit bind group layouts (uniform size, out, inputs) so that a kernel that ignores an
// input still binds it. Compilation is asynchronous in WebGPU: each entry learns whether its
// shader compiled from an error scope, and reads of its outputs wait for that.
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
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
}

export class Pipelines {
  #byWgsl = new Map<string, PipelineEntry>();
  #byId: PipelineEntry[] = [];
  #layouts = new Map<number, { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout }>();

  constructor(
    private readonly device: GPUDevice,
    private readonly debug: () => boolean,
  ) {}

  get size(): number {
    return this.#byId.length;
  }

  byId(id: number): PipelineEntry | undefined {
    return this.#byId[id];
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

  get(wgsl: string, ninputs: number): PipelineEntry {
    const key = `${ninputs}\n${wgsl}`;
    const hit = this.#byWgsl.get(key);
    if (hit) return hit;
    const l = this.#layout(ninputs);
    this.device.pushErrorScope("validation");
    const module = this.device.createShaderModule({ code: wgsl });
    const pipeline = this.device.createComputePipeline({ layout: l.pipeline, compute: { module, entryPoint: "main" } });
    const entry: PipelineEntry = { id: this.#byId.length, pipeline, layout: l.group, state: "pending", error: null, ready: Promise.resolve() };
    entry.ready = this.device.popErrorScope().then(async (err) => {
      if (!err) {
        entry.state = "ok";
        return;
      }
      let lines = "";
      try {
        const info = await module.getCompilationInfo();
        lines = info.messages
          .filter((m) => m.type === "error")
          .map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`)
          .join("; ");
      } catch {
        // getCompilationInfo is missing on some implementations: the scope's message remains.
      }
      entry.state = "failed";
      entry.error =
        `webgpu: a kernel's WGSL did not compile: ${lines || err.message}` +
        (this.debug() ? `\n--- WGSL ---\n${wgsl}` : " (set KILN_WEBGPU_DEBUG=1 or webgpuDebug(true) to include the WGSL text)");
    });
    this.#byWgsl.set(key, entry);
    this.#byId.push(entry);
    return entry;
  }
}
