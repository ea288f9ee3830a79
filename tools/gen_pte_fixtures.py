#!/usr/bin/env python3
"""Generates tests/fixtures/pte/: ExecuTorch programs (`.pte`, the portable Edge program with
no delegates) exported from small PyTorch modules, and programs.txt, the outputs ExecuTorch's
own Python runtime computes for them on fixed inputs (tests/executorch_test.cpp reads both),
and structure.txt, ExecuTorch's own deserializer's view of a few programs (values, operators,
instructions, constants' FNV-1a hashes), the oracle of kiln's reader (tests/pte_test.cpp).

Usage:  VENV/bin/python tools/gen_pte_fixtures.py [--check]  (VENV: requirements-executorch.txt)
        --check exits 1 if a program or structure.txt would change, or programs.txt beyond a
        few ulp (make check-pte-fixtures). A rerun reproduces the .pte files byte for byte.
CI never runs this script: it needs torch and executorch, which are gigabytes.

programs.txt uses the case format of tools/gen_numpy_fixtures.py. One case per run:
    case <id> <program>         program: the file <program>.pte beside programs.txt
    param method forward
    input ... / expect ...      the method's inputs and ExecuTorch's outputs, in order
    tol <rtol> <atol>
int64 tensors (embedding indices, argmax results) are written as int32: kiln has no int64
dtype, and its ExecuTorch loader maps Long to int32 (the values here fit).

Each program is a per-operator micro program (one or a few ATen operators with their
argument variants) or a small whole model (an MLP, a CNN, a GPT-style block whose sequence
length is a torch.export.Dim, run at several lengths). Weights are random with fixed seeds:
the loader has to handle the program's structure, not trained weights.

The bigger models of tools/pte_models.py (a 2-layer LSTM, a GPT-2-style decoder with a KV
cache, a Whisper-style encoder block, a small ViT, MobileNetV3-small) are exported with
external constants: their .pte files hold the programs, their weights are a seeded formula
(tools/pte_models.py, tests/pte_formula.h) that the tests rebuild, so MobileNetV3-small's
~10 MB of weights are not committed. Their cases go to models.txt, where
    param external formula      every external tensor is formula_tensor(its name)
    param formula_inputs K ...  input K is formula_tensor("input<K>", the program's shape)
                                (its `input` line is absent; the other inputs are written)
ExecuTorch's runtime computes the expected outputs from the same program exported with its
constants inline (the generator checks it gives the same program apart from the weights'
location, by comparing outputs with the external-constant program run on its .ptd).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir._serialize._program import deserialize_pte_binary
from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import Writer  # noqa: E402
from pte_models import formula_tensor, models  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "pte")
TOL = (1e-5, 1e-6)
# The models sum over thousands of terms through many layers, in other orders than
# ExecuTorch's portable kernels: (rtol, atol) per model. Measured max |kiln - ExecuTorch| on
# native: LSTM 3e-8 (values <= 0.33), GPT-2 decoder 3.3e-6 (<= 6.3), Whisper block 1.8e-6
# (<= 2.9), ViT 1.1e-6 (<= 2.7), MobileNetV3-small 1.6e-5 (logits <= 16.4), ResNet-18 1.1e-4
# (logits <= 91.6).
MODEL_TOL = {
    "lstm": (1e-5, 1e-6),
    "gpt2_kv_decoder": (1e-5, 1e-5),
    "whisper_encoder_block": (1e-5, 1e-5),
    "vit_small": (1e-5, 1e-5),
    "mobilenet_v3_small": (1e-5, 1e-4),  # errors scale with the largest logit, not each one
    "resnet18": (1e-5, 5e-4),  # 1.1e-4 on native, logits <= 91.6
}
# Models whose .ptd (ExecuTorch's named-data file of their external constants) is committed
# beside the program, so tests read a file the exporter wrote (tests/ptd_test.cpp); the
# others' weights come from the formula.
WRITE_PTD = ["lstm"]
# Files of tools/gen_pte_dynamic_fixtures.py and tools/gen_mobilenet_page_fixture.py in the
# same folder (they check them themselves).
OTHER_GENERATOR = ("dynamic.txt", "gpt2_kv_decoder_long.pte", "mobilenet_page.json")
# Programs whose structure ExecuTorch's own deserializer dumps to structure.txt: the oracle
# of kiln's .pte reader (tests/pte_test.cpp prints the same text from its parse).
DUMPED = ["linear", "cnn", "transpose_cat", "layer_norm", "gpt_block_dynamic"]  # float32 programs; kiln's kernels sum in other orders than ExecuTorch's


class Fn(nn.Module):
    """A module from a function, for micro programs without parameters."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def randn(*shape):
    return torch.randn(*shape, dtype=torch.float32)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 8, 3, stride=2)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return F.log_softmax(self.fc(x), dim=-1)


