#!/usr/bin/env python3
"""Generates tests/fixtures/gguf/ and tests/fixtures/safetensors/: small model files written
by the real libraries (PyPI `gguf`, llama.cpp's gguf-py, and PyPI `safetensors`), with the
parse each must give as a text dump, for tests/gguf_test.cpp and tests/safetensors_test.cpp.

Usage:  python3 tools/gen_gguf_fixtures.py            # (re)writes both fixture directories
        python3 tools/gen_gguf_fixtures.py --check    # exits 1 if a file is stale
Needs tools/requirements.txt (gguf, safetensors, numpy pinned). Inputs come from
numpy.random.default_rng with fixed seeds, so the files are deterministic.

Where each fact in a dump comes from: metadata values and types, tensor names, dims, types
and bytes are what this script gave the writer; data_offset, tensor offsets and sizes are
what gguf-py's own GGUFReader (resp. safetensors.safe_open) reads back. Tensor bytes are
summarized by their FNV-1a 64 hash. Q4_0..Q8_0 and BF16 bytes come from gguf-py's
quantizers; gguf-py has no quantizer for the K types or Q8_K, so those tensors hold random
blocks of the right size (enough for a parser, which never decodes them).

FORMAT of <name>.txt for <name>.gguf (one fact a line):
    version <v>
    alignment <a>
    data_offset <bytes>
    kv <key> <type> <value>        values: integers in decimal, f32 as %.9g, f64 as %.17g,
                                   bool as true/false, strings in double quotes with bytes
                                   outside printable ASCII (and " \\) as \\xHH, arrays as
                                   <elem type>[v, v, ...] (items of nested arrays the same way)
    tensor <name> <ggml type> dims <d0,d1,..> offset <o> size <s> fnv <hex>
                                   (dims in ggml order: d0 is the contiguous one)
FORMAT of <name>.txt for <name>.safetensors:
    header_size <n>
    meta <key> "<value>"           (sorted by key)
    tensor <name> <dtype> shape <d0,d1,..> offsets <begin> <end> fnv <hex>   (header order;
                                   a scalar's shape is "-")
"""
import json
import os
import struct
import tempfile

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V
import safetensors.numpy

from fixture_dirs import sync_dirs

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
GGUF_DIR = os.path.join(ROOT, "gguf")
ST_DIR = os.path.join(ROOT, "safetensors")

TYPE_NAMES = {V.UINT8: "u8", V.INT8: "i8", V.UINT16: "u16", V.INT16: "i16", V.UINT32: "u32",
              V.INT32: "i32", V.FLOAT32: "f32", V.BOOL: "bool", V.STRING: "string",
              V.ARRAY: "array", V.UINT64: "u64", V.INT64: "i64", V.FLOAT64: "f64"}


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def quote(b):
    if isinstance(b, str):
        b = b.encode()
    return '"' + "".join(chr(c) if 0x20 <= c < 0x7F and c not in b'"\\' else f"\\x{c:02x}"
                         for c in b) + '"'


def infer_type(v):
    """The element type gguf-py picks for an array item it has no sub_type for."""
    return gguf.GGUFValueType.get_type(v)


def fmt_value(v, t, sub=None):
    if t == V.ARRAY:
        et = sub if sub is not None else infer_type(v[0])
        return TYPE_NAMES[et] + "[" + ", ".join(fmt_value(x, et) for x in v) + "]"
    if t == V.BOOL:
        return "true" if v else "false"
    if t == V.STRING:
        return quote(v)
    if t == V.FLOAT32:
        return "%.9g" % float(np.float32(v))
    if t == V.FLOAT64:
        return "%.17g" % v
    return str(int(v))


# Metadata with every value type (the writer's explicit types), nested arrays, and strings
# that need escaping. (key, type, value, array element type or None)
METADATA = [
    ("test.u8", V.UINT8, 250, None),
    ("test.i8", V.INT8, -128, None),
    ("test.u16", V.UINT16, 65535, None),
    ("test.i16", V.INT16, -300, None),
    ("test.u32", V.UINT32, 4000000000, None),
    ("test.i32", V.INT32, -2147483648, None),
    ("test.f32", V.FLOAT32, 1e-5, None),
    ("test.bool_true", V.BOOL, True, None),
    ("test.bool_false", V.BOOL, False, None),
    ("test.string", V.STRING, "héllo \"kiln\"\n\t\\", None),
    ("test.u64", V.UINT64, 2**64 - 1, None),
    ("test.i64", V.INT64, -(2**63), None),
    ("test.f64", V.FLOAT64, 3.141592653589793, None),
    ("test.array_u8", V.ARRAY, [0, 1, 255], V.UINT8),
    ("test.array_i16", V.ARRAY, [-1, 2, -3], V.INT16),
    ("test.array_f32", V.ARRAY, [0.5, -1.25, 3e38], V.FLOAT32),
    ("test.array_f64", V.ARRAY, [1e-300, -2.5], V.FLOAT64),
    ("test.array_bool", V.ARRAY, [True, False, True], V.BOOL),
    ("test.array_u64", V.ARRAY, [2**40, 7], V.UINT64),
    ("test.array_string", V.ARRAY, ["a", "", "\u00fcber", "<|im_end|>"], V.STRING),
    # Items of a nested array get the type gguf-py infers (int -> i32, str -> string).
    ("test.array_nested", V.ARRAY, [[1, 2, 3], [-4], ["x", "y"]], V.ARRAY),
    ("tokenizer.ggml.token_type", V.ARRAY, [1, 3, 3, 1], V.INT32),
]


