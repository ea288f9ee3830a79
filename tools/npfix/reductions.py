"""Creation and reduction fixtures: zeros/ones/full/arange/linspace/eye/*_like/asarray,
sum/prod/max/min/mean/var/std/any/all, argmax/argmin and cumsum/cumprod."""

import numpy as np

from .core import (FLOATS, NP, SHORT, UNIT, Input, booleans, default_sampler, integers,
                   make_input, tag_shape, tol_accum, tol_exact, uniform, weak)


def _cast(v, dtype):
    return np.asarray(v).astype(NP[dtype])


# ---------------------------------------------------------------------------------------
def gen_creation(fam):
    rng = fam.rng
    for op, fill in (("zeros", 0), ("ones", 1)):
        for shp in ((), (3,), (2, 3), (2, 0, 3)):
            c = fam.case(f"{op}_{tag_shape(shp)}_default", op).param("shape", *shp)
            c.expect(np.full(shp, fill, np.float32), "float32", weak=False)
        for dt in ("int32", "uint32", "bool", "float16", "float64"):
            c = fam.case(f"{op}_{SHORT[dt]}", op).param("shape", 2, 3).param("dtype", dt)
            c.expect(np.full((2, 3), fill).astype(NP[dt]), dt, weak=False)
    # full: the fill value is an input (weak scalar or array), broadcast to the shape
    for fv, dt, shp in ((weak(2.5), None, (2, 3)), (weak(7), None, (4,)), (weak(2.5), "int32", (3,)),
                        (weak(-1), "float16", (2, 2)), (weak(3), "bool", (2,)), (weak(0.5), "float64", ())):
        c = fam.case(f"full_{'wi' if fv.dtype == 'int32' else 'wf'}_{dt or 'default'}_{tag_shape(shp)}", "full")
        c.param("shape", *shp)
        if dt:
            c.param("dtype", dt)
        c.inputs = [fv]
        od = dt or fv.dtype
        c.expect(np.full(shp, fv.base).astype(NP[od]), od)
    for dt in ("float16", "int32", "uint32", "bool"):
        fv = make_input(rng, dt, (), default_sampler(dt))
        c = fam.case(f"full_array_{SHORT[dt]}", "full").param("shape", 3, 2)
        c.inputs = [fv]
        c.expect(np.full((3, 2), fv.value()), dt)
    fv = make_input(rng, "float32", (3,), default_sampler("float32"))
    c = fam.case("full_broadcast_row", "full").param("shape", 2, 3)
    c.inputs = [fv]
    c.expect(np.broadcast_to(fv.value(), (2, 3)), "float32")
    # *_like
    for op, fill in (("zeros_like", 0), ("ones_like", 1), ("full_like", None)):
        for dt, odt in (("float32", None), ("int32", None), ("bool", None), ("float16", None),
                        ("float32", "int32"), ("int32", "float64"), ("uint32", "bool")):
            a = make_input(rng, dt, (2, 3), default_sampler(dt), view="T" if dt == "int32" else None)
            c = fam.case(f"{op}_{SHORT[dt]}_{odt or 'same'}", op)
            if odt:
                c.param("dtype", odt)
            c.inputs = [a]
            od = odt or dt
            if fill is None:
                c.inputs.append(weak(3))
                fill = 3
            c.expect(np.full(a.value().shape, fill).astype(NP[od]), od, weak=False)
            if op == "full_like":
                fill = None
    # asarray
    for dt, odt in (("float32", None), ("int32", "float32"), ("float32", "int32"), ("float16", "float32"),
                    ("bool", "int32"), ("uint32", "float64")):
        a = make_input(rng, dt, (2, 3), default_sampler(dt), view="flip")
        c = fam.case(f"asarray_{SHORT[dt]}_{odt or 'same'}", "asarray")
        if odt:
            c.param("dtype", odt)
        c.inputs = [a]
        c.expect(a.value().astype(NP[odt or dt]), odt or dt)
    # array: the fixture inputs round-trip (raw bytes, and the typed vector overloads)
    specials = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 65504.0, 6.1e-05, 1e-7])
    for dt in ("float16", "float32", "float64"):
        c = fam.case(f"array_bytes_{SHORT[dt]}_specials", "array")
        c.inputs = [Input(dt, specials.reshape(2, 5))]
        c.expect(specials.reshape(2, 5).astype(NP[dt]), dt, weak=False)
    for dt, vals in (("int32", [0, -1, 2147483647, -2147483648, 7]), ("uint32", [0, 1, 4294967295, 2147483648, 9]),
                     ("bool", [True, False, True, True, False])):
        c = fam.case(f"array_bytes_{SHORT[dt]}_limits", "array")
        c.inputs = [Input(dt, np.array(vals))]
        c.expect(np.array(vals).astype(NP[dt]), dt, weak=False)
    for dt in ("float32", "float64", "int32", "uint32", "bool"):
        for shp in ((), (4,), (2, 3), (0, 2)):
            a = make_input(rng, dt, shp, default_sampler(dt))
            c = fam.case(f"array_vector_{SHORT[dt]}_{tag_shape(shp)}", "array(vector)")
            c.inputs = [a]
            c.expect(a.value(), dt, weak=False)
    # arange: explicit dtypes, and the default for non-integral arguments (float32)
    for args, dt in (((5,), "int32"), ((0,), "int32"), ((2.5,), None), ((4,), "float32"), ((3,), "float64")):
        c = fam.case(f"arange_stop_{args[0]}_{dt or 'default'}", "arange(stop)").param("stop", float(args[0]))
        if dt:
            c.param("dtype", dt)
        od = dt or "float32"
        c.expect(np.arange(args[0]).astype(NP[od]), od)
        c.tol = (1e-6, 0.0)
    for (start, stop, step), dt in (((2, 11, 3), "int32"), ((5, 0, -1), "int32"), ((5, 2, 1), "int32"),
                                    ((-3, 4, 2), "int32"), ((0, 7, 2), "uint32"), ((-1.5, 2.0, 0.5), None),
                                    ((0.25, 1.0, 0.25), None), ((1.0, -1.0, -0.3), "float32"),
                                    ((0.1, 1.05, 0.1), "float64"), ((-2, 3, 1), "float16")):
        c = fam.case(f"arange_{start}_{stop}_{step}_{dt or 'default'}", "arange(start,stop,step)")
        c.param("start", float(start)).param("stop", float(stop)).param("step", float(step))
        if dt:
            c.param("dtype", dt)
        od = dt or "float32"
        n = int(np.ceil((stop - start) / step))
        c.expect((start + np.arange(max(n, 0)) * step).astype(NP[od]), od)
        c.tol = (1e-6, (n + 4) * UNIT.get(od, 0) * max(abs(start), abs(stop), abs(step) * n))
    # arange with C++ integer bounds infers int32, as jnp.arange does for Python ints
    for args in ((5,), (0,), (2, 11, 3), (5, 0, -1), (-3, 4), (7, 2)):
        op = "arange(stop)" if len(args) == 1 else "arange(start,stop,step)"
        c = fam.case("arange_integral_" + "_".join(str(a).replace("-", "m") for a in args), op)
        c.param("integral", 1)
        full = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
        if len(args) == 1:
            c.param("stop", args[0])
        else:
            c.param("start", full[0]).param("stop", full[1]).param("step", full[2])
        c.expect(np.arange(*full).astype(np.int32), "int32")
    # linspace
    for start, stop, num, endpoint, dt in ((0.0, 1.0, 5, True, "float32"), (-2.0, 3.0, 7, False, "float32"),
                                           (1.0, 1.0, 3, True, "float32"), (2.0, 5.0, 1, True, "float32"),
                                           (0.0, 1.0, 0, True, "float32"), (10.0, -10.0, 6, True, "float64"),
                                           (0.0, 1.0, 50, True, "float32"), (-1.0, 1.0, 4, True, "float16")):
        c = fam.case(f"linspace_{start}_{stop}_{num}_{int(endpoint)}_{SHORT[dt]}", "linspace")
        c.param("start", start).param("stop", stop).param("num", num).param("endpoint", int(endpoint))
        c.param("dtype", dt)
        c.expect(np.linspace(start, stop, num, endpoint=endpoint).astype(NP[dt]), dt, weak=False)
        c.tol = (4 * UNIT[dt], 4 * UNIT[dt] * max(abs(start), abs(stop)))
    # eye
    for n, m, k, dt in ((3, None, 0, "float32"), (3, 4, 0, "float32"), (4, 3, 1, "int32"), (3, None, -1, "float32"),
                        (3, 5, 3, "bool"), (2, None, 5, "float32"), (1, None, 0, "float64"), (0, None, 0, "float32"),
                        (4, 2, -2, "uint32")):
        c = fam.case(f"eye_{n}_{m}_{k}_{SHORT[dt]}", "eye").param("n", n)
        if m is not None:
            c.param("m", m)
        c.param("k", k).param("dtype", dt)
        c.expect(np.eye(n, m, k).astype(NP[dt]), dt, weak=False)


