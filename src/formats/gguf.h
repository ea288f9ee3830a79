// kiln::formats::parse_gguf / write_gguf: the GGUF model file (llama.cpp's format): header,
// typed metadata, tensor infos and the byte range of each tensor's data (never copied).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/ggml_types.h"

namespace kiln::formats {

// ---- ggml tensor sizes ----------------------------------------------------------------------

// ggml's name in capitals as gguf-py spells it ("Q4_K", "F32"), for messages and dumps.
std::string ggml_type_upper_name(GgmlType type);

// Bytes of a tensor of `type` with ggml dims (dims[0] is the contiguous one). Throws
// kiln::Error("<op>: ...") when dims[0] is not a multiple of the block size or the size
// overflows 64 bits. `what` names the tensor in the message.
uint64_t ggml_tensor_bytes(GgmlType type, const std::vector<uint64_t>& dims, const char* op,
                           const std::string& what);

// ---- metadata values ------------------------------------------------------------------------

// The type ids of GGUF metadata values, as the file stores them.
enum class GgufValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8,
  Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
// "u8", "i8", ..., "string", "array", "f64"; "?" for ids beyond the table.
const char* gguf_value_type_name(GgufValueType type);

// One metadata value. Which fields hold it depends on `type`: unsigned integers in `uint`,
// signed ones in `sint`, f32 (widened exactly) and f64 in `real`, bools in `boolean`,
// strings (raw bytes, usually UTF-8) in `str`, arrays in `elem_type` + `items` (items may be
// arrays themselves).
struct GgufValue {
  GgufValueType type = GgufValueType::U8;
  uint64_t uint = 0;
  int64_t sint = 0;
  double real = 0;
  bool boolean = false;
  std::string str;
  GgufValueType elem_type = GgufValueType::U8;
  std::vector<GgufValue> items;

  static GgufValue of_uint(GgufValueType type, uint64_t v);  // U8, U16, U32, U64
  static GgufValue of_int(GgufValueType type, int64_t v);    // I8, I16, I32, I64
  static GgufValue of_float(GgufValueType type, double v);   // F32 (rounded), F64
  static GgufValue of_bool(bool v);  // Bool
  static GgufValue of_string(std::string v);  // String
  // Array of elements of elem_type
  static GgufValue of_array(GgufValueType elem_type, std::vector<GgufValue> items);
};

// One metadata entry: a key ("general.architecture", ...) and its value.
struct GgufKv {
  std::string key;
  GgufValue value;
};

// ---- the parsed file ------------------------------------------------------------------------

// A tensor's header in a GGUF file: name, ggml dims, type and where its bytes lie.
struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) dimension
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;       // as stored: from the start of the data section
  uint64_t file_offset = 0;  // from the start of the file: data_offset + offset
  uint64_t size = 0;         // bytes, from ggml's type table
};

// A parsed GGUF file: version, alignment, metadata and tensor infos (no tensor data: see
// gguf_tensor_data), with typed lookups.
struct Gguf {
  uint32_t version = 3;
  uint32_t alignment = 32;   // general.alignment, or 32
  uint64_t data_offset = 0;  // where the data section starts (aligned end of the tensor infos)
  std::vector<GgufKv> metadata;          // in file order
  std::vector<GgufTensorInfo> tensors;   // in file order

  // Lookup by key: nullptr when absent.
  const GgufValue* find(std::string_view key) const;
  // The value of `key`, which must have type `type`; throws kiln::Error("gguf: metadata key
  // '<key>' ...") when it is missing or has another type.
  const GgufValue& get(std::string_view key, GgufValueType type) const;
  uint8_t get_u8(std::string_view key) const;
  int8_t get_i8(std::string_view key) const;
  uint16_t get_u16(std::string_view key) const;
  int16_t get_i16(std::string_view key) const;
  uint32_t get_u32(std::string_view key) const;
  int32_t get_i32(std::string_view key) const;
  uint64_t get_u64(std::string_view key) const;
  int64_t get_i64(std::string_view key) const;
  float get_f32(std::string_view key) const;
  double get_f64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  // An array whose elements have type `elem_type` (throws as get() does otherwise).
  const std::vector<GgufValue>& get_array(std::string_view key, GgufValueType elem_type) const;
  std::vector<std::string> get_string_array(std::string_view key) const;

  // Tensor lookup by name: nullptr when absent; tensor() throws when absent.
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  const GgufTensorInfo& tensor(std::string_view name) const;

  // Indexes into metadata / tensors by name (filled by parse_gguf).
  std::map<std::string, size_t, std::less<>> key_index;
  std::map<std::string, size_t, std::less<>> tensor_index;
};

// Parses a GGUF v2 or v3 file (little-endian) held in `file`. Every count, length, offset and
// size is checked against the file before it is used, so a malformed file throws
// kiln::Error("gguf: <which part>: ...") and nothing reads past `file`. Tensor data is not
// copied: each GgufTensorInfo gives its byte range in `file`.
Gguf parse_gguf(std::span<const uint8_t> file);

// The bytes of `t` inside `file` (the buffer it was parsed from); throws if they do not fit.
std::span<const uint8_t> gguf_tensor_data(std::span<const uint8_t> file,
                                          const GgufTensorInfo& t);

// ---- the writer -----------------------------------------------------------------------------

// One tensor for write_gguf: its name, ggml dims, type and encoded bytes.
struct GgufTensorToWrite {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order
  GgmlType type = GgmlType::F32;
  std::span<const uint8_t> data;  // already encoded; exactly ggml_tensor_bytes(type, dims)
};

// Writes a GGUF file (`version` 2 or 3): the metadata in order, the tensor infos, then each
// tensor's data, every section padded with zeros to general.alignment (if the metadata sets
// it, else 32), as llama.cpp's gguf-py lays it out. Throws kiln::Error("write_gguf: ...") for
// duplicate keys or names, a data size that does not match, or a malformed value (an array
// item of another type than the array's, an integer outside its type's range).
std::vector<uint8_t> write_gguf(const std::vector<GgufKv>& metadata,
                                const std::vector<GgufTensorToWrite>& tensors,
                                uint32_t version = 3);

}  // namespace kiln::formats
