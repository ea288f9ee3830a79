"""Core of the NumPy fixture generator: the text format, dtypes, JAX type promotion,
input views and tolerances shared by every op family (see gen_numpy_fixtures.py)."""

import math
import zlib

import numpy as np

DTYPES = ["bool", "int32", "uint32", "float16", "float32", "float64"]
NP = {
    "bool": np.bool_,
    "int32": np.int32,
    "uint32": np.uint32,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
}
FLOATS = ("float16", "float32", "float64")
INTS = ("int32", "uint32")
# Unit roundoff of each float dtype.
UNIT = {"float16": 2.0**-11, "float32": 2.0**-24, "float64": 2.0**-53}
SHORT = {"bool": "b", "int32": "i32", "uint32": "u32", "float16": "f16", "float32": "f32", "float64": "f64"}


def is_float(d):
    return d in FLOATS


def dtype_of(arr):
    for name, t in NP.items():
        if arr.dtype == np.dtype(t):
            return name
    raise ValueError(f"unsupported numpy dtype {arr.dtype}")


def family_rng(name):
    """Each family has its own fixed seed, so editing one family leaves the others' bytes alone."""
    return np.random.default_rng(20240601 + zlib.crc32(name.encode()))


# ---------------------------------------------------------------------------------------
# JAX type promotion.
#
# JAX's lattice (jax._src.dtypes), restricted to kiln's dtypes: weak Python scalars are the
# nodes i* and f*. int64 stands for JAX's join of int32 and uint32; kiln has no 64-bit ints
# and maps it to int32 (what JAX does with x64 disabled). i* and f* materialize as weakly
# typed int32 and float32.
_EDGES = {
    "bool": ["i*"],
    "i*": ["uint32", "int32"],  # through u8/u16 and i8/i16
    "uint32": ["int64"],
    "int32": ["int64"],
    "int64": ["f*"],
    "f*": ["float16"],
    "float16": ["float32"],
    "float32": ["float64"],
    "float64": [],
}


def _upper(node):
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(_EDGES[n])
    return seen


_UPPER = {n: _upper(n) for n in _EDGES}


def _node(dtype, weak):
    if weak and dtype in INTS:
        return "i*"
    if weak and dtype in FLOATS:
        return "f*"
    return dtype  # Python bools are not weak in JAX


def _join(a, b):
    common = _UPPER[a] & _UPPER[b]
    (least,) = [n for n in common if _UPPER[n] == common]
    return least


def promote(*types):
    """types: (dtype, weak) pairs -> (dtype, weak) of JAX's result_type."""
    node = _node(*types[0])
    for t in types[1:]:
        node = _join(node, _node(*t))
    return {"i*": ("int32", True), "f*": ("float32", True), "int64": ("int32", False)}.get(
        node, (node, False)
    )


def to_inexact(t):
    """JAX's promote_args_inexact: ints and bools become float32, weakness kept."""
    d, w = t
    return t if d in FLOATS else ("float32", w)


def check_promotion_table():
    """The pairwise table of jax.numpy.promote_types (JAX's type-promotion docs), mapped to
    kiln's dtypes; the lattice above must reproduce it."""
    strong = {
        ("bool", "int32"): "int32", ("bool", "uint32"): "uint32", ("bool", "float16"): "float16",
        ("bool", "float32"): "float32", ("bool", "float64"): "float64",
        ("int32", "uint32"): "int32", ("int32", "float16"): "float16",
        ("int32", "float32"): "float32", ("int32", "float64"): "float64",
        ("uint32", "float16"): "float16", ("uint32", "float32"): "float32",
        ("uint32", "float64"): "float64", ("float16", "float32"): "float32",
        ("float16", "float64"): "float64", ("float32", "float64"): "float64",
    }
    for (a, b), r in strong.items():
        for x, y in ((a, b), (b, a)):
            assert promote((x, False), (y, False)) == (r, False), (x, y)
    for d in DTYPES:
        assert promote((d, False), (d, False)) == (d, False)
    weak = {  # (weak kind, strong dtype) -> result
        ("int", "bool"): ("int32", True), ("int", "int32"): ("int32", False),
        ("int", "uint32"): ("uint32", False), ("int", "float16"): ("float16", False),
        ("int", "float32"): ("float32", False), ("int", "float64"): ("float64", False),
        ("float", "bool"): ("float32", True), ("float", "int32"): ("float32", True),
        ("float", "uint32"): ("float32", True), ("float", "float16"): ("float16", False),
        ("float", "float32"): ("float32", False), ("float", "float64"): ("float64", False),
    }
    for (k, s), r in weak.items():
        w = ("int32", True) if k == "int" else ("float32", True)
        assert promote(w, (s, False)) == r and promote((s, False), w) == r, (k, s)
    assert promote(("int32", True), ("float32", True)) == ("float32", True)
    assert promote(("int32", True), ("int32", True)) == ("int32", True)