# ---------------------------------------------------------------------------------------
AXES = [None, 0, 1, -1, (0, 2), (-1, 0), (), (0, 1, 2)]
RED = {  # op: (numpy reduction, abs-magnitude reduction for the tolerance, output dtype rule)
    "sum": (np.sum, np.sum, "sum"), "prod": (np.prod, np.prod, "sum"),
    "max": (np.max, None, "same"), "min": (np.min, None, "same"),
    "amax": (np.max, None, "same"), "amin": (np.min, None, "same"),
    "mean": (np.mean, np.mean, "inexact"),
    "any": (np.any, None, "bool"), "all": (np.all, None, "bool"),
}


def _out_dtype(rule, dt):
    if rule == "sum":
        return "int32" if dt == "bool" else dt
    if rule == "inexact":
        return dt if dt in FLOATS else "float32"
    if rule == "bool":
        return "bool"
    return dt


def _ax(axis):
    return None if axis is None else axis if isinstance(axis, int) else tuple(axis)


def _count(shape, axis):
    if axis is None:
        return int(np.prod(shape)) if shape else 1
    axes = [axis] if isinstance(axis, int) else list(axis)
    return int(np.prod([shape[a] for a in axes])) if axes else 1


def _param_axes(c, axis):
    if axis is None:
        c.param("axis", "none")
    elif isinstance(axis, int):
        c.param("axis", axis)
    else:
        c.param("axis", "list", *axis)


