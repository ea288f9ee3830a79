#!/usr/bin/env python3
"""kiln's C++ API reference: reads the public headers and writes Markdown and HTML.

The public headers are include/kiln/*.h and every repository header they include,
transitively (what a user's `#include <kiln/kiln.h>` can reach). The tool is a line-based
reader of kiln's own header style, not a C++ parser: declarations are one statement each
(possibly over several lines), documentation is `//` comments.

The documentation rule (the check enforces it on every public declaration):
  * A `//` comment block directly above a declaration (no blank line between) documents it,
    and also every declaration that follows it without a blank line or another comment in
    between: one comment can document a group of overloads or related one-liners.
  * A trailing `//` comment on a declaration's first or last line documents that declaration
    (and overrides the group's text for it).
  * Heading lines (`// ---- creation ----`) are section titles, not documentation.
  * A class's comment documents the class, not its members: each public method needs its own
    (or its group's). Data members, private and protected members, deleted functions, forward
    declarations, using-declarations and namespaces named `detail` are not checked.

Public declarations: free functions and operators, classes/structs/enums, public methods and
constructors, type aliases (`using X = ...`) and namespace-scope constants.

Usage:
  tools/api_docs.py                 write build/site/api/cpp/{index.md,index.html,<header>.md}
  tools/api_docs.py --check         fail, naming each undocumented public declaration
  tools/api_docs.py --stats         print documented / total
"""
from __future__ import annotations

import argparse
import html
import os
import re
import sys
import textwrap
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADING = re.compile(r"^-{2,}\s*(.*?)\s*-{2,}$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SKIP_NAMESPACES = {"detail", "internal"}
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "alignof", "requires"}


@dataclass
class Decl:
    file: str
    line: int
    kind: str  # function, method, class, struct, enum, alias, constant, field
    name: str  # qualified
    text: str  # the declaration as written (bodies elided)
    doc: str
    section: str

    @property
    def checked(self) -> bool:
        return self.kind != "field"


@dataclass
class Header:
    path: str
    intro: str = ""
    decls: list[Decl] = field(default_factory=list)


def public_headers(root: str = ROOT) -> list[str]:
    """include/kiln/*.h and the repository headers they include, transitively (sorted)."""
    seen: set[str] = set()
    stack = [os.path.join("include/kiln", f) for f in sorted(os.listdir(os.path.join(root, "include/kiln"))) if f.endswith(".h")]
    while stack:
        rel = stack.pop()
        if rel in seen:
            continue
        seen.add(rel)
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            for line in fh:
                m = INCLUDE.match(line)
                if not m:
                    continue
                for base in ("include", "src"):
                    cand = os.path.join(base, m.group(1))
                    if os.path.exists(os.path.join(root, cand)):
                        stack.append(cand)
                        break
    return sorted(seen)


def split_comment(line: str) -> tuple[str, str]:
    """(code, trailing comment) of one line; `//` inside string literals is not a comment."""
    in_str = None
    i = 0
    while i < len(line):
        c = line[i]
        if in_str:
            if c == "\\":
                i += 2
                continue
            if c == in_str:
                in_str = None
        elif c in "\"'":
            in_str = c
        elif line.startswith("//", i):
            return line[:i].rstrip(), line[i + 2 :].strip()
        i += 1
    return line.rstrip(), ""


