"""Elementwise fixtures: unary and binary ops, operators, where and clip, over dtypes,
broadcasting edge cases, weak scalars, views and special values, with JAX's promotion."""

import math

import numpy as np

from .core import (FLOATS, INTS, NP, SHORT, Family, Input, booleans, default_sampler,
                   integers, is_float, make_input, promote, tag_shape, to_inexact,
                   tol_arith, tol_exact, tol_transcendental, uniform, weak)

_erf = np.vectorize(math.erf, otypes=[np.float64])

# name: (numpy function in float64, sampler (lo, hi), pad value, atol scale, correctly rounded)
UNARY_INEXACT = {
    "exp": (np.exp, (-5, 5), 1.0, 1, False),
    "exp2": (np.exp2, (-5, 5), 1.0, 1, False),
    "expm1": (np.expm1, (-3, 3), 1.0, 1, False),
    "log": (np.log, (0.01, 10), 2.0, 1, False),
    "log1p": (np.log1p, (-0.9, 10), 1.0, 1, False),
    "log2": (np.log2, (0.01, 10), 2.0, 1, False),
    "log10": (np.log10, (0.01, 10), 2.0, 1, False),
    "sqrt": (np.sqrt, (0, 10), 2.0, 1, True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 10), 2.0, 1, False),
    "reciprocal": (lambda x: 1 / x, (0.1, 4), 2.0, 1, True),
    "sin": (np.sin, (-6, 6), 1.0, 10, False),
    "cos": (np.cos, (-6, 6), 1.0, 10, False),
    "tan": (np.tan, (-1.4, 1.4), 1.0, 10, False),
    "arcsin": (np.arcsin, (-0.99, 0.99), 0.5, 1, False),
    "arccos": (np.arccos, (-0.99, 0.99), 0.5, 1, False),
    "arctan": (np.arctan, (-10, 10), 1.0, 1, False),
    "sinh": (np.sinh, (-4, 4), 1.0, 1, False),
    "cosh": (np.cosh, (-4, 4), 1.0, 1, False),
    "tanh": (np.tanh, (-5, 5), 1.0, 1, False),
    "arcsinh": (np.arcsinh, (-10, 10), 1.0, 1, False),
    "arccosh": (np.arccosh, (1, 10), 2.0, 1, False),
    "arctanh": (np.arctanh, (-0.99, 0.99), 0.5, 1, False),
    "erf": (_erf, (-3, 3), 1.0, 1, False),
}


def _sampler_for(dtype, lo, hi):
    if dtype in FLOATS:
        return uniform(lo, hi, 2 if dtype == "float16" else 3)
    if dtype == "bool":
        return booleans
    lo_i, hi_i = int(math.ceil(lo)), int(math.floor(hi))
    if dtype == "uint32":
        lo_i = max(lo_i, 0)
    return integers(lo_i, hi_i)


def _cast(v, dtype):
    return np.asarray(v).astype(NP[dtype])


def unary_case(fam, op, fn, inp, out_dtype, tol, hi=True, weak_out=None, cid=None):
    x = inp.value()
    with np.errstate(all="ignore"):
        if is_float(out_dtype) and hi:
            r = fn(_cast(x, out_dtype).astype(np.float64))
        else:
            r = fn(_cast(x, out_dtype) if out_dtype != "bool" else _cast(x, inp.dtype))
    view = "_".join(v[0][:2] for v in inp.views)
    c = fam.case(cid or f"{op}_{SHORT[inp.dtype]}_{tag_shape(x.shape)}{'_' + view if view else ''}", op)
    c.inputs = [inp]
    # JAX's weak type after a unary op on a weak scalar varies by op (log2 and rsqrt drop
    # it): unchecked unless the case says
    c.expect(_cast(r, out_dtype), out_dtype, weak=(None if inp.weak else False) if weak_out is None else weak_out)
    c.tol = tol
    return c


