#!/usr/bin/env python3
"""Generates tests/fixtures/ggml_blocks.txt: ggml block bytes and the float32 values the PyPI
`gguf` package (pinned in tools/requirements.txt) dequantizes them to, for
tests/ggml_blocks_test.cpp (kiln::formats::dequantize, bit-exact).

Usage:  python3 tools/gen_ggml_block_fixtures.py            # (re)writes the fixture
        python3 tools/gen_ggml_block_fixtures.py --check    # exits 1 if it is stale
        python3 tools/gen_ggml_block_fixtures.py --extract-real   # after `make models`:
            rewrites tests/fixtures/ggml_real_blocks.txt, real blocks copied from the GGUF files
Needs numpy and gguf. Inputs come from np.random.default_rng with fixed seeds; the output
depends only on them, the committed real-block sample and the gguf package's code.

Where the bytes come from, per type:
  - F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: gguf.quants.quantize of float32 inputs
    (random normal at several scales, all zeros, constants, one outlier), plus raw-byte blocks.
  - Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (the package dequantizes them but cannot quantize): raw
    random bytes with the f16 scale fields set to chosen finite values (positive, negative,
    subnormal, zero), plus all-0x00 and all-0xFF-but-scales blocks (every nibble and bit at its
    maximum, negative scales).
  - Real blocks of SmolLM2-135M-Instruct Q4_1 and Gemma 3 270M Q4_K_M (F32, Q4_1, Q8_0, Q4_K,
    Q6_K, ... whatever their tensors use), from tests/fixtures/ggml_real_blocks.txt, a
    committed sample the --extract-real mode cuts from the model files (tensor name, block index).
Every expected value is gguf.quants.dequantize of the block bytes.

FORMAT (one case per three lines):
    case <name> <ggml type name> <n values>
    bytes <the blocks, hex>
    values <n float32 values, each as 8 hex digits of its IEEE bits, big-endian>
"""

import argparse
import os
import sys
from importlib.metadata import version

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGML_QUANT_SIZES
from gguf.quants import dequantize, quantize

from fixture_check import check_file

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "fixtures")
OUT = os.path.join(FIXTURES, "ggml_blocks.txt")
REAL = os.path.join(FIXTURES, "ggml_real_blocks.txt")
MODELS = os.path.join(HERE, "..", "data", "models")
GGUF_VERSION = "0.19.0"

QUANTIZABLE = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]
K_QUANTS = [T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K]
# Byte offsets of the f16 scale fields in each K-quant block (ggml's block_q*_K structs).
K_SCALE_OFFSETS = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2],
                   T.Q6_K: [208]}
# Finite f16 scales: ordinary, negative, tiny, subnormal, zero, large.
SCALES = [0.0123, -0.0371, 1.0, -2.5, 6.1e-5, 3.0e-7, 0.0, 1024.0]


def type_name(t):
    return t.name.lower().replace("_k", "_K")


def f32_hex(values):
    return " ".join(f"{int(v):08x}" for v in np.asarray(values, np.float32).view(np.uint32))


def case_lines(name, t, block_bytes):
    block_bytes = np.ascontiguousarray(block_bytes, dtype=np.uint8).reshape(-1)
    bsize, tsize = GGML_QUANT_SIZES[t]
    n = block_bytes.size // tsize * bsize
    values = dequantize(block_bytes.reshape(-1, tsize), t).reshape(-1)
    assert values.size == n, (name, values.size, n)
    return [f"case {name} {type_name(t)} {n}", f"bytes {block_bytes.tobytes().hex()}",
            f"values {f32_hex(values)}"]


