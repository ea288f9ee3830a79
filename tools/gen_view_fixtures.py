#!/usr/bin/env python3
"""Generates tests/fixtures/views.txt: NumPy references for chains of movement ops applied
to arange data, read back directly or through an elementwise op or a reduction (so the
index expressions of single- and multi-view ShapeTrackers run inside kernels).

Usage:  python3 tools/gen_view_fixtures.py            # (re)writes the fixture file
        python3 tools/gen_view_fixtures.py --check    # exits 1 if the file is stale
Only numpy is needed. The chains come from np.random.default_rng with fixed seeds, so a
rerun reproduces the file byte for byte.

FORMAT: the line format of tools/gen_numpy_fixtures.py, read by tests/fixture_reader.cpp
and run by tests/view_test.cpp. Every case has one int32 input, arange(size) in C order:

    case <id> <terminal>
    param axis <none | k | list a b ...>    (sum, max)
    param keepdims <0|1>                    (sum, max)
    input int32 0 <dims...> : <values...>
    view <kind> <args...>                   the chain, applied in order
    expect int32 - <dims...> : <values...>
    end

  view kinds (NumPy semantics; tests/view_test.cpp applies kiln's public ops):
    reshape <dims...>             one dim may be -1        (numpy::reshape)
    ravel                                                  (numpy::ravel)
    transpose [<perm...>]         no perm: reversed axes   (numpy::transpose)
    T                                                      (Array::T)
    swapaxes <a> <b>                                       (numpy::swapaxes)
    moveaxis <src,...> <dst,...>  comma-separated lists    (numpy::moveaxis)
    broadcast_to <dims...>                                 (numpy::broadcast_to)
    expand_dims <axes,...>                                 (numpy::expand_dims)
    squeeze [<axes,...>]          no axes: every size-1 axis
    pad <value> <b0> <a0> ...     constant mode; one pair may stand for every axis
    padm <mode> <b0> <a0> ...     mode edge, reflect or symmetric
    index <term...>               i, start:stop[:step] (parts may be empty), None, ...
    flip [<axes...>]              no axes: every axis
    tile <reps...>
    repeat <n> <axis|none>
    split <sections> <piece> <axis>      the piece-th of an equal split
    concat_flip <axis>            concatenate([x, flip(x, axis)], axis)
    add <k>                       x + k (a weak int scalar): an expression mid-chain
    eval                          realize into a buffer (no-op for NumPy)

  terminals: identity (read back), affine (x * 3 - 2), add_flip (x + flip(x)),
    sum and max (with axis and keepdims params). Values stay far inside int32.
"""

import argparse
import os
import sys

import numpy as np

from fixture_check import check_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "views.txt")
MAX_SIZE = 360  # elements of any intermediate array
N_RANDOM = 400


# ---- applying a chain in NumPy -------------------------------------------------------------

def _ints(args):
    return [int(a) for a in args]


def _list(arg):
    return [int(a) for a in arg.split(",")]


def parse_index_token(t):
    if t == "None":
        return None
    if t == "...":
        return Ellipsis
    if ":" not in t:
        return int(t)
    parts = (t.split(":") + ["", ""])[:3]
    return slice(*[int(p) if p else None for p in parts])


def apply_step(x, kind, args):
    if kind == "reshape":
        return x.reshape(_ints(args))
    if kind == "ravel":
        return x.ravel()
    if kind == "transpose":
        return np.transpose(x, _ints(args) if args else None)
    if kind == "T":
        return x.T
    if kind == "swapaxes":
        return np.swapaxes(x, int(args[0]), int(args[1]))
    if kind == "moveaxis":
        return np.moveaxis(x, _list(args[0]), _list(args[1]))
    if kind == "broadcast_to":
        return np.broadcast_to(x, _ints(args))
    if kind == "expand_dims":
        return np.expand_dims(x, tuple(_list(args[0])))
    if kind == "squeeze":
        return np.squeeze(x, tuple(_list(args[0])) if args else None)
    if kind in ("pad", "padm"):
        w = _ints(args[1:])
        pairs = [(w[i], w[i + 1]) for i in range(0, len(w), 2)]
        if kind == "pad":
            return np.pad(x, pairs, mode="constant", constant_values=int(args[0]))
        return np.pad(x, pairs, mode=args[0])
    if kind == "index":
        return x[tuple(parse_index_token(t) for t in args)]
    if kind == "flip":
        return np.flip(x, tuple(_ints(args)) if args else None)
    if kind == "tile":
        return np.tile(x, _ints(args))
    if kind == "repeat":
        return np.repeat(x, int(args[0]), axis=None if args[1] == "none" else int(args[1]))
    if kind == "split":
        return np.split(x, int(args[0]), axis=int(args[2]))[int(args[1])]
    if kind == "concat_flip":
        ax = int(args[0])
        return np.concatenate([x, np.flip(x, ax)], axis=ax)
    if kind == "add":
        return x + np.int32(int(args[0]))
    if kind == "eval":
        return x
    raise ValueError(kind)