def gen_unary(fam):
    rng = fam.rng
    shapes = [(), (7,), (2, 3, 4)]
    views = ["T", "step", "flip", "pad", "stepT"]
    for op, (fn, (lo, hi), pv, ascale, exact) in UNARY_INEXACT.items():
        for dt in ("float32", "float64", "float16"):
            for shp in (shapes if dt == "float32" else [(9,)]):
                inp = make_input(rng, dt, shp, _sampler_for(dt, lo, hi))
                tol = tol_arith(dt) if exact else tol_transcendental(dt, ascale)
                unary_case(fam, op, fn, inp, dt, tol)
        for v in views:
            inp = make_input(rng, "float32", (3, 4) if v != "stepT" else (2, 3, 4),
                             _sampler_for("float32", lo, hi), view=v, pad_value=pv)
            unary_case(fam, op, fn, inp, "float32",
                       tol_arith("float32") if exact else tol_transcendental("float32", ascale))
        # ints and bools promote to float32 (promote_args_inexact)
        for dt in ("int32", "uint32", "bool"):
            if dt == "bool" and op in ("log", "log2", "log10", "rsqrt", "reciprocal", "arccosh", "arctanh"):
                continue
            if dt != "bool" and int(math.floor(hi)) - max(int(math.ceil(lo)), 0 if dt == "uint32" else -99) < 1:
                continue
            s = _sampler_for(dt, lo, hi)
            if op in ("log", "log2", "log10", "rsqrt", "reciprocal"):
                s = integers(1, 9)
            inp = make_input(rng, dt, (6,), s)
            unary_case(fam, op, fn, inp, "float32",
                       tol_arith("float32") if exact else tol_transcendental("float32", ascale))
        # a weak scalar stays weak
        lo_w = 1.5 if op in ("arccosh",) else 0.25
        unary_case(fam, op, fn, weak(lo_w), "float32",
                   tol_arith("float32") if exact else tol_transcendental("float32", ascale),
                   cid=f"{op}_weak_scalar")
    # accuracy near zero: expm1 and log1p exist for this
    for op, fn in (("expm1", np.expm1), ("log1p", np.log1p)):
        for dt in ("float32", "float64"):
            inp = make_input(rng, dt, (10,), lambda r, s: r.uniform(-1e-4, 1e-4, s))
            unary_case(fam, op, fn, inp, dt, (1e-5 if dt == "float32" else 1e-12, 0.0),
                       cid=f"{op}_{SHORT[dt]}_near_zero")


def gen_unary_exact(fam):
    rng = fam.rng

    def run(op, fn, dtypes, shapes=((), (8,), (2, 3, 4)), sampler=None, out=None, views=True):
        for dt in dtypes:
            smp = sampler(dt) if sampler else default_sampler(dt)
            for shp in (shapes if dt in ("float32", "int32") else [(8,)]):
                unary_case(fam, op, fn, make_input(rng, dt, shp, smp), out(dt) if out else dt,
                           tol_exact(), hi=False)
        if views:
            dt = dtypes[0]
            for v in ("T", "step", "flip", "pad", "bcastT"):
                smp = sampler(dt) if sampler else default_sampler(dt)
                unary_case(fam, op, fn, make_input(rng, dt, (3, 4), smp, view=v),
                           out(dt) if out else dt, tol_exact(), hi=False)

    def with_zeros(dt):
        base = default_sampler(dt)

        def f(r, s):
            a = np.asarray(base(r, s))
            return np.where(r.random(s) < 0.25, 0, a)
        return f

    def halves(dt):
        def f(r, s):
            a = r.integers(-12, 12, s) / 2.0
            return np.where(r.random(s) < 0.5, a, np.round(r.uniform(-5, 5, s), 3))
        return f if dt in FLOATS else default_sampler(dt)

    def specials(dt):
        def f(r, s):
            a = np.round(r.uniform(-5, 5, s), 3)
            sp = np.array([np.nan, np.inf, -np.inf, 0.0])[r.integers(0, 4, s)]
            return np.where(r.random(s) < 0.4, sp, a)
        return f

    run("negative", np.negative, ["float32", "int32", "float64", "float16"])
    run("positive", np.positive, ["float32", "int32", "uint32", "float64", "float16"])
    for op in ("abs", "absolute"):
        run(op, np.abs, ["float32", "int32", "uint32", "float64", "float16"], sampler=with_zeros)
    run("sign", np.sign, ["float32", "int32", "uint32", "float64", "float16"], sampler=with_zeros)
    run("square", np.square, ["float32", "int32", "uint32", "float64", "float16"])
    for op, fn in (("floor", np.floor), ("ceil", np.ceil), ("round", np.round), ("trunc", np.trunc)):
        run(op, fn, ["float32", "float64", "float16", "int32", "uint32"], sampler=halves)
    for op, fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        run(op, fn, ["float32", "float64", "float16"], sampler=specials, out=lambda d: "bool")
    run("logical_not", lambda x: np.logical_not(x), ["bool", "int32", "float32"],
        sampler=with_zeros, out=lambda d: "bool")
    for op in ("bitwise_not", "invert"):
        run(op, np.invert, ["int32", "uint32", "bool"])
    # operators
    unary_case(fam, "operator-", np.negative, make_input(rng, "float32", (2, 3), default_sampler("float32")),
               "float32", tol_exact(), hi=False, cid="operator_neg_f32")
    unary_case(fam, "operator-", np.negative, make_input(rng, "int32", (5,), default_sampler("int32"), view="flip"),
               "int32", tol_exact(), hi=False, cid="operator_neg_i32_flip")
    unary_case(fam, "operator~", np.invert, make_input(rng, "int32", (2, 3), default_sampler("int32")),
               "int32", tol_exact(), hi=False, cid="operator_invert_i32")
    unary_case(fam, "operator~", np.invert, make_input(rng, "bool", (4,), booleans),
               "bool", tol_exact(), hi=False, cid="operator_invert_bool")
    unary_case(fam, "operator!", np.logical_not, make_input(rng, "bool", (2, 3), booleans),
               "bool", tol_exact(), hi=False, cid="operator_not_bool")
    unary_case(fam, "operator!", lambda x: x == 0, make_input(rng, "float32", (5,), with_zeros("float32")),
               "bool", tol_exact(), hi=False, cid="operator_not_f32")
    # weak scalars keep their weak type through unary ops
    unary_case(fam, "negative", np.negative, weak(3), "int32", tol_exact(), hi=False, weak_out=True,
               cid="negative_weak_int")
    unary_case(fam, "abs", np.abs, weak(-2.5), "float32", tol_exact(), hi=False, weak_out=True,
               cid="abs_weak_float")
    # round: half to even, explicitly
    halves_exact = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5, -3.5, 0.49, -0.51, 1e7 + 0.5])
    for dt in ("float32", "float64", "float16"):
        vals = halves_exact if dt != "float16" else halves_exact[:-1]
        unary_case(fam, "round", np.round, Input(dt, vals), dt, tol_exact(), hi=False,
                   cid=f"round_half_even_{SHORT[dt]}")