class GptBlock(nn.Module):
    """A pre-norm decoder block (causal attention + GELU MLP) over token embeddings."""

    def __init__(self, vocab=16, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(32, dim) * 0.1)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        b, t = tokens.shape
        x = self.embed(tokens) + self.pos[:t]
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=-1)
        split = lambda z: z.view(b, t, self.heads, -1).transpose(1, 2)  # noqa: E731
        a = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        return self.head(x)


def micro_programs():
    """(name, module, example inputs, [more input tuples], dynamic_shapes)"""
    x34 = randn(3, 4)
    img = randn(1, 3, 8, 8)
    progs = [
        ("linear", nn.Linear(8, 4), (randn(3, 8),)),
        ("linear_no_bias", nn.Linear(8, 4, bias=False), (randn(2, 3, 8),)),
        ("mm", Fn(torch.mm), (randn(3, 5), randn(5, 2))),
        ("bmm", Fn(torch.bmm), (randn(2, 3, 4), randn(2, 4, 5))),
        ("matmul_broadcast", Fn(torch.matmul), (randn(2, 3, 4), randn(4, 5))),
        ("conv2d", nn.Conv2d(3, 4, 3, padding=1), (img,)),
        ("conv2d_stride_groups", nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
         (randn(2, 4, 9, 9),)),
        ("conv1d", nn.Conv1d(3, 5, 3, stride=2, bias=False), (randn(2, 3, 11),)),
        ("batch_norm2d", nn.BatchNorm2d(3), (img,)),
        ("layer_norm", nn.LayerNorm(4), (randn(2, 3, 4),)),
        ("max_pool2d", nn.MaxPool2d(2), (img,)),
        ("max_pool2d_pad", nn.MaxPool2d(3, stride=2, padding=1), (img,)),
        ("avg_pool2d", nn.AvgPool2d(2), (img,)),
        ("adaptive_avg_pool2d", nn.AdaptiveAvgPool2d(1), (img,)),
        ("relu", Fn(F.relu), (x34,)),
        ("gelu", Fn(F.gelu), (x34,)),
        ("gelu_tanh", Fn(lambda x: F.gelu(x, approximate="tanh")), (x34,)),
        ("sigmoid", Fn(torch.sigmoid), (x34,)),
        ("tanh", Fn(torch.tanh), (x34,)),
        ("silu", Fn(F.silu), (x34,)),
        ("hardtanh", Fn(lambda x: F.hardtanh(x, -0.5, 0.5)), (x34,)),
        ("softmax", Fn(lambda x: F.softmax(x, dim=-1)), (x34,)),
        ("log_softmax", Fn(lambda x: F.log_softmax(x, dim=0)), (x34,)),
        ("embedding", nn.Embedding(10, 4), (torch.tensor([[1, 3, 9], [0, 3, 2]]),)),
        ("view_permute", Fn(lambda x: x.view(2, 6).permute(1, 0) * 2), (x34,)),
        ("transpose_cat", Fn(lambda a, b: torch.cat([a.transpose(0, 1), b], dim=1)),
         (x34, randn(4, 2))),
        ("slice_select", Fn(lambda x: x[1:, ::2] + x[0, 1]), (x34,)),
        ("unsqueeze_expand", Fn(lambda x: x.unsqueeze(1).expand(3, 2, 4).squeeze(0)), (x34,)),
        ("sum_mean", Fn(lambda x: (x.sum(dim=1), x.mean(dim=0, keepdim=True))), (x34,)),
        ("amax_argmax", Fn(lambda x: (torch.amax(x, dim=1), torch.argmax(x, dim=1))), (x34,)),
        ("arange_full", Fn(lambda x: x + torch.arange(4, dtype=torch.float32) +
                           torch.full((3, 1), 0.5)), (x34,)),
        ("binary_broadcast", Fn(lambda a, b: (a - b) * a / (b * b + 1.0)), (x34, randn(4))),
        ("unary_math", Fn(lambda x: torch.exp(x) + torch.sqrt(x.abs()) - torch.rsqrt(x * x + 1)),
         (x34,)),
        ("where_compare", Fn(lambda a, b: torch.where(a > b, a, b * 2)), (x34, randn(3, 4))),
        ("clamp_pow", Fn(lambda x: torch.clamp(x, -0.5, 1.0) ** 2), (x34,)),
        ("group_norm", nn.GroupNorm(2, 4), (randn(2, 4, 3, 3),)),
        ("upsample_nearest", Fn(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")),
         (randn(1, 2, 3, 4),)),
        ("conv_transpose2d", nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), (randn(1, 3, 4, 4),)),
        ("leaky_relu_hardswish", Fn(lambda x: F.leaky_relu(x, 0.2) + F.hardswish(x)), (x34,)),
        ("index_select_gather", Fn(lambda x, i: (torch.index_select(x, 1, i[0]),
                                                 torch.gather(x, 1, i[:1, :2].expand(3, 2)))),
         (x34, torch.tensor([[3, 0, 1], [2, 2, 0]]))),
        ("stack_pad", Fn(lambda a, b: F.pad(torch.stack([a, b], dim=1), (1, 2))), (x34, randn(3, 4))),
        ("cumsum_var", Fn(lambda x: (torch.cumsum(x, dim=1), x.var(dim=0))), (x34,)),
        ("max_dim", Fn(lambda x: tuple(torch.max(x, dim=1))), (x34,)),
        ("log_trig", Fn(lambda x: torch.log(x.abs() + 1) * torch.sin(x) - torch.cos(-x)), (x34,)),
        ("avg_pool2d_pad_exclude", nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
         (img,)),
        ("max_pool2d_stride1", nn.MaxPool2d(2, stride=1), (img,)),
        ("mean_sum_all", Fn(lambda x: (x.mean(), x.sum(), x.flatten())), (randn(2, 3, 2),)),
        ("split_equal", Fn(lambda x: torch.split(x, 2, dim=1)), (randn(2, 6),)),
        ("bool_input", Fn(lambda a, m: torch.where(m, a, a * 0.5)), (x34, randn(3, 4) > 0)),
        ("sdpa_causal", Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
         (randn(1, 2, 5, 4), randn(1, 2, 5, 4), randn(1, 2, 5, 4))),
    ]
    return [(n, m, args, [], None) for n, m, args in progs]


