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
  #pooled = 0;

  /** `limit`: bytes kept at most; a buffer given beyond it is destroyed. */
  constructor(
    private readonly device: GPUDevice,
    private readonly usage: number,
    private readonly limit: number,
  ) {}

  /** A buffer of `sizeClass(bytes)` bytes, reused when one is free. */
  take(bytes: number): GPUBuffer {
    const cls = sizeClass(bytes);
    const list = this.#free.get(cls);
    const b = list?.pop();
    if (b) {
      this.#pooled -= cls;
      return b;
    }
    return this.device.createBuffer({ size: cls, usage: this.usage });
  }

  /** Whether take(bytes) would reuse a buffer (and so create nothing that can fail). */
  has(bytes: number): boolean {
    return (this.#free.get(sizeClass(bytes))?.length ?? 0) > 0;
  }

  /** Returns a buffer that no pending GPU work uses any more. */
  give(b: GPUBuffer): void {
    if (this.#pooled + b.size > this.limit) {
      b.destroy();
      return;
    }
    this.#pooled += b.size;
    const list = this.#free.get(b.size);
    if (list) list.push(b);
    else this.#free.set(b.size, [b]);
  }

  get pooledBytes(): number {
    return this.#pooled;
  }

  clear(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
    this.#pooled = 0;
  }
}
