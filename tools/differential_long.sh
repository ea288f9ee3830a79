#!/bin/sh
# The long randomized differential run (issue 22): N programs (default 20000) from SEED
# (default 1) against @jax-js/jax 0.1.25 on kiln's cpu and wasm devices, the same generator
# as make test's 1000. Needs js/ built (cmake --build --preset js; cd js && npm ci && npm run build).
# Usage: tools/differential_long.sh [N] [SEED]
set -e
cd "$(dirname "$0")/../js"
KILN_DIFF_PROGRAMS="${1:-20000}" KILN_DIFF_SEED="${2:-1}" npx vitest run test/differential_random.test.ts
