// The decode_attention routine (issue 20): T query rows of every head (a decode step's one, a
// prefill chunk's several) against a layer's KV cache and the step's own new key/value rows,
// causally, one softmax per row and head. This header holds its shape, the operands' layout
// every device reads and the C++ reference (the cpu device's lowering; native has AVX2 and
// AVX-512 forms of it, wasm a SIMD128 one for T = 1); the webgpu device runs T = 1 as a
// split-K kernel pair (backend/webgpu/wgsl_attention.cpp). docs/ARCHITECTURE.md, "Fused decode attention".
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace kiln {

// Operands (float32 unless said, each row-major from its element offset in its buffer):
//   0 q      [rows, heads, head_dim]      the new tokens' queries
//   1 keys   [n_ctx, kv_heads, head_dim]  the cache's keys (a layer's part of the cache)
//   2 values [n_ctx, kv_heads, head_dim]  the cache's values
//   3 k      [rows, kv_heads, head_dim]   the new tokens' keys (row t's position: start + t)
//   4 v      [rows, kv_heads, head_dim]   the new tokens' values
//   5 start  int32 []                     cache rows before it are attended (a run-time
//                                         value: one kernel serves every position)
// out [rows, heads, head_dim]. (The routine's arrays for rows = 1 may drop that axis: q [heads,
// head_dim], k, v [kv_heads, head_dim], the same memory.) Query head h reads kv head h /
// (heads / kv_heads) (grouped-query attention, as llama.cpp broadcasts). With end = start
// clamped to [0, n_ctx], the keys form one sequence u: u < end is cache row u, u >= end new
// row u - end, at position u. Row t attends u in [lo_t, end + t]: lo_t = 0, or with a window
// w > 0 (Gemma 3's sliding layers) end + t - w + 1 when that is positive. Its own row end + t
// always is, so no row's softmax is empty.
struct DecodeAttentionShape {
  int64_t rows = 1;  // T: query rows (1: a decode step)
  int64_t heads = 0, kv_heads = 0, head_dim = 0, n_ctx = 0;
  int64_t window = 0;  // 0: causal only
  float scale = 1;     // scores are scale * dot(q, k)
  int64_t offset[6] = {0, 0, 0, 0, 0, 0};  // each operand's first element in its buffer
};
inline constexpr int kDecodeAttentionOperands = 6;

// The scale's bits: kernels and cache keys carry it exactly (no std::bit_cast in every
// toolchain kiln builds with).
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The first key (in the sequence u above) that row t attends, for end = start clamped to
// [0, n_ctx]; its last is end + t.
inline int64_t decode_attention_begin(const DecodeAttentionShape& s, int64_t end, int64_t t = 0) {
  return s.window > 0 && end + t - s.window + 1 > 0 ? end + t - s.window + 1 : 0;
}

// The definition, per row t and head: the own row's score first, s_own = scale * sum_d q[d] *
// k_t[d] (d in order), then the other attended keys' scores s_u in order of u; m the maximum
// (std::max from s_own on, in that order: a NaN score other than the own is skipped); e =
// exp_f32(s - m) (kiln's float32 exp, ir/float32_math.h, as the unfused formula's on the CPU
// devices); out = (sum_u e_u * value_u + e_own * v_t) / (sum_u e_u + e_own), both sums in
// order of u with the own row last.
// A device's kernel of that definition (the reference, or native's AVX2 forms).
using DecodeAttentionFn = void (*)(const DecodeAttentionShape&, const float*, const float*, const float*,
                                   const float*, const float*, int32_t, float*);
void decode_attention_reference(const DecodeAttentionShape& s, const float* q, const float* keys,
                                const float* values, const float* k, const float* v, int32_t start, float* out);

// Checks that each operand's range [offset, offset + size) lies inside its buffer of
// bytes[i] bytes (index 6: the output); a kiln::Error naming `device` otherwise.
void check_decode_attention_buffers(const DecodeAttentionShape& s, const int64_t* bytes, const std::string& device);

}  // namespace kiln
