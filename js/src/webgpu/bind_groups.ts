// Bind groups kept by pipeline and buffers. A jitted step dispatches the same kernels on the
// same pooled GPUBuffers every time, and creating a bind group per dispatch was a large part
// of a step's host time (the MNIST CNN: ~50 us per dispatch through Dawn, 40 a step).

/** At most this many are kept; past it the cache starts over (old groups are only dropped). */
const MAX_GROUPS = 4096;

export class BindGroupCache {
  #ids = new WeakMap<GPUBuffer, number>();
  #next = 1;
  #groups = new Map<string, GPUBindGroup>();
  hits = 0;

  #key(pipeline: number, buffers: GPUBuffer[]): string {
    let key = String(pipeline);
    for (const b of buffers) {
      let id = this.#ids.get(b);
      if (id === undefined) this.#ids.set(b, (id = this.#next++));
      key += ":" + id;
    }
    return key;
  }

  /**
   * The group binding `buffers` in order for pipeline `pipeline`, made by `make` when not kept.
   * A destroyed buffer is never bound again (pools do not return it), so its groups are
   * simply never asked for.
   */
  get(pipeline: number, buffers: GPUBuffer[], make: () => GPUBindGroup): GPUBindGroup {
    const key = this.#key(pipeline, buffers);
    const kept = this.#groups.get(key);
    if (kept) {
      this.hits++;
      return kept;
    }
    if (this.#groups.size >= MAX_GROUPS) this.#groups.clear();
    const group = make();
    this.#groups.set(key, group);
    return group;
  }

  get size(): number {
    return this.#groups.size;
  }

  clear(): void {
    this.#groups.clear();
  }
}
