#!/usr/bin/env python3
"""Generates tests/fixtures/optax.txt: optax reference trajectories, matched step for step
by tests/optax_test.cpp (float32, 1e-6 relative).

Usage:  python3 tools/gen_optax_fixtures.py            # (re)writes the fixture file
        python3 tools/gen_optax_fixtures.py --check    # exits 1 if the file would change
Needs tools/requirements-jax.txt (jax, optax). Format: tools/gen_numpy_fixtures.py.
Optimizer cases ('opt' op) optimize params {b: (2,), w: (3, 2)} on a least-squares loss:
inputs are b0, w0, then per step the gradients (gb, gw) JAX computed at optax's current
params; expects are the params (b, w) after each step. So the C++ side feeds optax's
gradients and checks only the optimizer. params: `name` picks the optimizer in the test's
table, the others are its arguments. Schedule cases ('schedule' op) expect the schedule's
float32 values at counts 0..N-1.
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

from fixture_writer import Writer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "optax.txt")
# Cases only the JS package (kiln/optax, js/test/optax.test.ts) has options for.
OUT_JS = os.path.join(HERE, "..", "tests", "fixtures", "optax_js.txt")
f32 = np.float32
STEPS = 6

SCHEDULES = {
    "constant": (lambda: optax.constant_schedule(0.3), [("value", 0.3)]),
    "linear": (lambda: optax.linear_schedule(0.1, 0.01, 5, 2), [("init", 0.1), ("end", 0.01), ("steps", 5), ("begin", 2)]),
    "polynomial": (lambda: optax.polynomial_schedule(1.0, 0.1, 2.0, 6, 1),
                   [("init", 1.0), ("end", 0.1), ("power", 2.0), ("steps", 6), ("begin", 1)]),
    "cosine": (lambda: optax.cosine_decay_schedule(0.5, 8, 0.1), [("init", 0.5), ("steps", 8), ("alpha", 0.1), ("exponent", 1.0)]),
    "cosine_exp": (lambda: optax.cosine_decay_schedule(0.5, 8, 0.0, 2.0), [("init", 0.5), ("steps", 8), ("alpha", 0.0), ("exponent", 2.0)]),
    "exponential": (lambda: optax.exponential_decay(1.0, 3, 0.5, 1), [("init", 1.0), ("steps", 3), ("rate", 0.5), ("begin", 1), ("staircase", 0), ("end", "none")]),
    "exponential_stair": (lambda: optax.exponential_decay(1.0, 3, 0.5, 0, True, 0.2),
                          [("init", 1.0), ("steps", 3), ("rate", 0.5), ("begin", 0), ("staircase", 1), ("end", 0.2)]),
    "warmup_cosine": (lambda: optax.warmup_cosine_decay_schedule(0.0, 0.1, 3, 10, 0.01),
                      [("init", 0.0), ("peak", 0.1), ("warmup", 3), ("steps", 10), ("end", 0.01)]),
    "piecewise": (lambda: optax.piecewise_constant_schedule(0.1, {3: 0.5, 7: 0.1}), [("init", 0.1), ("b1", 3), ("s1", 0.5), ("b2", 7), ("s2", 0.1)]),
}

OPTS = {
    "sgd": (lambda: optax.sgd(0.1), [("lr", 0.1)]),
    "sgd_momentum": (lambda: optax.sgd(0.1, momentum=0.9), [("lr", 0.1), ("momentum", 0.9)]),
    "sgd_nesterov": (lambda: optax.sgd(0.05, momentum=0.8, nesterov=True), [("lr", 0.05), ("momentum", 0.8), ("nesterov", 1)]),
    "sgd_schedule": (lambda: optax.sgd(optax.linear_schedule(0.1, 0.01, 5, 2)), [("schedule", "linear")]),
    "adam": (lambda: optax.adam(0.01), [("lr", 0.01)]),
    "adam_eps_root": (lambda: optax.adam(0.02, b1=0.8, b2=0.99, eps=1e-6, eps_root=1e-8),
                      [("lr", 0.02), ("b1", 0.8), ("b2", 0.99), ("eps", 1e-6), ("eps_root", 1e-8)]),
    "adam_schedule": (lambda: optax.adam(optax.warmup_cosine_decay_schedule(0.0, 0.1, 3, 10, 0.01)), [("schedule", "warmup_cosine")]),
    "adamw": (lambda: optax.adamw(0.01, weight_decay=0.1), [("lr", 0.01), ("weight_decay", 0.1)]),
    "rmsprop": (lambda: optax.rmsprop(0.01), [("lr", 0.01)]),
    "rmsprop_centered_momentum": (lambda: optax.rmsprop(0.01, decay=0.8, centered=True, momentum=0.9),
                                  [("lr", 0.01), ("decay", 0.8), ("centered", 1), ("momentum", 0.9)]),
    "clip_adam": (lambda: optax.chain(optax.clip_by_global_norm(0.5), optax.adam(0.05)), [("max_norm", 0.5), ("lr", 0.05)]),
    "clip_sgd": (lambda: optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1)), [("max_norm", 1.0), ("lr", 0.1)]),
}

OPTS_JS = {
    "adam_nesterov": (lambda: optax.adam(0.02, nesterov=True), [("lr", 0.02), ("nesterov", 1)]),
    "adamw_mask": (lambda: optax.adamw(0.01, weight_decay=0.1, mask={"b": False, "w": True}),
                   [("lr", 0.01), ("weight_decay", 0.1), ("mask_b", 0), ("mask_w", 1)]),
    "rmsprop_eps_outside": (lambda: optax.rmsprop(0.01, eps=1e-3, initial_scale=0.1, eps_in_sqrt=False),
                            [("lr", 0.01), ("eps", 1e-3), ("initial_scale", 0.1), ("eps_in_sqrt", 0)]),
    "adam_cosine": (lambda: optax.adam(optax.cosine_decay_schedule(0.05, 4)), [("init", 0.05), ("steps", 4)]),
    "sgd_exponential": (lambda: optax.sgd(optax.exponential_decay(0.1, 2, 0.5), momentum=0.5),
                        [("init", 0.1), ("steps", 2), ("rate", 0.5), ("momentum", 0.5)]),
}


def main():
    w = Writer(["Generated by tools/gen_optax_fixtures.py; do not edit.",
                f"jax {jax.__version__}, optax {optax.__version__}."])
    rng = np.random.default_rng(11)
    x = rng.normal(size=(8, 3)).astype(f32)
    y = rng.normal(size=(8, 2)).astype(f32) * 2

    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2) * 5.0  # large enough that clipping triggers

    write_opt_cases(w, OPTS, rng, loss)
    for name, (make, params) in SCHEDULES.items():
        s = make()
        vals = np.array([np.asarray(s(jnp.int32(i)), f32) for i in range(12)], f32)
        w.case(f"schedule_{name}", "schedule", [("name", name)] + params, expects=[vals], tol=(1e-6, 1e-8))
    w.finish(OUT)
    wj = Writer(["Generated by tools/gen_optax_fixtures.py; do not edit.",
                 f"jax {jax.__version__}, optax {optax.__version__}."])
    write_opt_cases(wj, OPTS_JS, np.random.default_rng(12), loss)
    wj.finish(OUT_JS)


def write_opt_cases(w, opts, rng, loss):
    for name, (make, params) in opts.items():
        opt = make()
        p = {"b": (rng.normal(size=(2,)) * 0.1).astype(f32), "w": rng.normal(size=(3, 2)).astype(f32)}
        p = jax.tree.map(jnp.asarray, p)
        state = opt.init(p)
        ins, exps = [np.asarray(p["b"]), np.asarray(p["w"])], []
        for _ in range(STEPS):
            g = jax.grad(loss)(p)
            u, state = opt.update(g, state, p)
            p = optax.apply_updates(p, u)
            ins += [np.asarray(g["b"]), np.asarray(g["w"])]
            exps += [np.asarray(p["b"]), np.asarray(p["w"])]
        w.case(name, "opt", [("name", name)] + params, inputs=ins, expects=exps, tol=(1e-6, 1e-7))


if __name__ == "__main__":
    main()