def balance(code: str, open_c: str, close_c: str) -> int:
    n, in_str, i = 0, None, 0
    while i < len(code):
        c = code[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == in_str:
                in_str = None
        elif c in "\"'":
            in_str = c
        elif c == open_c:
            n += 1
        elif c == close_c:
            n -= 1
        i += 1
    return n


def elide_bodies(code: str) -> str:
    """`f() const { return x; }` -> `f() const;` for display (the first top-level `{` of a
    function definition starts its body)."""
    out, depth = [], 0
    paren = 0
    for c in code:
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        if c == "{" and paren == 0:
            if depth == 0:
                out.append(";")
            depth += 1
            continue
        if c == "}" and paren == 0 and depth > 0:
            depth -= 1
            continue
        if depth == 0:
            out.append(c)
    text = "".join(out).rstrip()
    # A constructor's member initializers are part of its body, not of its interface.
    text = re.sub(r"(\)\s*(?:const\s*)?(?:noexcept\s*)?)\s*(?<!:):(?!:)\s*[A-Za-z_].*$", r"\1", text, flags=re.S)
    text = re.sub(r"\s*;\s*;?$", ";", text.rstrip())
    return text if text.endswith(";") else text + ";"


TYPE_HEAD = re.compile(r"^(?:template\s*<.*>\s*)?(class|struct|union|enum(?:\s+class)?)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)")
FUNC_NAME = re.compile(r"(operator\s*(?:\(\)|\[\]|[^\s(]+)|~?[A-Za-z_]\w*)\s*\(")


def classify(lines: list[str], scope_is_class: bool) -> tuple[str, str] | None:
    """(kind, unqualified name) of one statement, or None when it is not checked."""
    body = [l for l in lines]
    while body and re.match(r"^\s*(template\s*<|requires\b)", body[0]) and balance(body[0], "<", ">") == 0 and len(body) > 1:
        body = body[1:]
    text = " ".join(s.strip() for s in body)
    head = text.split("{", 1)[0]
    if re.match(r"^(friend|static_assert|extern\s+template|using\s+namespace|typedef)\b", text):
        return None
    if text.startswith("using "):
        m = re.match(r"^using\s+([A-Za-z_]\w*)\s*=", text)
        return ("alias", m.group(1)) if m else None
    m = TYPE_HEAD.match(text)
    if m and "(" not in head.split(m.group(2), 1)[1].split(":", 1)[0]:
        if text.rstrip().endswith(";") and "{" not in text:
            return None  # forward declaration
        kind = "enum" if m.group(1).startswith("enum") else m.group(1)
        return (kind, m.group(2))
    if re.search(r"=\s*delete\s*;", text):
        return None
    # A function: an identifier (or operator) followed by `(` before any `=` or `{`.
    pre_init = re.split(r"(?<![=!<>])=(?!=)|\{", head, maxsplit=1)[0]
    for fm in FUNC_NAME.finditer(pre_init):
        name = fm.group(1).replace(" ", "")
        if balance(pre_init[: fm.start()], "<", ">") > 0:
            continue  # inside a template argument: std::function<Tree(const Tree&)> f;
        if name in KEYWORDS or name in ("alignas", "noexcept", "explicit", "const"):
            continue
        return ("method" if scope_is_class else "function", name)
    # A variable: the last identifier before `=`, `{` or `;`.
    vm = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:=|\{|;)", text)
    if not vm:
        return None
    if scope_is_class:
        return ("field", vm.group(1))
    is_const = re.search(r"\b(constexpr|const)\b", text.split("=", 1)[0]) is not None
    return ("constant" if is_const else "variable", vm.group(1))


@dataclass
class Scope:
    kind: str  # namespace, class, skip
    name: str
    public: bool


def parse_header(rel: str, root: str = ROOT) -> Header:
    with open(os.path.join(root, rel), encoding="utf-8") as fh:
        raw = fh.read().split("\n")
    hdr = Header(rel)
    scopes: list[Scope] = []
    comment: list[str] = []  # the pending comment block
    group_doc = ""  # documentation that the next adjacent declaration inherits
    section = ""
    i = 0
    seen_code = False

    def qualified(name: str) -> str:
        parts = [s.name for s in scopes if s.name]
        return "::".join(parts + [name])

    def hidden() -> bool:
        return any(s.kind == "skip" or not s.public for s in scopes)

    while i < len(raw):
        line = raw[i]
        stripped = line.strip()
        if not stripped:
            comment, group_doc = [], ""
            i += 1
            continue
        if stripped.startswith("//"):
            block = []
            while i < len(raw) and raw[i].strip().startswith("//"):
                text = raw[i].strip()[2:]
                block.append((text[1:] if text.startswith(" ") else text).rstrip())
                i += 1
            while block and HEADING.match(block[0].strip()):
                section = HEADING.match(block[0].strip()).group(1)
                block = block[1:]
            if not seen_code and not hdr.intro:
                hdr.intro = " ".join(block)
                block = []
            comment, group_doc = block, ""
            continue
        seen_code = True
        if stripped.startswith("#"):
            comment, group_doc = [], ""
            i += 1
            continue
        code, trailing = split_comment(line)
        cs = code.strip()
        m = re.match(r"^(?:inline\s+)?namespace\s*([\w:]*)\s*\{\s*(\})?", cs)
        if m:
            if not m.group(2):
                name = m.group(1)
                skip = any(p in SKIP_NAMESPACES for p in name.split("::"))
                scopes.append(Scope("skip" if skip else "namespace", name, True))
            comment, group_doc = [], ""
            i += 1
            continue
        if re.match(r"^\}\s*;?$", cs):
            if scopes:
                scopes.pop()
            comment, group_doc = [], ""
            i += 1
            continue
        am = re.match(r"^(public|private|protected)\s*:$", cs)
        if am and scopes and scopes[-1].kind in ("class", "skip"):
            if scopes[-1].kind == "class":
                scopes[-1].public = am.group(1) == "public"
            comment, group_doc = [], ""
            i += 1
            continue
        # One statement: accumulate lines until it ends at parenthesis depth 0 with `;`,
        # with a body that opened (`{` unbalanced), or with a balanced one-line body.
        start = i
        stmt_lines, trailings = [], []
        while True:
            code, trailing = split_comment(raw[i])
            stmt_lines.append(code)
            if trailing:
                trailings.append((i, trailing))
            joined = "\n".join(stmt_lines)
            i += 1
            if balance(joined, "(", ")") > 0 or i >= len(raw):
                if i >= len(raw):
                    break
                continue
            s = joined.rstrip()
            if balance(joined, "{", "}") > 0 or s.endswith(";") or (s.endswith("}") and balance(joined, "{", "}") == 0):
                break
        joined = "\n".join(stmt_lines)
        in_class = bool(scopes) and scopes[-1].kind == "class"
        info = classify([l for l in stmt_lines if l.strip()], in_class)
        opens = balance(joined, "{", "}") > 0
        if opens and info and info[0] in ("class", "struct", "union"):
            body_scope = Scope("class", info[1], info[0] != "class")
        elif opens:
            body_scope = None  # a function body or an enum's enumerators: skip to its end
            depth = balance(joined, "{", "}")
            while depth > 0 and i < len(raw):
                code, _ = split_comment(raw[i])
                depth += balance(code, "{", "}")
                i += 1
        else:
            body_scope = None
        # Documentation: the comment above (or the group's), a trailing comment overrides.
        own = "\n".join(comment)
        last = start + len(stmt_lines) - 1
        trail = next((t for (ln, t) in trailings if ln in (start, last)), "")
        if own:
            doc = own + ("\n" + trail if trail else "")
        else:
            doc = trail or group_doc
        if own:
            group_doc = own
        comment = []
        if info and not hidden():
            kind, name = info
            text = textwrap.dedent("\n".join(l for l in stmt_lines if l.strip()))
            text = elide_bodies(text) if (kind in ("function", "method") and "{" in text) else text.strip()
            if kind in ("class", "struct", "union", "enum"):
                text = re.sub(r"\s*\{.*", "", text, flags=re.S).strip()
            decl_text = "\n".join(t.rstrip() for t in text.split("\n"))
            hdr.decls.append(Decl(rel, start + 1, kind, qualified(name), decl_text, doc.strip(), section))
        if body_scope:
            scopes.append(body_scope)
            comment, group_doc = [], ""
    return hdr


def all_headers(root: str = ROOT) -> list[Header]:
    return [parse_header(p, root) for p in public_headers(root)]


def undocumented(headers: list[Header]) -> list[Decl]:
    return [d for h in headers for d in h.decls if d.checked and not d.doc]


def doc_blocks(doc: str) -> list[tuple[str, str]]:
    """A doc comment as ("text", paragraph) and ("code", lines) blocks: comment lines indented
    by two spaces or more are code (examples), kept line for line; the others are prose."""
    blocks: list[tuple[str, str]] = []
    for line in doc.split("\n"):
        kind = "code" if line.startswith("  ") else "text"
        body = line[2:] if kind == "code" else line.strip()
        if blocks and blocks[-1][0] == kind:
            blocks[-1] = (kind, blocks[-1][1] + ("\n" if kind == "code" else " ") + body)
        else:
            blocks.append((kind, body))
    return [(k, b) for k, b in blocks if b.strip()]


def md_doc(doc: str) -> list[str]:
    out = []
    for kind, body in doc_blocks(doc):
        if kind == "code":
            out += ["```cpp", body, "```", ""]
        else:
            out += [body.replace("<", "&lt;").replace(">", "&gt;"), ""]
    return out


def html_doc(doc: str) -> str:
    e = html.escape
    return "".join(f"<pre><code>{e(b)}</code></pre>" if k == "code" else f"<p>{e(b)}</p>" for k, b in doc_blocks(doc))


def write_markdown(headers: list[Header], out: str) -> None:
    os.makedirs(out, exist_ok=True)
    index = ["# kiln C++ API reference", "",
             "Generated by `tools/api_docs.py` from the public headers: `include/kiln/*.h` and the",
             "headers they include. `#include <kiln/kiln.h>` brings in all of them except",
             "`kiln/llm.h` and `kiln/onnx.h`.", ""]
    for h in headers:
        page = h.path.replace("/", "_").replace(".h", ".md")
        checked = [d for d in h.decls if d.checked]
        index.append(f"- [`{h.path}`]({page}): {h.intro or ''} ({len(checked)} declarations)")
        lines = [f"# `{h.path}`", "", h.intro, ""]
        section = None
        for d in h.decls:
            if d.section != section:
                section = d.section
                if section:
                    lines += [f"## {section}", ""]
            lines += [f"### `{d.name}` ({d.kind})", "", "```cpp", d.text, "```", ""]
            lines += md_doc(d.doc)
        with open(os.path.join(out, page), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines).rstrip() + "\n")
    with open(os.path.join(out, "index.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(index) + "\n")


def write_html(headers: list[Header], out: str) -> None:
    e = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>kiln C++ API</title>",
             "<style>body{font:15px/1.45 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
             "pre{background:#f4f4f4;padding:.5em;overflow-x:auto}h3{font-size:1em;margin-bottom:.2em}"
             "nav li{margin:.1em 0}</style></head><body>",
             "<h1>kiln C++ API reference</h1><p>Generated by <code>tools/api_docs.py</code> from the public headers.</p><nav><ul>"]
    for h in headers:
        parts.append(f"<li><a href='#{e(h.path)}'>{e(h.path)}</a>: {e(h.intro)}</li>")
    parts.append("</ul></nav>")
    for h in headers:
        parts.append(f"<h2 id='{e(h.path)}'>{e(h.path)}</h2><p>{e(h.intro)}</p>")
        section = None
        for d in h.decls:
            if d.section != section and d.section:
                section = d.section
                parts.append(f"<h3>— {e(section)} —</h3>")
            parts.append(f"<pre id='{e(d.name)}'><code>{e(d.text)}</code></pre>{html_doc(d.doc)}")
    parts.append("</body></html>")
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(parts) + "\n")


