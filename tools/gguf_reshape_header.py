#!/usr/bin/env python3
"""A GGUF header of another Llama shape, built from a real file's header (its tokenizer and
other metadata kept): for benchmark models larger than SmolLM2 that must be written on the GPU
machine (tools/gguf_random_weights.py then fills the header with random blocks).

  tools/gguf_reshape_header.py SRC.header OUT.header --preset llama-3.2-1b [--type Q4_0]

Presets give the llama.* numbers and the tensor list (every matrix of --type, norms f32, the
output projection tied to the token embedding, as Llama-3.2-1B has it); the vocabulary stays
the source's (so the embedding has its row count).
"""
import argparse
import struct

import gguf_random_weights as grw

PRESETS = {
    "llama-3.2-1b": {"block_count": 16, "embedding_length": 2048, "feed_forward_length": 8192,
                     "attention.head_count": 32, "attention.head_count_kv": 8,
                     "rope.dimension_count": 64, "rope.freq_base": 500000.0},
}
TYPE_IDS = {v[0]: k for k, v in grw.TYPES.items()}


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def rewrite_kvs(buf, preset):
    """(the source's kv bytes with the preset's llama.* values, n_kv, vocabulary size, end)."""
    r = grw.Reader(buf)
    r.pos = 8
    _, n_kv = r.take("Q"), r.take("Q")
    out, vocab = b"", 0
    for _ in range(n_kv):
        start = r.pos
        key, t = r.string(), r.take("I")
        value_at = r.pos
        v = r.value(t)
        short = key[len("llama."):] if key.startswith("llama.") else None
        if short in preset:
            fmt = {4: "<I", 5: "<i", 6: "<f", 10: "<Q"}[t]
            out += buf[start:value_at] + struct.pack(fmt, preset[short])
        else:
            out += buf[start:r.pos]
        if key == "tokenizer.ggml.tokens":
            vocab = len(v)
    return out, n_kv, vocab


def tensor_list(p, vocab, qtype):
    n, ff = p["embedding_length"], p["feed_forward_length"]
    kv = n // p["attention.head_count"] * p["attention.head_count_kv"]
    q, f32 = TYPE_IDS[qtype], 0
    out = [("token_embd.weight", [n, vocab], q)]
    for i in range(p["block_count"]):
        b = f"blk.{i}."
        out += [(b + "attn_norm.weight", [n], f32), (b + "attn_q.weight", [n, n], q),
                (b + "attn_k.weight", [n, kv], q), (b + "attn_v.weight", [n, kv], q),
                (b + "attn_output.weight", [n, n], q), (b + "ffn_norm.weight", [n], f32),
                (b + "ffn_gate.weight", [n, ff], q), (b + "ffn_up.weight", [n, ff], q),
                (b + "ffn_down.weight", [ff, n], q)]
    return out + [("output_norm.weight", [n], f32)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(PRESETS), required=True)
    ap.add_argument("--type", default="Q4_0", choices=["Q4_0", "Q4_1", "Q8_0"])
    a = ap.parse_args()
    with open(a.src, "rb") as f:
        buf = f.read()
    p = PRESETS[a.preset]
    kvs, n_kv, vocab = rewrite_kvs(buf, p)
    tensors = tensor_list(p, vocab, a.type)
    infos, offset = b"", 0
    for name, dims, t in tensors:
        _, block, nbytes, _ = grw.TYPES[t]
        count = 1
        for d in dims:
            count *= d
        infos += gguf_string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", t, offset)
        offset += (count // block * nbytes + 31) // 32 * 32
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), n_kv) + kvs + infos
    head += b"\0" * ((len(head) + 31) // 32 * 32 - len(head))
    with open(a.out, "wb") as f:
        f.write(head)
    print(f"{a.out}: {a.preset} ({a.type}), {len(tensors)} tensors, vocabulary {vocab}, {offset >> 20} MiB of blocks")


if __name__ == "__main__":
    main()