def float_inputs(t, rng):
    """(name, float32 array) pairs: whole blocks of the type's block size."""
    bsize = GGML_QUANT_SIZES[t][0]
    n = max(bsize, 32) * 4
    outlier = rng.normal(0, 0.1, n).astype(np.float32)
    outlier[5] = -40.0
    positive = np.abs(rng.normal(3, 1, n)).astype(np.float32)
    return [
        ("normal", rng.normal(0, 1, n).astype(np.float32)),
        ("small", (rng.normal(0, 1, n) * 1e-3).astype(np.float32)),
        ("large", (rng.normal(0, 1, n) * 300).astype(np.float32)),
        ("zeros", np.zeros(n, np.float32)),
        ("constant_negative", np.full(n, -0.75, np.float32)),
        ("outlier", outlier),
        ("positive", positive),
        ("ramp", np.linspace(-1, 1, n, dtype=np.float32)),
    ]


def raw_plain_blocks(t):
    """Special bit patterns for the plain float types (no signaling NaNs: hardware f16
    conversion would quiet them)."""
    if t == T.F32:
        bits = np.array([0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
                         0x3F800000, 0xC0490FDB, 0x00800000, 0x807FFFFF], np.uint32)
    else:
        bits = np.array([0, 0x8000, 1, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0xFE01,
                         0x3C00, 0xC248, 0x8001] if t == T.F16 else
                        [0, 0x8000, 1, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1,
                         0x3F80, 0xC049, 0x8001], np.uint16)
    out = [("specials", bits.view(np.uint8))]
    if t != T.F32:
        # Every 37th 16-bit pattern (all exponents, subnormals, both signs), signaling NaNs left out.
        sweep = np.arange(0, 65536, 37, dtype=np.uint32).astype(np.uint16)
        exp_mask, quiet = (0x7C00, 0x0200) if t == T.F16 else (0x7F80, 0x0040)
        nan = ((sweep & exp_mask) == exp_mask) & ((sweep & (exp_mask ^ 0x7FFF)) != 0)
        sweep = sweep[~nan | ((sweep & quiet) != 0)]
        out.append(("sweep", sweep.view(np.uint8)))
    return out


def set_f16(block, offset, value):
    block[offset:offset + 2] = np.array([value], np.float16).view(np.uint8)


def raw_legacy_blocks(t, rng):
    """All-zero bytes, and max nibbles/bits with negative scale (and min) in every field."""
    tsize = GGML_QUANT_SIZES[t][1]
    zero = np.zeros(tsize, np.uint8)
    full = np.full(tsize, 0xFF, np.uint8)
    set_f16(full, 0, -0.5)
    if t in (T.Q4_1, T.Q5_1):
        set_f16(full, 2, -3.25)
    rand = rng.integers(0, 256, tsize * 3, dtype=np.uint8)
    for b in range(3):
        set_f16(rand, b * tsize, SCALES[b + 1])
        if t in (T.Q4_1, T.Q5_1):
            set_f16(rand, b * tsize + 2, SCALES[b + 3])
    return [("raw_zero", zero), ("raw_max_negative_scale", full), ("raw_random", rand)]


def raw_k_blocks(t, rng):
    tsize = GGML_QUANT_SIZES[t][1]
    offsets = K_SCALE_OFFSETS[t]
    out = [("raw_zero", np.zeros(tsize, np.uint8))]
    full = np.full(tsize, 0xFF, np.uint8)
    for k, off in enumerate(offsets):
        set_f16(full, off, [-0.5, -2.0][k])
    out.append(("raw_max_negative_scales", full))
    n_blocks = len(SCALES)
    rand = rng.integers(0, 256, tsize * n_blocks, dtype=np.uint8)
    for b in range(n_blocks):
        for k, off in enumerate(offsets):
            set_f16(rand, b * tsize + off, SCALES[(b + 3 * k) % len(SCALES)])
    out.append(("raw_random", rand))
    return out


def read_real_blocks():
    """(name, type, bytes) from the committed sample of real model blocks."""
    if not os.path.exists(REAL):
        return []
    out = []
    with open(REAL) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, tname, hexbytes = line.split()
            out.append((name, T[tname.upper()], np.frombuffer(bytes.fromhex(hexbytes), np.uint8)))
    return out


