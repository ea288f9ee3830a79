// protobuf wire format, writing side: field tags, varints, fixed-width and packed values
// appended to a buffer (protobuf_wire.cpp reads what this writes).
#include "formats/protobuf_writer.h"

#include <cstring>

namespace kiln::formats {

void WireWriter::raw_varint(uint64_t v) {
  while (v >= 0x80) {
    buf_.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  buf_.push_back(uint8_t(v));
}

void WireWriter::tag(uint32_t number, uint8_t wire_type) { raw_varint((uint64_t(number) << 3) | wire_type); }

void WireWriter::varint(uint32_t number, uint64_t value) {
  tag(number, 0);
  raw_varint(value);
}

void WireWriter::fixed32(uint32_t number, uint32_t bits) {
  tag(number, 5);
  for (int i = 0; i < 4; i++) buf_.push_back(uint8_t(bits >> (8 * i)));
}

void WireWriter::float32(uint32_t number, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  fixed32(number, bits);
}

void WireWriter::bytes(uint32_t number, std::span<const uint8_t> payload) {
  tag(number, 2);
  raw_varint(payload.size());
  buf_.insert(buf_.end(), payload.begin(), payload.end());
}

void WireWriter::string(uint32_t number, std::string_view s) {
  bytes(number, {reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

namespace {
// Packs values with `put` into a scratch writer, then adds it as one length-delimited field.
template <class T, class Put>
void packed(WireWriter& w, uint32_t number, std::span<const T> values, Put put) {
  if (values.empty()) return;
  std::vector<uint8_t> body;
  for (const T& v : values) put(body, v);
  w.bytes(number, body);
}
void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(uint8_t(v | 0x80));
    v >>= 7;
  }
  out.push_back(uint8_t(v));
}
template <class T>
void put_le(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // kiln's targets are little-endian
  out.insert(out.end(), b, b + sizeof(T));
}
}  // namespace

// int32 values are sign-extended to 64 bits, as protobuf encodes a negative int32.
void WireWriter::packed_varints(uint32_t number, std::span<const int64_t> values) {
  packed(*this, number, values, [](auto& o, int64_t v) { put_varint(o, uint64_t(v)); });
}
void WireWriter::packed_varints(uint32_t number, std::span<const int32_t> values) {
  packed(*this, number, values, [](auto& o, int32_t v) { put_varint(o, uint64_t(int64_t(v))); });
}
void WireWriter::packed_varints(uint32_t number, std::span<const uint64_t> values) {
  packed(*this, number, values, [](auto& o, uint64_t v) { put_varint(o, v); });
}
void WireWriter::packed_floats(uint32_t number, std::span<const float> values) {
  packed(*this, number, values, [](auto& o, float v) { put_le(o, v); });
}
void WireWriter::packed_doubles(uint32_t number, std::span<const double> values) {
  packed(*this, number, values, [](auto& o, double v) { put_le(o, v); });
}

}  // namespace kiln::formats
