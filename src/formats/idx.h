// kiln::formats::parse_idx: decodes IDX files (the MNIST / Fashion-MNIST format) from bytes
// into a plain struct (dims and decoded elements), validating the header, dims and size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::formats {

// IDX element type codes (the third magic byte).
enum class IdxType : uint8_t {
  UByte = 0x08,
  Byte = 0x09,
  Short = 0x0B,
  Int = 0x0C,
  Float = 0x0D,
  Double = 0x0E,
};

// One decoded IDX file. Exactly one element vector is filled, by type: the integer types
// (ubyte, byte, short, int) widen exactly to int32, float to float, double to double.
struct Idx {
  IdxType type = IdxType::UByte;
  std::vector<int64_t> dims;
  std::vector<int32_t> ints;
  std::vector<float> floats;
  std::vector<double> doubles;
};

// Decodes an IDX file: magic 0x00 0x00 <type> <ndim>, ndim big-endian uint32 dims, then the
// data, big-endian, C order. Gzipped bytes (magic 1f 8b) are inflated first (gzip.h).
// Throws kiln::Error("read_idx: <name>: ...") for a bad magic, an unknown type code, a
// truncated header or data, trailing bytes, dims whose product overflows, or a corrupt
// gzip stream. Nothing is allocated before the size is known to match the input.
Idx parse_idx(const uint8_t* data, size_t size, const std::string& name);

}  // namespace kiln::formats