def apply_chain(x, chain):
    for kind, args in chain:
        x = np.asarray(apply_step(x, kind, args)).astype(np.int32)
    return x


def axis_param(tokens):
    if tokens == ["none"]:
        return None
    if tokens[0] == "list":
        return tuple(int(t) for t in tokens[1:])
    return int(tokens[0])


def apply_terminal(x, term, params):
    if term == "identity":
        return x
    if term == "affine":
        return x * 3 - 2
    if term == "add_flip":
        return x + np.flip(x)
    ax = axis_param(params["axis"])
    keep = params["keepdims"] == ["1"]
    if term == "sum":
        return np.sum(x, axis=ax, keepdims=keep)
    if term == "max":
        return np.max(x, axis=ax, keepdims=keep)
    raise ValueError(term)


# ---- output --------------------------------------------------------------------------------

def fmt_array(a):
    a = np.asarray(a)
    assert a.dtype == np.int32 or a.dtype == np.int64, a.dtype
    assert np.all(np.abs(a) < 2**31 - 1)
    dims = " ".join(str(d) for d in a.shape)
    vals = " ".join(str(int(v)) for v in a.ravel())
    head = f"int32 %s{(' ' + dims) if dims else ''} :"
    return head, vals


def case_lines(cid, shape, chain, term, params):
    base = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = apply_chain(base, chain)
    out = np.asarray(apply_terminal(x, term, params)).astype(np.int32)
    lines = [f"case {cid} {term}"]
    for k in ("axis", "keepdims"):
        if k in params:
            lines.append(f"param {k} " + " ".join(params[k]))
    head, vals = fmt_array(base)
    lines.append("input " + (head % "0") + (" " + vals if vals else ""))
    for kind, args in chain:
        lines.append(" ".join(["view", kind] + list(args)))
    head, vals = fmt_array(out)
    lines.append("expect " + (head % "-") + (" " + vals if vals else ""))
    lines.append("end")
    return lines


# ---- hand-picked chains: the single-view / multi-view boundaries ---------------------------

def s(*xs):
    return [str(v) for v in xs]


