#!/usr/bin/env bash
# Issue 20's measurements in one device call (run from the checkout root on the GPU machine):
# kiln `webgpu` decode/prefill with the six unfused attention kernels against `fusedAttention`
# (the split-K decode_attention routine), alternated, beside llama.cpp's Vulkan backend on the
# same file; the first call in a fresh process with an empty NVIDIA shader cache, pipelines
# created one by one (KILN_WEBGPU_ASYNC_PIPELINES=0) against asynchronously together (=1),
# beside llama.cpp's first call; then the Llama-3.2-1B shape and the matvec kernels against
# the copy shader's bandwidth. About 6 minutes.
# Prepare on the development machine (the call carries at most 64 MiB):
#   ../shared/tools/device-webgpu/pack.sh --all   (node-llama-cpp 3.21.1, its linux-x64-vulkan
#     package and webgpu 0.6.2 installed in ./node_modules first), then
#   tar -C js/dist -cf - . | xz -T2 -6 > .device/dist.tar.xz
#   mkdir -p build/llmhdrx; python3 tools/gguf_random_weights.py --header-only \
#     data/models/SmolLM2-135M-Instruct.Q4_1.gguf build/llmhdrx/smollm2.header
#   python3 tools/gguf_reshape_header.py build/llmhdrx/smollm2.header build/llmhdrx/llama1b.header \
#     --preset llama-3.2-1b --type Q4_0;  xz -9 build/llmhdrx/*.header
# and call: carry [".device", "build/llmhdrx"], command
#   source .device/env.sh > /dev/null && bash bench/llm/webgpu_call.sh
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
mkdir -p /tmp/dist && tar -C /tmp/dist -xJf .device/dist.tar.xz
ln -sfn "$PWD/node_modules" /tmp/node_modules  # the dist's `import "webgpu"` resolves from /tmp
export KILN_DIST=/tmp/dist
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep "Model name"; nproc
for m in smollm2 llama1b; do xz -dc build/llmhdrx/$m.header.xz > /tmp/$m.header; python3 tools/gguf_random_weights.py /tmp/$m.header /tmp/$m.gguf > /dev/null & done; wait
ls -la /tmp/*.gguf
T0=$(date +%s)
r() { echo "== [$(( $(date +%s) - T0 ))s] $*"; timeout 120 "$@" 2>&1 | grep -E "load|prefill|decode|kernels|submits|first|pipelines|total|span|error|Error|tok/s" | head -24; }
for i in 1 2; do
  r env LLM_PROMPT_REPEAT=40 LLM_GREEDY=1 node bench/llm/llm_js.mjs /tmp/smollm2.gguf webgpu 256 1024
  r env LLM_FUSED_ATTENTION=1 LLM_PROMPT_REPEAT=40 LLM_GREEDY=1 node bench/llm/llm_js.mjs /tmp/smollm2.gguf webgpu 256 1024
done
r env NLC_DIR=node_modules/node-llama-cpp node bench/llm/llama_vulkan.mjs /tmp/smollm2.gguf 256 520
for a in 0 1; do
  r env __GL_SHADER_DISK_CACHE_PATH=$(mktemp -d) KILN_WEBGPU_ASYNC_PIPELINES=$a node bench/llm/first_call.mjs /tmp/smollm2.gguf 8 512
done
r env __GL_SHADER_DISK_CACHE_PATH=$(mktemp -d) NLC_DIR=node_modules/node-llama-cpp node bench/llm/llama_vulkan.mjs /tmp/smollm2.gguf 8 0
r env LLM_PROMPT_REPEAT=40 LLM_GREEDY=1 node bench/llm/llm_js.mjs /tmp/llama1b.gguf webgpu 256 1024
r env LLM_FUSED_ATTENTION=1 LLM_PROMPT_REPEAT=40 LLM_GREEDY=1 node bench/llm/llm_js.mjs /tmp/llama1b.gguf webgpu 256 1024
echo "== [$(( $(date +%s) - T0 ))s] qmatvec_layouts"; timeout 100 node bench/webgpu/qmatvec_layouts.mjs /tmp/dist 2>&1 | tail -24
echo "== [$(( $(date +%s) - T0 ))s] end"