def whole_models():
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10), nn.LogSoftmax(-1))
    cnn = Cnn()
    gpt = GptBlock()
    for m in (cnn, gpt):  # batch norm with running statistics that are not the defaults
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
    seq = torch.export.Dim("seq", min=2, max=32)
    tokens = lambda t: torch.randint(0, 16, (1, t))  # noqa: E731
    return [
        ("mlp", mlp, (randn(4, 16),), [], None),
        ("cnn", cnn, (randn(2, 1, 12, 12),), [], None),
        ("gpt_block_dynamic", gpt, (tokens(8),), [(tokens(3),), (tokens(17),)],
         {"tokens": {1: seq}}),
    ]


def export(module, args, dynamic_shapes):
    module.eval()
    ep = torch.export.export(module, args, dynamic_shapes=dynamic_shapes)
    return to_edge(ep).to_executorch().buffer


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


ITEMSIZE = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 15: 2}


def dump_structure(name, data):
    """The text tests/pte_test.cpp prints from kiln's parse (the format is in that test)."""
    program = deserialize_pte_binary(data).program
    lines = [f"program {name} version {program.version} plans {len(program.execution_plan)}"]
    join = lambda xs: ",".join(str(x) for x in xs) or "-"  # noqa: E731
    for plan in program.execution_plan:
        ops = [o.name + "." + o.overload if o.overload else o.name for o in plan.operators]
        lines.append(f"method {plan.name} inputs {join(plan.inputs)} outputs {join(plan.outputs)}"
                     f" buffers {join(plan.non_const_buffer_sizes)}")
        lines += [f"operator {i} {op}" for i, op in enumerate(ops)]
        for i, ev in enumerate(plan.values):
            lines.append(f"value {i} " + dump_value(program, ev.val))
        for c, chain in enumerate(plan.chains):
            for n, ins in enumerate(chain.instructions):
                a = ins.instr_args
                kind = type(a).__name__
                if kind == "KernelCall":
                    text = f"kernel {a.op_index} {join(a.args)}"
                elif kind == "MoveCall":
                    text = f"move {a.move_from} {a.move_to}"
                elif kind == "JumpFalseCall":
                    text = f"jump_false {a.cond_value_index} {a.destination_instruction}"
                elif kind == "FreeCall":
                    text = f"free {a.value_index}"
                else:
                    text = f"delegate {a.delegate_index} {join(a.args)}"
                lines.append(f"instruction {c} {n} {text}")
    return lines