# ---------------------------------------------------------------------------------------
BSHAPES = [((), ()), ((), (3,)), ((4,), ()), ((1,), (4,)), ((3, 1), (1, 4)), ((2, 1, 3), (4, 3)),
           ((0, 3), (1, 3)), ((0, 3), ()), ((2, 0), (2, 1)), ((2, 3), (2, 3)), ((5, 1, 1), (1, 1, 6)),
           ((1, 1), (1,)), ((4, 1), (3,))]
MIXED = [("int32", "float32"), ("int32", "uint32"), ("float16", "float32"), ("bool", "int32"),
         ("uint32", "float16"), ("int32", "float64"), ("bool", "float32"), ("float32", "float64")]


def binary_case(fam, op, fn, a, b, out="same", tol=None, hi=False, cid=None):
    """out: 'same' (the promoted dtype), 'inexact' (promote_args_inexact) or 'bool'."""
    rt = promote((a.dtype, a.weak), (b.dtype, b.weak))
    ct = to_inexact(rt) if out == "inexact" else rt
    A, B = _cast(a.value(), ct[0]), _cast(b.value(), ct[0])
    with np.errstate(all="ignore"):
        if hi and is_float(ct[0]):
            r = fn(A.astype(np.float64), B.astype(np.float64))
        else:
            r = fn(A, B)
    # JAX marks a bool result weak when the promoted operands were weak; kiln need not
    od, ow = ("bool", None if ct[1] else False) if out == "bool" else ct
    if cid is None:
        def tag(i):
            t = "w" + SHORT[i.dtype][0] if i.weak else SHORT[i.dtype]
            sh = "" if i.weak else "_" + tag_shape(i.value().shape)
            vw = "".join("_" + v[0][:2] for v in i.views)
            return t + sh + vw
        cid = f"{op}_{tag(a)}__{tag(b)}"
    c = fam.case(cid, op)
    c.inputs = [a, b]
    c.expect(_cast(r, od), od, weak=ow)
    if tol is None:
        tol = tol_arith(od)
    c.tol = tol(od) if callable(tol) else tol
    return c


