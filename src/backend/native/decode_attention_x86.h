// The native device's decode_attention kernel (backend/decode_attention.h): AVX2, run where
// the CPU has it, equal to decode_attention_reference bit for bit.
#pragma once
#include "backend/decode_attention.h"

namespace kiln::native {

void decode_attention_avx2(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                           const float* k, const float* v, int32_t start, float* out);
// The AVX2 kernel where the CPU has it, else nullptr (the reference then runs).
DecodeAttentionFn best_decode_attention();

}  // namespace kiln::native
