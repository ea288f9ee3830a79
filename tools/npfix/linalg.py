"""Linear-algebra fixtures: matmul, dot, vdot, inner, outer, tensordot and einsum, with
batching, broadcasting, 1-d operands, promotion and views."""

import numpy as np

from .core import NP, SHORT, FLOATS, default_sampler, make_input, promote, tag_shape, tol_accum


def _tag(inp):
    return f"{SHORT[inp.dtype]}_{tag_shape(inp.value().shape)}" + "".join("_" + v[0][:2] for v in inp.views)


def _mk(fam, dt, shape, view=None):
    smp = default_sampler(dt) if dt not in FLOATS else (lambda r, s: np.round(r.uniform(-2, 2, s), 2))
    if dt == "int32":
        smp = lambda r, s: r.integers(-5, 5, s, endpoint=True)
    return make_input(fam.rng, dt, shape, smp, view=view)


def contract_case(fam, op, cid, ins, fn, n, params=()):
    """fn(*arrays) computes the op; it also runs on absolute values for the tolerance."""
    rt = promote(*[(i.dtype, False) for i in ins])[0]
    hi = np.float64 if rt in FLOATS else np.int64
    xs = [np.asarray(i.value()).astype(NP[rt]).astype(hi) for i in ins]
    r = np.asarray(fn(*xs))
    c = fam.case(cid, op)
    for k, *v in params:
        c.param(k, *v)
    c.inputs = list(ins)
    c.expect(r.astype(NP[rt]), rt, weak=False)
    if rt in FLOATS:
        mag = np.asarray(fn(*[np.abs(x) for x in xs]))
        c.tol = tol_accum(rt, n, float(mag.max()) if mag.size else 0.0)
    return c


