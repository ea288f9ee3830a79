// kiln::formats::WireReader: a reader of protobuf's wire format (varints, fixed32/64 and
// length-delimited fields) over bytes in memory, every length checked; no protobuf library.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kiln::formats {

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

// One field as stored: its number, wire type and payload. `varint` holds the value of
// Varint, Fixed64 and Fixed32 fields; `bytes` the payload of a length-delimited one (a
// sub-message, a string, or a packed repeated scalar), inside the reader's buffer.
struct WireField {
  uint32_t number = 0;
  WireType type = WireType::Varint;
  uint64_t varint = 0;
  std::span<const uint8_t> bytes;
};

// Reads the fields of one message in order. `what` names the message in errors
// ("onnx: graph.node[2]: ..."): a truncated varint, a length past the end, field number 0,
// or a group (wire types 3 and 4, deprecated and unused by the formats kiln reads) throws
// kiln::Error("<op>: <what>: ...").
class WireReader {
 public:
  WireReader(std::span<const uint8_t> bytes, const char* op, std::string what)
      : bytes_(bytes), op_(op), what_(std::move(what)) {}
  // False at the end of the message; otherwise fills `field`.
  bool next(WireField& field);
  const std::string& what() const { return what_; }
  const char* op() const { return op_; }

  // Typed views of the current field, which must have the wire type they need (else a
  // kiln::Error naming the field).
  int64_t as_int64(const WireField& f) const;
  int32_t as_int32(const WireField& f) const;  // an int32/enum field: the low 32 bits
  float as_float(const WireField& f) const;
  std::string as_string(const WireField& f) const;
  // Appends a repeated scalar field, packed (one Bytes field) or not (one field per value).
  void append_int64s(const WireField& f, std::vector<int64_t>& out) const;
  void append_uint64s(const WireField& f, std::vector<uint64_t>& out) const;
  void append_int32s(const WireField& f, std::vector<int32_t>& out) const;
  void append_floats(const WireField& f, std::vector<float>& out) const;
  void append_doubles(const WireField& f, std::vector<double>& out) const;

  [[noreturn]] void fail_field(const WireField& f, const std::string& message) const;

 private:
  void expect(const WireField& f, WireType type, const char* kind) const;
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  const char* op_;
  std::string what_;
};

// Decodes one varint at bytes[pos], advancing pos; false if truncated or over 10 bytes.
bool read_varint(std::span<const uint8_t> bytes, size_t& pos, uint64_t& value);

}  // namespace kiln::formats
