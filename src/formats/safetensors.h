// kiln::formats::parse_safetensors: the safetensors weight file (Hugging Face): its JSON
// header's tensor entries and __metadata__, checked; tensor data stays in the caller's bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::formats {

enum class SafetensorsDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool };

// "F32", "BF16", "BOOL", ... (the header's spelling) and the element size in bytes.
const char* safetensors_dtype_name(SafetensorsDtype dtype);
size_t safetensors_dtype_size(SafetensorsDtype dtype);

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<int64_t> shape;  // row-major; [] is a scalar
  uint64_t begin = 0, end = 0;  // data_offsets as stored: from the start of the data section
  uint64_t file_offset = 0;    // from the start of the file: data_offset + begin
  uint64_t size() const { return end - begin; }
};

struct Safetensors {
  uint64_t header_size = 0;  // the JSON header's length (the file's first 8 bytes)
  uint64_t data_offset = 0;  // 8 + header_size
  std::map<std::string, std::string> metadata;  // __metadata__, if present
  std::vector<SafetensorsTensor> tensors;       // in header order

  // nullptr when absent; tensor() throws kiln::Error("safetensors: tensor '...' is missing").
  const SafetensorsTensor* find_tensor(std::string_view name) const;
  const SafetensorsTensor& tensor(std::string_view name) const;
};

// Parses a safetensors file held in `file`: an 8-byte little-endian header length, a JSON
// object {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the data. Every entry is checked (known dtype, shape dims >= 0, end - begin ==
// prod(shape) * itemsize, inside the file, no two tensors overlapping); a malformed file
// throws kiln::Error("safetensors: <which part>: ...") and nothing reads past `file`. Unused
// bytes between or after tensors are allowed (the reference library refuses them): they
// cannot make a read unsafe.
Safetensors parse_safetensors(std::span<const uint8_t> file);

// The bytes of `t` inside `file` (the buffer it was parsed from); throws if they do not fit.
std::span<const uint8_t> safetensors_tensor_data(std::span<const uint8_t> file,
                                                 const SafetensorsTensor& t);

}  // namespace kiln::formats
