"""lax fixtures: conv_general_dilated and conv (with a NumPy reference written here and
cross-checked), reduce_window, max_pool/avg_pool, and dtype conversions."""

import itertools

import numpy as np

from .core import FLOATS, NP, SHORT, Input, make_input, tag_shape, tol_accum, tol_exact


def padtype_to_pads(in_shape, window, strides, padding):
    """jax.lax.padtype_to_pads: explicit (low, high) pairs for VALID/SAME/SAME_LOWER."""
    if not isinstance(padding, str):
        return [tuple(p) for p in padding]
    if padding == "VALID":
        return [(0, 0)] * len(in_shape)
    out = [-(-n // s) for n, s in zip(in_shape, strides)]
    sizes = [max(0, (o - 1) * s + w - n) for o, s, w, n in zip(out, strides, window, in_shape)]
    if padding == "SAME":
        return [(p // 2, p - p // 2) for p in sizes]
    assert padding == "SAME_LOWER"
    return [(p - p // 2, p // 2) for p in sizes]


def _layout_perms(dn, nsp):
    if dn is None:
        sp = "HWD"[:nsp] if nsp <= 3 else None
        dn = ("NC" + sp, "OI" + sp, "NC" + sp)
    lhs, rhs, out = dn
    sp = [c for c in rhs if c not in "OI"]
    return ([lhs.index("N"), lhs.index("C")] + [lhs.index(c) for c in sp],
            [rhs.index("O"), rhs.index("I")] + [rhs.index(c) for c in sp],
            [out.index("N"), out.index("C")] + [out.index(c) for c in sp])


def conv_ref(lhs, rhs, strides, padding, lhs_dil=None, rhs_dil=None, dn=None, fgc=1, bgc=1):
    """conv_general_dilated by slicing the padded, dilated input once per kernel offset."""
    nsp = lhs.ndim - 2
    lp, rp, op = _layout_perms(dn, nsp)
    L = np.transpose(lhs, lp).astype(np.float64)
    R = np.transpose(rhs, rp).astype(np.float64)
    lhs_dil = list(lhs_dil or [1] * nsp)
    rhs_dil = list(rhs_dil or [1] * nsp)
    N, C, *S = L.shape
    O, I, *K = R.shape
    keff = [(k - 1) * d + 1 for k, d in zip(K, rhs_dil)]
    pads = padtype_to_pads(S, keff, strides, padding)  # JAX uses the undilated lhs shape
    Sd = [(s - 1) * d + 1 if s else 0 for s, d in zip(S, lhs_dil)]
    Ld = np.zeros((N, C, *Sd))
    Ld[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dil)] = L
    Lp = np.pad(Ld, [(0, 0), (0, 0)] + pads)
    P = Lp.shape[2:]
    osp = [max(0, (p - ke) // s + 1) for p, ke, s in zip(P, keff, strides)]
    out = np.zeros((N // bgc, O, *osp))
    og = O // (fgc * bgc)
    for kidx in itertools.product(*[range(k) for k in K]):
        sl = tuple(slice(k * d, k * d + (o - 1) * s + 1, s) for k, d, o, s in zip(kidx, rhs_dil, osp, strides))
        patch = Lp[(slice(None), slice(None)) + sl] if all(osp) else np.zeros((N, C, *osp))
        w = R[(slice(None), slice(None)) + kidx]
        for g in range(fgc * bgc):
            os_ = slice(g * og, (g + 1) * og)
            if fgc > 1:
                cs, ns = slice(g * I, (g + 1) * I), slice(None)
            else:
                cs, ns = slice(None), slice(g * (N // bgc), (g + 1) * (N // bgc))
            out[:, os_] += np.einsum("nc...,oc->no...", patch[ns, cs], w[os_])
    return np.transpose(out, np.argsort(op))


def conv_naive(lhs, rhs, strides, padding, lhs_dil=None, rhs_dil=None, dn=None, fgc=1, bgc=1):
    """The same convolution as explicit loops over output and window positions in the
    undilated input's coordinates; used only to cross-check conv_ref."""
    nsp = lhs.ndim - 2
    lp, rp, op = _layout_perms(dn, nsp)
    L, R = np.transpose(lhs, lp).astype(np.float64), np.transpose(rhs, rp).astype(np.float64)
    lhs_dil = list(lhs_dil or [1] * nsp)
    rhs_dil = list(rhs_dil or [1] * nsp)
    N, C, *S = L.shape
    O, I, *K = R.shape
    keff = [(k - 1) * d + 1 for k, d in zip(K, rhs_dil)]
    pads = padtype_to_pads(S, keff, strides, padding)
    P = [(s - 1) * ld + 1 + lo + hi for s, ld, (lo, hi) in zip(S, lhs_dil, pads)]
    osp = [max(0, (p - ke) // s + 1) for p, ke, s in zip(P, keff, strides)]
    NB, OG = N // bgc, O // (fgc * bgc)
    out = np.zeros((NB, O, *osp))
    for n, o in itertools.product(range(NB), range(O)):
        g = o // OG
        for opos in itertools.product(*[range(x) for x in osp]):
            acc = 0.0
            for i in range(I):
                c = g * I + i if fgc > 1 else i
                nn = n + (g * NB if bgc > 1 else 0)
                for k in itertools.product(*[range(x) for x in K]):
                    src = []
                    for d in range(nsp):
                        p = opos[d] * strides[d] + k[d] * rhs_dil[d] - pads[d][0]
                        if p % lhs_dil[d] or not 0 <= p // lhs_dil[d] < S[d]:
                            break
                        src.append(p // lhs_dil[d])
                    else:
                        acc += L[(nn, c) + tuple(src)] * R[(o, i) + k]
            out[(n, o) + opos] = acc
    return np.transpose(out, np.argsort(op))


def self_check_conv(rng):
    x, w = rng.normal(size=11), rng.normal(size=3)
    r = conv_ref(x.reshape(1, 1, 11), w.reshape(1, 1, 3), [1], "VALID").ravel()
    assert np.allclose(r, np.convolve(x, w[::-1], "valid"))  # lax convs are correlations
    r = conv_ref(x.reshape(1, 1, 11), w.reshape(1, 1, 3), [2], "VALID").ravel()
    assert np.allclose(r, np.convolve(x, w[::-1], "valid")[::2])
    wd = np.zeros(5)
    wd[::2] = w
    r = conv_ref(x.reshape(1, 1, 11), w.reshape(1, 1, 3), [1], "VALID", rhs_dil=[2]).ravel()
    assert np.allclose(r, np.convolve(x, wd[::-1], "valid"))
    r = conv_ref(x.reshape(1, 1, 11), w.reshape(1, 1, 3), [1], "SAME").ravel()
    assert np.allclose(r, np.convolve(x, w[::-1], "same"))
    for args in CONV_CASES:
        lhs = rng.normal(size=args["lhs"])
        rhs = rng.normal(size=args["rhs"])
        kw = {k: v for k, v in args.items() if k not in ("lhs", "rhs", "name", "views", "dtype", "op")}
        a, b = conv_ref(lhs, rhs, **kw), conv_naive(lhs, rhs, **kw)
        assert a.shape == b.shape and np.allclose(a, b), args["name"]


C1 = dict(lhs=(2, 3, 10), rhs=(4, 3, 3))
C2 = dict(lhs=(2, 3, 7, 6), rhs=(4, 3, 3, 2))
CONV_CASES = [
    dict(name="1d_valid", **C1, strides=[1], padding="VALID"),
    dict(name="1d_stride2", **C1, strides=[2], padding="VALID"),
    dict(name="1d_same", **C1, strides=[1], padding="SAME"),
    dict(name="1d_same_stride3", **C1, strides=[3], padding="SAME"),
    dict(name="1d_same_lower", lhs=(2, 3, 10), rhs=(4, 3, 4), strides=[1], padding="SAME_LOWER"),
    dict(name="1d_explicit", **C1, strides=[1], padding=[(1, 2)]),
    dict(name="1d_lhs_dil", **C1, strides=[1], padding=[(0, 0)], lhs_dil=[2]),  # JAX: no string padding
    dict(name="1d_rhs_dil", **C1, strides=[1], padding="VALID", rhs_dil=[3]),
    dict(name="1d_groups3", lhs=(2, 3, 10), rhs=(6, 1, 3), strides=[1], padding="SAME", fgc=3),
    dict(name="1d_batch_groups2", lhs=(4, 3, 8), rhs=(4, 3, 3), strides=[1], padding="VALID", bgc=2),
    dict(name="1d_nwc_wio", lhs=(2, 10, 3), rhs=(3, 3, 4), strides=[2], padding="SAME", dn=("NWC", "WIO", "NWC")),
    dict(name="2d_valid", **C2, strides=[1, 1], padding="VALID"),
    dict(name="2d_stride21", **C2, strides=[2, 1], padding="VALID"),
    dict(name="2d_same", **C2, strides=[1, 1], padding="SAME"),
    dict(name="2d_same_stride2", **C2, strides=[2, 2], padding="SAME"),
    dict(name="2d_explicit", **C2, strides=[1, 1], padding=[(1, 0), (2, 1)]),
    dict(name="2d_lhs_dil", **C2, strides=[1, 1], padding=[(1, 0), (0, 0)], lhs_dil=[2, 1]),
    dict(name="2d_rhs_dil", **C2, strides=[1, 1], padding="VALID", rhs_dil=[1, 2]),
    dict(name="2d_all_dil", **C2, strides=[2, 1], padding=[(1, 1), (0, 2)], lhs_dil=[1, 2], rhs_dil=[2, 1]),
    dict(name="2d_transpose_like", lhs=(1, 2, 4, 4), rhs=(3, 2, 3, 3), strides=[1, 1], padding=[(2, 2), (2, 2)],
         lhs_dil=[2, 2]),
    dict(name="2d_groups2", lhs=(2, 4, 5, 5), rhs=(6, 2, 3, 3), strides=[1, 1], padding="SAME", fgc=2),
    dict(name="2d_depthwise", lhs=(1, 3, 6, 6), rhs=(3, 1, 3, 3), strides=[2, 2], padding="SAME", fgc=3),
    dict(name="2d_batch_groups", lhs=(4, 2, 5, 5), rhs=(6, 2, 2, 2), strides=[1, 1], padding="VALID", bgc=2),
    dict(name="2d_nhwc_hwio", lhs=(2, 7, 6, 3), rhs=(3, 2, 3, 4), strides=[1, 1], padding="VALID",
         dn=("NHWC", "HWIO", "NHWC")),
    dict(name="2d_nhwc_same_s2", lhs=(2, 7, 6, 3), rhs=(3, 3, 3, 5), strides=[2, 2], padding="SAME",
         dn=("NHWC", "HWIO", "NHWC")),
    dict(name="2d_mixed_layouts", lhs=(2, 3, 7, 6), rhs=(3, 2, 3, 4), strides=[1, 2], padding="SAME",
         dn=("NCHW", "HWIO", "NHWC")),
    dict(name="2d_1x1", lhs=(2, 3, 4, 4), rhs=(5, 3, 1, 1), strides=[1, 1], padding="VALID"),
    dict(name="2d_kernel_bigger", lhs=(1, 1, 2, 3), rhs=(2, 1, 3, 4), strides=[1, 1], padding="SAME"),
    dict(name="2d_f64", **C2, strides=[1, 1], padding="SAME", dtype="float64"),
    dict(name="2d_f16", lhs=(1, 2, 5, 5), rhs=(2, 2, 3, 3), strides=[1, 1], padding="VALID", dtype="float16"),
    dict(name="2d_lhs_T", **C2, strides=[1, 1], padding="VALID", views=("T", None)),
    dict(name="2d_lhs_step_rhs_flip", **C2, strides=[1, 1], padding="SAME", views=("step", "flip")),
    dict(name="2d_lhs_pad", **C2, strides=[2, 1], padding="VALID", views=("pad", None)),
    dict(name="1d_lhs_flip_rhs_T", **C1, strides=[1], padding=[(2, 0)], views=("flip", "T")),
    dict(name="conv_2d_same", **C2, strides=[1, 1], padding="SAME", op="conv"),
    dict(name="conv_1d_valid_s2", **C1, strides=[2], padding="VALID", op="conv"),
    dict(name="conv_2d_explicit", **C2, strides=[1, 2], padding=[(1, 1), (0, 1)], op="conv"),
]


def _pad_params(c, key, padding):
    if isinstance(padding, str):
        c.param(key, padding)
    else:
        c.param(key, *[v for p in padding for v in p])


def _conv_sampler(r, s):
    return np.round(r.uniform(-1, 1, s), 2)


def gen_conv(fam):
    self_check_conv(np.random.default_rng(7))
    for args in CONV_CASES:
        dt = args.get("dtype", "float32")
        views = args.get("views", (None, None))
        lhs = make_input(fam.rng, dt, args["lhs"], _conv_sampler, view=views[0])
        rhs = make_input(fam.rng, dt, args["rhs"], _conv_sampler, view=views[1])
        kw = {k: v for k, v in args.items() if k not in ("lhs", "rhs", "name", "views", "dtype", "op")}
        lv, rv = lhs.value().astype(np.float64), rhs.value().astype(np.float64)
        r = conv_ref(lv, rv, **kw)
        mag = conv_ref(np.abs(lv), np.abs(rv), **kw)
        op = args.get("op", "conv_general_dilated")
        c = fam.case(f"{args['name']}_{SHORT[dt]}" if op != "conv" else args["name"], op)
        c.param("window_strides", *kw["strides"])
        _pad_params(c, "padding", kw["padding"])
        if op != "conv":
            c.param("lhs_dilation", *kw.get("lhs_dil", []))
            c.param("rhs_dilation", *kw.get("rhs_dil", []))
            if kw.get("dn"):
                c.param("dimension_numbers", *kw["dn"])
            c.param("feature_group_count", kw.get("fgc", 1)).param("batch_group_count", kw.get("bgc", 1))
        c.inputs = [lhs, rhs]
        c.expect(r.astype(NP[dt]), dt, weak=False)
        lp, rp, _ = _layout_perms(kw.get("dn"), len(args["lhs"]) - 2)
        rshape = [args["rhs"][i] for i in rp]
        n = int(np.prod(rshape[1:]))
        c.tol = tol_accum(dt, n, float(mag.max()) if mag.size else 0.0)


# ---------------------------------------------------------------------------------------
IDENT = {"sum": 0.0, "prod": 1.0, "max": -np.inf, "min": np.inf}


def _identity(op, dt):
    if dt in FLOATS or op in ("sum", "prod"):
        return IDENT[op]
    info = np.iinfo(NP[dt])
    return info.min if op == "max" else info.max


def reduce_window_ref(x, op, window, strides, padding, base_dil=None, win_dil=None):
    nd = x.ndim
    base_dil = list(base_dil or [1] * nd)
    win_dil = list(win_dil or [1] * nd)
    ident = _identity(op, dtype_name(x))
    xf = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    weff = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    pads = padtype_to_pads(x.shape, weff, strides, padding)  # JAX: dilated window, undilated operand
    Sd = [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape, base_dil)]
    xd = np.full(Sd, ident, dtype=xf.dtype)
    xd[tuple(slice(None, None, d) for d in base_dil)] = xf
    xp = np.pad(xd, pads, constant_values=ident)
    weff = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    osp = [max(0, (p - we) // s + 1) for p, we, s in zip(xp.shape, weff, strides)]
    fn = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    out = np.full(osp, ident, dtype=xf.dtype)
    for k in itertools.product(*[range(w) for w in window]):
        sl = tuple(slice(kk * d, kk * d + (o - 1) * s + 1, s) for kk, d, o, s in zip(k, win_dil, osp, strides))
        if all(osp):
            out = fn(out, xp[sl])
    return out


def dtype_name(x):
    return {np.dtype(v): k for k, v in NP.items()}[x.dtype]


RW_CASES = [
    ("max", (4, 6), (2, 2), (1, 1), "VALID", None, None), ("max", (4, 6), (2, 2), (2, 2), "VALID", None, None),
    ("max", (4, 6), (3, 3), (1, 1), "SAME", None, None), ("max", (5, 7), (2, 3), (2, 2), "SAME", None, None),
    ("max", (4, 6), (2, 2), (1, 2), [(1, 0), (0, 1)], None, None), ("max", (4, 5), (2, 2), (1, 1), "VALID", (2, 1), None),
    ("max", (5, 7), (2, 2), (1, 1), "VALID", None, (1, 2)), ("sum", (4, 6), (2, 2), (1, 1), "VALID", None, None),
    ("sum", (4, 6), (3, 2), (2, 1), "SAME", None, None), ("sum", (4, 6), (2, 2), (1, 1), [(2, 1), (1, 1)], None, None),
    ("sum", (3, 4), (2, 2), (1, 1), [(1, 1), (1, 1)], (2, 2), (1, 1)), ("sum", (6, 6), (2, 2), (1, 1), "VALID", None, (2, 2)),
    ("min", (4, 6), (2, 2), (1, 1), "VALID", None, None), ("min", (4, 6), (3, 3), (2, 2), "SAME", None, None),
    ("min", (4, 6), (2, 3), (1, 1), [(0, 2), (1, 0)], (1, 2), (2, 1)), ("prod", (4, 6), (2, 2), (2, 2), "VALID", None, None),
    ("max", (2, 3, 8), (1, 1, 3), (1, 1, 2), "VALID", None, None), ("sum", (2, 3, 8), (1, 3, 2), (1, 1, 1), "SAME", None, None),
    ("max", (10,), (3,), (2,), "VALID", None, None), ("sum", (10,), (4,), (3,), "SAME_LOWER", None, None),
    ("max", (7,), (3,), (1,), "SAME", None, (2,)), ("max", (6,), (2,), (1,), [(3, 0)], None, None),
]


def _rw_sampler(op):
    if op == "prod":
        return lambda r, s: np.round(r.uniform(0.5, 1.5, s), 2)
    return lambda r, s: np.round(r.uniform(-3, 3, s), 2)


def gen_reduce_window(fam):
    for k, (op, shp, win, st, pad, bd, wd) in enumerate(RW_CASES):
        dts = ["float32", "int32"] if k % 4 == 0 else ["float32"]
        if k == 3:
            dts = ["float32", "float64", "float16", "uint32"]
        for dt in dts:
            smp = _rw_sampler(op) if dt in FLOATS else (lambda r, s: r.integers(0 if dt == "uint32" else -9, 9, s))
            view = ["T", "step", "flip", None][k % 4] if len(shp) >= 2 and dt == "float32" else None
            x = make_input(fam.rng, dt, shp, smp, view=view)
            r = reduce_window_ref(x.value(), op, win, st, pad, bd, wd)
            c = fam.case(f"reduce_window_{op}_{SHORT[dt]}_{tag_shape(shp)}_w{tag_shape(win)}_s{tag_shape(st)}_"
                         f"{pad if isinstance(pad, str) else 'explicit'}{'_bd' if bd else ''}{'_wd' if wd else ''}"
                         + "".join("_" + v[0][:2] for v in x.views), "reduce_window")
            c.param("op", op).param("window_dimensions", *win).param("window_strides", *st)
            _pad_params(c, "padding", pad)
            c.param("base_dilation", *(bd or [])).param("window_dilation", *(wd or []))
            c.inputs = [x]
            c.expect(r.astype(NP[dt]), dt, weak=False)
            if op in ("sum", "prod") and dt in FLOATS:
                mag = reduce_window_ref(np.abs(x.value()), op, win, st, pad, bd, wd)
                c.tol = tol_accum(dt, int(np.prod(win)), float(mag.max()) if mag.size else 0.0)


def pool_ref(x, kind, window, strides, padding, count_include_pad=True):
    nsp = len(window)
    full_w = [1] * (x.ndim - nsp) + list(window)
    full_s = [1] * (x.ndim - nsp) + list(strides)
    if isinstance(padding, str):
        pads = padtype_to_pads(x.shape, full_w, full_s, padding)
    else:
        pads = [(0, 0)] * (x.ndim - nsp) + [tuple(p) for p in padding]
    if kind == "max":
        return reduce_window_ref(x, "max", full_w, full_s, pads)
    s = reduce_window_ref(x.astype(np.float64), "sum", full_w, full_s, pads)
    if count_include_pad:
        return s / np.prod(window)
    return s / reduce_window_ref(np.ones(x.shape), "sum", full_w, full_s, pads)


def gen_pool(fam):
    cases = [((2, 3, 6, 5), (2, 2), (2, 2), "VALID"), ((2, 3, 6, 5), (3, 3), (1, 1), "SAME"),
             ((1, 2, 5, 5), (2, 2), (1, 1), [(1, 1), (0, 1)]), ((2, 2, 6, 6), (3, 2), (2, 1), "VALID"),
             ((2, 3, 9), (3,), (2,), "VALID"), ((2, 3, 9), (4,), (3,), "SAME"), ((1, 1, 4, 4), (4, 4), (4, 4), "VALID"),
             ((1, 2, 5, 6), (3, 3), (2, 2), "SAME")]
    for k, (shp, win, st, pad) in enumerate(cases):
        view = [None, "T", "step", None, "flip", None, None, "pad"][k]
        for kind, cip in (("max", None), ("avg", True), ("avg", False)):
            if kind == "avg" and cip is False and pad == "VALID":
                continue
            x = make_input(fam.rng, "float32", shp, lambda r, s: np.round(r.uniform(-3, 3, s), 2), view=view)
            r = pool_ref(x.value(), kind, win, st, pad, cip if cip is not None else True)
            op = "max_pool" if kind == "max" else "avg_pool"
            c = fam.case(f"{op}_{tag_shape(shp)}_w{tag_shape(win)}_s{tag_shape(st)}_"
                         f"{pad if isinstance(pad, str) else 'explicit'}{'' if cip is None else '_cip' + str(int(cip))}"
                         + "".join("_" + v[0][:2] for v in x.views), op)
            c.param("window", *win).param("strides", *st)
            _pad_params(c, "padding", pad)
            if cip is not None:
                c.param("count_include_pad", int(cip))
            c.inputs = [x]
            c.expect(r.astype(np.float32), "float32", weak=False)
            if kind == "avg":
                c.tol = tol_accum("float32", int(np.prod(win)), float(np.abs(x.value()).max()))
    x = make_input(fam.rng, "int32", (1, 2, 4, 4), lambda r, s: r.integers(-9, 9, s))
    c = fam.case("max_pool_i32_w2x2_SAME", "max_pool").param("window", 2, 2).param("strides", 2, 2)
    c.param("padding", "SAME")
    c.inputs = [x]
    c.expect(pool_ref(x.value(), "max", (2, 2), (2, 2), "SAME"), "int32", weak=False)


# ---------------------------------------------------------------------------------------
CONVERSIONS = [
    ("float32", "int32", [-3.7, -0.5, 0.0, 0.5, 2.9, 1000000.5, -2147483520.0, 2147483520.0, -0.0]),
    ("float32", "uint32", [0.0, 0.9, 3.7, 4000000000.0, 2147483648.0, 123.5]),
    ("float32", "bool", [0.0, -0.0, 0.5, -2.0, np.nan, np.inf, 1e-30]),
    ("float16", "int32", [-3.5, 2.75, 65504.0, -0.25, 100.0]),
    ("float64", "int32", [-3.999999, 7.5, -2147483648.0, 2147483647.0, 0.1]),
    ("float64", "uint32", [4294967295.0, 0.5, 17.9]),
    ("int32", "float32", [16777217, -16777219, 0, -5, 2147483647, -2147483648, 123456789]),
    ("int32", "float16", [1, -3, 2049, 2051, 3001, -65504, 70000, 0]),
    ("int32", "float64", [2147483647, -2147483648, 0, 42]),
    ("uint32", "float32", [4294967295, 0, 2147483648, 16777217]),
    ("uint32", "float64", [4294967295, 3, 0]),
    ("bool", "int32", [True, False, True]), ("bool", "float32", [True, False]), ("bool", "uint32", [False, True]),
    ("bool", "float16", [True, False]), ("int32", "bool", [0, -1, 5, 0, 2147483647]), ("uint32", "bool", [0, 4294967295, 2]),
    ("int32", "uint32", [0, 5, 2147483647]), ("uint32", "int32", [0, 7, 2147483647]),
    # no float32 subnormals: XLA's CPU backend flushes them (and so may GPUs)
    ("float64", "float32", [0.1, 1.5e-38, 3.4e38, 1e39, -1e39, np.nan, np.inf, 1.0000000596046448, 1 + 2**-24]),
    ("float32", "float16", [65504.0, 65519.0, 65520.0, 1e-5, 1e-8, 0.1, 2049.0, 2051.0, -np.inf, np.nan, 6e-8]),
    ("float16", "float32", [0.1, 65504.0, 6e-8, -np.inf, -0.0]), ("float16", "float64", [0.1, -2.5, 1e-4]),
    ("float32", "float64", [0.1, -3.4e38, 1.2e-38]), ("float64", "float16", [0.1, 1e5, 3.14159, -1e-6]),
    ("float32", "float32", [1.5, -0.0, np.nan]), ("int32", "int32", [1, -2]), ("bool", "bool", [True, False]),
]


def gen_convert(fam):
    for k, (src, dst, vals) in enumerate(CONVERSIONS):
        arr = np.array(vals).astype(NP[src])
        with np.errstate(all="ignore"):
            r = arr.astype(np.float64) != 0 if dst == "bool" else arr.astype(NP[dst])
        ops = ["convert_element_type", "Array.astype"] if k % 3 == 0 else ["convert_element_type"]
        for op in ops:
            c = fam.case(f"{'astype' if op == 'Array.astype' else 'convert'}_{SHORT[src]}_to_{SHORT[dst]}", op)
            c.param("dtype", dst)
            c.inputs = [Input(src, arr)]
            c.expect(np.asarray(r).astype(NP[dst]), dst, weak=False)
    for src, dst, view in (("float32", "int32", "T"), ("int32", "float32", "step"), ("float32", "float16", "flip"),
                           ("uint32", "float32", "pad"), ("float16", "float32", "bcast")):
        smp = (lambda r, s: np.round(r.uniform(-50, 50, s), 2)) if src in FLOATS else (lambda r, s: r.integers(0, 1000, s))
        x = make_input(fam.rng, src, (3, 4), smp, view=view)
        for op in ("convert_element_type", "Array.astype"):
            c = fam.case(f"{'astype' if op == 'Array.astype' else 'convert'}_{SHORT[src]}_to_{SHORT[dst]}_{view}", op)
            c.param("dtype", dst)
            c.inputs = [x]
            c.expect(x.value().astype(NP[dst]), dst, weak=False)
    # bitcast_convert_type reinterprets bits
    for src, dst, vals in (("float32", "int32", [1.0, -2.5, 0.0, -0.0, np.inf]), ("float32", "uint32", [1.0, -1.0, 3.0e38]),
                           ("int32", "float32", [1065353216, -1071644672, 0, 1]), ("uint32", "int32", [4294967295, 2147483648, 7]),
                           ("int32", "uint32", [-1, -2147483648, 5]), ("uint32", "float32", [1078530011, 2139095040])):
        arr = np.array(vals).astype(NP[src]) if src in FLOATS else np.array(vals, dtype=np.int64).astype(NP[src])
        c = fam.case(f"bitcast_{SHORT[src]}_to_{SHORT[dst]}", "bitcast_convert_type").param("dtype", dst)
        c.inputs = [Input(src, arr)]
        c.expect(arr.view(NP[dst]), dst, weak=False)
        if dst in FLOATS:
            c.tol = tol_exact()
