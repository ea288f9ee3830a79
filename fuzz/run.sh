#!/usr/bin/env bash
# make fuzz: builds each fuzz/*_fuzz.cpp target with clang-14 and libFuzzer (+ ASan, UBSan,
# zlib as the decoders' oracle), runs each for FUZZ_SECONDS, and prints one summary line each.
# Usage: fuzz/run.sh [target...]   (default: every target). Env: FUZZ_SECONDS (60 per
# target), FUZZ_RUNS (stop a target after this many executions instead, if sooner), FUZZ_OUT
# (build/fuzz), FUZZ_CXX (clang++-14).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=${FUZZ_OUT:-build/fuzz}
CXX=${FUZZ_CXX:-clang++-14}
mkdir -p "$OUT"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cpp; do t=${f#fuzz/}; targets+=("${t%_fuzz.cpp}"); done
fi

# The pure sources every target may call: file parsers (src/formats) and the other parsers
# that need no Array (and ir/alu_op.cpp: the formats read IEEE half through its
# half_to_float). Targets link only these, so a build takes seconds, not the library's
# minutes, and a parser that needs an Array does not belong in a fuzz target.
PURE_SOURCES=(src/formats/*.cpp src/library/einsum_spec.cpp src/library/conv_layout.cpp
              src/ir/dtype.cpp src/ir/alu_op.cpp)
FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all -Wall -Wextra -Werror -DKILN_LIBFUZZER -DKILN_FUZZ_ZLIB
       -Isrc -I.)

summary=()
status=0
for t in "${targets[@]}"; do
  echo "[kiln] fuzz: building $t"
  nice "$CXX" "${FLAGS[@]}" "fuzz/${t}_fuzz.cpp" "${PURE_SOURCES[@]}" -lz -o "$OUT/$t"
  # New inputs go to the build folder's corpus; the committed seeds are read only.
  mkdir -p "$OUT/corpus/$t" "$OUT/crashes"
  log="$OUT/$t.log"
  echo "[kiln] fuzz: running $t for ${SECONDS_EACH}s (log: $log)"
  rc=0
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 nice "$OUT/$t" \
    -max_total_time="$SECONDS_EACH" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$OUT/crashes/$t-" "$OUT/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  secs=$(awk -v n="${execs:-0}" -v r="${rate:-0}" 'BEGIN { if (r > 0) printf "%d", n / r; else print "?" }')
  crashes=$(ls "$OUT/crashes" | grep -c "^$t-" || true)
  summary+=("$(printf '| %-8s | %12s | %8s | %5s s | %d |' "$t" "${execs:-?}" "${rate:-?}" "$secs" "$crashes")")
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    status=1
    echo "[kiln] fuzz: $t FAILED (exit $rc); the input is in $OUT/crashes/, the report in $log" >&2
    grep -m1 -A12 "ERROR\|PropertyError\|terminate called" "$log" >&2 || tail -n 20 "$log" >&2
  fi
done
echo "| target | executions | exec/s | time | crashes |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${summary[@]}"
exit $status
