#!/usr/bin/env bash
# Fills DIR with what bench/llm/device.sh needs on the GPU machine (x86-64, no Node.js, no
# kiln build): Node (xz), tools/llm-oracle's node_modules (xz), kiln_llm_bench native (libstdc++
# linked in) and wasm, bench.mjs, the generator and SmolLM2's header (~40 MB in all; the
# machine takes 64 MiB per call). Needs `make bench-llm`'s builds first.   usage: pack_device.sh DIR
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
D=$1
rm -rf "$D" && mkdir -p "$D/bench/llm" "$D/tools" "$D/build/native" "$D/build/wasm"
cp bench/llm/bench.mjs bench/llm/prompt.txt bench/llm/device.sh "$D/bench/llm/"
mv "$D/bench/llm/device.sh" "$D/"
cp tools/gguf_random_weights.py "$D/tools/"
g++ -O2 build/native/CMakeFiles/kiln_llm_bench.dir/bench/llm/llm_bench.cpp.o build/native/libkiln.a \
  -static-libstdc++ -static-libgcc -lpthread -ldl -o "$D/build/native/kiln_llm_bench"
cp build/wasm/kiln_llm_bench.js build/wasm/kiln_llm_bench.wasm build/wasm/kiln_llm_bench.worker.js "$D/build/wasm/"
python3 tools/gguf_random_weights.py --header-only data/models/SmolLM2-135M-Instruct.Q4_1.gguf "$D/smollm2.header"
xz -T2 -6 -c "$(command -v node)" > "$D/node.xz"
(cd tools/llm-oracle && tar -c --exclude='node_modules/node-llama-cpp/llama/gitRelease.bundle' node_modules | xz -T2 -3) > "$D/nm.tar.xz"
git rev-parse --short HEAD > "$D/COMMIT"
du -sh "$D"