def dump_value(program, v):
    kind = type(v).__name__
    if kind == "Tensor":
        st = int(v.scalar_type)
        text = (f"Tensor {st} sizes {join_or_dash(v.sizes)} dim_order {join_or_dash(v.dim_order)}"
                f" dynamism {int(v.shape_dynamism)}")
        if v.data_buffer_idx:
            n = ITEMSIZE[st] * int(np.prod(v.sizes, dtype=np.int64))
            storage = bytes(program.constant_buffer[v.data_buffer_idx].storage)[:n]
            text += f" constant {v.data_buffer_idx} fnv {fnv1a64(storage)}"
        if v.allocation_info is not None:
            a = v.allocation_info
            text += f" planned {a.memory_id} {a.memory_offset_low + (a.memory_offset_high << 32)}"
        return text
    if kind in ("Int", "Bool"):
        return f"{kind} {int(v.int_val if kind == 'Int' else v.bool_val)}"
    if kind == "Double":
        return f"Double {format(float(v.double_val), '.17g')}"
    if kind == "String":
        return f"String {v.string_val}"
    if kind in ("IntList", "TensorList", "OptionalTensorList", "DoubleList", "BoolList"):
        items = [int(x) if kind != "DoubleList" else format(float(x), ".17g") for x in v.items]
        return f"{kind} {join_or_dash(items)}"
    return kind


def join_or_dash(xs):
    return ",".join(str(int(x)) if not isinstance(x, str) else x for x in xs) or "-"


def as_fixture_array(t):
    a = t.detach().numpy()
    if a.dtype != np.int64:
        return a
    assert np.all(np.abs(a) < 2**31), "int64 values past int32"
    return a.astype(np.int32)


def main():
    writer = Writer([
        "ExecuTorch 1.5.1 (torch 2.14.1) outputs of the programs in this folder, written by",
        "tools/gen_pte_fixtures.py; the format is tools/gen_numpy_fixtures.py's.",
    ])
    files = {}
    structure = ["# ExecuTorch's deserializer's view of some programs here (tools/gen_pte_fixtures.py)"]
    for name, module, args, more, dyn in micro_programs_and_models():
        with torch.no_grad():
            program = export(module, args, dyn)
            files[name + ".pte"] = program
            if name in DUMPED:
                structure += dump_structure(name, program)
            runtime = _load_for_executorch_from_buffer(program)
            for i, inputs in enumerate([args] + more):
                outs = runtime.run_method("forward", list(inputs))
                eager = module(*inputs)
                eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
                for o, e in zip(outs, eager):  # ExecuTorch agrees with eager PyTorch
                    assert torch.allclose(o.to(e.dtype), e, rtol=1e-4, atol=1e-5), name
                writer.case(f"{name}_{i}", name, params=[("method", "forward")],
                            inputs=[as_fixture_array(t) for t in inputs],
                            expects=[as_fixture_array(o) for o in outs], tol=TOL)
    files["structure.txt"] = ("\n".join(structure) + "\n").encode()
    model_writer = Writer([
        "ExecuTorch 1.5.1 (torch 2.14.1) outputs of the models of tools/pte_models.py, written by",
        "tools/gen_pte_fixtures.py; weights and formula_inputs from tests/pte_formula.h.",
    ])
    for name, module, args, more, dyn in models():
        files[name + ".pte"], ptd = export_model_case(model_writer, name, module, args, more, dyn)
        if name in WRITE_PTD:
            files[name + ".ptd"] = ptd
    write_or_check(files)
    writer.finish(os.path.join(OUT, "programs.txt"))  # --check: floats within a few ulp
    model_writer.finish(os.path.join(OUT, "models.txt"))


