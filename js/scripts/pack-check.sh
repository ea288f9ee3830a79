#!/usr/bin/env bash
# npm pack of js/, installed into a fresh project, which then runs examples/node/main.mjs:
# the tarball must install and work on its own. Used by `make test-js`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tarball="$(cd "$here" && npm pack --silent --pack-destination "$tmp")"
cd "$tmp" && npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "$tmp/$tarball"
cp "$here/../examples/node/main.mjs" .
out="$(node main.mjs)"
echo "$out"
# The fit must recover the line's slope and intercept.
echo "$out" | grep -Eq '^w = (2\.9[5-9]|3\.0[0-4])[0-9]*, b = -(0\.9[5-9]|1\.0[0-4])' || { echo "[kiln] pack-check: wrong fit" >&2; exit 1; }
echo "[kiln] pack-check: $tarball installs and runs in a fresh project"