HANDPICKED = [
    # (id, base shape, chain, terminal, params)
    ("T_merge", (3, 4), [("T", []), ("reshape", s(12))], "identity", {}),
    ("T_merge_split", (3, 4), [("T", []), ("reshape", s(2, 6))], "identity", {}),
    ("T_split", (3, 4), [("T", []), ("reshape", s(2, 2, 3))], "identity", {}),
    ("T_merge_T_merge", (3, 4), [("T", []), ("reshape", s(2, 6)), ("T", []), ("reshape", s(12))],
     "identity", {}),
    ("T3_merge_sum", (3, 4), [("T", []), ("reshape", s(2, 6)), ("T", []), ("reshape", s(3, 4))],
     "sum", {"axis": ["1"], "keepdims": ["0"]}),
    ("perm021_8x3", (2, 3, 4), [("transpose", s(0, 2, 1)), ("reshape", s(8, 3))], "identity", {}),
    ("perm021_2x12", (2, 3, 4), [("transpose", s(0, 2, 1)), ("reshape", s(2, 12))], "identity", {}),
    ("perm021_split", (2, 3, 4), [("transpose", s(0, 2, 1)), ("reshape", s(2, 2, 2, 3))], "identity", {}),
    ("perm120_12x2", (2, 3, 4), [("transpose", s(1, 2, 0)), ("reshape", s(12, 2))], "affine", {}),
    ("perm201_4x6", (2, 3, 4), [("transpose", s(2, 0, 1)), ("reshape", s(4, 6))], "affine", {}),
    ("perm102_3x8_max", (2, 3, 4), [("transpose", s(1, 0, 2)), ("reshape", s(3, 8))],
     "max", {"axis": ["1"], "keepdims": ["0"]}),
    ("expand_unit_axes", (3, 1), [("broadcast_to", s(3, 4)), ("reshape", s(3, 1, 4, 1))], "identity", {}),
    ("expand_split", (3, 1), [("broadcast_to", s(3, 4)), ("reshape", s(3, 2, 2))], "identity", {}),
    ("expand_merge", (3, 1), [("broadcast_to", s(3, 4)), ("reshape", s(12))], "identity", {}),
    ("expand_merge_sum", (3, 1), [("broadcast_to", s(2, 3, 4)), ("reshape", s(6, 4))],
     "sum", {"axis": ["0"], "keepdims": ["0"]}),
    ("pad_permute", (2, 3), [("pad", s(0, 1, 1, 0, 2)), ("transpose", s(1, 0))], "identity", {}),
    ("pad_unit_axes", (2, 3), [("pad", s(0, 1, 1, 0, 2)), ("reshape", s(4, 1, 5))], "identity", {}),
    ("pad_merge", (2, 3), [("pad", s(0, 1, 1, 0, 2)), ("reshape", s(20))], "identity", {}),
    ("pad_split", (2, 3), [("pad", s(0, 1, 1, 0, 2)), ("reshape", s(2, 2, 5))], "affine", {}),
    ("pad_merge_max", (2, 3), [("pad", s(-5, 1, 1, 0, 2)), ("reshape", s(20))],
     "max", {"axis": ["none"], "keepdims": ["0"]}),
    ("pad_merge_sum", (2, 3), [("pad", s(0, 1, 1, 0, 2)), ("reshape", s(5, 4))],
     "sum", {"axis": ["0"], "keepdims": ["1"]}),
    ("shrink_flip_stride", (10,), [("index", s("2:9")), ("flip", []), ("index", s("::3"))], "identity", {}),
    ("neg_step", (10,), [("index", s("8:1:-3"))], "identity", {}),
    ("flip_flip", (2, 3), [("flip", []), ("flip", [])], "identity", {}),
    ("steps_2d", (5, 6), [("index", s("::-2", "1::2"))], "add_flip", {}),
    ("pad_flip_stride_merge", (4, 5),
     [("pad", s(0, 2, 1, 0, 3)), ("flip", s(1)), ("index", s("1::2", "::3")), ("reshape", s(-1))],
     "identity", {}),
    ("eval_then_T_merge", (3, 4), [("add", s(100)), ("eval", []), ("T", []), ("reshape", s(12))],
     "identity", {}),
    ("expr_T_merge", (3, 4), [("add", s(100)), ("T", []), ("reshape", s(12))], "affine", {}),
    ("T_merge_pad_merge", (3, 4),
     [("T", []), ("reshape", s(2, 6)), ("pad", s(7, 1, 0, 0, 1)), ("reshape", s(21))], "identity", {}),
    ("reflect_T_merge", (3, 4), [("padm", s("reflect", 2, 1, 1, 3)), ("T", []), ("reshape", s(-1))],
     "identity", {}),
    ("symmetric_wide", (2, 3), [("padm", s("symmetric", 3, 4, 5, 0))], "identity", {}),
    ("edge_1d_sum", (4,), [("padm", s("edge", 3, 2)), ("reshape", s(3, 3))],
     "sum", {"axis": ["list", "0", "1"], "keepdims": ["0"]}),
    ("tile_T", (2, 3), [("tile", s(2, 1, 2)), ("transpose", s(2, 0, 1)), ("reshape", s(6, -1))],
     "identity", {}),
    ("repeat_merge", (2, 3), [("repeat", s(2, 1)), ("T", []), ("reshape", s(-1))], "identity", {}),
    ("concat_flip_T", (2, 3), [("concat_flip", s(1)), ("T", []), ("reshape", s(3, 4))], "identity", {}),
    ("empty_slice", (3, 4), [("index", s("2:1", ":")), ("reshape", s(0, 2, 2))], "identity", {}),
    ("empty_sum", (3, 4), [("index", s(":", "3:3")), ("T", [])], "sum", {"axis": ["1"], "keepdims": ["0"]}),
    ("int_index_newaxis", (2, 3, 4), [("index", s("...", 1, "None")), ("T", []), ("reshape", s(6))],
     "identity", {}),
    ("scalar_chain", (2, 3), [("index", s(1, -1)), ("reshape", s(1, 1)), ("broadcast_to", s(2, 3))],
     "identity", {}),
]


# ---- random chains --------------------------------------------------------------------------

def factorizations(n, rng):
    """A random shape with product n (1-4 axes, sometimes with size-1 axes)."""
    if n == 0:
        k = int(rng.integers(1, 4))
        dims = [int(rng.integers(1, 4)) for _ in range(k)]
        dims[int(rng.integers(0, k))] = 0
        return dims
    primes, m, p = [], n, 2
    while m > 1:
        while m % p == 0:
            primes.append(p)
            m //= p
        p += 1
    k = int(rng.integers(1, 5))
    dims = [1] * k
    for q in primes:
        dims[int(rng.integers(0, k))] *= q
    if rng.random() < 0.3:
        dims.insert(int(rng.integers(0, len(dims) + 1)), 1)
    return dims


