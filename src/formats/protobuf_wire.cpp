// protobuf wire format: field headers, varints, fixed-width values and packed repeated
// scalars, each length checked against the message it lies in.
#include "formats/protobuf_wire.h"

#include <cstring>

#include "ir/error.h"

namespace kiln::formats {

bool read_varint(std::span<const uint8_t> bytes, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos >= bytes.size()) return false;
    const uint8_t b = bytes[pos++];
    if (shift == 63 && b > 1) return false;  // the 10th byte may carry only bit 63
    value |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

namespace {

const char* wire_type_name(WireType t) {
  switch (t) {
    case WireType::Varint: return "varint";
    case WireType::Fixed64: return "fixed64";
    case WireType::Bytes: return "length-delimited";
    case WireType::Fixed32: return "fixed32";
  }
  return "?";
}

template <typename T>
T load_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // kiln's targets (x86-64, wasm32) are little-endian
  return v;
}

}  // namespace

bool WireReader::next(WireField& field) {
  if (pos_ >= bytes_.size()) return false;
  uint64_t key = 0;
  if (!read_varint(bytes_, pos_, key)) fail(op_, what_, ": a field's key is truncated");
  const uint64_t number = key >> 3;
  if (number == 0 || number > 0x1fffffff)
    fail(op_, what_, ": field number ", number, " at byte ", pos_, ", expected 1..2^29-1");
  field = WireField{};
  field.number = uint32_t(number);
  const uint64_t type = key & 7;
  if (type == 0) {
    field.type = WireType::Varint;
    if (!read_varint(bytes_, pos_, field.varint))
      fail(op_, what_, ": field ", number, ": truncated varint");
  } else if (type == 1 || type == 5) {
    const size_t width = type == 1 ? 8 : 4;
    field.type = type == 1 ? WireType::Fixed64 : WireType::Fixed32;
    if (bytes_.size() - pos_ < width)
      fail(op_, what_, ": field ", number, ": ", width, " bytes expected, ", bytes_.size() - pos_,
           " left");
    field.varint = width == 8 ? load_le<uint64_t>(&bytes_[pos_]) : load_le<uint32_t>(&bytes_[pos_]);
    pos_ += width;
  } else if (type == 2) {
    field.type = WireType::Bytes;
    uint64_t length = 0;
    if (!read_varint(bytes_, pos_, length)) fail(op_, what_, ": field ", number, ": truncated length");
    if (length > bytes_.size() - pos_)
      fail(op_, what_, ": field ", number, ": length ", length, " runs past the end (", bytes_.size() - pos_,
           " bytes left)");
    field.bytes = bytes_.subspan(pos_, size_t(length));
    pos_ += size_t(length);
  } else {
    fail(op_, what_, ": field ", number, ": wire type ", type,
         " (groups or invalid), expected varint, fixed32/64 or length-delimited");
  }
  return true;
}

void WireReader::fail_field(const WireField& f, const std::string& message) const {
  fail(op_, what_, ": field ", f.number, ": ", message);
}

void WireReader::expect(const WireField& f, WireType type, const char* kind) const {
  if (f.type != type)
    fail_field(f, std::string("wire type ") + wire_type_name(f.type) + ", expected " +
                      wire_type_name(type) + " (" + kind + ")");
}

int64_t WireReader::as_int64(const WireField& f) const {
  expect(f, WireType::Varint, "an integer");
  return int64_t(f.varint);
}

int32_t WireReader::as_int32(const WireField& f) const {
  expect(f, WireType::Varint, "an integer");
  return int32_t(uint32_t(f.varint));
}

float WireReader::as_float(const WireField& f) const {
  expect(f, WireType::Fixed32, "a float");
  const uint32_t bits = uint32_t(f.varint);
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

std::string WireReader::as_string(const WireField& f) const {
  expect(f, WireType::Bytes, "a string");
  return std::string(f.bytes.begin(), f.bytes.end());
}

namespace {

// Appends the values of a repeated varint field (packed or one value) as T.
template <typename T>
void append_varints(const WireReader& r, const WireField& f, std::vector<T>& out) {
  if (f.type == WireType::Varint) {
    out.push_back(T(f.varint));
    return;
  }
  if (f.type != WireType::Bytes) r.fail_field(f, "a repeated integer must be varint or packed");
  size_t pos = 0;
  uint64_t v = 0;
  while (pos < f.bytes.size()) {
    if (!read_varint(f.bytes, pos, v)) r.fail_field(f, "truncated varint in a packed array");
    out.push_back(T(v));
  }
}

// The same for fixed-width values (float: 4 bytes, double: 8).
template <typename T, WireType Single>
void append_fixed(const WireReader& r, const WireField& f, std::vector<T>& out) {
  if (f.type == Single) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const Bits bits = Bits(f.varint);
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    out.push_back(v);
    return;
  }
  if (f.type != WireType::Bytes) r.fail_field(f, "a repeated float must be fixed-width or packed");
  if (f.bytes.size() % sizeof(T))
    r.fail_field(f, "packed array of " + std::to_string(f.bytes.size()) + " bytes, not a multiple of " +
                        std::to_string(sizeof(T)));
  const size_t n = f.bytes.size() / sizeof(T);
  const size_t old = out.size();
  out.resize(old + n);
  if (n) std::memcpy(out.data() + old, f.bytes.data(), n * sizeof(T));
}

}  // namespace

void WireReader::append_int64s(const WireField& f, std::vector<int64_t>& out) const {
  append_varints(*this, f, out);
}
void WireReader::append_uint64s(const WireField& f, std::vector<uint64_t>& out) const {
  append_varints(*this, f, out);
}
void WireReader::append_int32s(const WireField& f, std::vector<int32_t>& out) const {
  append_varints(*this, f, out);
}
void WireReader::append_floats(const WireField& f, std::vector<float>& out) const {
  append_fixed<float, WireType::Fixed32>(*this, f, out);
}
void WireReader::append_doubles(const WireField& f, std::vector<double>& out) const {
  append_fixed<double, WireType::Fixed64>(*this, f, out);
}

}  // namespace kiln::formats