def tensors(rng):
    """(name, numpy shape, ggml type, encoded bytes as a uint8 array or typed array)."""
    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def quantized(qtype, shape):
        return gguf.quants.quantize(normal(*shape), qtype)

    def random_blocks(qtype, shape):
        block, nbytes = gguf.GGML_QUANT_SIZES[qtype]
        n = int(np.prod(shape)) // block * nbytes
        return rng.integers(0, 256, size=(shape[0], n // shape[0]), dtype=np.uint8)

    out = [
        ("token_embd.weight", (4, 32), Q.Q8_0, quantized(Q.Q8_0, (4, 32))),
        ("blk.0.attn_norm.weight", (8,), Q.F32, normal(8)),
        ("blk.0.attn_q.weight", (2, 64), Q.Q4_0, quantized(Q.Q4_0, (2, 64))),
        ("blk.0.attn_k.weight", (2, 32), Q.Q4_1, quantized(Q.Q4_1, (2, 32))),
        ("blk.0.attn_v.weight", (1, 32), Q.Q5_0, quantized(Q.Q5_0, (1, 32))),
        ("blk.0.attn_output.weight", (1, 32), Q.Q5_1, quantized(Q.Q5_1, (1, 32))),
        ("blk.0.ffn_up.weight", (3, 5), Q.F16, normal(3, 5).astype(np.float16)),
        ("blk.0.ffn_down.weight", (2, 3), Q.BF16, quantized(Q.BF16, (2, 3))),
        ("f64.weight", (2, 2), Q.F64, rng.standard_normal((2, 2))),
        ("i8.weight", (5,), Q.I8, rng.integers(-128, 128, size=5, dtype=np.int8)),
        ("i16.weight", (3,), Q.I16, rng.integers(-2**15, 2**15, size=3, dtype=np.int16)),
        ("i32.weight", (2, 1, 1, 3), Q.I32, rng.integers(-2**31, 2**31, size=(2, 1, 1, 3),
                                                         dtype=np.int32)),
    ]
    for qtype in (Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K, Q.Q8_K):
        out.append((f"k.{qtype.name.lower()}.weight", (1, 256), qtype,
                    random_blocks(qtype, (1, 256))))
    return out


def write_gguf(metadata, tensor_list, alignment=None, version=3):
    """The file gguf-py writes, read back by gguf-py's reader, and its dump."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.gguf")
        w = gguf.GGUFWriter(path, "llama")
        if alignment is not None:
            w.add_custom_alignment(alignment)
        for key, t, v, sub in metadata:
            w.add_key_value(key, v, t, sub_type=sub)
        for name, shape, qtype, data in tensor_list:
            raw = None if qtype in (Q.F32, Q.F16, Q.F64, Q.I8, Q.I16, Q.I32) else qtype
            w.add_tensor(name, data, raw_dtype=raw)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        blob = bytearray(open(path, "rb").read())
        reader = gguf.GGUFReader(path)
        lines = dump_gguf(reader, metadata, tensor_list, alignment or 32, version)
    if version != 3:
        # v2 and v3 share the little-endian layout (v3 added big-endian files): only the
        # version field differs, and gguf-py writes v3 only.
        blob[4:8] = struct.pack("<I", version)
    return bytes(blob), lines


def dump_gguf(reader, metadata, tensor_list, alignment, version):
    written = [("general.architecture", V.STRING, "llama", None)]
    if alignment != 32:
        written.append(("general.alignment", V.UINT32, alignment, None))
    written += metadata
    lines = [f"version {version}", f"alignment {alignment}",
             f"data_offset {reader.data_offset}"]
    # The reader must see the same keys and types as were written.
    read_keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    assert read_keys == [k for k, *_ in written], (read_keys, written)
    for key, t, v, sub in written:
        assert reader.fields[key].types[0] == t, key
        lines.append(f"kv {key} {TYPE_NAMES[t]} {fmt_value(v, t, sub)}")
    by_name = {t.name: t for t in reader.tensors}
    for name, shape, qtype, data in tensor_list:
        rt = by_name[name]
        raw = np.ascontiguousarray(data).tobytes()
        assert rt.tensor_type == qtype and rt.n_bytes == len(raw), name
        assert bytes(rt.data.tobytes()) == raw, name
        dims = ",".join(str(d) for d in reversed(shape))
        offset = rt.data_offset - reader.data_offset
        lines.append(f"tensor {name} {qtype.name} dims {dims} offset {offset} "
                     f"size {len(raw)} fnv {fnv1a64(raw)}")
    return lines


def gguf_files():
    files = {}
    rng = np.random.default_rng(19)
    all_tensors = tensors(rng)
    cases = {
        "all_types": (METADATA, all_tensors, None, 3),
        "v2": (METADATA[:3], all_tensors[:2], None, 2),
        "align64": (METADATA[10:12], all_tensors[1:4], 64, 3),
        "metadata_only": (METADATA[:5], [], None, 3),
    }
    for name, (md, ts, alignment, version) in cases.items():
        blob, lines = write_gguf(md, ts, alignment, version)
        files[name + ".gguf"] = blob
        files[name + ".txt"] = ("\n".join(lines) + "\n").encode()
    return files


def safetensors_files():
    rng = np.random.default_rng(20)
    f = {
        "embed.weight": rng.standard_normal((3, 4)).astype(np.float32),
        "f64": rng.standard_normal((2,)),
        "f16": rng.standard_normal((2, 2)).astype(np.float16),
        "i64": rng.integers(-2**62, 2**62, size=(3,), dtype=np.int64),
        "i32": rng.integers(-2**31, 2**31, size=(1, 2), dtype=np.int32),
        "i16": rng.integers(-2**15, 2**15, size=(3,), dtype=np.int16),
        "i8": rng.integers(-128, 128, size=(2, 2, 1), dtype=np.int8),
        "u8": rng.integers(0, 256, size=(5,), dtype=np.uint8),
        "mask": np.array([True, False, True]),
        "scalar": np.array(2.5, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    # One key only: the library writes __metadata__ from a Rust HashMap, in random order
    # (bf16_file has several keys in a header written here).
    meta = {"note": "kiln \u00fc \"q\""}
    files = {}
    # safetensors' numpy API has no bfloat16; the header's dtype field is all that differs.
    for name, tensors_, metadata in (("basic", f, meta), ("no_metadata", {"w": f["f16"]}, None)):
        blob = safetensors.numpy.save(tensors_, metadata=metadata)
        files[name + ".safetensors"] = blob
        lines = dump_safetensors(blob, tensors_, metadata)
        files[name + ".txt"] = ("\n".join(lines) + "\n").encode()
    files.update(bf16_file())
    return files


def bf16_file():
    """BF16: numpy has no bfloat16, so a float32 file's header is rewritten with BF16 and
    half the bytes (the upper halves of the float32 words), then checked by safe_open."""
    x = np.random.default_rng(21).standard_normal((2, 3)).astype(np.float32)
    bf16 = (x.view(np.uint32) >> 16).astype(np.uint16)
    meta = {"format": "pt", "escapes": "tab\t nl\n \u00e9 \U0001f600 \\ \"", "empty": ""}
    header = {"__metadata__": meta,
              "w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]}}
    text = json.dumps(header, separators=(",", ":")).encode()  # \u escapes for non-ASCII
    text += b" " * (-len(text) % 8)
    blob = struct.pack("<Q", len(text)) + text + bf16.tobytes()
    lines = [f"header_size {len(text)}"] + [f"meta {k} {quote(v)}" for k, v in sorted(meta.items())]
    lines += [f"tensor w BF16 shape 2,3 offsets 0 12 fnv {fnv1a64(bf16.tobytes())}"]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.safetensors")
        open(path, "wb").write(blob)
        with safetensors.safe_open(path, "np") as sf:  # the real reader must accept it
            assert list(sf.keys()) == ["w"] and sf.metadata() == meta
    return {"bf16.safetensors": blob, "bf16.txt": ("\n".join(lines) + "\n").encode()}


def dump_safetensors(blob, tensors_, metadata):
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    loaded = safetensors.numpy.load(blob)
    lines = [f"header_size {n}"]
    for k, v in sorted((metadata or {}).items()):
        lines.append(f"meta {k} {quote(v)}")
    for name, entry in header.items():  # header order: what parse_safetensors keeps
        if name == "__metadata__":
            continue
        raw = np.ascontiguousarray(tensors_[name]).tobytes()
        assert loaded[name].tobytes() == raw, name
        begin, end = entry["data_offsets"]
        assert blob[8 + n + begin:8 + n + end] == raw, name
        shape = ",".join(str(d) for d in entry["shape"]) or "-"
        lines.append(f"tensor {name} {entry['dtype']} shape {shape} offsets {begin} {end} "
                     f"fnv {fnv1a64(raw)}")
    return lines


def main():
    sync_dirs({GGUF_DIR: gguf_files(), ST_DIR: safetensors_files()}, "gen_gguf_fixtures", "files")

if __name__ == "__main__":
    main()
