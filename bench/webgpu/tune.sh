#!/usr/bin/env bash
# Sweeps kiln's contraction tiles (KILN_WEBGPU_TILES) over the f32 matmuls of bench.mjs on
# one GPU and prints one line per tile: the number to pick a device's defaults from.
#   bench/webgpu/tune.sh [TILE ...]    (TILE as BMxBNxBKxTMxTN's form "128x128x16/8x8")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tiles=("$@")
[ ${#tiles[@]} -gt 0 ] || tiles=(128x128x16/8x8 128x128x8/8x8 128x128x32/8x8 64x64x16/4x4 128x64x16/8x4
  64x128x16/4x8 64x64x32/4x4 128x128x16/8x4 256x128x16/8x8 128x256x16/8x8 256x64x16/8x4)
for t in "${tiles[@]}"; do
  line=$(KILN_WEBGPU_TILES=$t BENCH_LIBS=kiln BENCH_CASES=matmul1024,matmul2048,matmul4096 \
    timeout 120 node "$here/bench.mjs" 2>&1 | grep '^| f32 matmul' | awk -F'|' '{printf "%s", $4}')
  echo "tile $t: TFLOP/s at 1024 2048 4096:${line:- failed}"
done
