#!/usr/bin/env python3
"""Generates tests/fixtures/pte/dynamic.txt: ExecuTorch's outputs of the programs with
torch.export.Dim ranges (gpt_block_dynamic: tokens 2..32; gpt2_kv_decoder: tokens 1..16 after
a KV cache of 1..32 positions; gpt2_kv_decoder_long: tokens 1..512 after 1..512 positions) at
many sizes across their ranges, the oracle of tests/executorch_dynamic_test.cpp (dynamic
shapes, issue 23), and the program tests/fixtures/pte/gpt2_kv_decoder_long.pte.

gpt2_kv_decoder_long (tools/pte_models.py's gpt2_long_decoder: the decoder at widths 16 and
vocab 32 with 1024 learned positions, formula weights, so the .pte is ~36 KB) is issue 23's
acceptance program: the test runs it at every token count 1..512 (ten buckets). Its cases are
the prefixes of one 512-token sequence after 3 cached positions at both ends of the buckets
(LONG_SIZES), and only three rows of the logits are written (param rows: the first, middle
and last token's), so the fixture stays small; the test takes the other sizes' tokens from the
512-token case's input.

Usage:  VENV/bin/python tools/gen_pte_dynamic_fixtures.py [--check]
        (VENV: tools/requirements-executorch.txt, as tools/gen_pte_fixtures.py)
CI never runs this script.

The other two programs are not written here: they are exported again from
tools/gen_pte_fixtures.py's and tools/pte_models.py's modules and must equal the committed .pte
files byte for byte (else the script stops), so the outputs belong to the programs the tests
load; with --check so must gpt2_kv_decoder_long's. Cases use the format of models.txt (see
tools/gen_pte_fixtures.py), plus
    param outputs 1     only the first output (the logits) is written: the decoder's cache
                        outputs are its input cache with the new rows appended, and the
                        logits already depend on every new row through attention; the test
                        checks the caches' shapes and that their first P rows are the input's.
    param rows R ...    (gpt2_kv_decoder_long) the expected logits are these rows only.
"""
import os
import sys

import torch
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import Writer  # noqa: E402
from gen_pte_fixtures import MODEL_TOL, OUT, TOL, as_fixture_array, export, micro_programs_and_models  # noqa: E402
from pte_models import formula_tensor, gpt2_long_decoder, models  # noqa: E402

# gpt_block_dynamic (seq 2..32): every length, so that each bucket is entered at its lower
# and upper end and in between.
BLOCK_LENGTHS = list(range(2, 33))
# gpt2_kv_decoder (tokens T 1..16, past P 1..32): one-token decode steps over the whole
# cache range, and prefill-like (T, P) pairs across both ranges, both ends included.
DECODER_SIZES = [(1, p) for p in (1, 2, 3, 7, 8, 9, 16, 17, 24, 31, 32)] + [
    (2, 5), (3, 9), (4, 1), (5, 3), (7, 20), (8, 8), (9, 2), (11, 30), (12, 4), (15, 32),
    (16, 1), (16, 16), (16, 32)]
# gpt2_kv_decoder_long (tokens 1..512, past 1..512): both ends of every power-of-two bucket
# of the tokens, after 3 cached positions (bucket 4: padding in the past axis too).
LONG_SIZES = [1, 2, 3, 31, 32, 33, 100, 255, 256, 257, 511, 512]
LONG_PAST = 3


def committed(name):
    with open(os.path.join(OUT, name + ".pte"), "rb") as f:
        return f.read()


def block_cases(writer):
    for name, module, _args, _more, dyn in micro_programs_and_models():
        if name != "gpt_block_dynamic":
            continue
        with torch.no_grad():
            program = export(module, _args, dyn)
            if program != committed(name):
                sys.exit(f"{name}: the export differs from the committed program")
            runtime = _load_for_executorch_from_buffer(program)
            g = torch.Generator().manual_seed(23)
            for t in BLOCK_LENGTHS:
                tokens = torch.randint(0, 16, (1, t), generator=g)
                outs = runtime.run_method("forward", [tokens])
                writer.case(f"{name}_t{t}", name, params=[("method", "forward")],
                            inputs=[as_fixture_array(tokens)],
                            expects=[as_fixture_array(o) for o in outs], tol=TOL)
        return
    sys.exit("gpt_block_dynamic not found")


