// The decode_attention routine (backend/decode_attention.h) as two WGSL kernels: split-K
// partial softmaxes over chunks of the cache, then a merge per query head.
#pragma once
#include <cstdint>
#include <string>

#include "backend/decode_attention.h"

namespace kiln::webgpu {

// Rows of the cache (and the new row, last) that one workgroup of the partial kernel scores:
// one invocation per row.
inline constexpr int64_t kAttentionChunk = 64;

// Chunks the partial kernel is dispatched over: every row a step can attend (n_ctx cache
// rows and the new one), whatever the run-time length; chunks past it return at once.
inline int64_t decode_attention_chunks(const DecodeAttentionShape& s) {
  return (s.n_ctx + 1 + kAttentionChunk - 1) / kAttentionChunk;
}

// Floats of the partials buffer: per query head and chunk, the chunk's maximum score, its
// sum of exponentials and its unnormalized weighted values (head_dim).
inline int64_t decode_attention_partial_floats(const DecodeAttentionShape& s) {
  return s.heads * decode_attention_chunks(s) * (s.head_dim + 2);
}

// The partial kernel. Bindings as the generated kernels' (0 uniform, 1 out = the partials,
// 2.. the six operands in order). Every offset is a constant of the text except the keys'
// (s.offset[1]), which the uniform's size field carries: a layer's part of the cache is at
// another offset in each layer, and one pipeline serves them all (the values' offset is the
// keys' plus a constant). Dispatch decode_attention_chunks(s) x kv_heads workgroups.
std::string decode_attention_partial_wgsl(const DecodeAttentionShape& s);

// The merge kernel: bindings 1 out (the routine's output), 2 the partials, 3 start (at
// s.offset[5]). Dispatch heads x 1 workgroups.
std::string decode_attention_merge_wgsl(const DecodeAttentionShape& s);

}  // namespace kiln::webgpu
