#!/usr/bin/env python3
"""Optional cross-check of tests/fixtures/numpy_ops.txt against real JAX (needs `jax`; the
fixtures themselves depend on numpy only). Runs every case through jax.numpy / jax.lax and
compares dtype, weak type and values with the case's own tolerance.

    python3 tools/verify_numpy_fixtures_jax.py          # cases without float64 (x64 off)
    python3 tools/verify_numpy_fixtures_jax.py --x64    # cases with float64 (values only)
"""

import argparse
import math
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--x64", action="store_true")
ap.add_argument("--file", default=None)
ap.add_argument("-v", action="store_true")
ARGS = ap.parse_args()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", ARGS.x64)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.scipy.special import erf  # noqa: E402

import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npfix.core import NP, parse_index_token  # noqa: E402


def parse(path):
    cases, cur = [], None
    for line in open(path):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        t = line.split(" ")
        if t[0] == "case":
            cur = dict(id=t[1], op=t[2], params={}, inputs=[], expects=[], error=None, tol=(0.0, 0.0))
        elif t[0] == "param":
            cur["params"][t[1]] = t[2:]
        elif t[0] in ("input", "expect"):
            dt, w = t[1], t[2]
            k = t.index(":")
            shape = tuple(int(x) for x in t[3:k])
            vals = t[k + 1:]
            if w == "1" and t[0] == "input":
                arr = np.array(float(vals[0]) if dt.startswith("float") else int(vals[0]))
            elif dt in ("float16", "float32", "float64"):
                arr = np.array([float(v) for v in vals], dtype=np.float64).astype(NP[dt]).reshape(shape)
            else:
                arr = np.array([int(v) for v in vals], dtype=np.int64).astype(NP[dt]).reshape(shape)
            if t[0] == "input":
                cur["inputs"].append(dict(dtype=dt, weak=w == "1", arr=arr, views=[]))
            else:
                cur["expects"].append(dict(dtype=dt, weak=None if w == "-" else w == "1", arr=arr))
        elif t[0] == "view":
            cur["inputs"][-1]["views"].append((t[1], t[2:]))
        elif t[0] == "expect_error":
            cur["error"] = line.split(" ", 1)[1]
        elif t[0] == "tol":
            cur["tol"] = (float(t[1]), float(t[2]))
        elif t[0] == "end":
            cases.append(cur)
    return cases