def _red_sampler(op, dt):
    if op == "prod":
        if dt in FLOATS:
            return uniform(0.5, 1.5, 2)
        return integers(-2, 2) if dt == "int32" else integers(0, 2) if dt == "uint32" else booleans
    if op in ("any", "all"):
        def f(r, s):
            a = np.asarray(default_sampler(dt)(r, s))
            return np.where(r.random(s) < (0.15 if op == "all" else 0.85), 0, a)
        return f
    if op in ("max", "min", "amax", "amin") and dt in FLOATS:
        return lambda r, s: r.integers(-6, 6, s) / 2.0  # ties
    return default_sampler(dt)


def red_case(fam, op, inp, axis, keepdims, ddof=None):
    x = inp.value()
    od = _out_dtype(RED[op][2] if op in RED else "inexact", inp.dtype)
    xf = x.astype(np.float64) if od in FLOATS else x.astype(np.int64) if od != "bool" else x
    kw = dict(axis=_ax(axis), keepdims=keepdims)
    with np.errstate(all="ignore"):
        if op in ("var", "std"):
            r = (np.var if op == "var" else np.std)(xf, ddof=ddof, **kw)
        elif op in ("any", "all"):
            r = RED[op][0](x != 0, **kw)
        else:
            r = RED[op][0](xf, **kw)
    vw = "".join("_" + v[0][:2] for v in inp.views)
    ax = "all" if axis is None else str(axis).replace("-", "m")
    cid = f"{op}_{SHORT[inp.dtype]}_{tag_shape(x.shape)}{vw}_ax{ax}{'_kd' if keepdims else ''}"
    if ddof is not None:
        cid += f"_ddof{ddof}"
    c = fam.case(cid, op)
    _param_axes(c, axis)
    c.param("keepdims", int(keepdims))
    if ddof is not None:
        c.param("ddof", ddof)
    c.inputs = [inp]
    c.expect(_cast(r, od), od, weak=False)
    n = _count(x.shape, axis)
    if od in FLOATS and x.size:
        ax_ = np.abs(x.astype(np.float64))
        if op in ("var", "std"):
            # a centred two-pass variance errs by about n * u * max((x - mean)^2)
            dev = x.astype(np.float64) - np.mean(x.astype(np.float64), axis=_ax(axis), keepdims=True)
            sq = float(np.max(dev**2)) + float(UNIT[od] * np.max(ax_) ** 2)
            rt, at = tol_accum(od, 2 * n, sq)
            if op == "std":
                # |sqrt(a) - sqrt(b)| <= min(sqrt(|a - b|), |a - b| / sqrt(b))
                sd = np.asarray(r, np.float64)
                mn = float(np.min(sd[np.isfinite(sd)])) if np.isfinite(sd).any() else 0.0
                at = min(float(np.sqrt(at)), at / mn) if mn > 0 else float(np.sqrt(at))
            c.tol = (rt, at)
        elif RED.get(op, (0, None))[1] is not None:
            with np.errstate(all="ignore"):
                m = np.asarray(RED[op][1](ax_, **kw))
            m = m[np.isfinite(m)]
            mag = float(m.max()) if m.size else 0.0
            c.tol = tol_accum(od, n, mag)
    return c