def gen_linalg(fam):
    # matmul
    for sa, sb, dts, views in (((2, 3), (3, 4), None, None), ((3,), (3, 4), None, None), ((2, 3), (3,), None, None),
                               ((3,), (3,), None, None), ((2, 2, 3), (2, 3, 4), None, None),
                               ((2, 1, 3, 4), (5, 4, 2), None, None), ((2, 4, 3), (3,), None, None),
                               ((3,), (2, 3, 4), None, None), ((0, 3), (3, 2), None, None), ((2, 0), (0, 3), None, None),
                               ((1, 3), (3, 1), None, None), ((2, 3), (3, 4), ("int32", "int32"), None),
                               ((2, 3), (3, 4), ("int32", "float32"), None), ((3, 5), (5, 2), ("float16", "float16"), None),
                               ((3, 5), (5, 2), ("float64", "float64"), None), ((2, 3), (3, 4), ("float16", "float32"), None),
                               ((3, 4), (4, 5), None, ("T", "T")), ((3, 4), (4, 5), None, ("step", "flip")),
                               ((3, 4), (4, 5), None, ("pad", "bcast")), ((2, 3, 4), (4, 2), None, ("stepT", None)),
                               ((17, 33), (33, 9), None, None), ((2, 3), (3, 4), ("uint32", "uint32"), None)):
        dts = dts or ("float32", "float32")
        views = views or (None, None)
        a, b = _mk(fam, dts[0], sa, views[0]), _mk(fam, dts[1], sb, views[1])
        for op in (("matmul",) if sa != (2, 3) or sb != (3, 4) or dts[0] != "float32" else ("matmul", "dot")):
            contract_case(fam, op, f"{op}_{_tag(a)}__{_tag(b)}", [a, b], np.matmul, sa[-1])
    # dot: N-d with 1-d, N-d with M-d, scalars
    for sa, sb in (((3,), (3,)), ((2, 3, 4), (4,)), ((2, 3), (4, 3, 5)), ((), (2, 3)), ((2, 3), ()), ((4,), (4, 2))):
        a, b = _mk(fam, "float32", sa), _mk(fam, "float32", sb)
        n = sa[-1] if sa and sb else 1
        contract_case(fam, "dot", f"dot_{_tag(a)}__{_tag(b)}", [a, b], np.dot, n)
    a, b = _mk(fam, "int32", (3,)), _mk(fam, "int32", (3,))
    contract_case(fam, "dot", f"dot_{_tag(a)}__{_tag(b)}", [a, b], np.dot, 3)
    # vdot flattens both operands
    for sa, sb, va in (((4,), (4,), None), ((2, 3), (3, 2), None), ((2, 3), (6,), "T"), ((2, 2), (4,), None)):
        a, b = _mk(fam, "float32" if sa != (2, 2) else "int32", sa, va), _mk(fam, "float32" if sa != (2, 2) else "int32", sb)
        contract_case(fam, "vdot", f"vdot_{_tag(a)}__{_tag(b)}", [a, b], lambda x, y: np.vdot(x, y), int(np.prod(sa)))
    for sa, sb in (((3,), (3,)), ((2, 3), (4, 3)), ((2, 3, 4), (5, 4)), ((), (3,)), ((3,), ())):
        a, b = _mk(fam, "float32", sa), _mk(fam, "float32", sb)
        contract_case(fam, "inner", f"inner_{_tag(a)}__{_tag(b)}", [a, b], np.inner, sa[-1] if sa and sb else 1)
    for sa, sb, dts in (((3,), (4,), ("float32", "float32")), ((2, 2), (3,), ("float32", "float32")),
                        ((3,), (2,), ("int32", "float32")), ((), (3,), ("float32", "float32")),
                        ((0,), (3,), ("float32", "float32"))):
        a, b = _mk(fam, dts[0], sa), _mk(fam, dts[1], sb)
        contract_case(fam, "outer", f"outer_{_tag(a)}__{_tag(b)}", [a, b], np.outer, 1)
    # tensordot
    for sa, sb, axes in (((3, 4), (5, 6), 0), ((3, 4), (4, 5), 1), ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (2, 3), 2),
                         ((2, 3, 4), (4, 2), 1)):
        a, b = _mk(fam, "float32", sa), _mk(fam, "float32", sb)
        n = int(np.prod(sa[len(sa) - axes:])) if axes else 1
        contract_case(fam, "tensordot(int)", f"tensordot_int{axes}_{_tag(a)}__{_tag(b)}", [a, b],
                      lambda x, y, axes=axes: np.tensordot(x, y, axes), n, [("axes", axes)])
    for sa, sb, ax_a, ax_b, views in (((3, 4, 5), (4, 3, 2), [1, 0], [0, 1], None), ((2, 3, 4), (4, 5), [2], [0], None),
                                      ((2, 3, 4), (5, 4), [-1], [1], None), ((3, 4), (4, 3), [0, 1], [1, 0], ("T", "flip")),
                                      ((2, 3), (3, 2), [], [], None)):
        views = views or (None, None)
        a, b = _mk(fam, "float32", sa, views[0]), _mk(fam, "float32", sb, views[1])
        n = int(np.prod([sa[i] for i in ax_a])) if ax_a else 1
        contract_case(fam, "tensordot(pairs)", f"tensordot_pairs_{_tag(a)}__{_tag(b)}_{'_'.join(map(str, ax_a))}".replace("-", "m"),
                      [a, b], lambda x, y, aa=ax_a, bb=ax_b: np.tensordot(x, y, (aa, bb)), n,
                      [("a_axes", *ax_a), ("b_axes", *ax_b)])
    # einsum
    for k, (subs, shapes, views, dts) in enumerate((
            ("ij,jk->ik", [(2, 3), (3, 4)], None, None), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], None, None),
            ("ii->i", [(4, 4)], None, None), ("ij->", [(3, 4)], None, None), ("i,j->ij", [(3,), (4,)], None, None),
            ("ijk->kji", [(2, 3, 4)], None, None), ("ij,jk", [(2, 3), (3, 4)], None, None), ("ba", [(2, 3)], None, None),
            ("ii", [(3, 3)], None, None), ("ij,ij->ij", [(2, 3), (2, 3)], None, None), ("ij,ij->", [(2, 3), (2, 3)], None, None),
            ("i,i->", [(5,), (5,)], None, None), ("bij,bkj->bik", [(2, 3, 4), (2, 5, 4)], None, None),
            ("ij->j", [(3, 4)], None, None), ("i,j,k->ijk", [(2,), (3,), (2,)], None, None),
            ("ij,jk->ki", [(2, 3), (3, 4)], ("T", "step"), None), ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)], None, None),
            ("ij,jk->ik", [(2, 3), (3, 4)], None, ("int32", "int32")), ("ij,jk->ik", [(2, 3), (3, 4)], None, ("int32", "float32")),
            ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)], None, None), ("ij,kj->ik", [(3, 4), (2, 4)], ("flip", "T"), None),
            ("i->i", [(4,)], None, None), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)], None, None),
            ("iij->ij", [(3, 3, 2)], None, None), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)], None, None))):
        views = views or (None,) * len(shapes)
        dts = dts or ("float32",) * len(shapes)
        ins = [_mk(fam, d, s, v) for d, s, v in zip(dts, shapes, views)]
        lhs = subs.split("->")[0].split(",")
        sizes = {}
        for term, s in zip(lhs, shapes):
            for ch, n in zip(term.replace("...", ""), s[len(s) - len(term.replace('...', '')):]):
                sizes[ch] = n
        out = subs.split("->")[1] if "->" in subs else "".join(sorted(c for c in set("".join(lhs)) if "".join(lhs).count(c) == 1 and c != "."))
        n = int(np.prod([sizes[c] for c in sizes if c not in out])) if sizes else 1
        contract_case(fam, "einsum", f"einsum_{k:02d}_" + "__".join(_tag(i) for i in ins), ins,
                      lambda *xs, subs=subs: np.einsum(subs, *xs), n, [("subscripts", subs)])
