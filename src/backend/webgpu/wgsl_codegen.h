// WGSL compute shaders from Kernels, with the dispatch each needs: pointwise kernels and
// short reductions run one invocation per output word; long reductions with few outputs
// run one workgroup per output with a shared-memory tree reduction.
#pragma once
#include <cstdint>
#include <string>

#include "ir/kernel.h"

namespace kiln::webgpu {

// Per-device choices of the generator (the JS runtime can read them from the adapter).
struct WgslParams {
  int workgroup = 256;         // invocations per workgroup (a power of two)
  int64_t tree_min_reduce = 256;   // reductions at least this long ...
  int64_t tree_max_outputs = 65536;  // ... with at most this many outputs use the tree
  int max_groups_x = 65535;    // WebGPU's default maxComputeWorkgroupsPerDimension
};

enum class WgslStrategy { Elementwise, SerialReduce, TreeReduce };

// A generated shader. Bindings: 0 = uniform {size: u32}, 1 = out (array<u32>), 2 + i = input i.
struct WgslKernel {
  std::string wgsl;
  WgslStrategy strategy = WgslStrategy::Elementwise;
  int workgroup = 256;
  int per_word = 1;  // outputs packed per u32 word (4 for bool, 2 for float16), one invocation each word
};

WgslKernel generate_wgsl(const Kernel& k, const WgslParams& p = {});

// Workgroups to dispatch (x, y) for `size` outputs; y > 1 when x would pass max_groups_x.
struct Grid {
  int64_t x = 1, y = 1;
};
Grid dispatch_grid(const WgslKernel& w, int64_t size, const WgslParams& p = {});

}  // namespace kiln::webgpu
