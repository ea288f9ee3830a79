// Load offsets of a kernel lifted into the uniform's spare words, so that kernels that differ
// only in where they read a buffer (a prefill's attention reads each layer's rows of the one
// KV cache array) share one WGSL text, hence one pipeline to compile on the first call.
#pragma once
#include <array>
#include <cstdint>

#include "ir/kernel.h"

namespace kiln::webgpu {

// The uniform holds 4 u32 words: the output size, then these run-time constants.
constexpr int kUniformWords = 3;

// The Var that stands for word w (0..2) of the uniform after the size: numbered after VarId's
// own, rendered as `i32(params.w1)` .. `i32(params.w3)` by ExprEmitter.
inline VarId uniform_word(int w) { return VarId(uint8_t(int(VarId::Last) + 1 + w)); }
inline bool is_uniform_word(int var_arg) { return var_arg > int(VarId::Last); }

struct LiftedOffsets {
  Kernel kernel;                             // the kernel with the offsets as word Vars
  std::array<int64_t, kUniformWords> words{};  // their values, for the dispatch's uniform
  int count = 0;                             // words used (0: nothing lifted)
};

// Replaces the nonzero int32 constants added at the top of each load's index (an offset into
// the buffer: `... + 12288`) by word Vars, the same value by the same word, first seen first;
// at most kUniformWords distinct values, further ones stay constants. Values must fit a u32.
LiftedOffsets lift_load_offsets(const Kernel& k);

}  // namespace kiln::webgpu
