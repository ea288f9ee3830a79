#!/usr/bin/env python3
"""Generates fuzz/corpus/<target>/: the seed inputs of the libFuzzer targets in fuzz/
(`make fuzz`), which tests/fuzz_replay_test.cpp also replays in `make test`.

Usage:  python3 tools/gen_fuzz_seeds.py            # (re)writes fuzz/corpus
        python3 tools/gen_fuzz_seeds.py --check    # exits 1 if a seed is stale
Only the standard library is needed; inputs come from random.Random with fixed seeds and
zlib's deflate at fixed levels; the gguf, safetensors and onnx seeds add a few committed fixtures
that the real libraries wrote (tests/fixtures/{gguf,safetensors,onnx}; pte: ExecuTorch's own
programs from tests/fixtures/pte). Seeds are small (a few KiB at most) so the fuzzer mutates
them quickly: each is a valid input showing one feature of its format. Crash inputs the
fuzzer finds are not generated: they go to fuzz/regressions/<target>/ by hand.
"""
import os
import random
import struct
import zlib

from fixture_dirs import sync_dirs
from gen_gzip_fixtures import deflate, gzip_member  # the same gzip/DEFLATE writers as the gzip fixtures

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")


def words(seed, n):
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 6)))
             for _ in range(40)]
    return " ".join(rng.choice(vocab) for _ in range(n)).encode()


def noise(seed, n):
    rng = random.Random(seed)
    return bytes(rng.getrandbits(8) for _ in range(n))


def idx(code, dims, payload):
    return bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def idx_seeds():
    rng = random.Random(1)
    # MNIST's layout: ubyte images (N, 28, 28) with mostly-zero pixels, ubyte labels (N,).
    img = bytes(rng.choice([0, 0, 0, 0, 84, 185, 253, 255]) for _ in range(2 * 28 * 28))
    labels = bytes([7, 2, 1, 0, 4, 1, 4, 9, 5, 9])
    return {
        "mnist_images_2x28x28": idx(0x08, [2, 28, 28], img),
        "mnist_labels_10": idx(0x08, [10], labels),
        "byte_3": idx(0x09, [3], bytes([0x80, 0x00, 0x7F])),
        "short_2x2": idx(0x0B, [2, 2], struct.pack(">4h", -2, 256, 32767, -32768)),
        "int_3": idx(0x0C, [3], struct.pack(">3i", -1, 0, 2**31 - 1)),
        "float_2": idx(0x0D, [2], struct.pack(">2f", 1.5, -0.0)),
        "double_2": idx(0x0E, [2], struct.pack(">2d", 3.25, float("inf"))),
        "empty_0x5": idx(0x08, [0, 5], b""),
        "scalar_ndim0": idx(0x0C, [], struct.pack(">i", 42)),
        "labels_gzipped": gzip_member(idx(0x08, [10], labels)),
    }


def gzip_seeds():
    t = words(2, 300)
    return {
        "empty": gzip_member(b""),
        "fixed": gzip_member(b"hello, hello, hello kiln\n",
                             deflate(b"hello, hello, hello kiln\n", 9, zlib.Z_FIXED)),
        "dynamic": gzip_member(t, deflate(t, 9)),
        "stored": gzip_member(noise(3, 300), deflate(noise(3, 300), 0)),
        "header_fields": gzip_member(t[:200], name=b"digits.idx", comment=b"kiln",
                                     extra=b"AB\x02\x00xy", hcrc=True),
        "two_members": gzip_member(t[:100]) + gzip_member(noise(4, 50)),
    }


def inflate_seeds():
    t = words(5, 300)
    rle = b"a" * 300 + b"bc" * 100 + noise(6, 30) + b"\0" * 500
    return {
        "empty": deflate(b""),
        "fixed": deflate(b"hello, hello, hello kiln\n", 9, zlib.Z_FIXED),
        "dynamic": deflate(t, 9),
        "stored": deflate(noise(7, 200), 0),
        "rle_overlapping": deflate(rle, 9, zlib.Z_RLE),
        "huffman_only": deflate(t[:600], 9, zlib.Z_HUFFMAN_ONLY),
        "small_window": deflate(t, 1, wbits=-9, mem_level=1),
    }


def einsum(subscripts, *shapes):
    """fuzz/einsum_fuzz.cpp's input: operand count, each rank and dims, then the subscripts."""
    b = bytes([len(shapes)])
    for s in shapes:
        b += bytes([len(s)]) + bytes(s)
    return b + subscripts.encode()


