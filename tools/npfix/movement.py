"""Movement fixtures: reshape, transpose, swapaxes, moveaxis, broadcasting, expand_dims,
squeeze, basic indexing, pad, concatenate, stack, split, flip, repeat, tile, take."""

import numpy as np

from .core import (NP, SHORT, Input, booleans, default_sampler, integers, make_input,
                   parse_index_token, promote, tag_shape)


def _cast(v, dtype):
    return np.asarray(v).astype(NP[dtype])


def _mk(fam, dt, shape, view=None):
    return make_input(fam.rng, dt, shape, default_sampler(dt), view=view)


def _tag(inp):
    return f"{SHORT[inp.dtype]}_{tag_shape(inp.value().shape)}" + "".join("_" + v[0][:2] for v in inp.views)


def _one(fam, op, cid, inputs, result, params=()):
    c = fam.case(cid, op)
    for k, *v in params:
        c.param(k, *v)
    c.inputs = list(inputs)
    results = result if isinstance(result, list) else [result]
    for r in results:
        c.expect(r, weak=False)
    return c


def gen_shape_ops(fam):
    dts = ["float32", "int32", "bool", "float16", "uint32", "float64"]
    # reshape (numpy::reshape and Array::reshape)
    for src, dst, view in (((2, 3, 4), (6, 4), None), ((2, 3, 4), (4, -1), None), ((2, 3, 4), (-1,), None),
                           ((2, 3, 4), (3, 2, 2, 2), "T"), ((3, 4), (2, 6), "step"), ((3, 4), (12, 1), "flip"),
                           ((3, 4), (4, 3), "pad"), ((3, 4), (6, -1), "bcast"), ((), (1, 1), None), ((1,), (), None),
                           ((0, 3), (3, 0), None), ((6,), (2, 1, 3), None), ((2, 3, 4), (-1, 2), "stepT")):
        for k, dt in enumerate(dts[:3] if view is None and src == (2, 3, 4) else ["float32"]):
            a = _mk(fam, dt, src, view)
            _one(fam, "reshape", f"reshape_{_tag(a)}_to_{tag_shape(dst).replace('-', 'm')}", [a],
                 a.value().reshape(dst), [("shape", *dst)])
    for src, dst in (((2, 3), (3, 2)), ((4,), (2, -1))):
        a = _mk(fam, "int32", src, "T" if len(src) == 2 else None)
        _one(fam, "Array.reshape", f"method_reshape_{_tag(a)}", [a], a.value().reshape(dst), [("shape", *dst)])
    for view in (None, "T", "step", "flip"):
        a = _mk(fam, "float32", (3, 4), view)
        _one(fam, "ravel", f"ravel_{_tag(a)}", [a], a.value().ravel())
    # transpose
    for shp, axes, view in (((2, 3), None, None), ((2, 3, 4), None, None), ((2, 3, 4), (1, 0, 2), None),
                            ((2, 3, 4), (2, 0, 1), "step"), ((2, 3, 4), (-1, 0, 1), None), ((5,), None, None),
                            ((), None, None), ((2, 3, 4, 5), (3, 1, 0, 2), None), ((3, 4), (1, 0), "T"),
                            ((3, 4), (1, 0), "flip"), ((0, 2, 3), (2, 0, 1), None)):
        for dt in (["float32", "bool", "float16"] if axes is None and shp == (2, 3, 4) else ["float32"]):
            a = _mk(fam, dt, shp, view)
            ax = "none" if axes is None else "_".join(str(x).replace("-", "m") for x in axes)
            _one(fam, "transpose", f"transpose_{_tag(a)}_{ax}", [a], np.transpose(a.value(), axes),
                 [("axes", "none")] if axes is None else [("axes", "list", *axes)])
    for op in ("Array.transpose", "Array.T"):
        for shp, view in (((2, 3), None), ((2, 3, 4), "step")):
            a = _mk(fam, "float32", shp, view)
            _one(fam, op, f"method_{op[6:].lower()}_{_tag(a)}", [a], a.value().T)
    for shp, a1, a2 in (((2, 3, 4), 0, 2), ((2, 3, 4), -1, 0), ((2, 3), 1, 1), ((2, 3, 4), 1, -2)):
        a = _mk(fam, "int32", shp, "T" if a1 == 0 else None)
        _one(fam, "swapaxes", f"swapaxes_{_tag(a)}_{a1}_{a2}".replace("-", "m"), [a],
             np.swapaxes(a.value(), a1, a2), [("axis1", a1), ("axis2", a2)])
    for shp, s, d in (((2, 3, 4), 0, -1), ((2, 3, 4), 2, 0), ((2, 3, 4), -1, 1), ((3,), 0, 0)):
        a = _mk(fam, "float32", shp)
        _one(fam, "moveaxis(int)", f"moveaxis_int_{_tag(a)}_{s}_{d}".replace("-", "m"), [a],
             np.moveaxis(a.value(), s, d), [("source", s), ("destination", d)])
    for shp, s, d in (((2, 3, 4), [0, 1], [-1, -2]), ((2, 3, 4, 5), [3, 0], [0, 3]), ((2, 3, 4), [2], [0]),
                      ((2, 3), [], [])):
        a = _mk(fam, "float32", shp, "flip" if len(s) == 2 else None)
        _one(fam, "moveaxis(vector)", f"moveaxis_vec_{_tag(a)}_{'_'.join(map(str, s))}".replace("-", "m"), [a],
             np.moveaxis(a.value(), s, d), [("source", *s), ("destination", *d)])
    # broadcasting
    for src, dst, view in (((3,), (2, 3), None), ((1, 3), (4, 2, 3), None), ((), (2, 2), None), ((2, 1), (2, 0), None),
                           ((3, 1), (3, 4), None), ((2, 3), (2, 3), None), ((4, 1), (2, 4, 3), "flip"),
                           ((3, 4), (2, 3, 4), "T"), ((1, 4), (3, 4), "step")):
        for dt in (["float32", "bool", "uint32"] if src == (3,) else ["float32"]):
            a = _mk(fam, dt, src, view)
            _one(fam, "broadcast_to", f"broadcast_to_{_tag(a)}_to_{tag_shape(dst)}", [a],
                 np.broadcast_to(a.value(), dst), [("shape", *dst)])
    for shapes, dtypes in ((((3, 1), (1, 4)), ("float32", "int32")), (((2, 3), ()), ("float32", "float32")),
                           (((4,), (2, 1), (1, 1, 1)), ("bool", "float16", "int32")), (((2, 2),), ("float32",)),
                           (((0, 1), (1, 5)), ("float32", "float32"))):
        ins = [_mk(fam, dt, s) for dt, s in zip(dtypes, shapes)]
        outs = [np.asarray(x) for x in np.broadcast_arrays(*[i.value() for i in ins])]
        _one(fam, "broadcast_arrays", "broadcast_arrays_" + "__".join(_tag(i) for i in ins), ins, outs)
    for a, b in (((2, 1), (3,)), ((), (2, 3)), ((5, 1, 4), (3, 1)), ((0,), (1,)), ((1,), (0,)), ((4, 1), (4, 1))):
        c = fam.case(f"broadcast_shapes_{tag_shape(a)}__{tag_shape(b)}", "broadcast_shapes")
        c.param("a", *a).param("b", *b)
        c.expect(np.zeros(np.broadcast_shapes(a, b), np.int32), weak=False)
    # expand_dims / squeeze
    for shp, axes in (((3,), [0]), ((3,), [-1]), ((2, 3), [0, 2]), ((2, 3), [1, -1]), ((), [0]), ((2, 3), [3, 0]),
                      ((2, 3), [-3])):
        a = _mk(fam, "float32", shp, "T" if len(shp) == 2 and axes == [1, -1] else None)
        _one(fam, "expand_dims", f"expand_dims_{_tag(a)}_{'_'.join(map(str, axes))}".replace("-", "m"), [a],
             np.expand_dims(a.value(), tuple(axes)), [("axis", "list", *axes)])
    for shp, axes in (((1, 3, 1), None), ((1, 3, 1), [0]), ((1, 3, 1), [0, 2]), ((1, 3, 1), [-1]), ((2, 3), None),
                      ((1,), None), ((1, 1), [1]), ((3, 1), [1])):
        a = _mk(fam, "int32", shp, "flip" if shp == (3, 1) else None)
        _one(fam, "squeeze", f"squeeze_{_tag(a)}_{'none' if axes is None else '_'.join(map(str, axes))}".replace("-", "m"),
             [a], np.squeeze(a.value(), None if axes is None else tuple(axes)),
             [("axis", "none")] if axes is None else [("axis", "list", *axes)])


