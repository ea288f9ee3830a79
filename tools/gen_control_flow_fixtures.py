#!/usr/bin/env python3
"""Generates tests/fixtures/control_flow_jax.txt: JAX (CPU) reference values of the control
flow primitives (lax.scan, while_loop, fori_loop, cond, switch, map) under jit, grad, vmap,
jvp and their compositions, matched by tests/control_flow_jax_test.cpp (1e-5 relative in
float32, 1e-10 in float64; integer outputs exactly).

Usage:  python3 tools/gen_control_flow_fixtures.py            # (re)writes the fixture file
        python3 tools/gen_control_flow_fixtures.py --check    # exits 1 if the file would change
Needs `pip install jax` (CPU). Same format as tools/gen_jax_fixtures.py: one `case` per
function and dtype, its `input`s and `expect`ed outputs.
"""

import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
import gen_jax_fixtures  # noqa: E402  (the same format: its generate/main with these cases)

jax.config.update("jax_enable_x64", True)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "control_flow_jax.txt")


def rnn(w, u, h0, xs, reverse=False):
    def step(h, x):
        h2 = jnp.tanh(h @ w + x @ u)
        return h2, jnp.sum(h2 * h2)
    return lax.scan(step, h0, xs, reverse=reverse)


def rnn_loss(w, u, h0, xs):
    h, ys = rnn(w, u, h0, xs)
    return jnp.sum(ys) + jnp.sum(h)


def case_scan_rnn(rng, dt):
    w = (rng.normal(size=(3, 3)) * 0.5).astype(dt)
    u = (rng.normal(size=(2, 3)) * 0.5).astype(dt)
    h0 = rng.normal(size=(3,)).astype(dt)
    xs = rng.normal(size=(5, 2)).astype(dt)
    h, ys = jax.jit(rnn)(w, u, h0, xs)
    hr, ysr = jax.jit(lambda *a: rnn(*a, reverse=True))(w, u, h0, xs)
    g = jax.grad(rnn_loss, argnums=(0, 1, 2, 3))(w, u, h0, xs)
    dw = rng.normal(size=(3, 3)).astype(dt)
    _, (th, tys) = jax.jvp(lambda w_: rnn(w_, u, h0, xs), (w,), (dw,))
    return (dict(w=w, u=u, h0=h0, xs=xs, dw=dw),
            dict(h=h, ys=ys, h_rev=hr, ys_rev=ysr, g_w=g[0], g_u=g[1], g_h0=g[2], g_xs=g[3],
                 jvp_h=th, jvp_ys=tys))


def case_scan_vmap(rng, dt):
    w = (rng.normal(size=(3, 3)) * 0.5).astype(dt)
    u = (rng.normal(size=(2, 3)) * 0.5).astype(dt)
    h0 = rng.normal(size=(4, 3)).astype(dt)
    xs = rng.normal(size=(4, 5, 2)).astype(dt)
    h, ys = jax.vmap(rnn, in_axes=(None, None, 0, 0))(w, u, h0, xs)
    # Per-example gradients: vmap of grad of a scan.
    g = jax.vmap(jax.grad(rnn_loss), in_axes=(None, None, 0, 0))(w, u, h0, xs)
    return dict(w=w, u=u, h0=h0, xs=xs), dict(h=h, ys=ys, g_w=g)


def hess_f(v, w, xs):
    def step(c, x):
        return jnp.sin(c) * w + c * x, None
    c, _ = lax.scan(step, v, xs)
    return jnp.sum(c * c)


def case_scan_hessian(rng, dt):
    v = rng.normal(size=(3,)).astype(dt)
    w = rng.normal(size=(3,)).astype(dt)
    xs = (rng.normal(size=(4, 3)) * 0.5).astype(dt)
    return dict(v=v, w=w, xs=xs), dict(hessian=jax.hessian(hess_f)(v, w, xs), grad=jax.grad(hess_f)(v, w, xs))


def grow(x, limit):
    def cond(c):
        return c[0] < limit
    def body(c):
        return c[0] * 1.5 + 0.25, c[1] + 1
    return lax.while_loop(cond, body, (x, jnp.int32(0)))


def case_while_vmap(rng, dt):
    xs = rng.uniform(0.1, 3.0, size=(6,)).astype(dt)
    limit = np.asarray(10.0, dtype=dt)
    x, n = jax.jit(jax.vmap(grow, in_axes=(0, None)))(xs, limit)
    limits = rng.uniform(2.0, 20.0, size=(6,)).astype(dt)
    x2, n2 = jax.vmap(grow)(xs, limits)
    # Forward mode through a while loop: d(final x)/d(x0) per lane.
    _, (tx, _) = jax.jvp(lambda a: jax.vmap(grow, in_axes=(0, None))(a, limit), (xs,), (np.ones_like(xs),))
    return (dict(xs=xs, limit=limit, limits=limits),
            dict(x=x, n=n.astype(np.int32), x2=x2, n2=n2.astype(np.int32), jvp_x=tx))