def make_input(inp):
    if inp["weak"]:
        v = inp["arr"].item()
        return float(v) if inp["dtype"].startswith("float") else int(v)
    x = jnp.asarray(inp["arr"])
    for kind, args in inp["views"]:
        if kind == "transpose":
            x = jnp.transpose(x, [int(a) for a in args])
        elif kind == "index":
            x = x[tuple(parse_index_token(a) for a in args)]
        elif kind == "flip":
            x = jnp.flip(x, tuple(int(a) for a in args))
        elif kind == "pad":
            w = [int(a) for a in args[1:]]
            x = jnp.pad(x, [(w[2 * i], w[2 * i + 1]) for i in range(len(w) // 2)],
                        constant_values=np.array(float(args[0])).astype(x.dtype))
        elif kind == "broadcast_to":
            x = jnp.broadcast_to(x, tuple(int(a) for a in args))
    return x


def ints(p, k):
    return [int(v) for v in p[k]]


def axes(p, k="axis"):
    t = p[k]
    if t == ["none"]:
        return None
    if t and t[0] == "list":
        return tuple(int(v) for v in t[1:])
    return int(t[0])


def opt_axis(p, k="axis"):
    return None if p.get(k, ["none"]) == ["none"] else int(p[k][0])


def dtype(p, k="dtype"):
    return None if k not in p else jnp.dtype(p[k][0])


def padding(p, k="padding"):
    t = p[k]
    if len(t) == 1 and t[0][0].isalpha():
        return t[0]
    v = [int(x) for x in t]
    return [(v[2 * i], v[2 * i + 1]) for i in range(len(v) // 2)]


def scalar_like(text, x):
    return float(text) if jnp.issubdtype(x.dtype, jnp.floating) else int(float(text))


def pool(x, kind, window, strides, pad, cip=True):
    nsp = len(window)
    w = (1,) * (x.ndim - nsp) + tuple(window)
    s = (1,) * (x.ndim - nsp) + tuple(strides)
    pads = pad if isinstance(pad, str) else [(0, 0)] * (x.ndim - nsp) + list(pad)
    if kind == "max":
        init = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
        return lax.reduce_window(x, jnp.array(init, x.dtype), lax.max, w, s, pads)
    y = lax.reduce_window(x, 0.0, lax.add, w, s, pads)
    if cip:
        return y / np.prod(window)
    return y / lax.reduce_window(jnp.ones_like(x), 0.0, lax.add, w, s, pads)


def reduce_window(x, p):
    op = p["op"][0]
    fl = jnp.issubdtype(x.dtype, jnp.floating)
    init = {"sum": 0, "prod": 1, "max": -jnp.inf if fl else jnp.iinfo(x.dtype).min,
            "min": jnp.inf if fl else jnp.iinfo(x.dtype).max}[op]
    fn = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}[op]
    return lax.reduce_window(x, jnp.array(init, x.dtype), fn, tuple(ints(p, "window_dimensions")),
                             tuple(ints(p, "window_strides")), padding(p),
                             tuple(ints(p, "base_dilation")) or None, tuple(ints(p, "window_dilation")) or None)


def take(a, i, axis):
    n = a.size if axis is None else a.shape[axis]
    i = jnp.where(i < 0, i + n, i)
    return jnp.take(a, i, axis=axis, mode="clip")


def clip(x, p):
    ins = x[1:]
    b = p["bounds"]
    lo = ins[b.index("min")] if "min" in b else None
    hi = ins[b.index("max")] if "max" in b else None
    return jnp.clip(x[0], lo, hi)


BIN = {"operator+": lambda a, b: a + b, "operator*": lambda a, b: a * b, "operator/": lambda a, b: a / b,
       "operator%": lambda a, b: a % b, "operator<": lambda a, b: a < b, "operator<=": lambda a, b: a <= b,
       "operator>": lambda a, b: a > b, "operator>=": lambda a, b: a >= b, "operator==": lambda a, b: a == b,
       "operator!=": lambda a, b: a != b, "operator&": lambda a, b: a & b, "operator|": lambda a, b: a | b,
       "operator^": lambda a, b: a ^ b}


def run(op, x, p):
    if op in BIN:
        return BIN[op](jnp.asarray(x[0]) if not isinstance(x[0], (int, float)) else x[0], x[1])
    if op == "operator-":
        return -x[0] if len(x) == 1 else x[0] - x[1]
    if op == "operator~":
        return ~x[0]
    if op == "operator!":
        return jnp.logical_not(x[0])
    if op in ("array", "array(vector)"):
        return x[0]
    if op == "asarray":
        return jnp.asarray(x[0], dtype=dtype(p))
    if op in ("zeros", "ones"):
        return getattr(jnp, op)(ints(p, "shape"), dtype=dtype(p) or jnp.float32)
    if op == "full":
        return jnp.full(ints(p, "shape"), x[0], dtype=dtype(p))
    if op in ("zeros_like", "ones_like"):
        return getattr(jnp, op)(x[0], dtype=dtype(p))
    if op == "full_like":
        return jnp.full_like(x[0], x[1], dtype=dtype(p))
    num = int if p.get("integral") == ["1"] else float
    if op == "arange(stop)":
        return jnp.arange(num(p["stop"][0]), dtype=dtype(p))
    if op == "arange(start,stop,step)":
        return jnp.arange(num(p["start"][0]), num(p["stop"][0]), num(p["step"][0]), dtype=dtype(p))
    if op == "linspace":
        return jnp.linspace(float(p["start"][0]), float(p["stop"][0]), int(p["num"][0]),
                            endpoint=p["endpoint"] == ["1"], dtype=dtype(p))
    if op == "eye":
        return jnp.eye(int(p["n"][0]), int(p["m"][0]) if "m" in p else None, int(p["k"][0]), dtype=dtype(p))
    if op == "rsqrt":
        return lax.rsqrt(jnp.asarray(x[0], dtype=jnp.result_type(x[0], 1.0)))
    if op == "erf":
        return erf(x[0])
    if op == "where":
        return jnp.where(x[0], x[1], x[2])
    if op == "clip":
        return clip(x, p)
    if op in ("sum", "prod", "max", "min", "amax", "amin", "mean", "any", "all"):
        return getattr(jnp, op)(x[0], axis=axes(p), keepdims=p["keepdims"] == ["1"])
    if op in ("var", "std"):
        return getattr(jnp, op)(x[0], axis=axes(p), keepdims=p["keepdims"] == ["1"], ddof=int(p.get("ddof", ["0"])[0]))
    if op in ("argmax", "argmin"):
        return getattr(jnp, op)(x[0], axis=opt_axis(p), keepdims=p["keepdims"] == ["1"])
    if op in ("cumsum", "cumprod"):
        return getattr(jnp, op)(x[0], axis=opt_axis(p))
    if op in ("reshape", "Array.reshape"):
        return jnp.reshape(x[0], ints(p, "shape"))
    if op == "transpose":
        return jnp.transpose(x[0], axes(p, "axes"))
    if op in ("Array.transpose", "Array.T"):
        return x[0].T
    if op == "swapaxes":
        return jnp.swapaxes(x[0], int(p["axis1"][0]), int(p["axis2"][0]))
    if op == "moveaxis(int)":
        return jnp.moveaxis(x[0], int(p["source"][0]), int(p["destination"][0]))
    if op == "moveaxis(vector)":
        return jnp.moveaxis(x[0], ints(p, "source"), ints(p, "destination"))
    if op == "broadcast_to":
        return jnp.broadcast_to(x[0], ints(p, "shape"))
    if op == "broadcast_arrays":
        return jnp.broadcast_arrays(*x)
    if op == "broadcast_shapes":
        return jnp.zeros(jnp.broadcast_shapes(tuple(ints(p, "a")), tuple(ints(p, "b"))), jnp.int32)
    if op == "expand_dims":
        return jnp.expand_dims(x[0], axes(p))
    if op == "squeeze":
        return jnp.squeeze(x[0], axes(p))
    if op in ("index", "Array.operator[]"):
        return x[0][tuple(parse_index_token(t) for t in p["index"])]
    if op == "Array.operator[](int)":
        return x[0][int(p["i"][0])]
    if op == "pad":
        w = ints(p, "pad_width")
        pw = [(w[2 * i], w[2 * i + 1]) for i in range(len(w) // 2)]
        pw = pw[0] if len(pw) == 1 else pw
        mode = p["mode"][0]
        if mode == "constant":
            cv = scalar_like(p["constant_value"][0], x[0]) if "constant_value" in p else 0
            return jnp.pad(x[0], pw, mode="constant", constant_values=cv)
        return jnp.pad(x[0], pw, mode=mode)
    if op in ("concatenate", "stack"):
        return getattr(jnp, op)(x, axis=int(p["axis"][0]))
    if op == "split(sections)":
        return jnp.split(x[0], int(p["sections"][0]), axis=int(p["axis"][0]))
    if op == "split(indices)":
        return jnp.split(x[0], ints(p, "indices"), axis=int(p["axis"][0]))
    if op == "flip":
        return jnp.flip(x[0], axes(p))
    if op == "repeat(int)":
        return jnp.repeat(x[0], int(p["repeats"][0]), axis=opt_axis(p))
    if op == "repeat(vector)":
        return jnp.repeat(x[0], jnp.array(ints(p, "repeats")), axis=opt_axis(p))
    if op == "tile":
        return jnp.tile(x[0], ints(p, "reps"))
    if op == "take":
        return take(x[0], x[1], opt_axis(p))
    if op == "take_along_axis":
        n = x[0].shape[int(p["axis"][0])]
        return jnp.take_along_axis(x[0], jnp.where(x[1] < 0, x[1] + n, x[1]), axis=int(p["axis"][0]))
    if op == "tensordot(int)":
        return jnp.tensordot(x[0], x[1], int(p["axes"][0]))
    if op == "tensordot(pairs)":
        return jnp.tensordot(x[0], x[1], (ints(p, "a_axes"), ints(p, "b_axes")))
    if op == "einsum":
        return jnp.einsum(p["subscripts"][0], *x)
    if op == "conv_general_dilated":
        dn = tuple(p["dimension_numbers"]) if "dimension_numbers" in p else None
        return lax.conv_general_dilated(x[0], x[1], ints(p, "window_strides"), padding(p),
                                        ints(p, "lhs_dilation") or None, ints(p, "rhs_dilation") or None, dn,
                                        int(p["feature_group_count"][0]), int(p["batch_group_count"][0]))
    if op == "conv":
        return lax.conv(x[0], x[1], ints(p, "window_strides"), padding(p))
    if op == "reduce_window":
        return reduce_window(x[0], p)
    if op in ("max_pool", "avg_pool"):
        return pool(x[0], op[:3], ints(p, "window"), ints(p, "strides"), padding(p),
                    p.get("count_include_pad", ["1"]) == ["1"])
    if op in ("convert_element_type", "Array.astype"):
        return lax.convert_element_type(x[0], jnp.dtype(p["dtype"][0]))
    if op == "bitcast_convert_type":
        return lax.bitcast_convert_type(x[0], jnp.dtype(p["dtype"][0]))
    return getattr(jnp, op)(*x)


def main():
    path = ARGS.file or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                                     "fixtures", "numpy_ops.txt")
    cases = parse(path)
    fails, checked, skipped = [], 0, 0
    for c in cases:
        f64 = any(i["dtype"] == "float64" for i in c["inputs"]) or any(e["dtype"] == "float64" for e in c["expects"]) \
            or c["params"].get("dtype") == ["float64"]
        if f64 != ARGS.x64:
            skipped += 1
            continue
        checked += 1
        try:
            xs = [make_input(i) for i in c["inputs"]]
            out = run(c["op"], xs, c["params"])
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            outs = [jnp.asarray(o) for o in outs]
            [o.block_until_ready() for o in outs]
        except Exception as e:  # noqa: BLE001
            if c["error"] is None:
                fails.append((c["id"], f"raised {type(e).__name__}: {str(e)[:200]}"))
            continue
        if c["error"] is not None:
            fails.append((c["id"], f"expected an error ({c['error']}) but JAX returned"))
            continue
        if len(outs) != len(c["expects"]):
            fails.append((c["id"], f"{len(outs)} outputs, want {len(c['expects'])}"))
            continue
        for o, e in zip(outs, c["expects"]):
            got = np.asarray(o)
            msg = []
            if got.shape != e["arr"].shape:
                fails.append((c["id"], f"shape {got.shape} want {e['arr'].shape}"))
                continue
            if not ARGS.x64 and str(got.dtype) != e["dtype"]:
                msg.append(f"dtype {got.dtype} want {e['dtype']}")
            if not ARGS.x64 and e["weak"] is not None and bool(o.weak_type) != e["weak"]:
                msg.append(f"weak {bool(o.weak_type)} want {e['weak']}")
            g = got.astype(np.float64)
            w = e["arr"].astype(np.float64)
            rtol, atol = c["tol"]
            ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= atol + rtol * np.abs(w))
            if not ok.all():
                k = int(np.argmin(ok.reshape(-1)))
                msg.append(f"{int((~ok).sum())} values differ, e.g. [{k}] {g.reshape(-1)[k]!r} vs {w.reshape(-1)[k]!r}"
                           f" (rtol {rtol} atol {atol})")
            if msg:
                fails.append((c["id"], "; ".join(msg)))
    # Where kiln deliberately differs from JAX (decided by the lead, or kiln's API contract).
    known = {"floor_divide_i32_signs_and_zero", "floor_divide_u32_zero", "floor_divide_i32_by_weak_zero",
             "error_bitcast_itemsize", "error_array_vector_size"}
    fails = [f for f in fails if f[0] not in known]
    for cid, m in fails:
        print(f"MISMATCH {cid}: {m}")
    print(f"{checked} checked, {len(fails)} mismatches, {skipped} skipped (x64={ARGS.x64})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