def gen_reductions(fam):
    rng = fam.rng
    for op in ("sum", "prod", "max", "min", "amax", "amin", "mean", "any", "all", "var", "std"):
        main = ["float32"]
        others = {"sum": ["int32", "uint32", "bool", "float64", "float16"],
                  "prod": ["int32", "uint32", "float64"], "max": ["int32", "uint32", "bool", "float16", "float64"],
                  "min": ["int32", "uint32", "bool", "float64"], "amax": ["int32"], "amin": ["uint32"],
                  "mean": ["int32", "bool", "float64", "float16"], "any": ["bool", "int32"],
                  "all": ["bool", "uint32"], "var": ["int32", "float64"], "std": ["int32", "float64"]}[op]
        smp = lambda dt: _red_sampler(op, dt)
        ddofs = [0, 1] if op in ("var", "std") else [None]
        light = op in ("amax", "amin")
        for axis in (AXES if not light else AXES[:4]):
            for kd in (False, True):
                if light and kd:
                    continue
                red_case(fam, op, make_input(rng, "float32", (2, 3, 4), smp("float32")), axis, kd, ddofs[-1] if axis == 1 else ddofs[0])
        for dt in others:
            for axis, kd in ((None, False), (1, False), ((0, 2), True)):
                red_case(fam, op, make_input(rng, dt, (2, 3, 4), smp(dt)), axis, kd, ddofs[0])
        if light:
            continue
        for v in ("T", "step", "flip", "pad", "bcast", "stepT"):
            shp = (3, 4) if v != "stepT" else (2, 3, 4)
            for axis in (None, 0, -1):
                red_case(fam, op, make_input(rng, "float32", shp, smp("float32"), view=v,
                                             pad_value=1.0), axis, False, ddofs[0])
        red_case(fam, op, make_input(rng, "float32", (), smp("float32")), None, False, ddofs[0])
        red_case(fam, op, make_input(rng, "float32", (7,), smp("float32")), 0, True, ddofs[0])
        red_case(fam, op, make_input(rng, "float32", (1, 5, 1), smp("float32")), (0, 2), False, ddofs[0])
        red_case(fam, op, make_input(rng, "float32", (17, 9), smp("float32")), 0, False, ddofs[0])
        if op in ("var", "std"):
            red_case(fam, op, make_input(rng, "float32", (3, 5), smp("float32")), 1, False, 2)
            red_case(fam, op, make_input(rng, "float32", (6,), smp("float32")), None, True, 1)
        if op in ("sum", "prod", "any", "all"):
            # reductions over empty axes give the identity
            red_case(fam, op, make_input(rng, "float32", (0, 3), smp("float32")), 0, False)
            red_case(fam, op, make_input(rng, "int32", (2, 0), smp("int32")), None, False)
            red_case(fam, op, make_input(rng, "float32", (2, 0, 3), smp("float32")), 1, True)
    # nan propagates through max/min and sums
    nan = Input("float32", np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, 0.5]]))
    for op in ("max", "min", "sum", "mean"):
        for axis in (None, 1):
            c = red_case(fam, op, nan, axis, False)
            c.id = c.id.replace("f32_2x3", "f32_nan")
    # large float32 sums: the order of accumulation matters only within the tolerance
    red_case(fam, "sum", make_input(rng, "float32", (64, 33), uniform(0, 1)), None, False)
    red_case(fam, "mean", make_input(rng, "float32", (64, 33), uniform(-1, 3)), 0, False)
    red_case(fam, "var", make_input(rng, "float32", (64, 33), uniform(9, 11)), 1, False, 0)


