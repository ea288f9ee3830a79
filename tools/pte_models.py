"""The bigger models of tools/gen_pte_fixtures.py (issue 23's list): a 2-layer LSTM, a
GPT-2-style decoder with a KV cache and a dynamic sequence length, a Whisper-style audio
encoder block, a small ViT (torchvision's VisionTransformer), MobileNetV3-small and ResNet-18
(torchvision, the real architectures).

Their weights are not random draws committed with the program but a seeded formula:
`formula_tensor(name, shape)` gives every parameter and buffer its values, the generator
exports the programs with ExecuTorch's external constants (the .pte holds the structure,
each weight is named data under its fully qualified name) and tests/pte_formula.h rebuilds
the same values bit for bit in the test, so MobileNetV3-small's ~10 MB of float32 weights
never enter the repository. Inputs too large for the fixture text (images, spectrograms)
come from the same formula under the names "input<k>".
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def formula_seed(name):
    h = 2166136261
    for c in name.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def formula_values(name, shape):
    """tests/pte_formula.h's formula_values (see there): float32 values of the tensor `name`."""
    n = int(np.prod(shape, dtype=np.int64))
    center, spread = 0.0, 0.1
    if name.startswith("input"):
        spread = 1.0
    elif name.endswith("running_var"):
        center, spread = 1.0, 0.5
    elif name.endswith("weight") and len(shape) == 1:
        center, spread = 1.0, 0.25
    elif name.endswith("weight"):
        spread = math.sqrt(6.0 / float(n // shape[0]))
    with np.errstate(over="ignore"):
        x = np.arange(n, dtype=np.uint32) * np.uint32(0x9E3779B9) + np.uint32(formula_seed(name))
        x ^= x >> np.uint32(16)
        x *= np.uint32(0x85EBCA6B)
        x ^= x >> np.uint32(13)
        x *= np.uint32(0xC2B2AE35)
        x ^= x >> np.uint32(16)
    u = (x >> np.uint32(8)).astype(np.float64) / 16777216.0
    return (center + spread * (2 * u - 1)).astype(np.float32).reshape(shape)


def formula_tensor(name, shape):
    return torch.from_numpy(formula_values(name, tuple(shape)))


def set_formula_weights(module):
    """Every float parameter and buffer of `module` from the formula, by its state_dict name
    (integer buffers, BatchNorm's num_batches_tracked, stay 0 as tests/pte_formula.h has them)."""
    with torch.no_grad():
        for name, t in module.state_dict(keep_vars=True).items():
            if t.dtype.is_floating_point:
                t.copy_(formula_tensor(name, t.shape))
    return module


class Lstm(nn.Module):
    """A 2-layer LSTM over a sequence, a linear head on every step's hidden state."""

    def __init__(self, features=8, hidden=24, classes=5):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return self.head(y), h, c


class DecoderLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)

    def forward(self, x, past_k, past_v, mask):
        b, t, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=-1)
        heads = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        k = torch.cat([past_k, heads(k)], dim=2)
        v = torch.cat([past_v, heads(v)], dim=2)
        a = F.scaled_dot_product_attention(heads(q), k, v, attn_mask=mask)
        x = x + self.c_proj(a.transpose(1, 2).reshape(b, t, d))
        x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
        return x, k, v


