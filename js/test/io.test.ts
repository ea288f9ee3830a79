// kiln/io's IDX parser: every header field and element type, big-endian data, and a clear
// Error for each malformed or truncated input (the same checks as kiln::io::read_idx).
import { describe, expect, test } from "vitest";
import { idxToArray, parseIdx } from "../dist/io.js";

/** An IDX file built field by field: magic 0 0, type code, ndim, big-endian dims, payload. */
function idx(code: number, dims: number[], payload: number[]): Uint8Array {
  return new Uint8Array([0, 0, code, dims.length, ...dims.flatMap((d) => [d >>> 24, (d >>> 16) & 255, (d >>> 8) & 255, d & 255]), ...payload]);
}

describe("parseIdx", () => {
  test("uint8 images keep shape and bytes", () => {
    const r = parseIdx(idx(0x08, [2, 2, 3], [0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255]));
    expect(r.type).toBe("uint8");
    expect(r.shape).toEqual([2, 2, 3]);
    expect(Array.from(r.data)).toEqual([0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255]);
  });
  test("int8, int16, int32 are signed big-endian", () => {
    expect(Array.from(parseIdx(idx(0x09, [2], [0xff, 0x7f])).data)).toEqual([-1, 127]);
    expect(Array.from(parseIdx(idx(0x0b, [2], [0x01, 0x02, 0xff, 0xfe])).data)).toEqual([258, -2]);
    expect(Array.from(parseIdx(idx(0x0c, [1], [0x80, 0, 0, 1])).data)).toEqual([-2147483647]);
  });
  test("float32 and float64 are big-endian IEEE", () => {
    // 1.5f = 0x3fc00000, -2.0 (double) = 0xc000000000000000
    expect(Array.from(parseIdx(idx(0x0d, [1], [0x3f, 0xc0, 0, 0])).data)).toEqual([1.5]);
    expect(Array.from(parseIdx(idx(0x0e, [1], [0xc0, 0, 0, 0, 0, 0, 0, 0])).data)).toEqual([-2]);
  });
  test("a scalar file (0 dims) and an empty one", () => {
    expect(parseIdx(idx(0x08, [], [7])).shape).toEqual([]);
    expect(parseIdx(idx(0x08, [0, 28], [])).data.length).toBe(0);
  });
  test("accepts an ArrayBuffer and a Uint8Array view at an offset", () => {
    const bytes = idx(0x0b, [1], [0x12, 0x34]);
    expect(Array.from(parseIdx(bytes.slice().buffer).data)).toEqual([0x1234]);
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    expect(Array.from(parseIdx(padded.subarray(3)).data)).toEqual([0x1234]);
  });
  test.each([
    ["empty", new Uint8Array([]), /parseIdx: f: truncated header: 0 bytes, expected at least 4/],
    ["bad magic", new Uint8Array([1, 0, 8, 1, 0, 0, 0, 0]), /bad magic 1 0, expected 0 0/],
    ["unknown type", idx(0x0a, [1], [0]), /unknown element type code 0xa/],
    ["dims cut off", idx(0x08, [3, 4], []).subarray(0, 9), /truncated header: 2 dimensions need 12 bytes, got 9/],
    ["data cut off", idx(0x08, [2, 3], [1, 2, 3, 4, 5]), /truncated data: dims \[2,3\] of uint8 need 18 bytes, got 17/],
    ["int32 data cut off", idx(0x0c, [2], [0, 0, 0, 1, 0, 0]), /truncated data: dims \[2\] of int32 need 16 bytes, got 14/],
    ["trailing bytes", idx(0x08, [1], [1, 2]), /1 unexpected trailing bytes after 9/],
    ["gzip", new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0]), /is gzip-compressed, expected a raw IDX file/],
  ])("rejects %s", (_what, bytes, message) => {
    expect(() => parseIdx(bytes, "f")).toThrow(message);
  });
});

describe("idxToArray", () => {
  test("integers become int32 with the file's shape", () => {
    const a = idxToArray(parseIdx(idx(0x08, [2, 2], [0, 255, 3, 4])));
    expect(a.dtype).toBe("int32");
    expect(a.js()).toEqual([[0, 255], [3, 4]]);
  });
  test("floats keep float32", () => {
    const a = idxToArray(parseIdx(idx(0x0d, [1], [0x3f, 0xc0, 0, 0])));
    expect(a.dtype).toBe("float32");
    expect(a.js()).toEqual([1.5]);
  });
});