def build_lines():
    if version("gguf") != GGUF_VERSION:
        sys.exit(f"gguf {version('gguf')} installed, the fixtures pin {GGUF_VERSION}: "
                 "pip install -r tools/requirements.txt")
    lines = [
        f"# ggml block dequantization references from the PyPI gguf package {GGUF_VERSION}, written by",
        "# tools/gen_ggml_block_fixtures.py (its docstring says where each type's bytes come from:",
        "# gguf.quants.quantize for f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0; raw random bytes with set",
        "# scales for the K-quants, which the package only dequantizes; real model blocks from",
        "# tests/fixtures/ggml_real_blocks.txt). Every value is gguf.quants.dequantize of the bytes.",
        "# format: case <name> <type> <n> / bytes <hex> / values <f32 bits as 8 hex digits each>",
    ]
    for i, t in enumerate(QUANTIZABLE):
        rng = np.random.default_rng(1000 + i)
        for name, x in float_inputs(t, rng):
            lines += case_lines(f"{type_name(t)}_{name}", t, quantize(x, t).view(np.uint8))
        raw = raw_plain_blocks(t) if t in (T.F32, T.F16, T.BF16) else raw_legacy_blocks(t, rng)
        for name, b in raw:
            lines += case_lines(f"{type_name(t)}_{name}", t, b)
    for i, t in enumerate(K_QUANTS):
        rng = np.random.default_rng(2000 + i)
        for name, b in raw_k_blocks(t, rng):
            lines += case_lines(f"{type_name(t)}_{name}", t, b)
    for name, t, b in read_real_blocks():
        lines += case_lines(f"real_{name}", t, b)
    return lines


def extract_real():
    """Cuts a few blocks of every tensor type out of the models (first, middle and last block
    of the first and last tensor of each type) into tests/fixtures/ggml_real_blocks.txt."""
    from gguf import GGUFReader
    lines = ["# Real ggml blocks cut from the GGUF models by tools/gen_ggml_block_fixtures.py "
             "--extract-real", "# <model>:<tensor>:<block index> <type> <block bytes, hex>"]
    for short, file in [("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
                        ("gemma3", "gemma-3-270m-q4_k_m.gguf")]:
        reader = GGUFReader(os.path.join(MODELS, file))
        by_type = {}
        for tensor in reader.tensors:
            by_type.setdefault(tensor.tensor_type, []).append(tensor)
        for t in sorted(by_type):
            tensors = by_type[t]
            for tensor in {id(x): x for x in (tensors[0], tensors[-1])}.values():
                data = np.asarray(tensor.data).view(np.uint8).reshape(-1)
                tsize = GGML_QUANT_SIZES[t][1]
                n_blocks = data.size // tsize
                for k in sorted({0, n_blocks // 2, n_blocks - 1}):
                    block = data[k * tsize:(k + 1) * tsize]
                    lines.append(f"{short}:{tensor.name}:{k} {type_name(t)} {block.tobytes().hex()}")
    with open(REAL, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {REAL} ({len(lines) - 2} blocks)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="exit 1 if the fixture would change")
    ap.add_argument("--extract-real", action="store_true",
                    help="rewrite the real-block sample from data/models first")
    args = ap.parse_args()
    if args.extract_real:
        extract_real()
    text = "\n".join(build_lines()) + "\n"
    if args.check:
        # Byte-exact: the values are bit patterns, and an 8-hex-digit token such as 3e800000
        # would read as a float literal to fixture_check's few-ulp comparison.
        hint = "rerun tools/gen_ggml_block_fixtures.py"
        ok = check_file(OUT, text, hint, max_ulps=0)
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{OUT} differs from the generated text: {hint}", file=sys.stderr)
                ok = False
        if not ok:
            sys.exit(1)
        return
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT} ({text.count(chr(10) + 'case ')} cases)")


if __name__ == "__main__":
    main()
