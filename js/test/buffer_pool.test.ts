// The WebGPU runtime's buffer pool, on a stand-in device (no GPU needed): reuse by size
// class, and a full pool making room by destroying the buffers given back longest ago.
import { describe, expect, test } from "vitest";
import { BufferPool, sizeClass } from "../dist/webgpu/buffer_pool.js";

class FakeBuffer {
  destroyed = false;
  constructor(readonly size: number) {}
  destroy() {
    this.destroyed = true;
  }
}
function fakeDevice() {
  const created: FakeBuffer[] = [];
  const device = { createBuffer: ({ size }: { size: number }) => (created.push(new FakeBuffer(size)), created.at(-1)) };
  return { device: device as unknown as GPUDevice, created };
}

describe("the WebGPU buffer pool", () => {
  test("size classes: powers of two from 256 bytes, multiples of 16 MiB above 64 MiB", () => {
    expect([1, 256, 257, 1000, 64 << 20, (64 << 20) + 1].map(sizeClass)).toEqual([256, 256, 512, 1024, 64 << 20, 80 << 20]);
  });

  test("a buffer given back is taken again for any request of its class", () => {
    const { device, created } = fakeDevice();
    const pool = new BufferPool(device, 0, 1 << 20);
    const a = pool.take(3000);
    expect(a.size).toBe(4096);
    pool.give(a);
    expect(pool.has(2049)).toBe(true);
    expect(pool.take(2049)).toBe(a);
    expect(pool.pooledBytes).toBe(0);
    expect(created.length).toBe(1);
  });

  test("a full pool destroys the buffers given back longest ago, so a new size is kept", () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(device, 0, 4096);
    const [a, b, c] = [pool.take(1024), pool.take(1024), pool.take(2048)];
    pool.give(a), pool.give(b), pool.give(c);
    expect(pool.pooledBytes).toBe(4096);
    // A 2048-byte buffer needs a and b gone (the oldest two); c stays.
    const d = device.createBuffer({ size: 2048, usage: 0 });
    pool.give(d);
    expect([a, b, c, d].map((x) => (x as unknown as FakeBuffer).destroyed)).toEqual([true, true, false, false]);
    expect(pool.pooledBytes).toBe(4096);
    expect(pool.has(1024)).toBe(false);
    expect(new Set([pool.take(2048), pool.take(2048)])).toEqual(new Set([c, d]));
  });

  test("a buffer larger than the whole pool is destroyed and evicts nothing", () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(device, 0, 4096);
    const a = pool.take(1024);
    pool.give(a);
    const big = device.createBuffer({ size: 8192, usage: 0 });
    pool.give(big);
    expect((big as unknown as FakeBuffer).destroyed).toBe(true);
    expect((a as unknown as FakeBuffer).destroyed).toBe(false);
    expect(pool.take(1024)).toBe(a);
  });
});
