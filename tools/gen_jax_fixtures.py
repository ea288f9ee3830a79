#!/usr/bin/env python3
"""Generates tests/fixtures/transforms_jax.txt: JAX (CPU) reference values of composite
transformed functions, matched by tests/transforms_jax_test.cpp (to 1e-5 relative in
float32 and 1e-10 in float64).

Usage:  python3 tools/gen_jax_fixtures.py            # (re)writes the fixture file
        python3 tools/gen_jax_fixtures.py --check    # exits 1 if the file would change
Needs `pip install jax` (CPU). Inputs come from np.random.default_rng with a fixed seed per
case, so reruns reproduce the file byte for byte.

FORMAT: line based, tokens separated by single spaces.
    case <id> <function> <dtype>      function: a key of the C++ test's table
    input <name> <dtype> <dims...> : <values...>
    expect <name> <dtype> <dims...> : <values...>
    end
values in C order; floats as repr(float(x)) (exact doubles; float32 values are exactly
representable), ints decimal. Every case exists in float32 and float64.
"""

import argparse
import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from fixture_check import check_file  # noqa: E402

jax.config.update("jax_enable_x64", True)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "transforms_jax.txt")


def mlp_loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    return jnp.mean((out - y) ** 2)


def case_mlp(rng, dt):
    p = {"w1": rng.normal(size=(4, 8)), "b1": rng.normal(size=(8,)) * 0.1,
         "w2": rng.normal(size=(8, 3)), "b2": rng.normal(size=(3,)) * 0.1}
    p = {k: v.astype(dt) for k, v in p.items()}
    x = rng.normal(size=(5, 4)).astype(dt)
    y = rng.normal(size=(5, 3)).astype(dt)
    loss, g = jax.value_and_grad(mlp_loss)(p, x, y)
    ins = dict(p, x=x, y=y)
    outs = {"loss": loss, **{"g_" + k: v for k, v in g.items()}}
    return ins, outs


def xent(logits, labels):
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def case_xent(rng, dt):
    logits = (rng.normal(size=(6, 5)) * 2).astype(dt)
    labels = rng.integers(0, 5, size=(6,)).astype(np.int32)
    loss, g = jax.value_and_grad(xent)(logits, labels)
    return {"logits": logits, "labels": labels}, {"loss": loss, "g_logits": g}


def convnet(x, k1, k2):
    dn = ("NCHW", "OIHW", "NCHW")
    h = jnp.maximum(lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn), 0)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    h = lax.conv_general_dilated(h, k2, (2, 1), [(1, 0), (0, 1)], rhs_dilation=(1, 2),
                                 dimension_numbers=dn)
    return jnp.sum(jnp.tanh(h) ** 2)


def case_conv(rng, dt):
    x = rng.normal(size=(2, 3, 8, 8)).astype(dt)
    k1 = (rng.normal(size=(4, 3, 3, 3)) * 0.3).astype(dt)
    k2 = (rng.normal(size=(2, 4, 2, 2)) * 0.3).astype(dt)
    loss, g = jax.value_and_grad(convnet, argnums=(0, 1, 2))(x, k1, k2)
    return {"x": x, "k1": k1, "k2": k2}, {"loss": loss, "g_x": g[0], "g_k1": g[1], "g_k2": g[2]}


def rosenbrock(v):
    return jnp.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2)


def case_rosen(rng, dt):
    v = rng.uniform(-1.5, 1.5, size=(4,)).astype(dt)
    return {"v": v}, {"hessian": jax.hessian(rosenbrock)(v), "grad": jax.grad(rosenbrock)(v)}


def example_loss(w, x, y):
    return (jnp.tanh(jnp.dot(x, w)) - y) ** 2


def case_per_example(rng, dt):
    w = rng.normal(size=(3,)).astype(dt)
    xs = rng.normal(size=(5, 3)).astype(dt)
    ys = rng.normal(size=(5,)).astype(dt)
    g = jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0))(w, xs, ys)
    return {"w": w, "xs": xs, "ys": ys}, {"grads": g}


def case_sin3(rng, dt):
    xs = rng.uniform(-3, 3, size=(7,)).astype(dt)
    d3 = jax.vmap(jax.grad(jax.grad(jax.grad(jnp.sin))))(xs)
    return {"xs": xs}, {"d3": d3}


@jax.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -0.1, 0.1),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def clipped_loss(x):
    return jnp.sum(3.0 * clip_gradient(jnp.sin(x) * x) + 0.05 * x ** 2)


def case_clip(rng, dt):
    x = rng.normal(size=(6,)).astype(dt)
    return {"x": x}, {"grad": jax.grad(clipped_loss)(x)}


CASES = [("mlp", case_mlp), ("xent", case_xent), ("convnet", case_conv), ("rosenbrock", case_rosen),
         ("per_example", case_per_example), ("sin3", case_sin3), ("clip", case_clip)]


def fmt(name, kind, a):
    a = np.asarray(a)
    dt = {"float32": "float32", "float64": "float64", "int32": "int32"}[str(a.dtype)]
    vals = " ".join(repr(float(v)) if a.dtype.kind == "f" else str(int(v)) for v in a.reshape(-1))
    dims = " ".join(str(d) for d in a.shape)
    return f"{kind} {name} {dt}{(' ' + dims) if dims else ''} : {vals}"


def generate(cases=None, script="gen_jax_fixtures.py", seed0=1000):
    """The fixture text of `cases` ((name, fn(rng, dtype) -> (inputs, outputs)) pairs), each
    in float32 and float64 with rng seeded by seed0 + its position. Other JAX generators of
    this format (tools/gen_control_flow_fixtures.py) call it with their own cases."""
    lines = ["# Generated by tools/%s (JAX %s); do not edit." % (script, jax.__version__)]
    for seed, (fname, fn) in enumerate(CASES if cases is None else cases):
        for dt in (np.float32, np.float64):
            rng = np.random.default_rng(seed0 + seed)
            ins, outs = fn(rng, dt)
            lines.append(f"case {fname}_{np.dtype(dt).name} {fname} {np.dtype(dt).name}")
            for k in sorted(ins):
                lines.append(fmt(k, "input", ins[k]))
            for k in sorted(outs):
                lines.append(fmt(k, "expect", outs[k]))
            lines.append("end")
    # The JAX version line varies across installs; --check compares everything else.
    return "\n".join(lines) + "\n"


def main(out=OUT, script="gen_jax_fixtures.py", **kw):
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = generate(script=script, **kw)
    if args.check:
        return 0 if check_file(out, text, "rerun tools/" + script, skip_lines=1) else 1
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
