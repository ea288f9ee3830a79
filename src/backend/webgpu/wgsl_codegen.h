// WGSL compute shaders from Kernels, with the dispatch each needs: pointwise kernels and
// short reductions run one invocation per output word; long reductions with few outputs
// run one workgroup per output with a shared-memory tree reduction.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace kiln::webgpu {

// A workgroup tile of a contraction (wgsl_tiled.h): BM x BN outputs, BK steps of ridx
// staged at a time, TM x TN outputs per invocation (multiples of 4: they are read as vec4).
struct WgslTile {
  int bm = 128, bn = 128, bk = 16, tm = 8, tn = 8;
  int invocations() const { return (bm / tm) * (bn / tn); }
};

// How a tiled kernel stages factor slices in workgroup memory: load, barrier, compute,
// barrier (Single); with the next slice's global loads issued before the arithmetic
// (Prefetch); or into a second copy of workgroup memory, one barrier per slice (Double).
enum class WgslStaging { Single, Prefetch, Double };

// Per-device choices of the generator (the JS runtime can read them from the adapter).
struct WgslParams {
  int workgroup = 256;         // invocations per workgroup (a power of two)
  int64_t tree_min_reduce = 256;   // reductions at least this long ...
  // ... with at most this many outputs use the tree. On SwiftShader, 256-thread groups with
  // barriers are costly (65 536 tree groups of a 256^3 matmul took 151 s there, 2026-12-03),
  // so this default stays low; the JS runtime raises it to 65 536 on GPUs, whose barriers are
  // cheap and whose loads want the tree's coalesced order (a serial row per invocation reads
  // with a stride of the row length).
  int64_t tree_max_outputs = 1024;
  // Invocations that reduce one output of a tree reduction (a power of two, at most
  // `workgroup`; the workgroup holds workgroup / lanes outputs). 0: the rule in
  // tree_lanes() (wgsl_codegen.cpp), which gives short rows (a decode step's matvecs: 576,
  // 1536) fewer lanes than long ones; `workgroup`: one output per workgroup, as before.
  int row_lanes = 0;
  // Outputs each lane group of a tree reduction sums at once (at most; a power of two): its
  // lanes load what the outputs' terms share (a matvec's x, the chunk's index arithmetic)
  // once for all of them. 0: the rule in tree_outputs() (wgsl_codegen.cpp).
  int row_outputs = 0;
  // Four neighbouring loads of a chunk read as one vec4 of the same buffer bound again
  // (wgsl_vec_loads.h), where the storage-buffer limit leaves room for the extra bindings.
  bool vec4_loads = true;
  int max_groups_x = 65535;    // WebGPU's default maxComputeWorkgroupsPerDimension
  // Contraction tiles, largest first: a kernel takes the first that fits the device and
  // gives at least `fill_groups` workgroups (enough to occupy the GPU), else the last that
  // fits. 8x8 sums per invocation keep the inner loop at 64 FMAs per 4 vec4 workgroup loads;
  // the order comes from bench/webgpu/tune.sh on an H200 (bench/results/webgpu.md).
  std::vector<WgslTile> tiles = {{.bm = 128, .bn = 256, .bk = 8, .tm = 8, .tn = 8},
                                 {.bm = 128, .bn = 128, .bk = 8, .tm = 8, .tn = 8},
                                 {.bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4}};
  int64_t fill_groups = 128;
  WgslStaging staging = WgslStaging::Double;
  int band_rows = 8;           // tile rows per band of the launch order (wgsl_tiled.cpp)
  int64_t tile_min = 16;       // rows, columns and ridx of the smallest tiled contraction
  int workgroup_storage = 16384;  // bytes of workgroup memory (WebGPU's default limit)
  int max_invocations = 256;      // per workgroup (WebGPU's default limit)
  int max_storage_buffers = 8;    // per shader stage (WebGPU's default limit)
};

// Throws a kiln::Error naming the tile when it breaks WgslTile's rules.
void check_tile(const WgslTile& t);

enum class WgslStrategy { Elementwise, SerialReduce, TreeReduce, Tiled };

// A generated shader. Bindings: 0 = uniform {size: u32}, 1 = out (array<u32>), 2 + i = input i
// (then the vec4 views of `vec4_inputs`).
struct WgslKernel {
  std::string wgsl;
  WgslStrategy strategy = WgslStrategy::Elementwise;
  int workgroup = 256;
  int per_word = 1;  // outputs packed per u32 word (4 for bool, 2 for float16), one invocation each word
  int64_t groups = 0;  // Tiled: workgroups to dispatch (the others derive it from the size)
  int outputs_per_group = 1;  // TreeReduce: workgroup / lanes * WgslParams::row_outputs (as fitted)
  // Inputs bound a second time as array<vec4<u32>>, at bindings 2 + ninputs + j: the dispatch
  // passes their buffers again after the inputs.
  std::vector<int> vec4_inputs;
};

// Lanes per output of a tree reduction over `reduce` terms (WgslParams::row_lanes), each
// lane folding chunks of `period` consecutive terms (1: single terms).
int tree_lanes(int64_t reduce, const WgslParams& p, int64_t period = 1);

WgslKernel generate_wgsl(const Kernel& k, const WgslParams& p = {});

// Workgroups to dispatch (x, y) for `size` outputs; y > 1 when x would pass max_groups_x.
struct Grid {
  int64_t x = 1, y = 1;
};
Grid dispatch_grid(const WgslKernel& w, int64_t size, const WgslParams& p = {});

}  // namespace kiln::webgpu
