// A GGUF with a real file's header (metadata, tokenizer, tensor infos) and random weights
// with sane block scales: runs at the real file's speed, and is small to carry (the header
// of SmolLM2 is 1.8 MB), so the GPU machine can benchmark a model it cannot download.
//   node random_gguf.mjs header REAL.gguf OUT.header   (here: the header bytes, data offset noted)
//   node random_gguf.mjs expand OUT.header OUT.gguf    (there: the file with random blocks)
import { readFileSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";

// ggml type id -> [block values, block bytes, fill(block view)] for the types SmolLM2 uses.
const f16 = (x) => {
  const f = new Float32Array([x]), u = new Uint32Array(f.buffer)[0];
  return ((u >> 16) & 0x8000) | ((((u >> 23) & 0xff) - 112) << 10) | ((u >> 13) & 0x3ff);
};
const TYPES = {
  0: [1, 4, (b) => new DataView(b.buffer, b.byteOffset).setFloat32(0, 1, true)], // f32 (norms: 1)
  1: [1, 2, (b) => new DataView(b.buffer, b.byteOffset).setUint16(0, f16((Math.random() - 0.5) * 0.1), true)],
  2: [32, 18, (b) => new DataView(b.buffer, b.byteOffset).setUint16(0, f16(0.01), true)], // q4_0
  3: [32, 20, (b) => { const v = new DataView(b.buffer, b.byteOffset); v.setUint16(0, f16(0.01), true); v.setUint16(2, f16(-0.08), true); }], // q4_1
  8: [32, 34, (b) => new DataView(b.buffer, b.byteOffset).setUint16(0, f16(0.005), true)], // q8_0
};

function parseHeader(buf) {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let p = 8;
  const u32 = () => ((p += 4), v.getUint32(p - 4, true));
  const u64 = () => ((p += 8), Number(v.getBigUint64(p - 8, true)));
  const str = () => { const n = u64(); p += n; return new TextDecoder().decode(buf.subarray(p - n, p)); };
  const size = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const value = (t) => {
    if (t === 8) return str();
    if (t === 9) { const it = u32(), n = u64(); const out = []; for (let i = 0; i < n; i++) out.push(value(it)); return out; }
    if (t === 4 && size[t]) return u32();
    p += size[t];
    return undefined;
  };
  const nTensors = u64(), nKv = u64();
  let alignment = 32;
  for (let i = 0; i < nKv; i++) {
    const k = str(), t = u32(), x = value(t);
    if (k === "general.alignment") alignment = x;
  }
  const tensors = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str(), nd = u32();
    let n = 1;
    for (let d = 0; d < nd; d++) n *= u64();
    tensors.push({ name, n, type: u32(), offset: u64() });
  }
  return { tensors, dataStart: Math.ceil(p / alignment) * alignment };
}

const [mode, a, b] = process.argv.slice(2);
if (mode === "header") {
  const buf = readFileSync(a);
  const { dataStart } = parseHeader(buf);
  writeFileSync(b, buf.subarray(0, dataStart));
} else if (mode === "expand") {
  const head = readFileSync(a);
  const { tensors, dataStart } = parseHeader(head);
  const fd = openSync(b, "w");
  writeSync(fd, head);
  let at = dataStart;
  for (const t of tensors) {
    const [vals, bytes, fill] = TYPES[t.type] ?? (() => { throw new Error(`${t.name}: ggml type ${t.type} not handled`); })();
    const data = new Uint8Array((t.n / vals) * bytes);
    for (let i = 0; i < data.length; i++) data[i] = (Math.random() * 256) | 0;
    for (let o = 0; o < data.length; o += bytes) fill(data.subarray(o, o + bytes));
    if (dataStart + t.offset > at) writeSync(fd, new Uint8Array(dataStart + t.offset - at)), (at = dataStart + t.offset);
    writeSync(fd, data);
    at += data.length;
  }
  closeSync(fd);
} else {
  console.error("usage: node random_gguf.mjs header REAL.gguf OUT.header | expand OUT.header OUT.gguf");
  process.exit(2);
}
