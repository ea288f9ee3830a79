#!/usr/bin/env python3
"""Generates what the MobileNet page (examples/mobilenet-web) bundles and what its headless
check (js/test/browser/mobilenet.mjs) compares with:

  examples/mobilenet-web/scene.png         a 224x224 RGB picture drawn here (no resize needed)
  examples/mobilenet-web/imagenet_classes.txt  the 1000 ImageNet-1k class names, one a line,
                                           from torchvision's model metadata (BSD-3-Clause)
  tests/fixtures/pte/mobilenet_page.json   ExecuTorch's top-5 classes and logits for that image

ExecuTorch 1.5.1's Python runtime runs the committed tests/fixtures/pte/mobilenet_v3_small.pte
(re-exported here and required to be byte-identical) with the named data its exporter writes,
i.e. the formula weights of tools/pte_models.py: not trained, so the classes mean nothing, but
the computation is ExecuTorch's. The input is preprocessed exactly as the page does it:
x = (v / 255 - mean) / std per channel in double, rounded once to float32 (ImageNet mean/std),
so both sides feed the program the same bits.

Usage:  VENV/bin/python tools/gen_mobilenet_page_fixture.py [--check]
        (VENV: tools/requirements-executorch.txt with torchvision); --check exits 1 if the
        image's pixels, the labels or the fixture would change. CI never runs this script.
"""
import io
import json
import os
import sys

import numpy as np
import torch
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pte_models import models  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PAGE = os.path.join(ROOT, "examples", "mobilenet-web")
PTE = os.path.join(ROOT, "tests", "fixtures", "pte", "mobilenet_v3_small.pte")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "pte", "mobilenet_page.json")
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # the page's constants, the same doubles
SIDE = 224