def _bin_sampler(kind):
    """kind -> f(dtype) -> sampler, keeping operands in the op's domain."""
    def f(dt, role):
        if kind == "divisor" and role == "b":
            if dt in FLOATS:
                return lambda r, s: np.round(r.uniform(0.25, 4, s), 2) * np.where(r.random(s) < 0.5, -1, 1)
            if dt == "uint32":
                return integers(1, 9)
            if dt == "bool":
                return lambda r, s: np.ones(s, bool)
            if dt == "int32":
                return lambda r, s: r.integers(1, 9, s) * np.where(r.random(s) < 0.5, -1, 1)
        if kind == "pow":
            if role == "a":
                return uniform(0.1, 3, 2) if dt in FLOATS else integers(1, 5) if dt != "bool" else booleans
            return uniform(-2, 3, 2) if dt in FLOATS else integers(0, 4) if dt != "bool" else booleans
        if kind == "shift" and role == "b":
            return integers(0, 20) if dt == "int32" else integers(0, 31)
        if kind == "shift" and role == "a":
            return integers(-1000, 1000) if dt == "int32" else integers(0, 4000000000)
        if kind == "bits" and dt == "uint32":
            return integers(0, 4000000000)
        if kind == "bits" and dt == "int32":
            return integers(-100000, 100000)
        if kind == "cmp" and dt in FLOATS:
            return lambda r, s: r.integers(-3, 4, s) / 2.0  # ties are frequent
        if kind == "cmp" and dt in INTS:
            return integers(0, 4)
        return default_sampler(dt)
    return f


def _weak_value(kind, dtype_kind, rng):
    if kind == "divisor":
        return 3 if dtype_kind == "int" else -2.5
    if kind == "pow":
        return 2 if dtype_kind == "int" else 0.5
    if kind == "shift":
        return 3
    if kind == "bits":
        return 6
    return 3 if dtype_kind == "int" else 1.5


def gen_binary_op(fam, op, fn, kind="arith", out="same", tol=None, hi=False, dtypes=None,
                  mixed=True, light=False):
    rng = fam.rng
    smp = _bin_sampler(kind)
    dtypes = dtypes or ["float32", "int32", "uint32", "float64", "float16"]
    main = dtypes[0]
    mk = lambda dt, shp, role, view=None: make_input(rng, dt, shp, smp(dt, role), view=view,
                                                     pad_value=2 if kind in ("divisor", "pow") else 1)
    for sa, sb in (BSHAPES if not light else BSHAPES[3:6]):
        binary_case(fam, op, fn, mk(main, sa, "a"), mk(main, sb, "b"), out, tol, hi)
    for dt in dtypes[1:]:
        for sa, sb in (((2, 3), (2, 3)), ((3, 1), (1, 4))) if not light else (((2, 3), (2, 3)),):
            binary_case(fam, op, fn, mk(dt, sa, "a"), mk(dt, sb, "b"), out, tol, hi)
    if mixed:
        def mkm(dt, shp, role):
            if kind in ("bits", "shift") and role == "a":
                return make_input(rng, dt, shp, integers(0, 1000) if dt != "bool" else booleans)
            if kind == "shift" and role == "b":
                return make_input(rng, dt, shp, integers(0, 20))
            return mk(dt, shp, role)
        for da, db in MIXED:
            if kind in ("bits", "shift") and (da in FLOATS or db in FLOATS):
                continue
            if kind == "shift" and "bool" in (da, db):
                continue
            for x, y in ((da, db), (db, da)) if not light else ((da, db),):
                binary_case(fam, op, fn, mkm(x, (2, 3), "a"), mkm(y, (3,), "b"), out, tol, hi)
    # weak scalars on either side, against arrays of each kind
    for dt in dtypes:
        for wk in ("int", "float"):
            if kind in ("bits", "shift") and wk == "float":
                continue
            w = weak(_weak_value(kind, wk, rng))
            binary_case(fam, op, fn, mk(dt, (2, 3), "a"), w, out, tol, hi)
            if not light and kind not in ("divisor", "pow", "shift"):
                binary_case(fam, op, fn, weak(_weak_value(kind, wk, rng)), mk(dt, (4,), "b"), out, tol, hi)
    if not light:
        wa = weak(2 if kind in ("shift", "bits", "pow") else 5)
        wb = weak(3 if kind != "divisor" else 2)
        binary_case(fam, op, fn, wa, wb, out, tol, hi)
    # views on one operand or the other
    for k, v in enumerate(["T", "step", "flip", "pad", "bcast", "stepT", "padflip", "bcastT", "Tstep"]
                          if not light else ["T", "step"]):
        shp = (2, 3, 4) if v in ("stepT", "Tstep", "bcastT") else (3, 4)
        if k % 2 == 0:
            binary_case(fam, op, fn, mk(main, shp, "a", v), mk(main, shp, "b"), out, tol, hi)
        else:
            binary_case(fam, op, fn, mk(main, shp, "a"), mk(main, shp, "b", v), out, tol, hi)
    if not light:
        binary_case(fam, op, fn, mk(main, (3, 4), "a", "T"), mk(main, (3, 4), "b", "flip"), out, tol, hi)
        binary_case(fam, op, fn, mk(main, (4, 3), "a", "step"), mk(main, (4, 3), "b", "pad"), out, tol, hi)