def export_external(module, args, dyn):
    """The program with its constants inline (what ExecuTorch runs here) and with the
    state_dict's tensors as external named data (what is committed: weights are the formula)."""
    module.eval()
    ep = torch.export.export(module, args, dynamic_shapes=dyn)
    names = {s.arg.name for s in ep.graph_signature.input_specs if s.target in module.state_dict()}
    config = ExecutorchBackendConfig(external_constants=lambda node: "weights" if node.name in names else None)
    return to_edge(ep).to_executorch().buffer, to_edge(ep).to_executorch(config).buffer


def decoder_run(runtime, module, tokens, p, head_dim):
    """ExecuTorch's logits for `tokens` after formula caches of p positions, checked against
    eager PyTorch and for the caches coming back with the new rows appended."""
    cache = (2, 1, 2, p, head_dim)
    inputs = [tokens, formula_tensor("input1", cache), formula_tensor("input2", cache)]
    outs = runtime.run_method("forward", inputs)
    eager = module(*inputs)
    assert torch.allclose(outs[0], eager[0], rtol=1e-4, atol=1e-4), (tokens.shape, p)
    for o, i in zip(outs[1:], inputs[1:]):
        assert torch.equal(o[:, :, :, :p], i)
    return outs[0]


def decoder_cases(writer):
    name, module, args, _more, dyn = next(m for m in models() if m[0] == "gpt2_kv_decoder")
    with torch.no_grad():
        inline, external = export_external(module, args, dyn)
        if external != committed(name):
            sys.exit(f"{name}: the export differs from the committed program")
        runtime = _load_for_executorch_from_buffer(inline)
        g = torch.Generator().manual_seed(23)
        for t, p in DECODER_SIZES:
            tokens = torch.randint(0, 64, (1, t), generator=g)
            logits = decoder_run(runtime, module, tokens, p, 16)
            writer.case(f"{name}_t{t}_p{p}", name,
                        params=[("method", "forward"), ("external", "formula"), ("formula_inputs", [1, 2]),
                                ("cache", [p]), ("outputs", [1])],
                        inputs=[as_fixture_array(tokens)], expects=[as_fixture_array(logits)],
                        tol=MODEL_TOL[name])


def long_decoder_cases(writer):
    """gpt2_kv_decoder_long: the prefixes of one 512-token sequence at LONG_SIZES after a
    cache of LONG_PAST positions; written are the logits' rows `rows` (the first, middle and
    last token's). Writes the program, or with --check exits if it would change."""
    name, module, args, dyn = gpt2_long_decoder()
    with torch.no_grad():
        inline, external = export_external(module, args, dyn)
        path = os.path.join(OUT, name + ".pte")
        if "--check" in sys.argv:
            if external != committed(name):
                sys.exit(f"{name}: the export differs from the committed program")
        else:
            with open(path, "wb") as f:
                f.write(external)
        runtime = _load_for_executorch_from_buffer(inline)
        g = torch.Generator().manual_seed(512)
        sequence = torch.randint(0, 32, (1, 512), generator=g)
        for t in LONG_SIZES:
            tokens = sequence[:, :t]
            logits = decoder_run(runtime, module, tokens, LONG_PAST, 8)
            rows = sorted({0, t // 2, t - 1})
            writer.case(f"{name}_t{t}", name,
                        params=[("method", "forward"), ("external", "formula"), ("formula_inputs", [1, 2]),
                                ("cache", [LONG_PAST]), ("outputs", [1]), ("rows", rows)],
                        inputs=[as_fixture_array(tokens)], expects=[as_fixture_array(logits[:, rows])],
                        tol=MODEL_TOL["gpt2_kv_decoder"])


def main():
    writer = Writer([
        "ExecuTorch 1.5.1 (torch 2.14.1) outputs of the dynamic-shape programs at many sizes,",
        "written by tools/gen_pte_dynamic_fixtures.py; formula inputs from tests/pte_formula.h.",
    ])
    block_cases(writer)
    decoder_cases(writer)
    long_decoder_cases(writer)
    writer.finish(os.path.join(OUT, "dynamic.txt"))


if __name__ == "__main__":
    main()
