// Bind groups kept by pipeline and buffers. A jitted step dispatches the same kernels on the
// same pooled GPUBuffers every time, and creating a bind group per dispatch was a large part
// of a step's host time (the MNIST CNN: ~50 us per dispatch through Dawn, 40 a step).
//
// The lookup runs once per dispatch (~470 per SmolLM2 decode step), so it allocates nothing
// when it hits: the key is a number hashed from the pipeline and the buffers' ids, and the
// entries under one hash are told apart by comparing their ids (a string key per dispatch
// was garbage the collector then spent time on). The runtime keeps each buffer's id in its
// record and passes ids (setId, find, keep), so a hit costs no WeakMap lookup and no closure.

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

  /** The id this cache knows `buffer` by (given on first sight; a record may keep it). */
  idOf(buffer: GPUBuffer): number {
    let id = this.#ids.get(buffer);
    if (id === undefined) this.#ids.set(buffer, (id = this.#next++));
    return id;
  }

  /**
   * Sets bound buffer `i`'s id for the next find()/keep(): callers that keep each buffer's id
   * (runtime.ts's records) pass it, so a dispatch does no WeakMap lookup per buffer.
   */
  setId(i: number, id: number): void {
    if (this.#scratch.length <= i) {
      const grown = new Int32Array(Math.max(16, (i + 1) * 2));
      grown.set(this.#scratch);
      this.#scratch = grown;
    }
    this.#scratch[i] = id;
  }

  #hash(pipeline: number, n: number): number {
    let h = Math.imul(pipeline + 1, 0x9e3779b1);
    for (let i = 0; i < n; i++) h = Math.imul(h ^ this.#scratch[i], 0x85ebca6b) ^ (h >>> 13);
    return Math.imul(h ^ n, 0xc2b2ae35) | 0;
  }

  #same(k: Kept, pipeline: number, n: number): boolean {
    if (k.pipeline !== pipeline || k.ids.length !== n) return false;
    for (let i = 0; i < n; i++) if (k.ids[i] !== this.#scratch[i]) return false;
    return true;
  }

  /**
   * The group kept for pipeline `pipeline` binding the `n` buffers whose ids setId() gave, in
   * order; null when none is kept (then keep() stores the one the caller makes). Allocates
   * nothing: a decode step asks once per dispatch.
   */
  find(pipeline: number, n: number): GPUBindGroup | null {
    const bucket = this.#groups.get(this.#hash(pipeline, n));
    if (bucket)
      for (const k of bucket)
        if (this.#same(k, pipeline, n)) {
          this.hits++;
          return k.group;
        }
    return null;
  }

  /** Keeps `group` for the pipeline and ids of the find() that just missed. */
  keep(pipeline: number, n: number, group: GPUBindGroup): void {
    if (this.#size >= MAX_GROUPS) this.clear();
    const h = this.#hash(pipeline, n);
    const kept: Kept = { pipeline, ids: this.#scratch.slice(0, n), group };
    const list = this.#groups.get(h);
    if (list) list.push(kept);
    else this.#groups.set(h, [kept]);
    this.#size++;
  }

  /**
   * The group binding the first `n` of `buffers` (all of them by default) in order for
   * pipeline `pipeline`, made by `make` when not kept. A destroyed buffer is never bound
   * again (pools do not return it), so its groups are simply never asked for.
   */
  get(pipeline: number, buffers: ArrayLike<GPUBuffer>, make: () => GPUBindGroup, n = buffers.length): GPUBindGroup {
    for (let i = 0; i < n; i++) this.setId(i, this.idOf(buffers[i]));
    const kept = this.find(pipeline, n);
    if (kept) return kept;
    const group = make();
    this.keep(pipeline, n, group);
    return group;
  }

  get size(): number {
    return this.#size;
  }

  clear(): void {
    this.#groups.clear();
    this.#size = 0;
  }
}
