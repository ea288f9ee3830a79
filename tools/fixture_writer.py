"""Shared writer for kiln's case/param/input/expect fixture files (the format is documented
in tools/gen_numpy_fixtures.py and read by tests/fixture_reader.cpp), with the --check mode
every generator supports: rewrite the file, or exit 1 if it would change beyond a few ulp
(tools/fixture_check.py)."""

import argparse
import sys

import numpy as np

from fixture_check import check_file


def fmt_values(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        return [str(int(v)) for v in flat]
    if np.issubdtype(a.dtype, np.integer):
        return [str(int(v)) for v in flat]
    if a.dtype == np.float32:
        # numpy's float32 repr is the shortest text that round-trips through strtof.
        return [str(np.float32(v)) for v in flat]
    return [_fnum(repr(float(v))) for v in flat]


def _fnum(t):
    return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(t, t)


def array_line(kind, a, weak="-"):
    a = np.asarray(a)
    dims = " ".join(str(d) for d in a.shape)
    vals = " ".join(fmt_values(a))
    head = f"{kind} {a.dtype.name} {weak}" + (f" {dims}" if dims else "")
    return f"{head} : {vals}".rstrip()


class Writer:
    def __init__(self, header):
        self.lines = [f"# {h}" for h in header]

    def case(self, cid, op, params=(), inputs=(), expects=(), tol=None):
        self.lines.append(f"case {cid} {op}")
        for k, v in params:
            toks = " ".join(str(t) for t in (v if isinstance(v, (list, tuple)) else [v]))
            self.lines.append(f"param {k} {toks}".rstrip())
        for a in inputs:
            self.lines.append(array_line("input", a, "0"))
        for a in expects:
            self.lines.append(array_line("expect", a))
        if tol is not None:
            self.lines.append(f"tol {tol[0]} {tol[1]}")
        self.lines.append("end")

    def finish(self, path):
        ap = argparse.ArgumentParser()
        ap.add_argument("--check", action="store_true", help="exit 1 if the file would change")
        args = ap.parse_args()
        text = "\n".join(self.lines) + "\n"
        if args.check:
            if not check_file(path, text, "rerun the generator without --check"):
                sys.exit(1)
            return
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path} ({sum(l.startswith('case ') for l in self.lines)} cases)")
