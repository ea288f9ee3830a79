// 128-bit loads in reduction chunks. An unrolled chunk (ir/reduction_unroll.h) of a matvec
// reads x[ridx * 32 + u] for u = 0..31 as 32 scalar loads, each with its own bounds clamp
// under WebGPU's robustness rules. Four of them whose indices are s + 4m .. s + 4m + 3, with s
// provably a multiple of 4, are one element of the same buffer bound again as
// array<vec4<u32>>: one load and one clamp for four values.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "ir/alu_exp.h"

namespace kiln::webgpu {

struct VecLoad {
  int arg = 0;                             // the kernel input read
  AluExp first;                            // the element index of lane 0 (a multiple of 4)
  std::array<const AluNode*, 4> lanes{};  // the scalar loads of lanes 0..3
};

// The quads among the loads of 4-byte elements in `roots` (each load in at most one).
std::vector<VecLoad> find_vec_loads(const std::vector<AluExp>& roots);

// The largest power of two (up to 2^30) that surely divides integer expression e's value.
int64_t known_multiple(const AluExp& e);

}  // namespace kiln::webgpu
