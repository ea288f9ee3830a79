// kiln::formats::GgmlType: ggml's tensor element types as GGUF files number them, and the table
// of their block geometry (values per block, bytes per block, ggml's name) readers size tensors by.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::formats {

// Values are ggml's type ids, as stored in a GGUF tensor info (GGUF spec; the PyPI gguf
// package's GGMLQuantizationType). Ids 4, 5 (Q4_2, Q4_3), 31-33 and 36-38 (repacked
// Q4_0 variants) were removed from ggml and are unknown here.
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
};

// One row of the type table. Every type stores whole blocks: block_size values in
// block_bytes bytes (1 value per "block" for the plain types).
struct GgmlTypeInfo {
  GgmlType type;
  const char* name;  // ggml's own spelling: "f32", "q4_0", "q4_K", "bf16", ...
  int64_t block_size;
  int64_t block_bytes;
};

// The row of a type id read from a file, or nullptr when the id is not a known ggml type.
const GgmlTypeInfo* find_ggml_type(uint32_t id);

// The row of `type`; throws kiln::Error("ggml_type: ...") for a value outside the table.
const GgmlTypeInfo& ggml_type_info(GgmlType type);

// ggml's name of `type`, or "type <id>" for an unknown value (for messages).
std::string ggml_type_name(GgmlType type);

// Bytes that n_values values of `type` take. Throws kiln::Error("<op>: ...") when n_values
// is negative or not a whole number of blocks, or when the size overflows int64.
int64_t ggml_bytes_for(GgmlType type, int64_t n_values, const char* op = "ggml_bytes_for");

}  // namespace kiln::formats
