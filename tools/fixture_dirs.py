"""Writes generated binary fixtures into directories, or with --check reports every file that
would change, appear or disappear (exit 1): shared by the generators whose outputs are whole
files (tools/gen_gguf_fixtures.py, tools/gen_fuzz_seeds.py)."""

import os
import sys


def sync_dirs(dirs, program, what):
    """dirs: {directory: {file name: bytes}}. Writes them, or checks them under --check."""
    check = "--check" in sys.argv
    stale = []
    for d, files in dirs.items():
        if check:
            have = set(os.listdir(d)) if os.path.isdir(d) else set()
            stale += [os.path.join(os.path.basename(d), n) for n in sorted(set(files) | have)
                      if n not in files or n not in have or
                      open(os.path.join(d, n), "rb").read() != files[n]]
            continue
        os.makedirs(d, exist_ok=True)
        for n, b in files.items():
            with open(os.path.join(d, n), "wb") as f:
                f.write(b)
    total = sum(len(f) for f in dirs.values())
    if check:
        if stale:
            print(f"{program}: stale or unexpected {sorted(stale)}", file=sys.stderr)
            sys.exit(1)
        print(f"{program}: {total} {what} up to date")
    else:
        print(f"{program}: wrote {total} {what}")