def einsum_seeds():
    return {
        "matmul": einsum("ij,jk->ik", (2, 3), (3, 2)),
        "batch_diagonal": einsum("...ii->...i", (2, 3, 3)),
        "attention_logits": einsum("btkgh,bskh->bkgts", (1, 2, 1, 2, 3), (1, 2, 1, 3)),
        "trace_implicit": einsum("ii", (3, 3)),
        "dot_implicit": einsum("i,i", (3,), (3,)),
        "sum_all": einsum("ij->", (2, 3)),
        "ellipsis_broadcast": einsum("a...b,b...->a...", (2, 1, 3), (3, 2)),
        "three_operands": einsum("ij, jk ,kl->il", (1, 2), (2, 3), (3, 1)),
        "outer_spaces": einsum(" i , j -> ij ", (2,), (3,)),
    }


def conv_layout(nd, lhs, rhs, out):
    """fuzz/conv_layout_fuzz.cpp's input: the rank, then the three layouts, '\n'-separated."""
    return bytes([nd]) + f"{lhs}\n{rhs}\n{out}".encode()


def conv_layout_seeds():
    return {
        "default_2d": conv_layout(4, "", "", ""),
        "nchw": conv_layout(4, "NCHW", "OIHW", "NCHW"),
        "nhwc_hwio": conv_layout(4, "NHWC", "HWIO", "NHWC"),
        "conv1d_nwc": conv_layout(3, "NWC", "WIO", "NCW"),
        "conv3d_mixed": conv_layout(5, "NCDHW", "DHWIO", "NDHWC"),
    }


def raw_array(dtype, shape, payload):
    """fuzz/raw_array_fuzz.cpp's input: dtype name length and name, rank, int32 LE dims, data."""
    return (bytes([len(dtype)]) + dtype.encode() + bytes([len(shape)]) +
            b"".join(struct.pack("<i", d) for d in shape) + payload)


def raw_array_seeds():
    return {
        "float32_2x3": raw_array("float32", [2, 3], struct.pack("<6f", 0, 1, 2, 3, 4, 5)),
        "bool_4": raw_array("bool", [4], bytes([1, 0, 0, 1])),
        "int32_scalar": raw_array("int32", [], struct.pack("<i", -7)),
        "float64_empty": raw_array("float64", [0, 3], b""),
        "uint32_2x2": raw_array("uint32", [2, 2], struct.pack("<4I", 0, 1, 2**32 - 1, 5)),
        "float16_3": raw_array("float16", [3], struct.pack("<3e", 1.0, -2.5, 0.0)),
    }


def ggml_blocks(type_id, n_values, payload):
    """fuzz/ggml_blocks_fuzz.cpp's input: ggml type id (u8), n_values (u32 LE), the blocks."""
    return bytes([type_id]) + struct.pack("<I", n_values) + payload


def ggml_blocks_seeds():
    # One valid input per decoded type (ggml ids; block geometry as formats/gguf.cpp's table),
    # with finite f16 scales where a block format has them, plus two bad sizes.
    rng = random.Random(19)
    half_one, half_neg = struct.pack("<e", 0.5), struct.pack("<e", -0.25)
    def blob(n):
        return bytes(rng.randrange(256) for _ in range(n))
    return {
        "f32_4": ggml_blocks(0, 4, struct.pack("<4f", 1.5, -0.0, float("inf"), 3e-39)),
        "f16_3": ggml_blocks(1, 3, struct.pack("<3e", 1.0, -2.5, 6e-8)),
        "bf16_2": ggml_blocks(30, 2, bytes([0x80, 0x3F, 0xC0, 0xFF])),
        "q4_0_32": ggml_blocks(2, 32, half_one + blob(16)),
        "q4_1_64": ggml_blocks(3, 64, (half_one + half_neg + blob(16)) * 2),
        "q5_0_32": ggml_blocks(6, 32, half_neg + blob(20)),
        "q5_1_32": ggml_blocks(7, 32, half_one + half_neg + blob(20)),
        "q8_0_32": ggml_blocks(8, 32, half_one + blob(32)),
        "q2_K_256": ggml_blocks(10, 256, blob(80) + half_one + half_neg),
        "q3_K_256": ggml_blocks(11, 256, blob(108) + half_neg),
        "q4_K_256": ggml_blocks(12, 256, half_one + half_neg + blob(140)),
        "q5_K_256": ggml_blocks(13, 256, half_one + half_neg + blob(172)),
        "q6_K_256": ggml_blocks(14, 256, blob(208) + half_one),
        "q4_0_short": ggml_blocks(2, 32, half_one + blob(15)),
        "q8_K_no_decoder": ggml_blocks(15, 256, blob(292)),
    }


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")


