// The webgpu runtime's bind group cache (src/webgpu/bind_groups.ts): keyed by pipeline and by
// each bound buffer's identity in order, so a group is reused only for exactly its bindings.
import { describe, expect, test } from "vitest";
import { BindGroupCache } from "../dist/webgpu/bind_groups.js";

const buffer = () => ({}) as GPUBuffer;
let made = 0;
const make = () => ({ n: ++made }) as unknown as GPUBindGroup;

describe("BindGroupCache", () => {
  test("reuses a group only for the same pipeline and the same buffers in the same order", () => {
    const cache = new BindGroupCache();
    const [u, a, b, c] = [buffer(), buffer(), buffer(), buffer()];
    const g = cache.get(1, [u, a, b], make);
    expect(cache.get(1, [u, a, b], make)).toBe(g);
    expect(cache.hits).toBe(1);
    for (const [p, bufs] of [
      [2, [u, a, b]],
      [1, [u, b, a]],
      [1, [u, a, c]],
      [1, [u, a]],
      [1, [u, a, b, c]],
    ] as [number, GPUBuffer[]][])
      expect(cache.get(p, bufs, make)).not.toBe(g);
    expect(cache.hits).toBe(1);
    expect(cache.size).toBe(6);
  });
  test("find/keep by the ids a caller keeps agree with get by buffers", () => {
    const cache = new BindGroupCache();
    const [u, a, b] = [buffer(), buffer(), buffer()];
    const ids = [u, a, b].map((x) => cache.idOf(x));
    expect(cache.idOf(a)).toBe(ids[1]); // one id per buffer, however often asked
    const setIds = (xs: number[]) => xs.forEach((id, i) => cache.setId(i, id));
    setIds(ids);
    expect(cache.find(1, 3)).toBeNull();
    const g = make();
    cache.keep(1, 3, g);
    expect(cache.get(1, [u, a, b], make)).toBe(g); // the same key as by buffers
    setIds([ids[0], ids[2], ids[1]]);
    expect(cache.find(1, 3)).toBeNull(); // another order
    setIds(ids);
    expect(cache.find(2, 3)).toBeNull(); // another pipeline
    expect(cache.find(1, 2)).toBeNull(); // a prefix
    expect(cache.find(1, 3)).toBe(g);
    cache.setId(40, 7); // past the scratch's first size: it grows, keeping the ids before
    expect(cache.find(1, 3)).toBe(g);
  });
  test("starts over past its limit instead of growing", () => {
    const cache = new BindGroupCache();
    const u = buffer();
    for (let i = 0; i < 5000; i++) cache.get(1, [u, buffer()], make);
    expect(cache.size).toBeLessThanOrEqual(4096);
  });
});