# ---------------------------------------------------------------------------------------
# Value formatting. float32 uses its shortest round-trip text (read back with strtof);
# float16 and float64 use repr(float(x)), exact as a double (read back with strtod).
def fmt_value(v, dtype):
    if dtype == "bool":
        return "1" if v else "0"
    if dtype in INTS:
        return str(int(v))
    if dtype == "float32":
        f = np.float32(v)
        s = str(f)
        if not np.isnan(f):
            assert np.float32(s) == f or (f == 0 and s in ("0.0", "-0.0")), s
        return s
    return repr(float(v))


def fmt_array(arr, dtype):
    arr = np.asarray(arr)
    shape = " ".join(str(n) for n in arr.shape)
    vals = " ".join(fmt_value(v, dtype) for v in arr.reshape(-1))
    head = f"{dtype} "
    return head, shape, vals


def fmt_num(x):
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return repr(float(x))


# ---------------------------------------------------------------------------------------
# Views: applied in order to an input's base array, in numpy here and with kiln's own ops
# in the C++ runner, so kernels see permuted, strided, flipped, padded and broadcast data.
def parse_index_token(t):
    if t == "None":
        return None
    if t == "...":
        return Ellipsis
    if ":" in t:
        parts = t.split(":")
        assert len(parts) in (2, 3), t
        vals = [int(p) if p else None for p in parts]
        return slice(*vals)
    return int(t)