def _mod_tol(dt):
    return {"float16": (1e-3, 4e-3), "float32": (1e-6, 1e-6), "float64": (1e-12, 1e-14)}.get(dt, (0.0, 0.0))


def _int_fdiv(a, b):
    return np.where(b == 0, 0, np.floor_divide(a, np.where(b == 0, 1, b)))


def _int_mod(a, b):
    return np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b)))


def _fdiv(a, b):
    return _int_fdiv(a, b) if a.dtype.kind in "iu" else np.floor_divide(a, b)


def _mod(a, b):
    return _int_mod(a, b) if a.dtype.kind in "iu" else np.mod(a, b)


def _add(a, b):
    return np.logical_or(a, b) if a.dtype == np.bool_ else a + b


def _mul(a, b):
    return np.logical_and(a, b) if a.dtype == np.bool_ else a * b


def gen_binary(fam):
    f32t = lambda dt: tol_transcendental(dt)
    arith_dt = ["float32", "int32", "uint32", "float64", "float16", "bool"]
    gen_binary_op(fam, "add", _add, dtypes=arith_dt)
    gen_binary_op(fam, "subtract", np.subtract)
    gen_binary_op(fam, "multiply", _mul, dtypes=arith_dt)
    for op in ("divide", "true_divide"):
        gen_binary_op(fam, op, np.divide, kind="divisor", out="inexact", hi=True,
                      dtypes=["float32", "int32", "uint32", "float64", "float16"], light=op == "true_divide")
    gen_binary_op(fam, "floor_divide", _fdiv, kind="divisor", tol=_mod_tol)
    for op in ("mod", "remainder"):
        gen_binary_op(fam, op, _mod, kind="divisor", tol=_mod_tol, light=op == "remainder")
    gen_binary_op(fam, "power", np.power, kind="pow", hi=True,
                  tol=lambda dt: tol_transcendental(dt) if dt != "float32" else (4e-6, 1e-7),
                  dtypes=["float32", "int32", "uint32", "float64", "float16"])
    for op, fn in (("maximum", np.maximum), ("minimum", np.minimum)):
        gen_binary_op(fam, op, fn, dtypes=["float32", "int32", "uint32", "float64", "float16", "bool"])
    gen_binary_op(fam, "arctan2", np.arctan2, out="inexact", hi=True, tol=f32t,
                  dtypes=["float32", "float64", "float16", "int32"])
    for op, fn in (("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater),
                   ("greater_equal", np.greater_equal)):
        gen_binary_op(fam, op, fn, kind="cmp", out="bool",
                      dtypes=["float32", "int32", "uint32", "bool", "float64", "float16"],
                      light=op not in ("equal", "less"))
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)):
        gen_binary_op(fam, op, lambda a, b, fn=fn: fn(a != 0, b != 0), kind="cmp", out="bool",
                      dtypes=["bool", "int32", "float32"], light=op != "logical_and")
    for op, fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
        gen_binary_op(fam, op, fn, kind="bits", dtypes=["int32", "uint32", "bool"],
                      light=op != "bitwise_and")
    for op, fn in (("left_shift", np.left_shift), ("right_shift", np.right_shift)):
        gen_binary_op(fam, op, fn, kind="shift", dtypes=["int32", "uint32"])
    _binary_specials(fam)
    _operators(fam)


def gen_binary_composite(fam):
    """Binary ops that kiln lowers as one primitive built from other scalar ops (logaddexp)."""
    gen_binary_op(fam, "logaddexp", np.logaddexp, out="inexact", hi=True, tol=tol_transcendental,
                  dtypes=["float32", "float64", "float16", "int32"])
    F = lambda dt, v: Input(dt, np.array(v))
    for dt in ("float32", "float64"):
        # equal infinities, an infinity against finite values, NaN, and far-apart operands
        a = [np.inf, -np.inf, -np.inf, np.nan, 1.0, np.inf, 100.0, -100.0, 0.0]
        b = [np.inf, -np.inf, 2.0, 1.0, -np.inf, -np.inf, -100.0, 100.0, -0.0]
        binary_case(fam, "logaddexp", np.logaddexp, F(dt, a), F(dt, b), "inexact", tol_transcendental,
                    cid=f"logaddexp_inf_nan_{SHORT[dt]}")


