// The native device's decode_attention kernels (backend/decode_attention.h): AVX2, run where
// the CPU has it, equal to decode_attention_reference bit for bit: one for a decode step's
// single query row, one for several (a prefill chunk), split over the device's threads.
#pragma once
#include "backend/decode_attention.h"
#include "backend/quantized_matmul.h"  // GroupSplitter

namespace kiln::native {

void decode_attention_avx2(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                           const float* k, const float* v, int32_t start, float* out);
// The AVX2 kernel where the CPU has it, else nullptr (the reference then runs).
DecodeAttentionFn best_decode_attention();
// s.rows query rows (prefill_attention_avx2.cpp): its (kv head, query block) units run through
// split(split_ctx, ...) when split is not null, else on the calling thread. Call only where
// best_decode_attention() is not null (the CPU has AVX2).
void prefill_attention_avx2(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                            const float* k, const float* v, int32_t start, float* out, GroupSplitter split,
                            void* split_ctx);
// The same with 16-float AVX-512 vectors (prefill_attention_avx512.cpp): call only where the
// CPU has AVX-512F.
void prefill_attention_avx512(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                              const float* k, const float* v, int32_t start, float* out, GroupSplitter split,
                              void* split_ctx);
using PrefillAttentionFn = void (*)(const DecodeAttentionShape&, const float*, const float*, const float*,
                                    const float*, const float*, int32_t, float*, GroupSplitter, void*);
// The widest of the two the CPU has ($KILN_NATIVE_PREFILL_ATTENTION=avx2 caps it at AVX2), or
// nullptr without AVX2 (the reference then runs).
PrefillAttentionFn best_prefill_attention();

}  // namespace kiln::native
