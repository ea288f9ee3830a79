#!/usr/bin/env python3
"""Latency of issue 23's ExecuTorch models (tools/pte_models.py: LSTM, GPT-2 decoder, Whisper
block, ViT, MobileNetV3-small, ResNet-18) on kiln's `wasm` device against ExecuTorch's own
Python runtime on the same `.pte` program, at 1 and 2 threads, written to
bench/results/executorch.md.

    VENV/bin/python bench/executorch/bench.py [--reps 20] [--only resnet18,...] [--out FILE]

VENV has torch, torchvision and executorch (tools/requirements-executorch.txt) and, for
ExecuTorch's XnnpackPartitioner, torchao (`VENV/bin/pip install --no-deps torchao==0.18.0`); kiln's npm
package must be built (make js-build). Not a test: CI never runs torch.

Per model this script exports the program exactly as tools/gen_pte_fixtures.py does (the
formula weights as external constants; it checks the bytes equal the committed .pte) and
the .ptd ExecuTorch's exporter writes beside it, then times
- ExecuTorch portable: that .pte and .ptd in the Python runtime (portable CPU kernels),
- ExecuTorch XNNPACK: the same exported model lowered with XnnpackPartitioner (inline
  weights; the wheel's runtime registers XnnpackBackend),
- kiln wasm: bench/executorch/kiln.mjs in Node on the same .pte and .ptd (executorch.load
  with namedData = the .ptd file), one process per thread count (KILN_NUM_THREADS).
ExecuTorch's thread pool is set with _unsafe_reset_threadpool to the same count. Each
runtime: one warm-up call (kiln traces and compiles there), then --reps calls; medians.
Inputs are the first input set of each model's fixture case (the formula image/spectrogram).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from pte_models import formula_tensor, models  # noqa: E402
from executorch.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower  # noqa: E402
from executorch.extension.pybindings import portable_lib  # noqa: E402


def export(name, module, args, dyn):
    """(external .pte, its .ptd, XNNPACK-delegated .pte) of one model."""
    module.eval()
    with torch.no_grad():
        ep = torch.export.export(module, args, dynamic_shapes=dyn)
        names = {s.arg.name for s in ep.graph_signature.input_specs if s.target in module.state_dict()}
        config = ExecutorchBackendConfig(external_constants=lambda node: "weights" if node.name in names else None)
        external = to_edge(ep).to_executorch(config)
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        xnn = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
    committed = open(os.path.join(ROOT, "tests", "fixtures", "pte", name + ".pte"), "rb").read()
    assert external.buffer == committed, f"{name}: the export differs from the committed .pte"
    return external.buffer, bytes(external._tensor_data["weights"]), xnn.buffer


def time_calls(fn, reps):
    fn()  # warm-up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1000)
    return statistics.median(ts)


def time_executorch(module, inputs, reps):
    return time_calls(lambda: module.run_method("forward", list(inputs)), reps)


def save_inputs(folder, name, inputs):
    """Raw little-endian inputs for kiln.mjs (int64 as int32: kiln has no int64)."""
    specs = []
    for k, t in enumerate(inputs):
        a = t.numpy()
        if a.dtype == np.int64:
            a = a.astype(np.int32)
        path = os.path.join(folder, f"{name}.in{k}.bin")
        a.tofile(path)
        specs.append({"file": path, "dtype": str(a.dtype), "shape": list(a.shape)})
    return specs


def machine():
    flags = open("/proc/cpuinfo").read()
    model = next((l.split(":", 1)[1].strip() for l in flags.splitlines() if l.startswith("model name")), "?")
    words = set(flags.split())
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni") if f in words]
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": model, "cores": os.cpu_count(), "simd": simd, "python": platform.python_version(),
            "torch": torch.__version__, "node": node}


def run_kiln(folder, manifest, threads, reps):
    env = dict(os.environ, KILN_NUM_THREADS=str(threads))
    out = subprocess.run(["node", "--experimental-wasm-relaxed-simd", os.path.join(ROOT, "bench", "executorch", "kiln.mjs"),
                          manifest, "--reps", str(reps)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"kiln.mjs failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def executorch_worker(manifest, threads, reps):
    """Times every model of the manifest in ExecuTorch at `threads` (its own process: the
    thread pool is sized before any program is loaded; resizing it under a loaded XNNPACK
    program crashes). Prints one JSON line: { model: [portable ms, XNNPACK ms] }."""
    portable_lib._unsafe_reset_threadpool(threads)
    out = {}
    for e in json.load(open(manifest)):
        inputs = [torch.from_numpy(np.fromfile(i["file"], dtype=i["dtype"]).reshape(i["shape"]).astype(
            np.int64 if i["dtype"] == "int32" else np.float32)) for i in e["inputs"]]
        # the runtime keeps pointers into these bytes (the .ptd is not copied): keep them alive
        pte, ptd, xnn = (open(e[k], "rb").read() for k in ("pte", "ptd", "xnn"))
        portable = portable_lib._load_for_executorch_from_buffer(pte, ptd)
        xnnpack = portable_lib._load_for_executorch_from_buffer(xnn)
        out[e["name"]] = [time_executorch(portable, inputs, reps), time_executorch(xnnpack, inputs, reps)]
    print(json.dumps(out))


def run_executorch(manifest, threads, reps):
    out = subprocess.run([sys.executable, __file__, "--worker", str(threads), manifest, "--reps", str(reps)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"ExecuTorch worker failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "executorch.md"))
    ap.add_argument("--worker", type=int, default=0)
    ap.add_argument("manifest", nargs="?")
    opts = ap.parse_args()
    if opts.worker:
        return executorch_worker(opts.manifest, opts.worker, opts.reps)
    only = opts.only.split(",") if opts.only else None
    folder = tempfile.mkdtemp(prefix="kiln-pte-bench-")
    entries = []
    for name, module, args, _more, dyn in models():
        if only and name not in only:
            continue
        inputs = tuple(formula_tensor(f"input{k}", x) if isinstance(x, tuple) else x for k, x in enumerate(args))
        files = dict(zip(("pte", "ptd", "xnn"), export(name, module, inputs, dyn)))
        entry = {"name": name, "inputs": save_inputs(folder, name, inputs)}
        for k, data in files.items():
            entry[k] = os.path.join(folder, f"{name}.{k}")
            with open(entry[k], "wb") as f:
                f.write(data)
        entries.append(entry)
        print(f"exported {name}", flush=True)
    manifest = os.path.join(folder, "manifest.json")
    with open(manifest, "w") as f:
        json.dump(entries, f)
    load_before = os.getloadavg()
    et = {}
    for t in (1, 2):
        for name, ms in run_executorch(manifest, t, opts.reps).items():
            et[(name, t)] = ms
            print(f"{name:22s} {t}t  ExecuTorch portable {ms[0]:9.2f} ms  XNNPACK {ms[1]:8.2f} ms", flush=True)
    kiln = {t: run_kiln(folder, manifest, t, opts.reps) for t in (1, 2)}
    load_after = os.getloadavg()
    write_report(opts, et, kiln, [e["name"] for e in entries], load_before, load_after)


def write_report(opts, et, kiln, names, load_before, load_after):
    m = machine()
    lines = [
        "# ExecuTorch models: kiln wasm against ExecuTorch's runtime (issue 23)",
        "",
        "Written by `bench/executorch/bench.py` (median of "
        f"{opts.reps} calls after one warm-up; the same `.pte` and `.ptd` for kiln and ExecuTorch "
        "portable; XNNPACK is the same exported model lowered with ExecuTorch's XnnpackPartitioner). "
        "kiln: `wasm` device in Node (relaxed SIMD on), inputs created and outputs read back in "
        "each call. ExecuTorch: its Python runtime (`portable_lib`, executorch 1.5.1) with the "
        "thread pool at the same count. Ratio = ExecuTorch ms / kiln ms (above 1: kiln is faster).",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores visible, SIMD {' '.join(m['simd'])} (kiln's "
        f"wasm uses 128-bit Wasm SIMD only); Node {m['node']}, torch {m['torch']}, Python {m['python']}. "
        f"Load average before {load_before[0]:.1f}, after {load_after[0]:.1f}: the machine is "
        "shared with other jobs, so absolute times are noisy and both runtimes suffer alike only "
        "roughly. A quiet rerun: `nice -n -5 VENV/bin/python bench/executorch/bench.py --reps 50` "
        "on an otherwise idle machine (VENV from tools/requirements-executorch.txt plus torchao 0.18.0; `make js-build` first).",
        "",
        "| model | threads | kiln wasm ms | kiln first call ms | ExecuTorch portable ms | ExecuTorch XNNPACK ms | portable / kiln | XNNPACK / kiln |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        for t in (1, 2):
            k = kiln[t][name]
            p, x = et[(name, t)]
            lines.append(f"| {name} | {t} | {k['ms']:.2f} | {k['first_ms']:.0f} | {p:.2f} | {x:.2f} | "
                         f"{p / k['ms']:.2f}x | {x / k['ms']:.2f}x |")
    with open(opts.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