def merge_or_split(shape, rng):
    """Reshapes that merge two adjacent axes or split one: where single views survive."""
    shape = list(shape)
    if len(shape) >= 2 and rng.random() < 0.5:
        i = int(rng.integers(0, len(shape) - 1))
        return shape[:i] + [shape[i] * shape[i + 1]] + shape[i + 2:]
    cand = [i for i, d in enumerate(shape) if d >= 4 and any(d % f == 0 for f in (2, 3))]
    if not cand:
        return None
    i = int(rng.choice(cand))
    f = 2 if shape[i] % 2 == 0 else 3
    return shape[:i] + [f, shape[i] // f] + shape[i + 1:]


def slice_token(n, rng):
    r = rng.random()
    if r < 0.15:
        return str(int(rng.integers(-n, n))) if n > 0 else ":"
    step = [None, None, 1, 2, 3, -1, -1, -2, -3][int(rng.integers(0, 9))]

    def bound():
        if rng.random() < 0.35:
            return ""
        return str(int(rng.integers(-n - 2, n + 3)))
    parts = [bound(), bound()]
    tok = ":".join(parts)
    if step is not None:
        tok += ":" + str(step)
    return tok


def random_step(x, rng):
    shape, nd, size = x.shape, x.ndim, x.size
    kinds = ["reshape", "merge_split", "transpose", "T", "swapaxes", "moveaxis", "broadcast_to",
             "expand_dims", "squeeze", "pad", "padm", "index", "flip", "ravel", "tile", "repeat",
             "split", "concat_flip", "add", "eval"]
    weights = [8, 8, 8, 2, 3, 3, 5, 3, 2, 7, 3, 9, 4, 2, 2, 2, 2, 2, 2, 2]
    kind = str(rng.choice(kinds, p=np.array(weights) / sum(weights)))
    if kind == "reshape":
        dims = factorizations(size, rng)
        if size > 0 and rng.random() < 0.3:
            dims[int(rng.integers(0, len(dims)))] = -1
        return "reshape", s(*dims)
    if kind == "merge_split":
        dims = merge_or_split(shape, rng)
        return ("reshape", s(*dims)) if dims is not None else None
    if kind in ("transpose", "T", "swapaxes", "moveaxis") and nd < 2:
        return None
    if kind == "transpose":
        perm = [int(v) for v in rng.permutation(nd)]
        perm = [p - nd if rng.random() < 0.2 else p for p in perm]
        return "transpose", s(*perm) if rng.random() < 0.85 else []
    if kind == "T":
        return "T", []
    if kind == "swapaxes":
        a, b = rng.choice(nd, 2, replace=False)
        return "swapaxes", s(int(a), int(b) - (nd if rng.random() < 0.3 else 0))
    if kind == "moveaxis":
        k = int(rng.integers(1, min(nd, 2) + 1))
        src = [int(v) for v in rng.choice(nd, k, replace=False)]
        dst = [int(v) for v in rng.choice(nd, k, replace=False)]
        return "moveaxis", [",".join(s(*src)), ",".join(s(*dst))]
    if kind == "broadcast_to":
        new = [int(rng.integers(2, 5)) if d == 1 and rng.random() < 0.7 else d for d in shape]
        if rng.random() < 0.4 or new == list(shape):
            new = [int(rng.integers(1, 4))] + new
        return "broadcast_to", s(*new)
    if kind == "expand_dims":
        ax = int(rng.integers(-nd - 1, nd + 1))
        return "expand_dims", [str(ax)]
    if kind == "squeeze":
        ones = [i for i, d in enumerate(shape) if d == 1]
        if not ones:
            return None
        if rng.random() < 0.5:
            return "squeeze", []
        return "squeeze", [",".join(s(*ones[: int(rng.integers(1, len(ones) + 1))]))]
    if kind == "pad":
        if nd == 0:
            return None
        value = [0, 0, -1, 7][int(rng.integers(0, 4))]
        if nd > 1 and rng.random() < 0.15:
            return "pad", s(value, int(rng.integers(0, 3)), int(rng.integers(0, 3)))
        w = []
        for _ in range(nd):
            w += [int(rng.integers(0, 3)), int(rng.integers(0, 3))]
        return "pad", s(value, *w)
    if kind == "padm":
        if nd == 0 or 0 in shape:
            return None
        mode = ["edge", "reflect", "symmetric"][int(rng.integers(0, 3))]
        w = []
        for _ in range(nd):
            w += [int(rng.integers(0, 4)), int(rng.integers(0, 4))] if rng.random() < 0.6 else [0, 0]
        return "padm", [mode] + s(*w)
    if kind == "index":
        if nd == 0:
            return "index", ["None"] if rng.random() < 0.5 else ["..."]
        terms = [slice_token(shape[i], rng) for i in range(nd)]
        terms = terms[: int(rng.integers(1, nd + 1))] if rng.random() < 0.3 else terms
        if rng.random() < 0.2:
            terms.insert(int(rng.integers(0, len(terms) + 1)), "None")
        if rng.random() < 0.15 and len(terms) < nd + 1:
            terms.insert(int(rng.integers(0, len(terms) + 1)), "...")
        return "index", terms
    if kind == "flip":
        if nd == 0:
            return None
        if rng.random() < 0.3:
            return "flip", []
        k = int(rng.integers(1, nd + 1))
        return "flip", s(*sorted(int(v) for v in rng.choice(nd, k, replace=False)))
    if kind == "ravel":
        return "ravel", []
    if kind == "tile":
        reps = [int(rng.integers(1, 3)) for _ in range(int(rng.integers(1, nd + 2)))]
        return "tile", s(*reps)
    if kind == "repeat":
        n = int(rng.integers(0, 4)) if rng.random() < 0.2 else int(rng.integers(1, 4))
        if nd == 0 or rng.random() < 0.25:
            return "repeat", s(n, "none")
        return "repeat", s(n, int(rng.integers(-nd, nd)))
    if kind == "split":
        cand = [(i, d) for i, d in enumerate(shape) if d >= 2]
        if not cand:
            return None
        i, d = cand[int(rng.integers(0, len(cand)))]
        secs = [k for k in range(2, d + 1) if d % k == 0]
        k = secs[int(rng.integers(0, len(secs)))]
        return "split", s(k, int(rng.integers(0, k)), i)
    if kind == "concat_flip":
        if nd == 0:
            return None
        return "concat_flip", s(int(rng.integers(-nd, nd)))
    if kind == "add":
        return "add", s(int(rng.integers(-50, 50)))
    if kind == "eval":
        return "eval", []
    raise ValueError(kind)


def random_case(rng):
    nd = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(nd)]
    while int(np.prod(shape)) > 120:
        shape[int(np.argmax(shape))] -= 1
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    chain = []
    n_steps = int(rng.integers(2, 8))
    tries = 0
    while len(chain) < n_steps and tries < 200:
        tries += 1
        step = random_step(x, rng)
        if step is None:
            continue
        try:
            y = apply_chain(x, [step])
        except (ValueError, IndexError):
            continue
        if y.size > MAX_SIZE or y.ndim > 6:
            continue
        chain.append(step)
        x = y
    term = ["identity", "identity", "affine", "add_flip", "sum", "sum", "max"][int(rng.integers(0, 7))]
    params = {}
    if term in ("sum", "max"):
        nd = x.ndim
        r = rng.random()
        if nd == 0 or r < 0.25:
            params["axis"] = ["none"]
        elif r < 0.7:
            params["axis"] = [str(int(rng.integers(-nd, nd)))]
        else:
            k = int(rng.integers(1, nd + 1))
            params["axis"] = ["list"] + s(*sorted(int(v) for v in rng.choice(nd, k, replace=False)))
        params["keepdims"] = ["1" if rng.random() < 0.3 else "0"]
        if term == "max":
            ax = axis_param(params["axis"])
            axes = range(nd) if ax is None else ([ax] if isinstance(ax, int) else ax)
            if x.size == 0 and any(x.shape[a] == 0 for a in axes) or (ax is None and x.size == 0):
                term = "sum"
    return tuple(shape), chain, term, params


def generate():
    lines = [
        "# Generated by tools/gen_view_fixtures.py; do not edit. numpy " + np.__version__.split(".")[0] + ".x",
        "# Chains of movement ops on arange data (format at the top of the generator).",
    ]
    for cid, shape, chain, term, params in HANDPICKED:
        lines += case_lines("h_" + cid, shape, chain, term, params)
    rng = np.random.default_rng(20240617)
    for i in range(N_RANDOM):
        shape, chain, term, params = random_case(rng)
        lines += case_lines(f"r{i:03d}", shape, chain, term, params)
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    args = ap.parse_args()
    text = generate()
    path = os.path.normpath(OUT)
    if args.check:
        return 0 if check_file(path, text, "rerun tools/gen_view_fixtures.py") else 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path}: {text.count(chr(10) + 'case ') + text.startswith('case ')} cases, {len(text)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
