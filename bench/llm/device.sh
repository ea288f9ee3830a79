#!/usr/bin/env bash
# bench/llm on the GPU machine's CPUs, from the folder bench/llm/pack_device.sh fills (run from
# that folder's copy there): unpacks Node and node-llama-cpp, writes the benchmark model from
# the real file's header with random blocks (tools/gguf_random_weights.py; the real file is
# too big to travel), compiles kiln's native kernels once on all cores, then runs bench.mjs
# pinned to two CPUs on different physical cores, so 1- and 2-thread numbers compare with the
# 2-core development machine.   usage: device.sh OUT_DIR [bench.mjs arguments...]
set -u
cd "$(dirname "$0")"
out=$1; shift
mkdir -p /tmp/benchnode && xz -dc node.xz > /tmp/benchnode/node && chmod +x /tmp/benchnode/node
export PATH=/tmp/benchnode:$PATH KILN_COMMIT=$(cat COMMIT)
mkdir -p tools/llm-oracle && (cd tools/llm-oracle && xz -dc ../../nm.tar.xz | tar -x)
echo "== tools: $(command -v c++ || echo 'no c++') $(c++ --version 2>/dev/null | head -1); node $(node --version); $(nproc) CPUs"
lscpu | grep -E "^(Model name|Thread|Core|Socket|NUMA node0)" ; uptime
python3 tools/gguf_random_weights.py smollm2.header model.gguf
# CPU 0 and the first CPU on another physical core (hyperthread siblings share one core).
core0=$(cat /sys/devices/system/cpu/cpu0/topology/core_id)
pkg0=$(cat /sys/devices/system/cpu/cpu0/topology/physical_package_id)
pair=""
for c in /sys/devices/system/cpu/cpu[0-9]*; do
  n=${c##*cpu}; [ "$n" = 0 ] && continue
  if [ "$(cat $c/topology/core_id)" != "$core0" ] && [ "$(cat $c/topology/physical_package_id)" = "$pkg0" ]; then pair="0,$n"; break; fi
done
pair=${pair:-0,1}
echo "== pinned to CPUs $pair"
seq 1 256 > /tmp/warm_ids.txt
( time KILN_NUM_THREADS=$(nproc) build/native/kiln_llm_bench --model model.gguf --ids /tmp/warm_ids.txt --reps 0 ) 2>&1 | tail -5
taskset -c "$pair" node bench/llm/bench.mjs --model model.gguf --json "$out/llm.json" "$@" 2>&1 | tee "$out/llm.md"
