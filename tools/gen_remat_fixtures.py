#!/usr/bin/env python3
"""Generates tests/fixtures/remat_jax.txt: JAX (CPU) reference values of jax.checkpoint
(remat) under grad, jit(grad), vmap(grad), jvp and nesting, with the nothing_saveable and
dots_saveable policies, matched by tests/remat_test.cpp and js/test/checkpoint.test.ts
(1e-5 relative in float32, 1e-10 in float64).

Usage:  python3 tools/gen_remat_fixtures.py            # (re)writes the fixture file
        python3 tools/gen_remat_fixtures.py --check    # exits 1 if the file would change
Needs `pip install jax` (CPU). Same format as tools/gen_jax_fixtures.py.
"""

import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import gen_jax_fixtures  # noqa: E402  (the same format: its generate/main with these cases)

jax.config.update("jax_enable_x64", True)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "remat_jax.txt")

POLICIES = {
    "nothing": jax.checkpoint_policies.nothing_saveable,
    "dots": jax.checkpoint_policies.dots_saveable,
}


def layer(w, b, h):
    return jnp.tanh(h @ w + b) * jnp.sin(h @ w)


def mlp(ws, bs, x, policy):
    """Three layers, each checkpointed with `policy` (None: no checkpoint)."""
    h = x
    for w, b in zip(ws, bs):
        f = layer if policy is None else jax.checkpoint(layer, policy=POLICIES[policy])
        h = f(w, b, h)
    return jnp.sum(h * h)


def params(rng, dt):
    ws = [(rng.normal(size=(4, 4)) * 0.6).astype(dt) for _ in range(3)]
    bs = [(rng.normal(size=(4,)) * 0.1).astype(dt) for _ in range(3)]
    x = rng.normal(size=(3, 4)).astype(dt)
    return ws, bs, x


def ins_of(ws, bs, x):
    d = {"x": x}
    for i, (w, b) in enumerate(zip(ws, bs)):
        d[f"w{i}"], d[f"b{i}"] = w, b
    return d


def grads_case(policy):
    def case(rng, dt):
        ws, bs, x = params(rng, dt)
        loss, (gw, gb, gx) = jax.value_and_grad(mlp, argnums=(0, 1, 2))(ws, bs, x, policy)
        jg = jax.jit(jax.grad(mlp, argnums=(0, 2)), static_argnums=3)(ws, bs, x, policy)
        out = {"loss": loss, "g_x": gx, "jit_g_x": jg[1]}
        for i in range(3):
            out[f"g_w{i}"], out[f"g_b{i}"], out[f"jit_g_w{i}"] = gw[i], gb[i], jg[0][i]
        return ins_of(ws, bs, x), out
    return case


def case_vmap_jvp(rng, dt):
    ws, bs, x = params(rng, dt)
    xb = rng.normal(size=(2, 3, 4)).astype(dt)
    # Per-example gradients through checkpointed layers.
    vg = jax.vmap(jax.grad(lambda x_: mlp(ws, bs, x_, "nothing")))(xb)
    dx = rng.normal(size=(3, 4)).astype(dt)
    y, t = jax.jvp(lambda x_: mlp(ws, bs, x_, "nothing"), (x,), (dx,))
    d = ins_of(ws, bs, x)
    d.update(xb=xb, dx=dx)
    return d, {"vmap_grad": vg, "jvp_y": y, "jvp_t": t}


def nested(ws, bs, x):
    # An outer checkpoint (dots saveable) over two inner ones (nothing saveable).
    def two(w0, b0, w1, b1, h):
        inner = jax.checkpoint(layer, policy=jax.checkpoint_policies.nothing_saveable)
        return inner(w1, b1, inner(w0, b0, h))
    h = jax.checkpoint(two, policy=jax.checkpoint_policies.dots_saveable)(ws[0], bs[0], ws[1], bs[1], x)
    h = layer(ws[2], bs[2], h)
    return jnp.sum(h * h)


def case_nested(rng, dt):
    ws, bs, x = params(rng, dt)
    gw, gx = jax.grad(nested, argnums=(0, 2))(ws, bs, x)
    x0 = x[0:1, :]
    hx = jax.hessian(lambda x_: nested(ws, bs, x_))(x0)
    out = {"g_x": gx, "hess_x": hx.reshape(4, 4)}
    for i in range(3):
        out[f"g_w{i}"] = gw[i]
    d = ins_of(ws, bs, x)
    d["x0"] = x0
    return d, out


CASES = [
    ("remat_nothing", grads_case("nothing")),
    ("remat_dots", grads_case("dots")),
    ("remat_vmap_jvp", case_vmap_jvp),
    ("remat_nested", case_nested),
]


if __name__ == "__main__":
    sys.exit(gen_jax_fixtures.main(out=OUT, script="gen_remat_fixtures.py", cases=CASES, seed0=2900))
