#!/usr/bin/env python3
"""A GGUF file with a real file's header and random tensor data, for speed benchmarks where the
real file cannot travel (the GPU machine takes 64 MiB per call; SmolLM2's file is 98 MB).

  tools/gguf_random_weights.py --header-only REAL.gguf OUT.header   # metadata + tokenizer +
                                                                    # tensor infos (~1.8 MB)
  tools/gguf_random_weights.py SRC OUT.gguf [--seed N]              # SRC: a real file or a header

The output keeps the header byte for byte (so the same metadata, vocabulary, tensor names,
shapes, types and offsets) and fills each tensor's blocks with random codes and sane scales
(dequantized weights of a few hundredths, norm weights near 1), so no activation overflows
and kernels see the same work: llama.cpp runs such a file at the real one's speed (seen on
SmolLM2, CPU and Vulkan). Only numpy is needed (the GPU machine has it).
"""
import argparse
import struct
import sys

import numpy as np

# ggml type id -> (name, values per block, bytes per block, byte offsets of f16 scale fields
# [d, then min/dmin when the type has one]); layouts from ggml-common.h.
TYPES = {
    0: ("F32", 1, 4, []),
    1: ("F16", 1, 2, []),
    2: ("Q4_0", 32, 18, [0]),
    3: ("Q4_1", 32, 20, [0, 2]),
    6: ("Q5_0", 32, 22, [0]),
    7: ("Q5_1", 32, 24, [0, 2]),
    8: ("Q8_0", 32, 34, [0]),
    10: ("Q2_K", 256, 84, [80, 82]),
    11: ("Q3_K", 256, 110, [108]),
    12: ("Q4_K", 256, 144, [0, 2]),
    13: ("Q5_K", 256, 176, [0, 2]),
    14: ("Q6_K", 256, 210, [208]),
    30: ("BF16", 1, 2, []),
}
# The d of each block type: code spread times d is ~0.03 (q4: |q - 8| ~ 4.6; q8: ~74; K-quants
# also multiply by 6- or 8-bit sub-block scales); a min is -(half the code range) * d.
SCALE = {"Q4_0": 0.007, "Q4_1": 0.007, "Q5_0": 0.0035, "Q5_1": 0.0035, "Q8_0": 0.0004,
         "Q2_K": 0.0005, "Q3_K": 0.0005, "Q4_K": 0.0002, "Q5_K": 0.0001, "Q6_K": 0.00005}
MIN_CODES = {"Q4_1": 8, "Q5_1": 16, "Q2_K": 2, "Q4_K": 8, "Q5_K": 16}
# Scalar metadata value sizes by GGUF value type (8: string, 9: array are read separately).
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


class Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return v[0]

    def string(self):
        n = self.take("Q")
        s = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return s.decode("utf-8", "replace")

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.take("I"), self.take("Q")
            if et in SCALAR:  # skipped: the header is copied, not rewritten
                self.pos += SCALAR[et] * n
                return None
            return [self.value(et) for _ in range(n)]
        fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}[t]
        return self.take(fmt)


def parse_header(buf):
    """(data_offset, [(name, dims, type, offset, size)]) of a GGUF v2/v3 file or header."""
    r = Reader(buf)
    if bytes(buf[:4]) != b"GGUF":
        sys.exit("not a GGUF file")
    r.pos = 4
    version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
    if version not in (2, 3):
        sys.exit(f"GGUF version {version}, expected 2 or 3")
    alignment = 32
    for _ in range(n_kv):
        key, t = r.string(), r.take("I")
        v = r.value(t)
        if key == "general.alignment":
            alignment = v
    tensors = []
    for _ in range(n_tensors):
        name, nd = r.string(), r.take("I")
        dims = [r.take("Q") for _ in range(nd)]
        t, offset = r.take("I"), r.take("Q")
        if t not in TYPES:
            sys.exit(f"tensor {name}: ggml type {t} is not in this tool's table")
        _, block, nbytes, _ = TYPES[t]
        count = int(np.prod(dims, dtype=np.uint64))
        tensors.append((name, dims, t, offset, count // block * nbytes))
    data_offset = (r.pos + alignment - 1) // alignment * alignment
    return data_offset, tensors


def random_tensor(rng, dims, t, size):
    name, _, nbytes, scale_at = TYPES[t]
    count = size * TYPES[t][1] // nbytes
    if name == "F32" or name in ("F16", "BF16"):
        # Norm weights (1-D) near 1, matrices and biases small.
        v = (1.0 + 0.1 * rng.standard_normal(count)) if len(dims) == 1 else 0.02 * rng.standard_normal(count)
        if name == "F32":
            return v.astype("<f4").tobytes()
        if name == "F16":
            return v.astype("<f2").tobytes()
        return (v.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()
    blocks = rng.integers(0, 256, size=(size // nbytes, nbytes), dtype=np.uint8)
    d = (SCALE[name] * rng.uniform(0.5, 1.5, size=blocks.shape[0])).astype("<f2")
    blocks[:, scale_at[0]:scale_at[0] + 2] = d.view(np.uint8).reshape(-1, 2)
    if len(scale_at) > 1:
        m = (-MIN_CODES[name] * d.astype(np.float32)).astype("<f2")
        if name.endswith("_K"):
            m = -m  # K-quants store dmin, subtracted
        blocks[:, scale_at[1]:scale_at[1] + 2] = m.view(np.uint8).reshape(-1, 2)
    return blocks.tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--header-only", action="store_true", help="write SRC's header (no tensor data)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    with open(a.src, "rb") as f:
        head = f.read(64 << 20)  # headers are a few MB; tensor data is never read
    data_offset, tensors = parse_header(head)
    if a.header_only:
        with open(a.out, "wb") as f:
            f.write(head[:data_offset])
        print(f"{a.out}: header of {len(tensors)} tensors, {data_offset} bytes")
        return
    rng = np.random.default_rng(a.seed)
    with open(a.out, "wb") as f:
        f.write(head[:data_offset])
        end = 0
        for _, dims, t, offset, size in sorted(tensors, key=lambda x: x[3]):
            if offset < end:
                sys.exit("overlapping tensors")
            f.write(b"\0" * (offset - end))
            f.write(random_tensor(rng, dims, t, size))
            end = offset + size
        f.write(b"\0" * ((-end) % 32))
    print(f"{a.out}: {len(tensors)} tensors, {data_offset + end} bytes, random data (seed {a.seed})")


if __name__ == "__main__":
    main()
