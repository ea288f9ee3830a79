// lax::decode_attention: grouped-query attention of one token (a decode step) or T tokens (a
// prefill chunk, causal) over a KV cache as one routine primitive (backend/decode_attention.h
// has the operands and the definition). The webgpu device runs one token as a split-K kernel
// pair and wasm as a SIMD128 kernel; cpu the C++ reference and native its AVX2 forms (the
// reference where the CPU lacks AVX2); wasm and webgpu run T > 1 as the unfused formula
// (decode_attention_unfused), as does every transformation.
#pragma once
#include <cstdint>

#include "frontend/array.h"

namespace kiln::lax {

// q float32 [heads, head_dim]; keys, values float32 [n_ctx, kv_heads, head_dim]; k, v float32
// [kv_heads, head_dim] (the token's own row, at position start); start int32 []. Cache rows c <
// start are attended (and c > start - sliding_window when sliding_window > 0). Returns float32
// [heads, head_dim]. With T rows: q [T, heads, head_dim], k, v [T, kv_heads, head_dim] (row t
// at position start + t), returning [T, heads, head_dim]; row t attends cache rows c < start
// (and c > start + t - sliding_window) and the new rows j <= t (and j > t - sliding_window).
Array decode_attention(const Array& q, const Array& keys, const Array& values, const Array& k, const Array& v,
                       const Array& start, float scale, int64_t sliding_window = 0);

// The same attention written with ordinary primitives (scores, mask, softmax, weighted sum):
// what the routine is checked against, and what devices without the routine run.
Array decode_attention_unfused(const Array& q, const Array& keys, const Array& values, const Array& k,
                               const Array& v, const Array& start, float scale, int64_t sliding_window = 0);

}  // namespace kiln::lax
