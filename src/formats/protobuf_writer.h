// kiln::formats::WireWriter: the writing side of protobuf's wire format (varints, fixed32/64,
// length-delimited fields, packed repeated scalars) into a byte vector; no protobuf library.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace kiln::formats {

// Appends fields in the order they are written. A sub-message is written into its own
// WireWriter and added with `message` (its length must be known before its bytes), which
// keeps the writer a plain append-only buffer.
class WireWriter {
 public:
  void varint(uint32_t number, uint64_t value);  // int32/int64/enum/bool (negative: 10 bytes)
  void fixed32(uint32_t number, uint32_t bits);
  void float32(uint32_t number, float value);
  void bytes(uint32_t number, std::span<const uint8_t> payload);
  void string(uint32_t number, std::string_view s);
  void message(uint32_t number, const WireWriter& sub) { bytes(number, sub.buf_); }
  // Packed repeated scalars (one length-delimited field; nothing when empty).
  void packed_varints(uint32_t number, std::span<const int64_t> values);
  void packed_varints(uint32_t number, std::span<const int32_t> values);
  void packed_varints(uint32_t number, std::span<const uint64_t> values);
  void packed_floats(uint32_t number, std::span<const float> values);
  void packed_doubles(uint32_t number, std::span<const double> values);

  const std::vector<uint8_t>& data() const { return buf_; }
  std::vector<uint8_t> take() { return std::move(buf_); }

 private:
  void tag(uint32_t number, uint8_t wire_type);
  void raw_varint(uint64_t v);
  std::vector<uint8_t> buf_;
};

}  // namespace kiln::formats