def fori_f(w, x0):
    def body(i, x):
        return jnp.tanh(x @ w) * 0.5 + x * (i.astype(x.dtype) * 0.1)
    return lax.fori_loop(0, 4, body, x0)


def case_fori(rng, dt):
    w = rng.normal(size=(3, 3)).astype(dt)
    x0 = rng.normal(size=(3,)).astype(dt)
    y = jax.jit(fori_f)(w, x0)
    gw, gx = jax.grad(lambda w_, x_: jnp.sum(fori_f(w_, x_) ** 2), argnums=(0, 1))(w, x0)
    n = np.asarray(3, dtype=np.int32)
    # Dynamic bounds: a while loop (forward only), under jit and jvp.
    dyn = lambda w_, x_, n_: lax.fori_loop(jnp.int32(1), n_, lambda i, x: jnp.tanh(x @ w_) * 0.5 + x * (i.astype(x.dtype) * 0.1), x_)  # noqa: E731
    yd = jax.jit(dyn)(w, x0, n)
    _, td = jax.jvp(lambda x_: dyn(w, x_, n), (x0,), (np.ones_like(x0),))
    return dict(w=w, x0=x0, n=n), dict(y=y, g_w=gw, g_x0=gx, y_dyn=yd, jvp_dyn=td)


def cond_scan(a, xs):
    def step(c, x):
        c2 = lax.cond(jnp.sum(c) > 0, lambda c_, x_: c_ * x_ - a, lambda c_, x_: jnp.sin(c_) + x_ * a, c, x)
        return c2, jnp.sum(c2)
    return lax.scan(step, jnp.ones_like(a), xs)


def case_cond_scan(rng, dt):
    a = rng.normal(size=(3,)).astype(dt)
    xs = rng.normal(size=(6, 3)).astype(dt)
    c, ys = jax.jit(cond_scan)(a, xs)
    ga, gxs = jax.grad(lambda a_, x_: jnp.sum(cond_scan(a_, x_)[1] ** 2), argnums=(0, 1))(a, xs)
    return dict(a=a, xs=xs), dict(c=c, ys=ys, g_a=ga, g_xs=gxs)


BRANCHES = (lambda x, y: jnp.sin(x) * y, lambda x, y: x * x + y, lambda x, y: jnp.exp(-x) * jnp.cos(y))


def switch_f(i, x, y):
    return lax.switch(i, BRANCHES, x, y)


def case_switch(rng, dt):
    x = rng.normal(size=(3,)).astype(dt)
    y = rng.normal(size=(3,)).astype(dt)
    outs = {}
    for i in (0, 1, 2, 5, -1):  # out-of-range indices are clamped
        k = str(i).replace("-", "m")
        outs["f_" + k] = jax.jit(switch_f)(np.int32(i), x, y)
        outs["g_" + k] = jax.grad(lambda x_, i=i: jnp.sum(switch_f(np.int32(i), x_, y)))(x)
    idx = np.asarray([2, 0, 1, 1], dtype=np.int32)
    xb = rng.normal(size=(4, 3)).astype(dt)
    # A batched index: every branch runs and each lane selects its own.
    outs["vmap"] = jax.vmap(switch_f, in_axes=(0, 0, None))(idx, xb, y)
    outs["vmap_grad"] = jax.vmap(jax.grad(lambda x_, i: jnp.sum(switch_f(i, x_, y))), in_axes=(0, 0))(xb, idx)
    _, outs["jvp"] = jax.jvp(lambda x_: switch_f(np.int32(1), x_, y), (x,), (y,))
    return dict(x=x, y=y, idx=idx, xb=xb), outs


def cond_pred(x):
    return lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * 2.0, lambda v: v * v - 1.0, x)


def case_cond_vmap(rng, dt):
    xs = rng.normal(size=(5, 3)).astype(dt)
    y = jax.vmap(cond_pred)(xs)  # a batched predicate: select of both branches
    g = jax.grad(lambda a: jnp.sum(jax.vmap(cond_pred)(a)))(xs)
    return dict(xs=xs), dict(y=y, grad=g)


def map_f(w, xs):
    return lax.map(lambda x: jnp.tanh(x @ w), xs)


def case_map(rng, dt):
    w = rng.normal(size=(3, 2)).astype(dt)
    xs = rng.normal(size=(4, 3)).astype(dt)
    y = jax.jit(map_f)(w, xs)
    g = jax.grad(lambda w_: jnp.sum(map_f(w_, xs) ** 2))(w)
    return dict(w=w, xs=xs), dict(y=y, g_w=g)


CASES = [
    ("scan_rnn", case_scan_rnn),
    ("scan_vmap", case_scan_vmap),
    ("scan_hessian", case_scan_hessian),
    ("while_vmap", case_while_vmap),
    ("fori", case_fori),
    ("cond_scan", case_cond_scan),
    ("switch", case_switch),
    ("cond_vmap", case_cond_vmap),
    ("map", case_map),
]


if __name__ == "__main__":
    sys.exit(gen_jax_fixtures.main(out=OUT, script="gen_control_flow_fixtures.py", cases=CASES, seed0=2500))
