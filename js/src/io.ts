// `kiln/io`: the IDX file format (MNIST's), parsed from bytes with the same strict checks as
// kiln::io::read_idx. No file access here, so it runs in Node and in browsers alike.
import { Array, describeValue } from "./array.js";
import * as np from "./numpy.js";

/** The element types of the IDX format. */
export type IdxType = "uint8" | "int8" | "int16" | "int32" | "float32" | "float64";
/** The TypedArray holding an IDX file's elements. */
export type IdxData = Uint8Array | Int8Array | Int16Array | Int32Array | Float32Array | Float64Array;
/** A parsed IDX file: element type, shape and data (C order). */
export type Idx = { type: IdxType; shape: number[]; data: IdxData };

// Element type codes of the IDX format: code -> (name, bytes per element).
const TYPES: Record<number, [IdxType, number]> = {
  0x08: ["uint8", 1],
  0x09: ["int8", 1],
  0x0b: ["int16", 2],
  0x0c: ["int32", 4],
  0x0d: ["float32", 4],
  0x0e: ["float64", 8],
};

/**
 * Parses an IDX file (magic 0 0 type ndim, big-endian uint32 dims, big-endian data). Throws
 * an Error naming `name` for a short or malformed header, unknown type, truncated data or
 * trailing bytes; gzipped files are recognized and rejected (inflate them first).
 */
export function parseIdx(bytes: Uint8Array | ArrayBuffer, name = "<bytes>"): Idx {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const fail = (msg: string): never => {
    throw new Error(`parseIdx: ${name}: ${msg}`);
  };
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) fail("is gzip-compressed, expected a raw IDX file (decompress it first)");
  if (b.length < 4) fail(`truncated header: ${b.length} bytes, expected at least 4`);
  if (b[0] !== 0 || b[1] !== 0) fail(`bad magic ${b[0]} ${b[1]}, expected 0 0 (not an IDX file)`);
  const type = TYPES[b[2]];
  if (type === undefined) fail(`unknown element type code 0x${b[2].toString(16)}, expected one of 08 09 0b 0c 0d 0e`);
  const [typeName, size] = type!;
  const ndim = b[3];
  const header = 4 + 4 * ndim;
  if (b.length < header) fail(`truncated header: ${ndim} dimensions need ${header} bytes, got ${b.length}`);
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const shape: number[] = [];
  for (let i = 0; i < ndim; i++) shape.push(view.getUint32(4 + 4 * i, false));
  const count = shape.reduce((a, d) => a * d, 1);
  const want = header + count * size;
  if (!Number.isSafeInteger(want)) fail(`dimensions [${shape}] are too large`);
  if (b.length < want) fail(`truncated data: dims [${shape}] of ${typeName} need ${want} bytes, got ${b.length}`);
  if (b.length > want) fail(`${b.length - want} unexpected trailing bytes after ${want}`);
  let data: IdxData;
  switch (typeName) {
    case "uint8":
      data = b.slice(header, want);
      break;
    case "int8":
      data = new Int8Array(b.slice(header, want).buffer);
      break;
    default: {
      // Multi-byte elements are big-endian in IDX; DataView reads them whatever the host's order.
      const Ctor = { int16: Int16Array, int32: Int32Array, float32: Float32Array, float64: Float64Array }[typeName as "int16"];
      const out = new Ctor(count) as Int16Array | Int32Array | Float32Array | Float64Array;
      const get = {
        int16: (o: number) => view.getInt16(o, false),
        int32: (o: number) => view.getInt32(o, false),
        float32: (o: number) => view.getFloat32(o, false),
        float64: (o: number) => view.getFloat64(o, false),
      }[typeName as "int16"];
      for (let i = 0; i < count; i++) out[i] = get(header + i * size);
      data = out;
    }
  }
  return { type: typeName, shape, data };
}

/** An IDX file as an Array: integer types become int32 (exact; kiln has no 8/16-bit dtypes), floats keep their type. */
export function idxToArray(idx: Idx): Array {
  const known = Object.values(TYPES).some(([name]) => name === idx?.type);
  if (!known || !globalThis.Array.isArray(idx.shape) || !ArrayBuffer.isView(idx.data))
    throw new TypeError(`idxToArray: got ${describeValue(idx)}, expected an Idx { type, shape, data } (what parseIdx returns)`);
  if (idx.type === "float32" || idx.type === "float64") return np.array(idx.data as Float32Array | Float64Array, { shape: idx.shape });
  return np.array(Int32Array.from(idx.data as Int32Array), { shape: idx.shape });
}