def export_model_case(writer, name, module, args, more, dyn):
    """Exports `module` twice (constants inline, constants external), checks that ExecuTorch
    computes the same outputs from both, writes the cases; returns the external program and
    its .ptd (the named data ExecuTorch's exporter wrote)."""
    module.eval()
    formula = lambda xs: tuple(formula_tensor(f"input{k}", x) if isinstance(x, tuple) else x  # noqa: E731
                               for k, x in enumerate(xs))
    runs = [formula(args)] + [formula(m) for m in more]
    with torch.no_grad():
        ep = torch.export.export(module, runs[0], dynamic_shapes=dyn)
        inline = to_edge(ep).to_executorch()
        # the state_dict's tensors (the formula's) go to named data; other constants (a
        # non-persistent buffer, tensors export folded) stay in the program
        names = {s.arg.name for s in ep.graph_signature.input_specs
                 if s.target in module.state_dict()}
        config = ExecutorchBackendConfig(
            external_constants=lambda node: "weights" if node.name in names else None)
        external = to_edge(ep).to_executorch(config)
        ptd = bytes(external._tensor_data["weights"])
        rt_inline = _load_for_executorch_from_buffer(inline.buffer)
        rt_external = _load_for_executorch_from_buffer(external.buffer, ptd)
        for i, inputs in enumerate(runs):
            outs = rt_inline.run_method("forward", list(inputs))
            for o, e in zip(outs, rt_external.run_method("forward", list(inputs))):
                assert torch.equal(o, e), name  # one program, weights in either place
            eager = module(*inputs)
            eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
            for o, e in zip(outs, eager):
                assert torch.allclose(o, e, rtol=1e-4, atol=1e-4), (name, (o - e).abs().max())
            generated = [k for k, x in enumerate((args, *more)[i]) if isinstance(x, tuple)]
            params = [("method", "forward"), ("external", "formula")]
            if generated:
                params.append(("formula_inputs", generated))
            writer.case(f"{name}_{i}", name, params=params,
                        inputs=[as_fixture_array(t) for k, t in enumerate(inputs) if k not in generated],
                        expects=[as_fixture_array(o) for o in outs], tol=MODEL_TOL[name])
    return external.buffer, ptd


def write_or_check(files):
    """Writes the programs and structure.txt, or with --check exits 1 if one differs."""
    if "--check" not in sys.argv:
        os.makedirs(OUT, exist_ok=True)
        for n, b in files.items():
            with open(os.path.join(OUT, n), "wb") as f:
                f.write(b)
        print(f"wrote {len(files)} files, {sum(len(b) for b in files.values())} bytes")
        return
    have = {n for n in os.listdir(OUT) if n not in ("programs.txt", "models.txt") + OTHER_GENERATOR}
    stale = sorted(n for n in have | set(files)
                   if n not in files or n not in have or open(os.path.join(OUT, n), "rb").read() != files[n])
    if stale:
        sys.exit(f"gen_pte_fixtures: stale or unexpected {stale}")


def micro_programs_and_models():
    torch.manual_seed(0)
    yield from micro_programs()
    torch.manual_seed(1)
    yield from whole_models()


if __name__ == "__main__":
    main()