INDEXES = [["1"], ["-1"], ["1:3"], ["::2"], ["::-1"], ["-2:"], [":", "2"], ["...", "1"], ["None"],
           ["1", "None", "::-2"], ["...", "None"], ["1:100"], ["-100:2"], ["3:1"], ["5:0:-2"], ["1", "2", "3"],
           [":", "None", "1:4", "..."], ["...", "::-1", "None"], ["-1", "...", "-1"], ["None", "None"], [],
           ["0:0"], ["::3", "-1:-4:-1", "1::2"], ["-3", ":", "4:-7:-1"], ["...", "-5"], ["1:-1", "..."]]


def gen_index(fam):
    for k, idx in enumerate(INDEXES):
        a = _mk(fam, "float32" if k % 3 else "int32", (4, 5, 6))
        x = a.value()
        r = x[tuple(parse_index_token(t) for t in idx)]
        _one(fam, "index", f"index_{k:02d}_{_tag(a)}", [a], np.array(r), [("index", *idx)])
    for k, (shp, view, idx) in enumerate((((3, 4), "T", ["::-1", "1"]), ((3, 4), "flip", ["1:", "::2"]),
                                          ((3, 4), "step", ["-1", "None"]), ((3, 4), "pad", ["::2", "::-3"]),
                                          ((3, 4), "bcast", [":", "2:"]), ((0, 3), None, [":", "1"]),
                                          ((5,), None, ["None", "...", "None"]), ((), None, ["None"]), ((), None, ["..."]))):
        a = _mk(fam, "bool" if k == 4 else "float32", shp, view)
        r = a.value()[tuple(parse_index_token(t) for t in idx)]
        _one(fam, "index", f"index_view_{k}_{_tag(a)}", [a], np.array(r), [("index", *idx)])
    for k, idx in enumerate((["1"], ["::-1", "None", "2"], ["...", "1:3"])):
        a = _mk(fam, "float16" if k == 2 else "int32", (3, 4))
        r = a.value()[tuple(parse_index_token(t) for t in idx)]
        _one(fam, "Array.operator[]", f"method_index_{k}_{_tag(a)}", [a], np.array(r), [("index", *idx)])
    a = _mk(fam, "float32", (4, 3))
    _one(fam, "Array.operator[](int)", "method_index_int_m1", [a], a.value()[-1], [("i", -1)])