def fixture(*parts):
    """A committed fixture's bytes (written by the real libraries in gen_gguf_fixtures.py)."""
    with open(os.path.join(FIXTURES, *parts), "rb") as f:
        return f.read()


def gguf_kv(key, vtype, payload):
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<I", vtype) + payload


def gguf_file(kvs, infos, data, alignment=32):
    """A little-endian GGUF v3 file: header, kv pairs, tensor infos, padding, data."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(kvs)) + b"".join(kvs) + b"".join(infos)
    return head + b"\0" * (-len(head) % alignment) + data


def gguf_info(name, dims, ggml_type, offset):
    n = name.encode()
    return (struct.pack("<Q", len(n)) + n + struct.pack("<I", len(dims)) +
            b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ggml_type, offset))


def gguf_seeds():
    nested = struct.pack("<IQ", 9, 2) + struct.pack("<IQ", 4, 1) + struct.pack("<I", 7) + \
        struct.pack("<IQ", 8, 1) + struct.pack("<Q", 2) + b"hi"
    small = gguf_file(
        [gguf_kv("general.architecture", 8, struct.pack("<Q", 5) + b"llama"),
         gguf_kv("general.alignment", 4, struct.pack("<I", 16)),
         gguf_kv("n", 9, nested)],
        [gguf_info("a", [4], 0, 0), gguf_info("q", [32, 1], 8, 16)],
        struct.pack("<4f", 1, 2, 3, 4) + bytes(range(34)), alignment=16)
    return {
        "small_nested_align16": small,
        "metadata_only": gguf_file([gguf_kv("b", 7, b"\1")], [], b""),
        "all_types": fixture("gguf", "all_types.gguf"),
        "v2": fixture("gguf", "v2.gguf"),
        "align64": fixture("gguf", "align64.gguf"),
    }


def safetensors_file(header, data):
    text = header.encode()
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    return {
        "basic": fixture("safetensors", "basic.safetensors"),
        "bf16_metadata": fixture("safetensors", "bf16.safetensors"),
        "scalar_and_empty": safetensors_file(
            '{"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},'
            '"e":{"dtype":"I64","shape":[0,2],"data_offsets":[4,4]}}  ', b"\0\0\x80?"),
        "escapes": safetensors_file(
            '{"__metadata__":{"k\\u00e9":"\\ud83d\\ude00\\n"},'
            '"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"ab"),
    }


def pte_seeds():
    # ExecuTorch programs that executorch itself wrote (tools/gen_pte_fixtures.py): one
    # kernel call, constants in a segment, and a plan with lists, sym ints and dynamic shapes.
    return {name: fixture("pte", name + ".pte")
            for name in ("relu", "linear", "layer_norm", "max_pool2d", "transpose_cat")}


def ptd_seeds():
    # The named data ExecuTorch's exporter wrote for the LSTM's external constants.
    return {"lstm": fixture("pte", "lstm.ptd")}


def onnx_seeds():
    """Models and tensors the `onnx` package wrote (tools/gen_onnx_fixtures.py), plus the
    reader's packed-dims case by hand."""
    return {
        "reader_all": fixture("onnx", "reader_all.onnx"),
        "gemm": fixture("onnx", "gemm.onnx"),
        "conv": fixture("onnx", "conv.onnx"),
        "external": fixture("onnx", "external.onnx"),
        "tensor": fixture("onnx", "gemm.in1_0.pb"),
        "packed_dims_tensor": bytes([0x0a, 0x02, 0x02, 0x03, 0x10, 0x01, 0x4a, 0x18]) + bytes(24),
    }


def build():
    return {"idx": idx_seeds(), "gzip": gzip_seeds(), "inflate": inflate_seeds(),
            "einsum": einsum_seeds(), "conv_layout": conv_layout_seeds(),
            "raw_array": raw_array_seeds(), "gguf": gguf_seeds(),
            "safetensors": safetensors_seeds(), "ggml_blocks": ggml_blocks_seeds(),
            "pte": pte_seeds(), "ptd": ptd_seeds(),
            "onnx": onnx_seeds()}


def main():
    corpora = build()
    # Every compressed seed must decode with Python's own zlib.
    for name, b in corpora["inflate"].items():
        zlib.decompress(b, -15)
    for name, b in corpora["gzip"].items():
        zlib.decompress(b, 31)
    sync_dirs({os.path.join(OUT, t): files for t, files in corpora.items()}, "gen_fuzz_seeds", "seeds")

if __name__ == "__main__":
    main()
