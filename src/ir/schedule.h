// The scheduler: chooses the loop structure of a Kernel (output axes, upcast, unroll,
// cache tiles, workgroup axes) from per-backend parameters; code generators consume it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/view.h"

namespace kiln {

// What a backend's code generator can use; the scheduler stays backend-independent. The
// presets below are written with designated initializers, each number commented with what
// it is and where it was measured (or that it was not); a field left out keeps its default 1.
struct ScheduleParams {
  int64_t upcast = 1;       // output elements per thread along the innermost axis (SIMD lanes)
  int64_t unroll = 1;       // reduction steps unrolled per loop iteration
  int64_t tile_out = 1;     // output block per axis kept hot in cache/registers (0: no tiling)
  int64_t tile_red = 1;     // reduction block (K) per tile
  int64_t max_local = 1;    // threads per workgroup (1: no workgroups, e.g. the cpu)
  int64_t local_inner = 1;  // preferred threads along the innermost output axis
  // The register tile of a contraction: reg_rows rows x (reg_vecs x upcast) columns of sums.
  int64_t reg_rows = 1;
  int64_t reg_vecs = 1;
  static ScheduleParams cpu();     // the interpreter ignores the schedule; this is its baseline
  static ScheduleParams wasm();    // SIMD128 (4 x f32), the 4 x 2 register tile of wasm_tiled
  static ScheduleParams webgpu();  // 4-wide vectors, up to 256 threads per workgroup
};

// One loop nest. The output index gidx is split into `out_shape` (row-major); for a
// contraction-like reduction that is (M, N), found from how the body indexes gidx.
struct Schedule {
  Dims out_shape;
  int64_t reduce = 0;    // reduction length (0: elementwise)
  Dims tile;             // per output axis, divides out_shape[i]
  int64_t tile_red = 1;  // divides reduce
  int64_t upcast = 1;    // divides tile.back()
  int64_t unroll = 1;    // divides tile_red
  Dims local;            // workgroup size per output axis; local[i] * upcast (innermost) divides tile[i]
  Dims groups;           // workgroups per output axis: out_shape[i] / tile[i]
  std::string str() const;
};

Schedule schedule_kernel(const Kernel& k, const ScheduleParams& p);

// The largest divisor of n that is at most cap (at least 1).
int64_t largest_divisor(int64_t n, int64_t cap);

}  // namespace kiln