ALLOWLIST = os.path.join(ROOT, "tools/api_docs_allowlist.txt")
ALLOWLIST_HEAD = ("# Public C++ declarations without a doc comment yet (tools/api_docs.py --check).\n"
                  "# The list only shrinks: document one, then delete its line.\n")


def read_allowlist() -> set[str]:
    if not os.path.exists(ALLOWLIST):
        return set()
    with open(ALLOWLIST, encoding="utf-8") as fh:
        return {l.strip() for l in fh if l.strip() and not l.startswith("#")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail naming each undocumented public declaration")
    ap.add_argument("--write-allowlist", action="store_true", help="rewrite the allowlist with today's undocumented declarations")
    ap.add_argument("--stats", action="store_true", help="print documented / total and exit")
    ap.add_argument("--out", default=os.path.join(ROOT, "build/site/api/cpp"))
    args = ap.parse_args()
    headers = all_headers()
    total = sum(1 for h in headers for d in h.decls if d.checked)
    missing = undocumented(headers)
    stats = f"C++ API: {total - len(missing)} / {total} public declarations documented ({len(headers)} headers)"
    if args.check or args.write_allowlist:
        # The allowlist holds declarations still waiting for their comment; it only shrinks:
        # a listed declaration that is documented now (or gone) fails the check too.
        allowed = read_allowlist()
        keys = {f"{d.kind} {d.name}" for d in missing}
        if args.write_allowlist:
            with open(ALLOWLIST, "w", encoding="utf-8") as fh:
                fh.write(ALLOWLIST_HEAD + "".join(k + "\n" for k in sorted(keys)))
            print(f"{stats}; {len(keys)} in {os.path.relpath(ALLOWLIST, ROOT)}")
            return 0
        failures = 0
        for d in missing:
            if f"{d.kind} {d.name}" not in allowed:
                print(f"{d.file}:{d.line}: {d.kind} {d.name} has no doc comment", file=sys.stderr)
                failures += 1
        for k in sorted(allowed - keys):
            print(f"{os.path.relpath(ALLOWLIST, ROOT)}: '{k}' is documented now (or gone): remove it from the list", file=sys.stderr)
            failures += 1
        print(f"{stats}, {len(allowed)} allow-listed")
        if failures:
            print("the rule: a // comment directly above (it documents the adjacent group) or a trailing one; see tools/api_docs.py", file=sys.stderr)
        return 1 if failures else 0
    if args.stats:
        print(stats)
        return 0
    write_markdown(headers, args.out)
    write_html(headers, args.out)
    print(f"{stats}; wrote {os.path.relpath(args.out, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
