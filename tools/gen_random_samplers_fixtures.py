#!/usr/bin/env python3
"""Generates tests/fixtures/random_samplers.txt: references for the samplers built on
uniform and normal (exponential, gumbel, laplace, ..., multivariate_normal).

Two kinds of case, one per language's contract (DESIGN.md: where jax-js and JAX differ,
jax-js wins in JS):
  - op <name>: jax.random.<name> itself (threefry partitionable, x64 off), for kiln's C++
    kiln::random (tests/random_samplers_test.cpp);
  - op js_<name>: @jax-js/jax 0.1's formula for that sampler (its dist/index.js, read by
    hand, see the comments) evaluated with jax.numpy in float32 on jax.random.uniform /
    normal of the same key, which kiln's JS uniform and normal equal; for
    js/test/random_samplers.test.ts.
Uniform bits are exact; the transcendental steps (log, log1p, tan, exp, sqrt, pow) are
XLA's float32 functions against kiln's, so values compare at 4e-6 relative (a few ulp) plus
1e-6 absolute (samples near 0 of log1p/tan), samples built on normal at 1e-5 (normal is
within 3 ulp already, random.txt). Integer samplers are exact.

Usage:  python3 tools/gen_random_samplers_fixtures.py            # (re)writes the fixture file
        python3 tools/gen_random_samplers_fixtures.py --check    # exits 1 if the file would change
Needs tools/requirements-jax.txt. Format: tools/gen_numpy_fixtures.py; params are the
call's arguments (seed, shape, and the sampler's parameters).
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from fixture_writer import Writer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "random_samplers.txt")
U_TOL = (4e-6, 1e-6)
N_TOL = (1e-5, 1e-6)
R = jax.random

# (name, params, jax call, jax-js formula or None, tolerance). Params are (key, value) pairs.
MEAN = np.array([1.0, -2.0, 0.5], np.float32)
COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)


def uni(k, s):
    return R.uniform(k, s)


def js_formulas():
    # Each transcribes @jax-js/jax's sampler over kiln's (= JAX's) uniform and normal.
    return {
        # exponential: negative(log1p(negative(uniform(key, shape))))
        "exponential": lambda k, s: -jnp.log1p(-uni(k, s)),
        # gumbel: negative(log(negative(log1p(negative(uniform)))))
        "gumbel": lambda k, s: -jnp.log(-jnp.log1p(-uni(k, s))),
        # laplace: c = u - 0.5; sign(c) * (log1p(|c| * -2) * -1)
        "laplace": lambda k, s: (lambda c: jnp.sign(c) * (jnp.log1p(jnp.abs(c) * -2) * -1))(uni(k, s) - 0.5),
        # logistic: log(u) - log1p(-u)
        "logistic": lambda k, s: (lambda u: jnp.log(u) - jnp.log1p(-u))(uni(k, s)),
        # cauchy: tan((u - 0.5) * pi)
        "cauchy": lambda k, s: jnp.tan((uni(k, s) - 0.5) * np.float32(np.pi)),
        # lognormal(sigma=0.5): exp(normal * sigma)
        "lognormal": lambda k, s: jnp.exp(R.normal(k, s) * 0.5),
        # rayleigh(scale=2): sqrt(exponential * 2) * scale
        "rayleigh": lambda k, s: jnp.sqrt(-jnp.log1p(-uni(k, s)) * 2) * 2.0,
        # maxwell: sqrt(sum(z * z, -1)), z = normal(shape + [3])
        "maxwell": lambda k, s: jnp.sqrt(jnp.sum(jnp.square(R.normal(k, s + (3,))), -1)),
        # pareto(b=3): exp(exponential / b)
        "pareto": lambda k, s: jnp.exp(-jnp.log1p(-uni(k, s)) / 3.0),
        # weibullMin(scale=2, concentration=1.5): scale * exp(log(exponential) / c)
        "weibull_min": lambda k, s: 2.0 * jnp.exp(jnp.log(-jnp.log1p(-uni(k, s))) / 1.5),
        # triangular(-1, 0.5, 2): inverse CDF with cutoff (mode-left)/(right-left)
        "triangular": lambda k, s: (lambda u: jnp.where(u < 1.5 / 3.0, -1 + jnp.sqrt(u * 3.0 * 1.5),
                                                        2 - jnp.sqrt((1 - u) * 3.0 * 1.5)))(uni(k, s)),
        # geometric(p=0.3): floor(log1p(-u) / log1p(-p)) + 1, int32
        "geometric": lambda k, s: (jnp.floor(jnp.log1p(-uni(k, s)) / jnp.log1p(np.float32(-0.3))) + 1).astype(jnp.int32),
        # rademacher: where(bernoulli(0.5) = uniform < 0.5, 1, -1), int32
        "rademacher": lambda k, s: jnp.where(uni(k, s) < 0.5, 1, -1).astype(jnp.int32),
        # doubleSidedMaxwell(loc=1, scale=2): [k1, k2] = split; rademacher(k1) * maxwell(k2) * scale + loc
        "double_sided_maxwell": lambda k, s: (lambda ks: jnp.where(uni(ks[0], s) < 0.5, 1.0, -1.0) * jnp.sqrt(
            jnp.sum(jnp.square(R.normal(ks[1], s + (3,))), -1)) * 2.0 + 1.0)(R.split(k)),
        # multivariateNormal: einsum("...ij,...j->...i", cholesky(cov), normal(shape + [n])) + mean
        "multivariate_normal": lambda k, s: jnp.einsum("ij,...j->...i", jnp.linalg.cholesky(COV),
                                                       R.normal(k, s + (3,))) + MEAN,
        # ball(d=3): [k1, k2] = split; z / |z| * exp(log(uniform(k2, shape + [1])) / d), z = normal(k1)
        "ball": lambda k, s: (lambda ks: (lambda z: z / jnp.sqrt(jnp.sum(z * z, -1, keepdims=True)) * jnp.exp(
            jnp.log(uni(ks[1], s + (1,))) * (1 / 3)))(R.normal(ks[0], s + (3,))))(R.split(k)),
    }


def main():
    w = Writer(["Generated by tools/gen_random_samplers_fixtures.py; do not edit.",
                f"jax {jax.__version__}, threefry partitionable, x64 off."])
    jax_calls = {
        "exponential": ([], lambda k, s: R.exponential(k, s), U_TOL),
        "gumbel": ([], lambda k, s: R.gumbel(k, s), U_TOL),
        "laplace": ([], lambda k, s: R.laplace(k, s), U_TOL),
        "logistic": ([], lambda k, s: R.logistic(k, s), U_TOL),
        "cauchy": ([], lambda k, s: R.cauchy(k, s), U_TOL),
        "lognormal": ([("sigma", 0.5)], lambda k, s: R.lognormal(k, 0.5, s), N_TOL),
        "rayleigh": ([("scale", 2.0)], lambda k, s: R.rayleigh(k, 2.0, s), U_TOL),
        "maxwell": ([], lambda k, s: R.maxwell(k, s), N_TOL),
        "double_sided_maxwell": ([("loc", 1.0), ("scale", 2.0)],
                                 lambda k, s: R.double_sided_maxwell(k, 1.0, 2.0, s), N_TOL),
        "pareto": ([("b", 3.0)], lambda k, s: R.pareto(k, 3.0, s), U_TOL),
        "weibull_min": ([("scale", 2.0), ("concentration", 1.5)],
                        lambda k, s: R.weibull_min(k, 2.0, 1.5, s), U_TOL),
        "triangular": ([("left", -1.0), ("mode", 0.5), ("right", 2.0)],
                       lambda k, s: R.triangular(k, -1.0, 0.5, 2.0, s), U_TOL),
        "geometric": ([("p", 0.3)], lambda k, s: R.geometric(k, 0.3, s), None),
        "rademacher": ([], lambda k, s: R.rademacher(k, s), None),
        "multivariate_normal": ([], lambda k, s: R.multivariate_normal(k, MEAN, COV, s), N_TOL),
    }
    js = js_formulas()
    for seed in [0, 42]:
        for shape in [(7,), (2, 3)]:
            sid = f"{seed}_{'x'.join(map(str, shape))}"
            k = R.PRNGKey(seed)
            for name, (params, call, tol) in jax_calls.items():
                prm = [("seed", seed), ("shape", list(shape))] + params
                inputs = [MEAN, COV] if name == "multivariate_normal" else []
                w.case(f"{name}_{sid}", name, prm, inputs, [np.asarray(call(k, shape))], tol or (0, 0))
            for name, f in js.items():
                out = np.asarray(f(k, shape))
                tol = (0, 0) if out.dtype == np.int32 else (
                    N_TOL if name in ("lognormal", "maxwell", "double_sided_maxwell", "multivariate_normal", "ball")
                    else U_TOL)
                w.case(f"js_{name}_{sid}", f"js_{name}", [("seed", seed), ("shape", list(shape))], [],
                       [out], tol)
    w.finish(OUT)


if __name__ == "__main__":
    main()
