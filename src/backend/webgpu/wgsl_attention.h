// The decode_attention routine (backend/decode_attention.h) as one WGSL kernel.
#pragma once
#include <string>

#include "backend/decode_attention.h"

namespace kiln::webgpu {

// Invocations per workgroup of the kernel: one workgroup per query head.
inline constexpr int kAttentionWorkgroup = 64;

// The shader for `s`. Bindings as the generated kernels' (0 uniform, 1 out, 2.. the six
// operands in order). Every offset is a constant of the text except the keys' (s.offset[1]),
// which the uniform's size field carries: a layer's part of the cache is at another offset in
// each layer, and one pipeline serves them all (the values' offset is the keys' plus a
// constant). Dispatch s.heads x 1 workgroups.
std::string decode_attention_wgsl(const DecodeAttentionShape& s);

}  // namespace kiln::webgpu
