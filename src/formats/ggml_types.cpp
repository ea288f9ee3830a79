// The table of ggml's tensor types (block geometry and names) behind ggml_types.h, and the
// byte-size arithmetic over it with its overflow and whole-block checks.
#include "formats/ggml_types.h"

#include <limits>

#include "ir/error.h"

namespace kiln::formats {

namespace {

// Block geometry from ggml's type traits (the gguf package's GGML_QUANT_SIZES agrees):
// K-quants and IQ types use 256-value super-blocks, the legacy quants 32-value blocks.
constexpr GgmlTypeInfo kGgmlTypes[] = {
    {GgmlType::F32, "f32", 1, 4},
    {GgmlType::F16, "f16", 1, 2},
    {GgmlType::Q4_0, "q4_0", 32, 18},      // f16 d, 16 bytes of nibbles
    {GgmlType::Q4_1, "q4_1", 32, 20},      // f16 d, f16 m, 16 bytes of nibbles
    {GgmlType::Q5_0, "q5_0", 32, 22},      // f16 d, 4 bytes of 5th bits, nibbles
    {GgmlType::Q5_1, "q5_1", 32, 24},      // f16 d, f16 m, 5th bits, nibbles
    {GgmlType::Q8_0, "q8_0", 32, 34},      // f16 d, 32 int8
    {GgmlType::Q8_1, "q8_1", 32, 36},      // f16 d, f16 sum, 32 int8
    {GgmlType::Q2_K, "q2_K", 256, 84},     // 16 scale bytes, 64 bytes of 2-bit, f16 d, f16 dmin
    {GgmlType::Q3_K, "q3_K", 256, 110},    // 32 high-bit bytes, 64 of 2-bit, 12 scale bytes, f16 d
    {GgmlType::Q4_K, "q4_K", 256, 144},    // f16 d, f16 dmin, 12 scale bytes, 128 of nibbles
    {GgmlType::Q5_K, "q5_K", 256, 176},    // as Q4_K plus 32 bytes of 5th bits
    {GgmlType::Q6_K, "q6_K", 256, 210},    // 128 low-nibble, 64 high-2-bit, 16 int8 scales, f16 d
    {GgmlType::Q8_K, "q8_K", 256, 292},    // f32 d, 256 int8, 16 int16 block sums
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98},
    {GgmlType::IQ1_S, "iq1_s", 256, 50},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18},
    {GgmlType::IQ3_S, "iq3_s", 256, 110},
    {GgmlType::IQ2_S, "iq2_s", 256, 82},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136},
    {GgmlType::I8, "i8", 1, 1},
    {GgmlType::I16, "i16", 1, 2},
    {GgmlType::I32, "i32", 1, 4},
    {GgmlType::I64, "i64", 1, 8},
    {GgmlType::F64, "f64", 1, 8},
    {GgmlType::IQ1_M, "iq1_m", 256, 56},
    {GgmlType::BF16, "bf16", 1, 2},
    {GgmlType::TQ1_0, "tq1_0", 256, 54},
    {GgmlType::TQ2_0, "tq2_0", 256, 66},
    {GgmlType::MXFP4, "mxfp4", 32, 17},
};

}  // namespace

const GgmlTypeInfo* find_ggml_type(uint32_t id) {
  for (const auto& info : kGgmlTypes)
    if (uint32_t(info.type) == id) return &info;
  return nullptr;
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  const GgmlTypeInfo* info = find_ggml_type(uint32_t(type));
  if (!info) fail("ggml_type", "unknown ggml type id ", uint32_t(type));
  return *info;
}

std::string ggml_type_name(GgmlType type) {
  const GgmlTypeInfo* info = find_ggml_type(uint32_t(type));
  return info ? std::string(info->name) : "type " + std::to_string(uint32_t(type));
}

int64_t ggml_bytes_for(GgmlType type, int64_t n_values, const char* op) {
  const GgmlTypeInfo* info = find_ggml_type(uint32_t(type));
  if (!info) fail(op, "unknown ggml type id ", uint32_t(type));
  if (n_values < 0) fail(op, info->name, ": ", n_values, " values, expected a count >= 0");
  if (n_values % info->block_size != 0)
    fail(op, info->name, ": ", n_values, " values is not a whole number of ", info->block_size,
         "-value blocks");
  int64_t blocks = n_values / info->block_size;
  if (blocks > std::numeric_limits<int64_t>::max() / info->block_bytes)
    fail(op, info->name, ": ", n_values, " values overflow a 64-bit byte count");
  return blocks * info->block_bytes;
}

}  // namespace kiln::formats