class Gpt2Decoder(nn.Module):
    """GPT-2's decoder (learned positions, pre-norm blocks, tanh GELU, tied head) with a KV
    cache as inputs and outputs: tokens [1, T] after a cache of P positions
    [layers, 1, heads, P, head_dim]; T and P are both dynamic."""

    def __init__(self, vocab=64, dim=32, heads=2, layers=2, context=48):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(context, dim)
        self.h = nn.ModuleList(DecoderLayer(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, tokens, past_k, past_v):
        t, p = tokens.shape[1], past_k.shape[3]
        pos = torch.arange(p, p + t)
        x = self.wte(tokens) + self.wpe(pos)
        # query i (position p + i) sees keys 0..p + i
        mask = torch.arange(p + t).unsqueeze(0) <= pos.unsqueeze(1)
        ks, vs = [], []
        for i, layer in enumerate(self.h):
            x, k, v = layer(x, past_k[i], past_v[i], mask)
            ks.append(k)
            vs.append(v)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return logits, torch.stack(ks), torch.stack(vs)


def gpt2_long_decoder():
    """The decoder of issue 23's acceptance run: Gpt2Decoder at small widths (vocab 32, width
    16, 2 heads of 8, 2 layers) with 1024 learned positions, so that tokens T 1..512 follow
    a cache of P 1..512 positions. Returns (name, module with formula weights, example
    inputs, dynamic_shapes); tools/gen_pte_dynamic_fixtures.py exports it."""
    torch.manual_seed(3)
    t = torch.export.Dim("tokens", min=1, max=512)
    p = torch.export.Dim("past", min=1, max=512)
    module = set_formula_weights(Gpt2Decoder(vocab=32, dim=16, heads=2, layers=2, context=1024))
    cache = torch.randn(2, 1, 2, 5, 8) * 0.5
    args = (torch.randint(0, 32, (1, 7)), cache, cache.clone())
    return "gpt2_kv_decoder_long", module, args, {"tokens": {1: t}, "past_k": {3: p}, "past_v": {3: p}}


class WhisperEncoderBlock(nn.Module):
    """Whisper's audio encoder front: two GELU conv1d over log-mel frames (the second with
    stride 2), sinusoidal positions, one pre-norm attention block, the final LayerNorm."""

    def __init__(self, mels=16, dim=32, heads=4, frames=40):
        super().__init__()
        self.heads = heads
        self.conv1 = nn.Conv1d(mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        n = frames // 2
        inv = torch.exp(-math.log(10000) / (dim // 2 - 1) * torch.arange(dim // 2))
        angle = torch.arange(n)[:, None] * inv[None, :]
        # not persistent, so not formula weights: a constant inside the program
        self.register_buffer("positional_embedding", torch.cat([angle.sin(), angle.cos()], dim=1),
                             persistent=False)
        self.attn_ln = nn.LayerNorm(dim)
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim, bias=False)
        self.value = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)
        self.mlp_ln = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.ln_post = nn.LayerNorm(dim)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        x = x + self.positional_embedding
        b, t, d = x.shape
        h = self.attn_ln(x)
        heads = lambda z: z.view(b, t, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        a = F.scaled_dot_product_attention(heads(self.query(h)), heads(self.key(h)), heads(self.value(h)))
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        x = x + self.mlp(self.mlp_ln(x))
        return self.ln_post(x)


def vit_small():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                             hidden_dim=48, mlp_dim=96, num_classes=10)


def mobilenet_v3_small():
    from torchvision.models import mobilenet_v3_small as m
    return m(weights=None)


def resnet18():
    from torchvision.models import resnet18 as m
    return m(weights=None)


def models():
    """(name, module with formula weights, inputs (tensors, or shapes for formula inputs),
    [more inputs], dynamic_shapes). A shape tuple stands for formula_tensor("input<k>")."""
    torch.manual_seed(2)
    batch = torch.export.Dim("batch", min=2, max=4)
    state = lambda b: torch.randn(2, b, 24) * 0.5  # noqa: E731
    t = torch.export.Dim("tokens", min=1, max=16)
    p = torch.export.Dim("past", min=1, max=32)
    lstm = set_formula_weights(Lstm())
    gpt = set_formula_weights(Gpt2Decoder())
    cache = lambda n: torch.randn(2, 1, 2, n, 16) * 0.5  # noqa: E731
    tok = lambda n: torch.randint(0, 64, (1, n))  # noqa: E731
    return [
        # export unrolls the LSTM over its 7 steps; the batch stays dynamic
        ("lstm", lstm, (torch.randn(2, 7, 8), state(2), state(2)), [(torch.randn(3, 7, 8), state(3), state(3))],
         {"x": {0: batch}, "h0": {1: batch}, "c0": {1: batch}}),
        ("gpt2_kv_decoder", gpt, (tok(5), cache(3), cache(3)),
         [(tok(1), cache(8), cache(8)), (tok(16), cache(32), cache(32))],
         {"tokens": {1: t}, "past_k": {3: p}, "past_v": {3: p}}),
        ("whisper_encoder_block", set_formula_weights(WhisperEncoderBlock()), ((1, 16, 40),), [], None),
        ("vit_small", set_formula_weights(vit_small()), ((1, 3, 32, 32),), [], None),
        ("mobilenet_v3_small", set_formula_weights(mobilenet_v3_small()), ((1, 3, 224, 224),), [], None),
        # 64x64 keeps every stage (the last is 2x2 before the average pool) at 1/12 of the
        # 224x224 work, so the cpu interpreter and SwiftShader run it in make test
        ("resnet18", set_formula_weights(resnet18()), ((1, 3, 64, 64),), [], None),
    ]
