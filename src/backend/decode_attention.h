// The decode_attention routine (issue 20): one query row of every head against a layer's KV
// cache and the step's own new key/value row, the softmax taken over both. This header holds
// its shape, the operands' layout every device reads and the C++ reference (the cpu and
// native devices' lowering); the webgpu device runs it as one WGSL kernel
// (backend/webgpu/wgsl_attention.cpp). docs/ARCHITECTURE.md, "Fused decode attention".
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace kiln {

// Operands (float32 unless said, each row-major from its element offset in its buffer):
//   0 q      [heads, head_dim]            the new token's queries
//   1 keys   [n_ctx, kv_heads, head_dim]  the cache's keys (a layer's part of the cache)
//   2 values [n_ctx, kv_heads, head_dim]  the cache's values
//   3 k      [kv_heads, head_dim]         the new token's key (its position is `start`)
//   4 v      [kv_heads, head_dim]         the new token's value
//   5 start  int32 []                     cache rows before it are attended (a run-time
//                                         value: one kernel serves every position)
// out [heads, head_dim]. Query head h reads kv head h / (heads / kv_heads) (grouped-query
// attention, as llama.cpp broadcasts). Cache row c is attended when c < start and, with a
// window w > 0, c > start - w (Gemma 3's sliding layers); the new row always is.
struct DecodeAttentionShape {
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

// The first attended cache row for start (clamped to [0, n_ctx]), and the end.
inline int64_t decode_attention_begin(const DecodeAttentionShape& s, int64_t start) {
  return s.window > 0 && start - s.window + 1 > 0 ? start - s.window + 1 : 0;
}

// The definition, per head: scores s_c = scale * sum_d q[d] * key_c[d] (d in order) for the
// attended cache rows in order, then the new row's; m their maximum; e = exp(s - m); out =
// (sum_c e_c * value_c + e_new * v) / (sum_c e_c + e_new), sums in the same order.
// A device's kernel of that definition (the reference, or native's AVX2 form).
using DecodeAttentionFn = void (*)(const DecodeAttentionShape&, const float*, const float*, const float*,
                                   const float*, const float*, int32_t, float*);
void decode_attention_reference(const DecodeAttentionShape& s, const float* q, const float* keys,
                                const float* values, const float* k, const float* v, int32_t start, float* out);

// Checks that each operand's range [offset, offset + size) lies inside its buffer of
// bytes[i] bytes (index 6: the output); a kiln::Error naming `device` otherwise.
void check_decode_attention_buffers(const DecodeAttentionShape& s, const int64_t* bytes, const std::string& device);

}  // namespace kiln
