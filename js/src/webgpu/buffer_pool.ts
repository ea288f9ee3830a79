// Free GPUBuffers by size class, so that steady-state work (eager ops, jit steps, readbacks)
// creates no GPU buffers: a class holds every request up to its size.

/** Powers of two from 256 bytes; above 64 MiB, multiples of 16 MiB (a power of two would waste up to half). */
export function sizeClass(bytes: number): number {
  const big = 64 << 20;
  if (bytes > big) return Math.ceil(bytes / (16 << 20)) * (16 << 20);
  let c = 256;
  while (c < bytes) c *= 2;
  return c;
}

export class BufferPool {
  #free = new Map<number, GPUBuffer[]>();
  #order = new Set<GPUBuffer>(); // every pooled buffer, the one given back longest ago first
  #pooled = 0;
  #serial = new WeakMap<GPUBuffer, number>(); // creation order of this pool's buffers
  /** GPUBuffers this pool has created (a steady-state loop stops adding to it). */
  created = 0;

  /**
   * `limit`: bytes kept at most; beyond it the buffers given back longest ago are destroyed,
   * through `destroy` (the runtime's, which waits for commands still held that use them).
   */
  constructor(
    private readonly device: GPUDevice,
    private readonly usage: number,
    private readonly limit: number,
    private readonly destroy: (b: GPUBuffer) => void = (b) => b.destroy(),
  ) {}

  /** A buffer of `sizeClass(bytes)` bytes, reused when one is free. */
  take(bytes: number): GPUBuffer {
    const cls = sizeClass(bytes);
    const list = this.#free.get(cls);
    if (list?.length) {
      // The oldest free buffer of the class: which one that is depends only on which buffers
      // are free, not on the order they were given back, so a loop that allocates the same
      // sizes each iteration gets the same buffers, and its bind groups stay cached.
      let i = 0;
      for (let j = 1; j < list.length; j++) if (this.#serial.get(list[j])! < this.#serial.get(list[i])!) i = j;
      const b = list[i];
      list.splice(i, 1);
      this.#order.delete(b);
      this.#pooled -= cls;
      return b;
    }
    this.created++;
    const b = this.device.createBuffer({ size: cls, usage: this.usage });
    this.#serial.set(b, this.created);
    return b;
  }

  /** Whether take(bytes) would reuse a buffer (and so create nothing that can fail). */
  has(bytes: number): boolean {
    return (this.#free.get(sizeClass(bytes))?.length ?? 0) > 0;
  }

  /** Returns a buffer that no pending GPU work uses any more. */
  give(b: GPUBuffer): void {
    if (b.size > this.limit) {
      this.destroy(b);
      return;
    }
    // Room is made by evicting the oldest buffers, not by refusing this one: a loop that moves
    // on to larger arrays would otherwise find the pool full of sizes it no longer uses and
    // create (and clear) its buffers on every call. On the H200 that held a 64M-element
    // elementwise kernel at 36 GB/s instead of 400-1900 (bench/results/webgpu.md).
    for (const old of this.#order) {
      if (this.#pooled + b.size <= this.limit) break;
      this.#evict(old);
    }
    this.#pooled += b.size;
    this.#order.add(b);
    const list = this.#free.get(b.size);
    if (list) list.push(b);
    else this.#free.set(b.size, [b]);
  }

  #evict(b: GPUBuffer): void {
    const list = this.#free.get(b.size)!;
    list.splice(list.indexOf(b), 1);
    this.#order.delete(b);
    this.#pooled -= b.size;
    this.destroy(b);
  }

  get pooledBytes(): number {
    return this.#pooled;
  }

  get pooledBuffers(): number {
    return this.#order.size;
  }

  clear(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
    this.#order.clear();
    this.#pooled = 0;
  }
}