def _binary_specials(fam):
    F = lambda dt, v: Input(dt, np.array(v))
    # float division by zero, nan propagation
    for dt in ("float32", "float64"):
        binary_case(fam, "divide", np.divide, F(dt, [1.0, -1.0, 0.0, 2.5]), F(dt, [0.0, 0.0, 0.0, -0.0]),
                    "inexact", tol_arith, cid=f"divide_by_zero_{SHORT[dt]}")
        nan = [np.nan, 1.0, np.nan, -np.inf, 2.0]
        other = [1.0, np.nan, np.nan, 3.0, np.inf]
        for op, fn in (("maximum", np.maximum), ("minimum", np.minimum), ("add", np.add)):
            binary_case(fam, op, fn, F(dt, nan), F(dt, other), cid=f"{op}_nan_inf_{SHORT[dt]}")
        for op, fn in (("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                       ("greater_equal", np.greater_equal)):
            binary_case(fam, op, fn, F(dt, nan), F(dt, other), "bool", cid=f"{op}_nan_{SHORT[dt]}")
        binary_case(fam, "logical_and", lambda a, b: np.logical_and(a != 0, b != 0),
                    F(dt, [np.nan, 0.0, -0.0, 1.0]), F(dt, [1.0, 1.0, 1.0, np.nan]), "bool",
                    cid=f"logical_and_nan_zero_{SHORT[dt]}")
    # integer floor_divide / mod: floor semantics, division by zero gives 0
    a = [7, -7, 7, -7, 0, 5, -5, 3, 2147483647, -2147483647]
    b = [2, 2, -2, -2, 3, 0, 0, 1, 10, 0]
    for op, fn in (("floor_divide", _fdiv), ("mod", _mod), ("remainder", _mod)):
        binary_case(fam, op, fn, F("int32", a), F("int32", b), cid=f"{op}_i32_signs_and_zero")
        binary_case(fam, op, fn, F("uint32", [7, 0, 4000000000, 9]), F("uint32", [2, 0, 7, 0]),
                    cid=f"{op}_u32_zero")
        binary_case(fam, op, fn, F("int32", a), weak(0), cid=f"{op}_i32_by_weak_zero")
    for dt in ("float32", "float64", "float16"):
        fa = [7.5, -7.5, 7.5, -7.5, 0.0, 1.0, -1.0, 5.0, 0.25]
        fb = [2.0, 2.0, -2.0, -2.0, 3.0, 0.125, 0.125, 2.5, -4.0]
        binary_case(fam, "mod", _mod, F(dt, fa), F(dt, fb), tol=_mod_tol, cid=f"mod_signs_{SHORT[dt]}")
        binary_case(fam, "floor_divide", _fdiv, F(dt, fa), F(dt, fb), tol=_mod_tol,
                    cid=f"floor_divide_signs_{SHORT[dt]}")
    # power: negative bases with integral exponents, 0**0, integer powers
    for dt in ("float32", "float64"):
        binary_case(fam, "power", np.power, F(dt, [-2.0, -3.0, -1.5, 0.0, 0.0, 2.0, -2.0]),
                    F(dt, [3.0, 2.0, 4.0, 0.0, 2.0, -1.0, -2.0]), hi=True,
                    tol=lambda d: (4e-6, 0.0) if d == "float32" else (1e-12, 0.0),
                    cid=f"power_negative_base_{SHORT[dt]}")
    binary_case(fam, "power", np.power, F("int32", [-3, -2, 0, 0, 5, 2, 7]), F("int32", [3, 2, 0, 5, 0, 10, 1]),
                cid="power_i32_nonneg_exponents")
    binary_case(fam, "power", np.power, F("int32", [-3, -2, 0, 4, 5]), weak(3), cid="power_i32_weak_int")
    binary_case(fam, "power", np.power, F("float32", [-3.0, -2.0, 0.5, 4.0, 1.5]), weak(2), hi=True,
                tol=(4e-6, 0.0), cid="power_f32_weak_int_square")
    # shifts: arithmetic for signed, logical for unsigned
    binary_case(fam, "right_shift", np.right_shift, F("int32", [-8, -1, -100, 100, -2147483648]),
                F("int32", [1, 5, 3, 2, 31]), cid="right_shift_i32_negative")
    binary_case(fam, "right_shift", np.right_shift, F("uint32", [4294967295, 2147483648, 8]),
                F("uint32", [1, 31, 3]), cid="right_shift_u32_high_bit")
    binary_case(fam, "left_shift", np.left_shift, F("uint32", [4294967295, 1, 3]),
                F("uint32", [4, 31, 30]), cid="left_shift_u32_wrap")
    # uint32 values above 2**31 stay unsigned in comparisons and arithmetic
    big = F("uint32", [4000000000, 3000000000, 5, 2147483648])
    binary_case(fam, "less", np.less, big, F("uint32", [5, 3000000001, 4000000000, 2147483647]), "bool",
                cid="less_u32_high_bit")
    binary_case(fam, "maximum", np.maximum, big, F("uint32", [5, 3000000001, 4000000000, 2147483647]),
                cid="maximum_u32_high_bit")
    binary_case(fam, "add", np.add, big, F("uint32", [1000, 2000000000, 7, 2147483648]), cid="add_u32_wrap")
    binary_case(fam, "divide", np.divide, big, F("uint32", [2, 3, 5, 1]), "inexact", hi=True,
                cid="divide_u32_high_bit")
    # weak float that is not exact in float32, against float64 (JAX keeps the double)
    binary_case(fam, "add", np.add, F("float64", [1.0, 2.0, -3.0]), weak(0.1), hi=True,
                tol=(1e-15, 0.0), cid="add_f64_weak_0p1")
    binary_case(fam, "multiply", np.multiply, F("float16", [1.0, 2.0, -3.0, 0.5]), weak(0.25),
                cid="multiply_f16_weak_float")


def _operators(fam):
    rng = fam.rng
    mk = lambda dt, shp, smp=None: make_input(rng, dt, shp, smp or default_sampler(dt))
    pos = lambda dt: _bin_sampler("divisor")(dt, "b")
    table = [("operator+", _add, "same"), ("operator-", np.subtract, "same"),
             ("operator*", _mul, "same"), ("operator/", np.divide, "inexact"),
             ("operator%", _mod, "same"), ("operator<", np.less, "bool"),
             ("operator<=", np.less_equal, "bool"), ("operator>", np.greater, "bool"),
             ("operator>=", np.greater_equal, "bool"), ("operator==", np.equal, "bool"),
             ("operator!=", np.not_equal, "bool"), ("operator&", np.bitwise_and, "same"),
             ("operator|", np.bitwise_or, "same"), ("operator^", np.bitwise_xor, "same")]
    names = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "<": "lt", "<=": "le",
             ">": "gt", ">=": "ge", "==": "eq", "!=": "ne", "&": "and", "|": "or", "^": "xor"}
    for op, fn, out in table:
        nm = "operator_" + names[op[8:]]
        bits = op[8:] in "&|^"
        dts = ["int32", "bool"] if bits else ["float32", "int32"]
        for dt in dts:
            b = mk(dt, (3,), pos(dt) if op in ("operator/", "operator%") else None)
            binary_case(fam, op, fn, mk(dt, (2, 3)), b, out, hi=op == "operator/",
                        cid=f"{nm}_{SHORT[dt]}")
        binary_case(fam, op, fn, mk(dts[0], (2, 3)), weak(2), out, hi=op == "operator/",
                    cid=f"{nm}_{SHORT[dts[0]]}_weak_int")
        if not bits:
            binary_case(fam, op, fn, mk("int32", (4,)), weak(1.5), out, hi=op == "operator/",
                        tol=tol_arith, cid=f"{nm}_i32_weak_float")


def gen_where_clip(fam):
    rng = fam.rng
    shapes = [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((), (2, 3), ()), ((2, 3), (), (3,)),
              ((4,), (2, 1), (1, 4)), ((0, 2), (0, 2), (1,))]
    for sc, sx, sy in shapes:
        for dt in ("float32", "int32"):
            cond = make_input(rng, "bool", sc, booleans)
            x = make_input(rng, dt, sx, default_sampler(dt))
            y = make_input(rng, dt, sy, default_sampler(dt))
            _where_case(fam, cond, x, y)
    for dt in ("uint32", "float16", "float64", "bool"):
        _where_case(fam, make_input(rng, "bool", (5,), booleans), make_input(rng, dt, (5,), default_sampler(dt)),
                    make_input(rng, dt, (5,), default_sampler(dt)))
    # promotion and weak scalars
    _where_case(fam, make_input(rng, "bool", (4,), booleans), make_input(rng, "int32", (4,), default_sampler("int32")),
                make_input(rng, "float32", (4,), default_sampler("float32")))
    _where_case(fam, make_input(rng, "bool", (2, 3), booleans), make_input(rng, "int32", (2, 3), default_sampler("int32")), weak(1.5))
    _where_case(fam, make_input(rng, "bool", (2, 3), booleans), weak(1), make_input(rng, "float16", (3,), default_sampler("float16")))
    _where_case(fam, make_input(rng, "bool", (2, 3), booleans), weak(1.0), weak(2))
    # non-bool conditions are compared with zero
    _where_case(fam, make_input(rng, "int32", (6,), integers(-1, 1)), make_input(rng, "float32", (6,), default_sampler("float32")),
                make_input(rng, "float32", (6,), default_sampler("float32")))
    _where_case(fam, make_input(rng, "float32", (6,), lambda r, s: np.where(r.random(s) < 0.5, 0.0, r.uniform(-1, 1, s))),
                make_input(rng, "int32", (6,), default_sampler("int32")), make_input(rng, "int32", (6,), default_sampler("int32")))
    for v in ("T", "step", "flip", "pad", "bcast"):
        _where_case(fam, make_input(rng, "bool", (3, 4), booleans, view=v),
                    make_input(rng, "float32", (3, 4), default_sampler("float32"), view=v),
                    make_input(rng, "float32", (3, 4), default_sampler("float32"), view="flip"))
    # clip
    for dt in ("float32", "int32", "uint32", "float64", "float16"):
        a = make_input(rng, dt, (3, 4), default_sampler(dt))
        lo = make_input(rng, dt, (4,), integers(0, 3) if dt == "uint32" else uniform(-3, 0, 1))
        hi = make_input(rng, dt, (3, 1), integers(10, 30) if dt == "uint32" else uniform(0, 3, 1))
        _clip_case(fam, a, lo, hi)
    f = lambda: make_input(rng, "float32", (2, 5), default_sampler("float32"))
    _clip_case(fam, f(), weak(-1.0), weak(2.0))
    _clip_case(fam, f(), None, weak(1))
    _clip_case(fam, f(), weak(0), None)
    _clip_case(fam, make_input(rng, "int32", (6,), default_sampler("int32")), weak(-3), weak(4))
    _clip_case(fam, make_input(rng, "int32", (6,), default_sampler("int32")), weak(-2.5), weak(2.5))
    _clip_case(fam, make_input(rng, "float32", (3, 4), default_sampler("float32"), view="T"), weak(-1.0), weak(1.0))
    _clip_case(fam, make_input(rng, "float32", (3, 4), default_sampler("float32"), view="step"),
               make_input(rng, "float32", (), uniform(-2, 0)), None)
    _clip_case(fam, Input("float32", np.array([np.nan, 5.0, -5.0, 0.5])), weak(-1.0), weak(1.0))


def _where_case(fam, cond, x, y):
    rt = promote(*[(i.dtype, i.weak) for i in (x, y)])
    cv = np.asarray(cond.value()) != 0
    r = np.where(cv, _cast(x.value(), rt[0]), _cast(y.value(), rt[0]))
    tag = lambda i: ("w" + SHORT[i.dtype][0]) if i.weak else SHORT[i.dtype] + "_" + tag_shape(i.value().shape) + "".join("_" + v[0][:2] for v in i.views)
    c = fam.case(f"where_{tag(cond)}__{tag(x)}__{tag(y)}", "where")
    c.inputs = [cond, x, y]
    c.expect(_cast(r, rt[0]), rt[0], weak=rt[1])


def _clip_case(fam, a, lo, hi):
    ins = [i for i in (a, lo, hi) if i is not None]
    rt = promote(*[(i.dtype, i.weak) for i in ins])
    r = _cast(a.value(), rt[0])
    with np.errstate(all="ignore"):
        if lo is not None:
            r = np.maximum(r, _cast(lo.value(), rt[0]))
        if hi is not None:
            r = np.minimum(r, _cast(hi.value(), rt[0]))
    bounds = [n for n, i in (("min", lo), ("max", hi)) if i is not None]
    tag = lambda i: ("w" + SHORT[i.dtype][0]) if i.weak else SHORT[i.dtype] + "_" + tag_shape(i.value().shape) + "".join("_" + v[0][:2] for v in i.views)
    c = fam.case("clip_" + "__".join(tag(i) for i in ins) + "_" + "_".join(bounds), "clip")
    c.param("bounds", *bounds)
    c.inputs = ins
    c.expect(_cast(r, rt[0]), rt[0], weak=rt[1])
