#!/bin/sh
# The long randomized differential run (issue 22): N programs (default 20000) from SEED
# (default 1) against @jax-js/jax 0.1.25 on kiln's cpu and wasm devices, the same generator
# as make test's 1000 (elementwise chains, indexing, linear algebra, dtypes). Runs in parts
# of PART programs (default 2000), one Vitest process each, niced: a single 20 000-program
# process outgrew the test time limit on a loaded machine. Prints each part's result and time.
# Then runs every case of the differential corpus on webgpu (Dawn; SwiftShader without a GPU).
# Needs js/ built (cmake --build --preset js; cd js && npm ci && npm run build).
# Usage: tools/differential_long.sh [N] [SEED] [PART]
set -e
cd "$(dirname "$0")/../js"
n="${1:-20000}"; seed="${2:-1}"; part="${3:-2000}"
end=$((seed + n)); failed=0; start_all=$(date +%s)
while [ "$seed" -lt "$end" ]; do
  count=$((end - seed < part ? end - seed : part)); t0=$(date +%s)
  if KILN_DIFF_REPORT=1 KILN_DIFF_PROGRAMS="$count" KILN_DIFF_SEED="$seed" nice npx vitest run test/differential_random.test.ts; then r=pass; else r=FAIL; failed=1; fi
  echo "differential_long: seeds $seed to $((seed + count - 1)): $r in $(($(date +%s) - t0)) s"
  seed=$((seed + count))
done
echo "differential_long: $n programs in $(($(date +%s) - start_all)) s, $( [ $failed = 0 ] && echo 'no difference' || echo 'differences above (DIFF lines)')"
# Then the whole differential corpus on webgpu (make test runs every 5th case there).
t0=$(date +%s)
if KILN_REQUIRE_WEBGPU=1 KILN_DIFF_WEBGPU=all nice npx vitest run test/differential.test.ts -t "on webgpu"; then r=pass; else r=FAIL; failed=1; fi
echo "differential_long: the corpus on webgpu: $r in $(($(date +%s) - t0)) s"
exit $failed
