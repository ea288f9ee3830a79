// Bind groups kept by pipeline and buffers. A jitted step dispatches the same kernels on the
// same pooled GPUBuffers every time, and creating a bind group per dispatch was a large part
// of a step's host time (the MNIST CNN: ~50 us per dispatch through Dawn, 40 a step).
//
// The lookup runs once per dispatch (~470 per SmolLM2 decode step), so it allocates nothing
// when it hits: the key is a number hashed from the pipeline and the buffers' ids, and the
// entries under one hash are told apart by comparing their ids (a string key per dispatch
// was garbage the collector then spent time on).

/** At most this many are kept; past it the cache starts over (old groups are only dropped). */
const MAX_GROUPS = 4096;

interface Kept {
  pipeline: number;
  ids: Int32Array;
  group: GPUBindGroup;
}

export class BindGroupCache {
  #ids = new WeakMap<GPUBuffer, number>();
  #next = 1;
  #groups = new Map<number, Kept[]>();
  #size = 0;
  #scratch = new Int32Array(16);
  hits = 0;

  /** The buffers' ids into #scratch (grown when needed) and the hash of pipeline and ids. */
  #hash(pipeline: number, buffers: ArrayLike<GPUBuffer>, n: number): number {
    if (this.#scratch.length < n) this.#scratch = new Int32Array(n * 2);
    let h = Math.imul(pipeline + 1, 0x9e3779b1);
    for (let i = 0; i < n; i++) {
      const b = buffers[i];
      let id = this.#ids.get(b);
      if (id === undefined) this.#ids.set(b, (id = this.#next++));
      this.#scratch[i] = id;
      h = Math.imul(h ^ id, 0x85ebca6b) ^ (h >>> 13);
    }
    return Math.imul(h ^ n, 0xc2b2ae35) | 0;
  }

  #same(k: Kept, pipeline: number, n: number): boolean {
    if (k.pipeline !== pipeline || k.ids.length !== n) return false;
    for (let i = 0; i < n; i++) if (k.ids[i] !== this.#scratch[i]) return false;
    return true;
  }

  /**
   * The group binding the first `n` of `buffers` (all of them by default) in order for
   * pipeline `pipeline`, made by `make` when not kept. A destroyed buffer is never bound
   * again (pools do not return it), so its groups are simply never asked for.
   */
  get(pipeline: number, buffers: ArrayLike<GPUBuffer>, make: () => GPUBindGroup, n = buffers.length): GPUBindGroup {
    const h = this.#hash(pipeline, buffers, n);
    const bucket = this.#groups.get(h);
    if (bucket)
      for (const k of bucket)
        if (this.#same(k, pipeline, n)) {
          this.hits++;
          return k.group;
        }
    if (this.#size >= MAX_GROUPS) this.clear();
    const kept: Kept = { pipeline, ids: this.#scratch.slice(0, n), group: make() };
    const list = this.#groups.get(h); // clear() may have dropped the bucket
    if (list) list.push(kept);
    else this.#groups.set(h, [kept]);
    this.#size++;
    return kept.group;
  }

  get size(): number {
    return this.#size;
  }

  clear(): void {
    this.#groups.clear();
    this.#size = 0;
  }
}
