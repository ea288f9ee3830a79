"""Mechanical checks of the code's shape, run by `make test`: C++ layers include only the
layers below them (docs/ARCHITECTURE.md, "Layers"), the JS core's bindings (js/src/core)
include only the public headers and a short documented list of internals, and no function
in src/ has over 150 lines
of code (blank lines, comments and the lines of a string literal, such as the WGSL prelude's
text, do not count).

Usage: python3 tools/check_code_shape.py [--max-lines N] [--list]
  --list prints every function over the limit (and the longest ones) without failing."""

import argparse
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Rank of each src/ layer: a file may include its own layer and lower ranks only. Layers of
# equal rank are independent of each other (formats never sees the backend, and back).
LAYER_RANK = {
    "ir": 0,
    "backend": 1,
    "formats": 1,
    "frontend": 2,
    "library": 3,
    "models": 4,
    "export": 4,  # jaxprs written as ONNX / StableHLO: frontend + formats, beside models
}
MAX_FUNCTION_LINES = 150

# What js/src/core (the embind bindings) may include besides include/kiln and its own files:
# the device registry and buffer handles (backend.h), the two devices the JS runtime drives
# (wasm: thread pool and FMA options; webgpu: the handles JS owns), and an Array's buffer for
# zero-copy reads (array_impl.h), and the check of fromBytes's bytes against the shape and
# dtype it gets (formats/raw_array.h: a pure parser, fuzzed, no public C++ API of its own).
BINDING_INTERNALS = {
    "backend/backend.h",
    "backend/wasm/wasm_backend.h",
    "backend/webgpu/webgpu_backend.h",
    "frontend/array_impl.h",
    "formats/raw_array.h",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)


def cpp_files(top):
    for dirpath, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".h", ".cpp", ".hpp", ".cc")):
                yield os.path.join(dirpath, f)


def layer_violations():
    """(file, included layer) for every include that points up or sideways."""
    out = []
    src = os.path.join(ROOT, "src")
    for path in cpp_files(src):
        layer = os.path.relpath(path, src).split(os.sep)[0]
        if layer not in LAYER_RANK:
            out.append((path, f"unknown layer {layer!r}: add it to LAYER_RANK"))
            continue
        with open(path, encoding="utf-8") as f:
            for inc in INCLUDE.findall(f.read()):
                if inc == layer or inc not in LAYER_RANK:
                    continue
                if LAYER_RANK[inc] >= LAYER_RANK[layer]:
                    out.append((path, f"{layer}/ includes {inc}/ (not a lower layer)"))
    return out


def binding_violations():
    """(file, header) for every include of js/src/core outside kiln/ and BINDING_INTERNALS."""
    out = []
    core = os.path.join(ROOT, "js", "src", "core")
    for path in cpp_files(core):
        with open(path, encoding="utf-8") as f:
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M):
                if "/" not in inc or inc.startswith("kiln/") or inc in BINDING_INTERNALS:
                    continue
                out.append((path, f"includes {inc}: use include/kiln or add it to BINDING_INTERNALS, saying why"))
    return out


def strip_comments_and_strings(text):
    """The text with comments, string and char literals blanked (newlines kept), so braces
    inside them are not counted."""
    pat = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pat.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


HEAD_NOT_FUNCTION = re.compile(r"^\s*(?:template\s*<.*>\s*)?(namespace|class|struct|union|enum)\b", re.S)


def function_lengths(path):
    """(name, first line, lines of code) of every function body at namespace or class level."""
    with open(path, encoding="utf-8") as f:
        text = strip_comments_and_strings(f.read())
    funcs = []
    scopes = []  # per open brace: True when it opened a namespace/class-like scope
    last_stmt_end = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            at_decl_level = all(scopes)
            head = text[last_stmt_end:i]
            is_scope = bool(HEAD_NOT_FUNCTION.match(head)) or "(" not in head
            if at_decl_level and not is_scope and not re.search(r"=\s*$", head):
                # A function body: find its matching brace.
                depth, j = 1, i + 1
                while j < len(text) and depth:
                    depth += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                name = re.findall(r"([~\w:]+(?:operator\S*)?)\s*\(", head)
                first = text.count("\n", 0, i) + 1
                code_lines = sum(1 for ln in text[i:j].split("\n") if ln.strip())
                funcs.append((name[0] if name else "?", first, code_lines))
                i, last_stmt_end = j, j
                continue
            scopes.append(at_decl_level and is_scope)
            last_stmt_end = i + 1
        elif c == "}":
            if scopes:
                scopes.pop()
            last_stmt_end = i + 1
        elif c == ";":
            last_stmt_end = i + 1
        elif c == ":" and all(scopes) and re.search(r"\b(public|private|protected)\s*$", text[last_stmt_end:i]):
            last_stmt_end = i + 1
        i += 1
    return funcs


def long_functions(limit):
    out = []
    for path in cpp_files(os.path.join(ROOT, "src")):
        for name, line, n in function_lengths(path):
            out.append((n, os.path.relpath(path, ROOT), line, name))
    return sorted(out, reverse=True), [f for f in out if f[0] > limit]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-lines", type=int, default=MAX_FUNCTION_LINES)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    bad = 0
    for path, why in layer_violations() + binding_violations():
        print(f"{os.path.relpath(path, ROOT)}: {why}", file=sys.stderr)
        bad += 1
    everything, too_long = long_functions(args.max_lines)
    for n, path, line, name in sorted(too_long, reverse=True):
        print(f"{path}:{line}: {name} is {n} lines (at most {args.max_lines})", file=sys.stderr)
    if args.list:
        for n, path, line, name in everything[:15]:
            print(f"{n:5d}  {path}:{line} {name}")
        return 0
    bad += len(too_long)
    if bad:
        print(f"check_code_shape: {bad} problems", file=sys.stderr)
        return 1
    print(f"check_code_shape: layers ok, {len(everything)} functions in src/ all <= {args.max_lines} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
