#!/usr/bin/env python3
"""A tiny Llama-architecture GGUF with random quantized weights, for tests that need a whole
model to run in seconds where SmolLM2 takes minutes (the webgpu device on SwiftShader).

  tools/gen_tiny_llm.py tests/fixtures/llm/tiny_llama.gguf [--seed N]

2 layers, n_embd 64, 4 query heads and 2 kv heads of 16, feed-forward 128, and a byte-level
BPE vocabulary of 272 tokens (the 256 GPT-2 byte symbols, 15 merges, an end-of-text token),
with SmolLM2's tensor types: token embedding and output projection q8_0, attention and MLP matrices
q4_1 (the value projections q4_0, so that type runs too), norms f32. The blocks are random
codes with sane scales (tools/gguf_random_weights.py's), so activations stay finite; the
model says nothing, but every device must say the same nothing.
"""
import argparse
import struct

import numpy as np

from gguf_random_weights import TYPES, random_tensor

N_LAYER, N_EMBD, N_HEAD, N_HEAD_KV, N_FF, N_CTX = 2, 64, 4, 2, 128, 2048
HEAD_DIM = N_EMBD // N_HEAD
F32, Q4_0, Q4_1, Q8_0 = 0, 2, 3, 8


def byte_symbols():
    """GPT-2's bytes_to_unicode: the printable symbol of each byte, in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return [out[b] for b in range(256)]


def vocabulary():
    sym = byte_symbols()
    pairs = [("Ġ", "t"), ("h", "e"), ("i", "n"), ("e", "r"), ("a", "n"), ("o", "n"), ("r", "e"), ("Ġ", "a"),
             ("e", "n"), ("a", "t"), ("o", "r"), ("e", "s"), ("Ġ", "s"), ("i", "s"), ("a", "r")]
    tokens = sym + [a + b for a, b in pairs] + ["<|endoftext|>"]
    types = [1] * (len(tokens) - 1) + [3]
    return tokens, types, [f"{a} {b}" for a, b in pairs]


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gguf_string(key) + struct.pack("<I", vtype)
    if vtype == 8:
        return out + gguf_string(value)
    if vtype == 9:  # (element type, list)
        et, items = value
        out += struct.pack("<IQ", et, len(items))
        return out + b"".join(gguf_string(v) if et == 8 else struct.pack({5: "<i", 6: "<f"}[et], v) for v in items)
    return out + struct.pack({4: "<I", 6: "<f", 7: "<?"}[vtype], value)


def tensors(n_vocab):
    """(name, ggml dims [input, output], type) in file order."""
    out = [("token_embd.weight", [N_EMBD, n_vocab], Q8_0)]
    kv_dim = N_HEAD_KV * HEAD_DIM
    for l in range(N_LAYER):
        p = f"blk.{l}."
        out += [(p + "attn_norm.weight", [N_EMBD], F32), (p + "attn_q.weight", [N_EMBD, N_EMBD], Q4_1),
                (p + "attn_k.weight", [N_EMBD, kv_dim], Q4_1), (p + "attn_v.weight", [N_EMBD, kv_dim], Q4_0),
                (p + "attn_output.weight", [N_EMBD, N_EMBD], Q4_1), (p + "ffn_norm.weight", [N_EMBD], F32),
                (p + "ffn_gate.weight", [N_EMBD, N_FF], Q4_1), (p + "ffn_up.weight", [N_EMBD, N_FF], Q4_1),
                (p + "ffn_down.weight", [N_FF, N_EMBD], Q4_1)]
    # An output projection of its own: tied to the random embedding, greedy decoding would
    # repeat the prompt's last token forever (the residual stream stays near its embedding).
    return out + [("output_norm.weight", [N_EMBD], F32), ("output.weight", [N_EMBD, n_vocab], Q8_0)]


def silence_rows(blob, dims, rows):
    """q8_0 output rows with zero scales: those tokens' logits are 0, below the maximum of the
    others, so greedy text never holds a lone byte >= 0x80 (invalid UTF-8, which tests could
    not compare as text) or the end-of-text token (generation runs to maxTokens)."""
    b = bytearray(blob)
    per_row = dims[0] // 32 * 34
    for r in rows:
        for blk in range(dims[0] // 32):
            b[r * per_row + blk * 34:r * per_row + blk * 34 + 2] = b"\0\0"
    return bytes(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    tokens, types, merges = vocabulary()
    meta = [kv("general.architecture", 8, "llama"), kv("general.name", 8, "kiln tiny llama (random weights)"),
            kv("llama.block_count", 4, N_LAYER), kv("llama.context_length", 4, N_CTX),
            kv("llama.embedding_length", 4, N_EMBD), kv("llama.feed_forward_length", 4, N_FF),
            kv("llama.attention.head_count", 4, N_HEAD), kv("llama.attention.head_count_kv", 4, N_HEAD_KV),
            kv("llama.rope.freq_base", 6, 10000.0), kv("llama.attention.layer_norm_rms_epsilon", 6, 1e-5),
            kv("tokenizer.ggml.model", 8, "gpt2"), kv("tokenizer.ggml.pre", 8, "smollm"),
            kv("tokenizer.ggml.tokens", 9, (8, tokens)), kv("tokenizer.ggml.token_type", 9, (5, types)),
            kv("tokenizer.ggml.merges", 9, (8, merges)), kv("tokenizer.ggml.bos_token_id", 4, len(tokens) - 1),
            kv("tokenizer.ggml.eos_token_id", 4, len(tokens) - 1), kv("tokenizer.ggml.add_bos_token", 7, False)]
    rng = np.random.default_rng(a.seed)
    infos, blobs, offset = b"", [], 0
    n_vocab = len(tokens)
    for name, dims, t in tensors(n_vocab):
        _, block, nbytes, _ = TYPES[t]
        size = int(np.prod(dims)) // block * nbytes
        infos += gguf_string(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", t, offset)
        blob = random_tensor(rng, dims, t, size)
        if name == "output.weight":
            blob = silence_rows(blob, dims, [b for b in range(0x80, 0x100)] + [n_vocab - 1])
        blob += b"\0" * ((-len(blob)) % 32)
        blobs.append(blob)
        offset += len(blob)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(blobs), len(meta)) + b"".join(meta) + infos
    head += b"\0" * ((-len(head)) % 32)
    with open(a.out, "wb") as f:
        f.write(head + b"".join(blobs))
    print(f"{a.out}: {len(blobs)} tensors, {len(tokens)} tokens, {len(head) + offset} bytes (seed {a.seed})")


if __name__ == "__main__":
    main()
