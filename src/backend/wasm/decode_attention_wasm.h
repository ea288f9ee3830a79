// The wasm device's decode_attention kernel (backend/decode_attention.h): SIMD128, equal to
// decode_attention_reference bit for bit (in the same build: exp is the core's own std::exp).
#pragma once
#include "backend/decode_attention.h"

namespace kiln::wasm {

void decode_attention_simd128(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                              const float* k, const float* v, int32_t start, float* out);
// The same over kv heads [kh0, kh1) only (their query heads' outputs), for head_dim a
// multiple of 8 (decode_attention_simd128 runs the reference otherwise): a pool splits a
// call by kv heads.
void decode_attention_simd128_heads(const DecodeAttentionShape& s, const float* q, const float* keys,
                                    const float* values, const float* k, const float* v, int32_t start, float* out,
                                    int64_t kh0, int64_t kh1);

}  // namespace kiln::wasm