def arg_case(fam, op, inp, axis, keepdims):
    x = inp.value()
    fn = np.argmax if op == "argmax" else np.argmin
    r = fn(x, axis=axis, keepdims=keepdims)
    vw = "".join("_" + v[0][:2] for v in inp.views)
    c = fam.case(f"{op}_{SHORT[inp.dtype]}_{tag_shape(x.shape)}{vw}_ax{'none' if axis is None else str(axis).replace('-', 'm')}{'_kd' if keepdims else ''}", op)
    c.param("axis", "none" if axis is None else axis).param("keepdims", int(keepdims))
    c.inputs = [inp]
    c.expect(_cast(r, "int32"), "int32", weak=False)
    return c


def cum_case(fam, op, inp, axis):
    x = inp.value()
    od = "int32" if inp.dtype == "bool" else inp.dtype
    xf = x.astype(np.float64) if od in FLOATS else x.astype(np.int64)
    fn = np.cumsum if op == "cumsum" else np.cumprod
    r = fn(xf, axis=axis)
    vw = "".join("_" + v[0][:2] for v in inp.views)
    c = fam.case(f"{op}_{SHORT[inp.dtype]}_{tag_shape(x.shape)}{vw}_ax{'none' if axis is None else str(axis).replace('-', 'm')}", op)
    c.param("axis", "none" if axis is None else axis)
    c.inputs = [inp]
    c.expect(_cast(r, od), od, weak=False)
    if od in FLOATS and x.size:
        n = x.size if axis is None else x.shape[axis]
        c.tol = tol_accum(od, n, float(np.max(fn(np.abs(xf), axis=axis))))
    return c


def gen_arg_cum(fam):
    rng = fam.rng
    ties = lambda dt: (lambda r, s: r.integers(-3, 3, s) / 2.0) if dt in FLOATS else \
        integers(0, 3) if dt != "bool" else booleans
    for op in ("argmax", "argmin"):
        for axis in (None, 0, 1, -1, 2):
            for kd in (False, True):
                arg_case(fam, op, make_input(rng, "float32", (2, 3, 4), ties("float32")), axis, kd)
        for dt in ("int32", "uint32", "bool", "float16", "float64"):
            for axis in (None, 1):
                arg_case(fam, op, make_input(rng, dt, (3, 5), ties(dt)), axis, False)
        for v in ("T", "step", "flip", "pad", "bcast"):
            for axis in (None, 0, 1):
                arg_case(fam, op, make_input(rng, "float32", (4, 5), ties("float32"), view=v), axis, False)
        arg_case(fam, op, Input("float32", np.array([2.0, 2.0, 2.0])), 0, False).id = f"{op}_all_tied"
        arg_case(fam, op, Input("float32", np.array([[1.0, np.nan, 3.0, np.nan], [5.0, 4.0, 4.0, 1.0]])),
                 1, False).id = f"{op}_nan_first"
        arg_case(fam, op, Input("float32", np.array([-np.inf, np.inf, 0.0, np.inf, -np.inf])), None, False).id = f"{op}_infs"
        arg_case(fam, op, make_input(rng, "float32", (), ties("float32")), None, False)
        arg_case(fam, op, make_input(rng, "int32", (1, 6, 1), ties("int32")), 1, True)
    for op in ("cumsum", "cumprod"):
        smp = (lambda dt: uniform(0.5, 1.5, 2) if dt in FLOATS else integers(-2, 2) if dt == "int32"
               else integers(0, 2) if dt == "uint32" else booleans) if op == "cumprod" else default_sampler
        for axis in (None, 0, 1, -1, 2):
            cum_case(fam, op, make_input(rng, "float32", (2, 3, 4), smp("float32")), axis)
        for dt in ("int32", "uint32", "bool", "float16", "float64"):
            for axis in (None, 1):
                cum_case(fam, op, make_input(rng, dt, (3, 5), smp(dt)), axis)
        for v in ("T", "step", "flip", "pad", "bcast"):
            for axis in (0, 1):
                cum_case(fam, op, make_input(rng, "float32", (4, 5), smp("float32"), view=v, pad_value=1.0), axis)
        cum_case(fam, op, make_input(rng, "float32", (), smp("float32")), None)
        cum_case(fam, op, make_input(rng, "float32", (0, 3), smp("float32")), 0)
        cum_case(fam, op, make_input(rng, "float32", (40,), smp("float32")), 0)