def apply_views(base, views):
    x = base
    for kind, args in views:
        if kind == "transpose":
            x = np.transpose(x, [int(a) for a in args])
        elif kind == "index":
            x = x[tuple(parse_index_token(a) for a in args)]
        elif kind == "flip":
            x = np.flip(x, tuple(int(a) for a in args))
        elif kind == "pad":
            value = args[0]
            w = [int(a) for a in args[1:]]
            x = np.pad(x, [(w[2 * i], w[2 * i + 1]) for i in range(len(w) // 2)],
                       constant_values=np.array(float(value)).astype(x.dtype))
        elif kind == "broadcast_to":
            x = np.broadcast_to(x, tuple(int(a) for a in args))
        else:
            raise ValueError(kind)
    return x


def _back_view(rng, kind, shape):
    """Chooses a view of `kind` whose result has `shape`; returns (source shape, view)."""
    nd = len(shape)
    if kind == "T":
        assert nd >= 2
        perm = list(range(nd))[::-1] if nd == 2 or rng.random() < 0.5 else list(rng.permutation(nd))
        if perm == list(range(nd)):
            perm = perm[::-1]
        src = [0] * nd
        for i, p in enumerate(perm):
            src[p] = shape[i]
        return src, ("transpose", [str(int(p)) for p in perm])
    if kind == "step":
        src, toks = [], []
        if rng.random() < 0.3:  # an integer index drops a leading axis
            src.append(3)
            toks.append(str(int(rng.choice([1, -2]))))
        steps = [int(rng.choice([1, 2, 3, -1, -2])) for _ in shape]
        if all(s == 1 for s in steps) and nd:
            steps[int(rng.integers(nd))] = 2
        for n, s in zip(shape, steps):
            lo = int(rng.integers(0, 2))
            extra = int(rng.integers(0, 2))
            if n == 0:
                src.append(2)
                toks.append(f"1:1:{s}")
                continue
            if s > 0:
                start, stop = lo, lo + (n - 1) * s + 1
                length = stop + extra
                if rng.random() < 0.3:
                    start -= length  # negative start
                toks.append(f"{start}:{stop}:{s}" if s != 1 or rng.random() < 0.5 else f"{start}:{stop}")
            else:
                a = -s
                start = lo + (n - 1) * a
                length = start + 1 + extra
                stop = "" if lo == 0 else str(lo - 1)
                toks.append(f"{start}:{stop}:{s}")
            src.append(length)
        return src, ("index", toks)
    if kind == "flip":
        axes = sorted(set(int(a) for a in rng.choice(nd, size=int(rng.integers(1, nd + 1)))))
        if rng.random() < 0.3:
            axes = [a - nd for a in axes]
        return list(shape), ("flip", [str(a) for a in axes])
    if kind == "pad":
        src, w = [], []
        for n in shape:
            b = int(rng.integers(0, 2)) if n >= 2 else 0
            a = int(rng.integers(0, 2)) if n - b >= 2 else 0
            src.append(n - b - a)
            w += [b, a]
        if not any(w):
            i = max(range(nd), key=lambda k: shape[k])
            src[i] -= 1
            w[2 * i] = 1
        return src, ("pad", None, w)  # the pad value is filled in by make_input
    if kind == "bcast":
        src = list(shape)
        cands = [i for i, n in enumerate(shape) if n > 1]
        for i in cands:
            if rng.random() < 0.5:
                src[i] = 1
        if cands and src == list(shape):
            src[cands[0]] = 1
        if nd >= 2 and rng.random() < 0.4:
            src = src[1:]
        return src, ("broadcast_to", [str(n) for n in shape])
    raise ValueError(kind)


VIEW_CHAINS = {
    "T": ["T"], "step": ["step"], "flip": ["flip"], "pad": ["pad"], "bcast": ["bcast"],
    "stepT": ["step", "T"], "padflip": ["pad", "flip"], "bcastT": ["bcast", "T"],
    "Tstep": ["T", "step"],
}


class Input:
    def __init__(self, dtype, base, weak=False, views=()):
        self.dtype = dtype
        self.weak = weak
        self.views = list(views)
        self.base = base if weak else np.asarray(base).astype(NP[dtype])

    def value(self):
        if self.weak:
            return self.base  # a Python scalar
        return apply_views(self.base, self.views)

    def lines(self):
        if self.weak:
            v = fmt_num(int(self.base) if self.dtype in INTS else float(self.base))
            return [f"input {self.dtype} 1 : {v}"]
        head, shape, vals = fmt_array(self.base, self.dtype)
        out = [f"input {self.dtype} 0 {shape}".rstrip() + f" : {vals}".rstrip()]
        for v in self.views:
            if v[0] == "pad":
                out.append("view pad " + " ".join(v[1]))
            else:
                out.append(f"view {v[0]} " + " ".join(v[1]))
        return out


def weak(value):
    """A weakly typed Python scalar operand."""
    if isinstance(value, bool):
        raise ValueError("weak bools are not weak in JAX")
    return Input("int32" if isinstance(value, int) else "float32", value, weak=True)


def make_input(rng, dtype, shape, sampler, view=None, pad_value=None):
    """An input whose value (after views) has `shape`, values drawn by sampler(rng, shape)."""
    shape = list(shape)
    views = []
    if view:
        cur = shape
        for kind in reversed(VIEW_CHAINS[view]):
            cur, v = _back_view(rng, kind, cur)
            views.insert(0, v)
        shape = cur
    base = np.asarray(sampler(rng, tuple(shape))).astype(NP[dtype])
    fixed = []
    for v in views:
        if v[0] == "pad":
            pv = pad_value if pad_value is not None else (1 if dtype != "bool" else True)
            fixed.append(("pad", [fmt_value(pv, dtype if dtype != "float32" else "float64")] + [str(a) for a in v[2]]))
        else:
            fixed.append(v)
    return Input(dtype, base, views=fixed)


# ---------------------------------------------------------------------------------------
# Samplers: sampler(rng, shape) -> numpy array (cast to the input dtype by make_input).
def uniform(lo, hi, decimals=3):
    def f(rng, shape):
        return np.round(rng.uniform(lo, hi, shape), decimals)
    return f


def integers(lo, hi):
    def f(rng, shape):
        return rng.integers(lo, hi, shape, endpoint=True)
    return f


def booleans(rng, shape):
    return rng.random(shape) < 0.5


def default_sampler(dtype):
    if dtype == "bool":
        return booleans
    if dtype == "int32":
        return integers(-20, 20)
    if dtype == "uint32":
        return integers(0, 40)
    if dtype == "float16":
        return uniform(-4, 4, 2)
    return uniform(-4, 4)


def tag_shape(shape):
    return "s" if len(shape) == 0 else "x".join(str(n) for n in shape)


# ---------------------------------------------------------------------------------------
def _round_up(x):
    """x rounded up to 3 significant digits, so printing never tightens a tolerance."""
    if x <= 0:
        return "0"
    e = math.floor(math.log10(x)) - 2
    return f"{math.ceil(x / 10.0**e - 1e-9) * 10.0**e:.3g}"


class Case:
    def __init__(self, cid, op, family):
        self.id = cid
        self.op = op
        self.family = family
        self.params = []
        self.inputs = []
        self.expects = []  # (dtype, weak or None, array)
        self.error = None
        self.tol = (0.0, 0.0)

    def param(self, key, *values):
        self.params.append((key, [v if isinstance(v, str) else fmt_num(v) for v in values]))
        return self

    def expect(self, arr, dtype=None, weak=None):
        arr = np.asarray(arr)
        dtype = dtype or dtype_of(arr)
        self.expects.append((dtype, weak, arr.astype(NP[dtype])))
        return self

    def lines(self):
        out = [f"case {self.id} {self.op}"]
        for k, vals in self.params:
            out.append(f"param {k} " + " ".join(vals) if vals else f"param {k}")
        for inp in self.inputs:
            out += inp.lines()
        if self.error is not None:
            out.append(f"expect_error {self.error}")
        for dtype, w, arr in self.expects:
            head, shape, vals = fmt_array(arr, dtype)
            wt = "-" if w is None else ("1" if w else "0")
            out.append(f"expect {dtype} {wt} {shape}".rstrip() + f" : {vals}".rstrip())
        if self.error is None and any(is_float(d) for d, _, _ in self.expects):
            out.append(f"tol {_round_up(self.tol[0])} {_round_up(self.tol[1])}")
        out.append("end")
        return out


class Family:
    """Collects the cases of one op family; ids are made unique with a numeric suffix."""

    def __init__(self, name):
        self.name = name
        self.rng = family_rng(name)
        self.cases = []
        self._ids = {}

    def case(self, cid, op):
        cid = "".join(c if c.isalnum() else "_" for c in cid)
        n = self._ids.get(cid, 0)
        self._ids[cid] = n + 1
        c = Case(cid if n == 0 else f"{cid}_{n + 1}", op, self.name)
        self.cases.append(c)
        return c


# ---------------------------------------------------------------------------------------
# Tolerances: |kiln - ref| <= atol + rtol * |ref|.
def tol_exact():
    return (0.0, 0.0)


def tol_arith(dtype):
    return {"float16": (1e-3, 0.0), "float32": (1e-6, 0.0), "float64": (1e-12, 0.0)}.get(dtype, (0.0, 0.0))


def tol_transcendental(dtype, atol_scale=1.0):
    """Libm-quality functions: a few ulp relative, and ~1 ulp at magnitude atol_scale
    absolute, for results that cross zero."""
    return {
        "float16": (2e-3, 1e-3 * atol_scale),
        "float32": (2e-6, 1e-7 * atol_scale),
        "float64": (1e-12, 1e-15 * atol_scale),
    }.get(dtype, (0.0, 0.0))


def tol_accum(dtype, n, magnitude):
    """Accumulations (sums, products, matmul, conv): rtol, plus a rounding bound of
    recursive summation times (the result computed on absolute values): the worst case
    2 n u for short sums; for long ones (8 sqrt(n) + 8) u, several standard deviations of
    the random walk that round-to-nearest errors take."""
    if dtype not in FLOATS:
        return (0.0, 0.0)
    rtol = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    n = max(n, 1)
    return (rtol, float(min(2 * n, 8 * math.sqrt(n) + 8) * UNIT[dtype] * magnitude))
