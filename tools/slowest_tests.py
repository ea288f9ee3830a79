"""Prints where a ctest run's time went: the slowest GoogleTest cases and suites, read from the
JSON reports that each kiln_tests process of `ctest --preset native|debug` writes into
build/<preset>/test-times (CMakeLists.txt). make test prints it after each ctest stage; it never
fails the stage (a run without reports prints a note).

Usage: python3 tools/slowest_tests.py DIR [--top N]"""

import argparse
import glob
import json
import os
from collections import Counter


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    tests, suites = [], Counter()
    for path in sorted(glob.glob(os.path.join(a.dir, "*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError):
            continue  # a process that crashed leaves no (or half a) report; ctest says which
        for suite in report.get("testsuites", []):
            for t in suite.get("testsuite", []):
                secs = float(str(t.get("time", "0s")).rstrip("s") or 0)
                tests.append((secs, f"{suite['name']}.{t['name']}"))
                # Parameterized suites (Prefix/Suite) count under their suite's name.
                suites[suite["name"].split("/")[-1]] += secs
    if not tests:
        print(f"[kiln] no GoogleTest reports in {a.dir}")
        return
    print(f"[kiln] {len(tests)} tests, {sum(t for t, _ in tests):.0f} s in all; slowest tests:")
    for secs, name in sorted(tests, reverse=True)[: a.top]:
        print(f"  {secs:7.1f} s  {name}")
    print("[kiln] slowest suites: " + "; ".join(f"{n} {s:.0f} s" for n, s in suites.most_common(a.top)))


if __name__ == "__main__":
    main()