def draw_scene():
    """A landscape in integer arithmetic: sky gradient, sun, two hills, a house, a tree."""
    y, x = np.mgrid[0:SIDE, 0:SIDE].astype(np.int64)
    img = np.zeros((SIDE, SIDE, 3), np.int64)
    img[...] = np.stack([90 + y * 100 // SIDE, 150 + y * 80 // SIDE, 235 - y * 20 // SIDE], -1)
    sun = (x - 170) ** 2 + (y - 48) ** 2 < 22 ** 2
    img[sun] = (250, 215, 60)
    far = y > 130 + ((x - 60) ** 2) // 260  # a far hill, then a near one
    img[far] = (70, 140, 70)
    near = y > 165 - ((x - 150) ** 2) // 900
    img[near] = np.stack([40 + (x[near] * 7 + y[near] * 3) % 20, 110 + (x[near] + y[near]) % 15,
                          45 + 0 * x[near]], -1)
    wall = (x >= 48) & (x < 104) & (y >= 128) & (y < 172)
    img[wall] = (200, 60, 50)
    roof = (y >= 100) & (y < 128) & (np.abs(x - 76) <= (y - 100) * 34 // 28)
    img[roof] = (90, 50, 40)
    door = (x >= 68) & (x < 84) & (y >= 148) & (y < 172)
    img[door] = (80, 45, 30)
    trunk = (x >= 176) & (x < 186) & (y >= 140) & (y < 180)
    img[trunk] = (100, 70, 40)
    crown = (x - 181) ** 2 + (y - 125) ** 2 < 24 ** 2
    img[crown] = np.stack([30 + (x[crown] * 13 + y[crown] * 5) % 30, 120 + (x[crown] * 3 + y[crown] * 11) % 40,
                           40 + 0 * x[crown]], -1)
    return img.clip(0, 255).astype(np.uint8)


def preprocess(rgb):
    """The page's toTensor: (v / 255 - mean) / std in float64, one rounding to float32, NCHW."""
    v = rgb.astype(np.float64).transpose(2, 0, 1)
    x = (v / 255.0 - np.array(MEAN)[:, None, None]) / np.array(STD)[:, None, None]
    return torch.from_numpy(x.astype(np.float32)[None].copy())


def fnv1a32(data):
    """FNV-1a of the RGB bytes in row order: the page computes it to show it decoded the same pixels."""
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def executorch_logits(x):
    """ExecuTorch's forward on x: the program exported with external constants (checked equal
    to the committed .pte) and the .ptd its exporter writes for the formula weights."""
    name, module, args, _more, dyn = next(m for m in models() if m[0] == "mobilenet_v3_small")
    module.eval()
    with torch.no_grad():
        ep = torch.export.export(module, (x,), dynamic_shapes=dyn)
        names = {s.arg.name for s in ep.graph_signature.input_specs if s.target in module.state_dict()}
        config = ExecutorchBackendConfig(external_constants=lambda node: "weights" if node.name in names else None)
        program = to_edge(ep).to_executorch(config)
        ptd = bytes(program._tensor_data["weights"])
        with open(PTE, "rb") as f:
            if program.buffer != f.read():
                sys.exit(f"{name}: the export differs from the committed program")
        runtime = _load_for_executorch_from_buffer(program.buffer, ptd)
        logits = runtime.run_method("forward", [x])[0]
        eager = module(x)
        assert torch.allclose(logits, eager, rtol=1e-4, atol=1e-4), (logits - eager).abs().max()
    return logits[0].numpy()


def main():
    check = "--check" in sys.argv
    rgb = draw_scene()
    png = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(png, format="PNG", optimize=True)
    from torchvision.models._meta import _IMAGENET_CATEGORIES as categories
    labels = "".join(c + "\n" for c in categories)
    assert len(categories) == 1000 and all("\n" not in c for c in categories)
    logits = executorch_logits(preprocess(rgb))
    order = np.argsort(-logits, kind="stable")
    fixture = {
        "about": "ExecuTorch 1.5.1 (torch 2.14.1) on tests/fixtures/pte/mobilenet_v3_small.pte with the "
                 "formula weights and examples/mobilenet-web/scene.png preprocessed as the page does; "
                 "written by tools/gen_mobilenet_page_fixture.py",
        "image": {"width": SIDE, "height": SIDE, "rgb_fnv1a32": fnv1a32(rgb.tobytes())},
        "top5": [int(i) for i in order[:5]],
        "logits": [float(logits[i]) for i in order[:5]],
        "sixth": {"index": int(order[5]), "logit": float(logits[order[5]])},
        "max_abs_logit": float(np.abs(logits).max()),
    }
    text = json.dumps(fixture, indent=1) + "\n"
    if check:
        with open(os.path.join(PAGE, "scene.png"), "rb") as f:
            same_image = np.array_equal(np.asarray(Image.open(f).convert("RGB")), rgb)
        with open(os.path.join(PAGE, "imagenet_classes.txt")) as f:
            same_labels = f.read() == labels
        with open(FIXTURE) as f:
            old = json.load(f)
        # float32 logits from a NumPy/SIMD-free portable runtime, but compare with a margin anyway
        same_fixture = old["top5"] == fixture["top5"] and old["image"] == fixture["image"] and np.allclose(
            old["logits"], fixture["logits"], rtol=1e-6, atol=1e-6)
        if not (same_image and same_labels and same_fixture):
            sys.exit(f"gen_mobilenet_page_fixture: stale (image {same_image}, labels {same_labels}, fixture {same_fixture})")
        print("mobilenet page fixture: up to date")
        return
    os.makedirs(PAGE, exist_ok=True)
    with open(os.path.join(PAGE, "scene.png"), "wb") as f:
        f.write(png.getvalue())
    with open(os.path.join(PAGE, "imagenet_classes.txt"), "w") as f:
        f.write(labels)
    with open(FIXTURE, "w") as f:
        f.write(text)
    print(f"top-5 {fixture['top5']} logits {[round(v, 4) for v in fixture['logits']]}, "
          f"6th {fixture['sixth']}, png {len(png.getvalue())} bytes")


if __name__ == "__main__":
    main()
