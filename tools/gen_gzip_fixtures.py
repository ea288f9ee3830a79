#!/usr/bin/env python3
"""Generates tests/fixtures/gzip/: gzip and raw-DEFLATE files made by Python's zlib, with the
uncompressed bytes beside them, for tests/gzip_test.cpp (kiln::io::inflate and gunzip).

Usage:  python3 tools/gen_gzip_fixtures.py            # (re)writes the fixture directory
        python3 tools/gen_gzip_fixtures.py --check    # exits 1 if a file is stale
Only the standard library is needed. Inputs come from random.Random with fixed seeds and
gzip headers are written here (mtime 0, no OS-dependent fields), so the bytes depend only
on zlib's deflate, which is stable across zlib versions at a given level and strategy.

FORMAT: for each case <name>:
    <name>.gz or <name>.deflate   the compressed stream (gzip member(s), or raw DEFLATE)
    <name>.bin                    the bytes it must decompress to
MANIFEST lists "<name> <gz|deflate> <what it exercises>", one case a line.
"""
import gzip
import os
import random
import struct
import sys
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "gzip")


def deflate(data, level=6, strategy=zlib.Z_DEFAULT_STRATEGY, wbits=-15, mem_level=8):
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, mem_level, strategy)
    return c.compress(data) + c.flush()


def gzip_member(data, body=None, name=None, comment=None, extra=None, hcrc=False):
    """One gzip member (RFC 1952) with the optional header fields chosen by the caller."""
    flags = (2 if hcrc else 0) | (4 if extra is not None else 0) | (8 if name else 0) | (
        16 if comment else 0)
    head = bytes([0x1F, 0x8B, 8, flags]) + struct.pack("<I", 0) + bytes([0, 255])
    if extra is not None:
        head += struct.pack("<H", len(extra)) + extra
    if name:
        head += name + b"\0"
    if comment:
        head += comment + b"\0"
    if hcrc:
        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    if body is None:
        body = deflate(data)
    return head + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def text(seed, n):
    """Word salad: many repeats at varied distances (dynamic Huffman, long matches)."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(400)]
    out = []
    size = 0
    while size < n:
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return (" ".join(out)).encode()[:n]


def noise(seed, n):
    rng = random.Random(seed)
    return bytes(rng.getrandbits(8) for _ in range(n))


def idx_images(seed):
    """A small ubyte IDX file (3 images of 4x5) like MNIST's, for read_idx on .gz."""
    rng = random.Random(seed)
    dims = (3, 4, 5)
    head = bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)
    return head + bytes(rng.choice([0, 0, 0, 17, 128, 255]) for _ in range(60))


def cases():
    t = text(1, 200_000)
    yield "empty", "gz", "no data: one empty final block", b"", None
    yield "hello_fixed", "gz", "fixed Huffman block (Z_FIXED)", b"hello, hello, hello kiln\n", \
        deflate(b"hello, hello, hello kiln\n", 9, zlib.Z_FIXED)
    yield "stored", "gz", "stored blocks (level 0), over 64 KiB so several", noise(2, 70_000), \
        deflate(noise(2, 70_000), 0)
    yield "dynamic_text", "gz", "dynamic Huffman blocks, level 9, distances up to 32 KiB", t, \
        deflate(t, 9)
    yield "rle", "gz", "Z_RLE: distance-1 copies that overlap their own output", \
        b"a" * 1000 + b"bc" * 500 + noise(3, 100) + b"\0" * 3000, \
        deflate(b"a" * 1000 + b"bc" * 500 + noise(3, 100) + b"\0" * 3000, 9, zlib.Z_RLE)
    yield "huffman_only", "gz", "Z_HUFFMAN_ONLY: literals only", t[:20_000], \
        deflate(t[:20_000], 9, zlib.Z_HUFFMAN_ONLY)
    yield "small_window", "gz", "window bits 9 and memLevel 1 (short, many blocks)", t[:50_000], \
        deflate(t[:50_000], 1, wbits=-9, mem_level=1)
    yield "noise_level6", "gz", "incompressible data at level 6", noise(4, 5000), None
    yield "idx_images", "gz", "a gzipped IDX file for read_idx", idx_images(5), None
    yield "raw_dynamic", "deflate", "a raw DEFLATE stream (no gzip framing)", t[:30_000], \
        deflate(t[:30_000], 6)


def build():
    files = {}
    manifest = []
    for name, kind, what, data, body in cases():
        if kind == "deflate":
            files[name + ".deflate"] = body
        else:
            files[name + ".gz"] = gzip_member(data, body)
        files[name + ".bin"] = data
        manifest.append(f"{name} {kind} {what}")
    # Header fields and multi-member files.
    d = text(6, 3000)
    files["header_fields.gz"] = gzip_member(d, name=b"digits.idx", comment=b"kiln test",
                                            extra=b"AB\x02\x00xy", hcrc=True)
    files["header_fields.bin"] = d
    manifest.append("header_fields gz FEXTRA, FNAME, FCOMMENT and FHCRC")
    a, b = text(7, 1000), noise(8, 500)
    files["two_members.gz"] = gzip_member(a) + gzip_member(b)
    files["two_members.bin"] = a + b
    manifest.append("two_members gz two concatenated gzip members")
    files["MANIFEST"] = ("\n".join(manifest) + "\n").encode()
    # Every fixture must round-trip through Python's own decoders.
    for n in files:
        if n.endswith(".gz"):
            assert gzip.decompress(files[n]) == files[n[:-3] + ".bin"], n
        elif n.endswith(".deflate"):
            assert zlib.decompress(files[n], -15) == files[n[:-8] + ".bin"], n
    return files


def main():
    files = build()
    if "--check" in sys.argv:
        stale = [n for n, b in files.items()
                 if not os.path.exists(os.path.join(OUT, n)) or
                 open(os.path.join(OUT, n), "rb").read() != b]
        extra = set(os.listdir(OUT)) - set(files) if os.path.isdir(OUT) else set()
        if stale or extra:
            print(f"gen_gzip_fixtures: stale {sorted(stale)}, unexpected {sorted(extra)}",
                  file=sys.stderr)
            sys.exit(1)
        print(f"gen_gzip_fixtures: {len(files)} files up to date")
        return
    os.makedirs(OUT, exist_ok=True)
    for n, b in files.items():
        with open(os.path.join(OUT, n), "wb") as f:
            f.write(b)
    print(f"gen_gzip_fixtures: wrote {len(files)} files to tests/fixtures/gzip")


if __name__ == "__main__":
    main()
