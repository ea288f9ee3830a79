#!/usr/bin/env python3
"""Runs kiln's exported corpus in real engines and writes their outputs as fixtures.

kiln_export_corpus (tools/export_corpus_main.cpp, the cases of tests/export_corpus.cpp)
writes each function exported as ONNX (<name>.onnx) and StableHLO (<name>.mlir), with its
flattened inputs and kiln's own outputs as TensorProtos. This script runs
  - every .onnx in onnxruntime (CPUExecutionProvider), and
  - every .mlir compiled by jaxlib's XLA CPU client (the text parsed as an MLIR module,
    CHLO legalized by XLA, as jax.jit's own lowering is compiled),
compares each engine's outputs with kiln's (dtype and shape exactly, ints and bools
bit-exact, floats to the case's tolerance), prints a table, and writes the engines'
outputs to tests/fixtures/export/onnxruntime.txt and xla.txt (cases exported with a
symbolic batch also run in onnxruntime at a second batch size, as <name>_batch<n>) in the case/expect format
of tools/gen_numpy_fixtures.py (op = the engine), which tests/export_test.cpp reads.

Usage:  python3 tools/gen_export_fixtures.py [--check]     (KILN_BUILD_DIR: default build/native)
Needs tools/requirements-export.txt (jax, jaxlib, onnx, onnxruntime, numpy pinned) and a
configured native build (the script builds the kiln_export_corpus target). Exits 1 if any
engine disagrees with kiln or, with --check, if a fixture file would change.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import Writer  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures", "export")

# Float tolerance (rtol, atol): every case passes at the default in both engines (largest
# relative differences measured: 5e-5, conv and the MNIST CNN's gradient); a case that needs
# more goes in TOL with its reason.
DEFAULT_TOL = (1e-4, 1e-5)
TOL = {}


def read_tensor(path):
    import onnx
    from onnx import numpy_helper

    return numpy_helper.to_array(onnx.load_tensor(path))


def run_onnxruntime(path, inputs):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
    names = [o.name for o in sess.get_outputs()]
    return sess.run(names, feeds)


class Xla:
    def __init__(self):
        import jax

        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_enable_x64", True)  # float64 arguments stay float64
        import jax.extend
        from jax._src.lib import xla_client

        self.jax = jax
        self.backend = jax.extend.backend.get_backend("cpu")
        self.device = self.backend.devices()[0]
        self.options = xla_client.CompileOptions()

    def run(self, path, inputs):
        with open(path) as f:
            text = f.read()
        exe = self.backend.compile_and_load(text, [self.device], self.options)
        args = [self.jax.device_put(x, self.device) for x in inputs]
        res = exe.execute_sharded(args)
        return [np.asarray(a[0]) for a in res.disassemble_into_single_device_arrays()]


def mismatch(got, want, tol):
    """'' when got matches want (kiln's output), else what differs first."""
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, kiln {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape}, kiln {want.shape}"
    if not np.issubdtype(want.dtype, np.floating):
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        return "" if bad.size == 0 else f"element {bad[0]}: {got.reshape(-1)[bad[0]]} vs kiln {want.reshape(-1)[bad[0]]}"
    g, w = got.astype(np.float64).reshape(-1), want.astype(np.float64).reshape(-1)
    ok = np.isclose(g, w, rtol=tol[0], atol=tol[1], equal_nan=True)
    if ok.all():
        return ""
    i = int(np.flatnonzero(~ok)[0])
    return f"element {i}: {g[i]!r} vs kiln {w[i]!r} (max |diff| {np.nanmax(np.abs(g - w)):.3g})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="exit 1 if a fixture would change")
    ap.parse_args()  # Writer.finish reads --check again
    build_dir = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build", "native"))
    subprocess.run(["cmake", "--build", build_dir, "--target", "kiln_export_corpus"], check=True)
    tool = os.path.join(build_dir, "kiln_export_corpus")
    xla = Xla()
    writers = {
        engine: Writer([f"Outputs of kiln's export corpus (tests/export_corpus.cpp) run in {what}.",
                        "Written by tools/gen_export_fixtures.py; read by tests/export_test.cpp."])
        for engine, what in [("onnxruntime", "onnxruntime (the exported ONNX models)"),
                             ("xla", "jaxlib's XLA CPU client (the exported StableHLO modules)")]
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, KILN_DEVICE="cpu")
        subprocess.run([tool, tmp], check=True, env=env, stdout=subprocess.DEVNULL)
        with open(os.path.join(tmp, "corpus.txt")) as f:
            cases = [line.split() for line in f if line.strip()]
        print(f"{'case':32} {'onnxruntime':>12} {'xla':>12}")
        for name, n_in, n_out, engines in cases:
            stem = os.path.join(tmp, name)
            inputs = [read_tensor(f"{stem}.in{i}.pb") for i in range(int(n_in))]
            kiln_out = [read_tensor(f"{stem}.kiln{j}.pb") for j in range(int(n_out))]
            tol = TOL.get(name, DEFAULT_TOL)
            row = []
            runs = [("onnxruntime", lambda: run_onnxruntime(stem + ".onnx", inputs)),
                    ("xla", lambda: xla.run(stem + ".mlir", inputs))]
            if engines == "onnxruntime":  # a symbolic batch: the ONNX file at another batch size
                runs = runs[:1]
                row.append("")
            for engine, run in runs:
                try:
                    outs = run()
                except Exception as e:  # an engine refusing the file is a failure, reported
                    print(f"{name}: {engine} failed: {str(e).splitlines()[0][:300]}")
                    failures += 1
                    row.append("ERROR")
                    continue
                bad = [f"output {j}: {m}" for j, (o, k) in enumerate(zip(outs, kiln_out)) if (m := mismatch(o, k, tol))]
                if len(outs) != len(kiln_out):
                    bad.append(f"{len(outs)} outputs, kiln {len(kiln_out)}")
                for b in bad:
                    print(f"{name}: {engine}: {b}")
                failures += bool(bad)
                row.append("FAIL" if bad else f"ok {len(outs)}")
                has_float = any(np.issubdtype(np.asarray(o).dtype, np.floating) for o in outs)
                writers[engine].case(name, engine, expects=[np.asarray(o) for o in outs], tol=tol if has_float else None)
            print(f"{name:32} {row[-1] if engines == 'onnxruntime' else row[0]:>12} {'' if engines == 'onnxruntime' else row[1]:>12}")
    print(f"{len(cases)} runs; {failures} engine runs disagree with kiln or failed")
    os.makedirs(OUT_DIR, exist_ok=True)
    for engine, w in writers.items():
        w.finish(os.path.join(OUT_DIR, f"{engine}.txt"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
