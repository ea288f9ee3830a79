"""The --check comparison every fixture generator uses: a regenerated fixture must match the
committed one token for token, except that floats may differ by a few units in the last place.

Why not byte for byte: NumPy picks its transcendental kernels by the CPU's SIMD level (AVX-512,
AVX2, baseline), and they round differently in the last bit, so the same generator prints
`10.607406082389263` on one machine and `...264` on another. A fixture that is really stale
still fails: another op, shape, dtype, case name or count changes a non-float token, and a
wrong value is off by far more than MAX_ULPS."""

import math
import struct
import sys

# Largest last-place difference accepted between two machines' runs of one generator. Measured
# on a Zen 4 with NumPy's X86_V4/AVX512_ICL and X86_V3 dispatch turned off in turn
# (NPY_DISABLE_CPU_FEATURES): every differing value was 1 ulp apart.
MAX_ULPS = 4

_DTYPE_BITS = {"float16": 16, "float32": 32, "float64": 64}
_SPECIAL = {"nan", "inf", "-inf"}


def _ordered_int(x, bits):
    """x's position on the number line of the float type with `bits` bits (adjacent floats
    differ by 1; -0.0 and 0.0 are both 0)."""
    fmt, ifmt = {16: ("<e", "<h"), 32: ("<f", "<i"), 64: ("<d", "<q")}[bits]
    i = struct.unpack(ifmt, struct.pack(fmt, x))[0]
    return i if i >= 0 else -(i & ((1 << (bits - 1)) - 1))


def ulp_distance(a, b, bits=64):
    """How many representable floats of the given width lie between a and b (inf if one is
    nan or infinite and the other is not the same)."""
    if math.isnan(a) or math.isnan(b):
        return 0 if math.isnan(a) and math.isnan(b) else math.inf
    if math.isinf(a) or math.isinf(b):
        return 0 if a == b else math.inf
    return abs(_ordered_int(a, bits) - _ordered_int(b, bits))


def _as_float(tok):
    """The token's value if it is a float literal (not an integer: integers must match)."""
    if tok in _SPECIAL:
        return float(tok)
    if not any(c in tok for c in ".eE"):
        return None
    try:
        return float(tok.rstrip(","))
    except ValueError:
        return None


def _line_bits(tokens):
    """The float width of a fixture line: the first dtype name on it, float64 otherwise."""
    for t in tokens:
        if t in _DTYPE_BITS:
            return _DTYPE_BITS[t]
    return 64


def compare_line(old, new, max_ulps=MAX_ULPS):
    """None if the lines agree, else a short reason."""
    if old == new:
        return None
    a, b = old.split(), new.split()
    if len(a) != len(b):
        return f"{len(a)} tokens committed, {len(b)} generated"
    bits = _line_bits(a)
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        fx, fy = _as_float(x), _as_float(y)
        if fx is None or fy is None:
            return f"token {i}: {x!r} committed, {y!r} generated"
        d = ulp_distance(fx, fy, bits)
        if d > max_ulps:
            return f"token {i}: {x} committed, {y} generated ({d} ulp apart in float{bits})"
    return None


def compare_texts(old, new, max_ulps=MAX_ULPS):
    """(problems, n_float_only): the lines that really differ, as (line number, reason,
    committed, generated), and how many lines differ only within max_ulps."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    problems, n_close = [], 0
    for i in range(max(len(old_lines), len(new_lines))):
        o = old_lines[i] if i < len(old_lines) else None
        n = new_lines[i] if i < len(new_lines) else None
        if o is None or n is None:
            problems.append((i + 1, "line count differs", o, n))
            continue
        if o == n:
            continue
        why = compare_line(o, n, max_ulps)
        if why is None:
            n_close += 1
        else:
            problems.append((i + 1, why, o, n))
    return problems, n_close


def check_file(path, text, regenerate_hint, max_ulps=MAX_ULPS, skip_lines=0):
    """The --check mode: True (and a line on stdout) when the committed file at `path`
    matches `text`, else False with the first differences on stderr. skip_lines drops that
    many leading lines of both (a version banner that varies across installs)."""
    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        print(f"{path} is missing: {regenerate_hint}", file=sys.stderr)
        return False
    if skip_lines:
        old = "\n".join(old.split("\n")[skip_lines:])
        text = "\n".join(text.split("\n")[skip_lines:])
    problems, n_close = compare_texts(old, text, max_ulps)
    if problems:
        print(f"{path} is stale: {regenerate_hint}", file=sys.stderr)
        for line, why, o, n in problems[:5]:
            print(f"  line {line}: {why}\n    committed: {(o or '<none>')[:160]}"
                  f"\n    generated: {(n or '<none>')[:160]}", file=sys.stderr)
        print(f"  {len(problems)} differing lines", file=sys.stderr)
        return False
    close = f" ({n_close} lines within {max_ulps} ulp)" if n_close else ""
    print(f"{path} is up to date{close}")
    return True