def _pad_case(fam, a, widths, mode, value=None):
    x = a.value()
    w = widths if len(widths) != 1 else widths * x.ndim
    kw = {"constant_values": np.array(value).astype(x.dtype)} if mode == "constant" else {}
    r = np.pad(x, w, mode=mode, **kw)
    flat = [v for pair in widths for v in pair]
    params = [("pad_width", *flat), ("mode", mode)]
    if value is not None:
        params.append(("constant_value", value))
    return _one(fam, "pad", f"pad_{mode}_{_tag(a)}_{'_'.join(map(str, flat))}", [a], r, params)


def gen_pad(fam):
    for mode in ("constant", "edge", "reflect", "symmetric"):
        val = 0 if mode == "constant" else None
        _pad_case(fam, _mk(fam, "float32", (5,)), [(2, 3)], mode, val)
        _pad_case(fam, _mk(fam, "float32", (3, 4)), [(1, 2)], mode, val)
        _pad_case(fam, _mk(fam, "int32", (3, 4)), [(0, 2), (3, 1)], mode, val)
        _pad_case(fam, _mk(fam, "float32", (2, 3, 4)), [(1, 0), (0, 0), (2, 2)], mode, val)
        _pad_case(fam, _mk(fam, "bool", (3, 3)), [(1, 1), (2, 0)], mode, val)
        _pad_case(fam, _mk(fam, "float16", (4,)), [(0, 0)], mode, val)
        big = 2 if mode in ("reflect",) else 3
        _pad_case(fam, _mk(fam, "float32", (3, 4)), [(big, big), (1, big)], mode, val)
        for view in ("T", "step", "flip", "bcast"):
            _pad_case(fam, _mk(fam, "float32", (3, 4), view), [(1, 2), (2, 1)], mode, val)
    _pad_case(fam, _mk(fam, "float32", (3, 4)), [(1, 1)], "constant", 2.5)
    _pad_case(fam, _mk(fam, "int32", (3,)), [(2, 1)], "constant", -7)
    _pad_case(fam, _mk(fam, "uint32", (2, 2)), [(1, 1)], "constant", 9)


