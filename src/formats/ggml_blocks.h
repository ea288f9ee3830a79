// kiln::formats::dequantize: ggml's block formats (F32, F16, BF16, the legacy Q4/Q5/Q8 quants
// and the K-quants) decoded to float32, bit-exact to ggml's reference dequantization.
#pragma once
#include <cstdint>
#include <span>

#include "formats/ggml_types.h"

namespace kiln::formats {

// True when dequantize() decodes `type`: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
bool can_dequantize(GgmlType type);

// Decodes n_values values of `type`, stored as whole blocks in `bytes`, into out[0, n_values).
// Results equal ggml's dequantize_row_* bit for bit: each value is computed with the same
// float32 operations in the same order. (The products before an add, such as q * d in
// q * d + m, are exact in float32, so a compiler's FMA contraction cannot change them.)
// Throws kiln::Error("dequantize: ...") for an unknown type or one without a decoder, a
// negative n_values or one that is not a whole number of blocks, or a byte count other than
// the blocks' size. Nothing is written to `out` before those checks pass.
void dequantize(GgmlType type, std::span<const uint8_t> bytes, int64_t n_values, float* out);

// Q4_K/Q5_K's 8 six-bit scales and mins in their 12 scale bytes `s`: sub-blocks 0-3 in the
// low 6 bits of bytes 0-3 (scales) and 4-7 (mins); 4-7 from the nibbles of bytes 8-11 plus
// the top 2 bits of 0-7. Public because models/quantized_weights repacks these blocks.
void ggml_k_scale_min(const uint8_t* s, int sub, int& scale, int& min);

// bfloat16 bits to float32, exactly (IEEE half is ir's half_to_float).
float bf16_to_f32(uint16_t bits);

}  // namespace kiln::formats