def gen_join_split(fam):
    rng = fam.rng
    for shapes, axis, dts, views in ((((2, 3), (4, 3)), 0, None, None), (((2, 3), (2, 1), (2, 2)), 1, None, None),
                                     (((2, 3, 4), (2, 3, 1)), -1, None, None), (((3,), (0,), (2,)), 0, None, None),
                                     (((2, 3),), 0, None, None), (((2, 3), (2, 3)), 0, ("int32", "float32"), None),
                                     (((2,), (2,)), 0, ("bool", "int32"), None), (((2,), (3,)), 0, ("float16", "float32"), None),
                                     (((3, 4), (3, 4)), 1, None, ("T", "flip")), (((3, 4), (2, 4)), 0, None, ("step", "pad")),
                                     (((3, 4), (3, 4), (3, 4)), -2, ("uint32", "uint32", "uint32"), ("bcast", None, "T"))):
        dts = dts or ("float32",) * len(shapes)
        views = views or (None,) * len(shapes)
        ins = [_mk(fam, d, s, v) for d, s, v in zip(dts, shapes, views)]
        rt = promote(*[(i.dtype, False) for i in ins])[0]
        r = np.concatenate([_cast(i.value(), rt) for i in ins], axis=axis)
        _one(fam, "concatenate", f"concatenate_ax{axis}_" + "__".join(_tag(i) for i in ins), ins,
             _cast(r, rt), [("axis", axis)])
    for shapes, axis, dts, views in ((((2, 3), (2, 3)), 0, None, None), (((2, 3), (2, 3), (2, 3)), 1, None, None),
                                     (((2, 3), (2, 3)), -1, None, None), (((), (), ()), 0, None, None),
                                     (((3,), (3,)), 0, ("int32", "float16"), None), (((3, 4), (3, 4)), 2, None, ("T", "step")),
                                     (((4,),), 0, ("bool",), None), (((0, 2), (0, 2)), 1, None, None)):
        dts = dts or ("float32",) * len(shapes)
        views = views or (None,) * len(shapes)
        ins = [_mk(fam, d, s, v) for d, s, v in zip(dts, shapes, views)]
        rt = promote(*[(i.dtype, False) for i in ins])[0]
        r = np.stack([_cast(i.value(), rt) for i in ins], axis=axis)
        _one(fam, "stack", f"stack_ax{axis}_" + "__".join(_tag(i) for i in ins), ins, _cast(r, rt), [("axis", axis)])
    for shp, sections, axis, view in (((6, 4), 3, 0, None), ((6, 4), 2, 1, None), ((2, 3, 6), 3, -1, "T"),
                                      ((4,), 1, 0, None), ((6, 4), 2, 0, "step"), ((0, 4), 2, 1, None)):
        a = _mk(fam, "float32", shp, view)
        outs = np.split(a.value(), sections, axis=axis)
        _one(fam, "split(sections)", f"split_sections_{_tag(a)}_{sections}_ax{axis}".replace("-", "m"), [a],
             [np.array(o) for o in outs], [("sections", sections), ("axis", axis)])
    for shp, idx, axis, view in (((7,), [2, 5], 0, None), ((7, 2), [1, 1, 3], 0, None), ((3, 5), [0], 1, None),
                                 ((3, 6), [2, 4], -1, "flip"), ((5,), [0, 5], 0, None)):
        a = _mk(fam, "int32", shp, view)
        outs = np.split(a.value(), idx, axis=axis)
        _one(fam, "split(indices)", f"split_indices_{_tag(a)}_{'_'.join(map(str, idx))}_ax{axis}".replace("-", "m"), [a],
             [np.array(o) for o in outs], [("indices", *idx), ("axis", axis)])
    # flip
    for shp, axes, view in (((2, 3, 4), None, None), ((2, 3, 4), [0], None), ((2, 3, 4), [0, 2], None),
                            ((2, 3, 4), [-1], None), ((5,), None, None), ((), None, None), ((3, 4), [1], "T"),
                            ((3, 4), None, "step"), ((3, 4), [0], "flip"), ((3, 4), [0, 1], "pad")):
        a = _mk(fam, "float32" if shp != (5,) else "bool", shp, view)
        _one(fam, "flip", f"flip_{_tag(a)}_{'none' if axes is None else '_'.join(map(str, axes))}".replace("-", "m"),
             [a], np.flip(a.value(), None if axes is None else tuple(axes)),
             [("axis", "none")] if axes is None else [("axis", "list", *axes)])
    # repeat / tile
    for shp, reps, axis, view in (((2, 3), 2, None, None), ((2, 3), 3, 0, None), ((2, 3), 2, 1, "T"), ((2, 3), 0, 1, None),
                                  ((), 4, None, None), ((3,), 1, 0, "flip"), ((2, 3), 2, -1, "step")):
        a = _mk(fam, "int32", shp, view)
        _one(fam, "repeat(int)", f"repeat_int_{_tag(a)}_{reps}_ax{axis}".replace("-", "m"), [a],
             np.repeat(a.value(), reps, axis=axis), [("repeats", reps), ("axis", "none" if axis is None else axis)])
    for shp, reps, axis in (((2, 3), [1, 0, 3], 1), ((3, 2), [2, 1, 2], 0), ((4,), [0, 1, 2, 3], None),
                            ((2, 2), [1, 2, 0, 1], None), ((2, 3), [2], 0)):
        a = _mk(fam, "float32", shp)
        _one(fam, "repeat(vector)", f"repeat_vec_{_tag(a)}_{'_'.join(map(str, reps))}_ax{axis}", [a],
             np.repeat(a.value(), reps, axis=axis), [("repeats", *reps), ("axis", "none" if axis is None else axis)])
    for shp, reps, view in (((3,), [2], None), ((2, 3), [2, 1], None), ((2, 3), [1, 3], "T"), ((2, 3), [2, 2, 2], None),
                            ((2, 3), [3], None), ((), [2, 3], None), ((2, 3), [0, 2], None), ((2, 1, 2), [1, 2, 1], "flip")):
        a = _mk(fam, "float32" if view else "uint32", shp, view)
        _one(fam, "tile", f"tile_{_tag(a)}_{'_'.join(map(str, reps))}", [a], np.tile(a.value(), reps),
             [("reps", *reps)])
    # take: negative indices wrap once, then out-of-range indices are clamped
    def clamp_take(x, idx, axis):
        n = x.size if axis is None else x.shape[axis]
        idx = np.where(idx < 0, idx + n, idx)
        return np.take(x, np.clip(idx, 0, n - 1), axis=axis)

    for shp, idx, axis, dt, view in (((5,), [0, 4, 2, 2], None, "float32", None), ((3, 4), [[0, 2], [-1, 1]], None, "float32", None),
                                     ((3, 4), [2, 0], 0, "int32", None), ((3, 4), [3, -1, 0, 1], 1, "float32", None),
                                     ((2, 3, 4), [[1], [0]], -1, "float16", None), ((3, 4), 1, 0, "float32", None),
                                     ((3, 4), [-4, -1, 3], 1, "bool", None), ((3, 4), [1, 2], 1, "float32", "T"),
                                     ((3, 4), [0, 2, -1], 0, "float32", "step"), ((5,), [7, -1, -7, 100, -100], None, "int32", None),
                                     ((3, 4), [[5, -9], [1, 4]], 1, "float32", None), ((2, 3), [], 1, "float32", None)):
        a = _mk(fam, dt, shp, view)
        ii = np.array(idx, dtype=np.int32)
        ind = Input("int32", ii)
        _one(fam, "take", f"take_{_tag(a)}_idx{tag_shape(ii.shape)}_ax{'none' if axis is None else axis}".replace("-", "m"),
             [a, ind], clamp_take(a.value(), ii, axis), [("axis", "none" if axis is None else axis)])
    for shp, axis, ishape, view in (((3, 4), 1, (3, 2), None), ((3, 4), 0, (2, 4), None), ((2, 3, 4), -1, (2, 3, 4), None),
                                    ((3, 4), 1, (3, 4), "T"), ((3, 4), 0, (1, 4), None), ((3, 4), 1, (1, 3), None),
                                    ((4,), 0, (6,), "flip")):
        a = _mk(fam, "float32", shp, view)
        n = a.value().shape[axis]
        ii = rng.integers(-n, n, ishape).astype(np.int32)
        wrapped = np.where(ii < 0, ii + n, ii)
        x = a.value()
        # non-axis dimensions broadcast against each other
        other = [max(x.shape[d], ii.shape[d]) for d in range(x.ndim)]
        xb = np.broadcast_to(x, tuple(n if d == axis % x.ndim else other[d] for d in range(x.ndim)))
        wb = np.broadcast_to(wrapped, tuple(ii.shape[d] if d == axis % x.ndim else other[d] for d in range(x.ndim)))
        r = np.take_along_axis(xb, wb, axis=axis)
        _one(fam, "take_along_axis", f"take_along_axis_{_tag(a)}_idx{tag_shape(ishape)}_ax{axis}".replace("-", "m"),
             [a, Input("int32", ii)], r, [("axis", axis)])
