// IDX decoding: header checks first (magic, type, dims against the byte count), then a
// big-endian decode of the elements into the struct's int32/float/double vector.
#include "formats/idx.h"

#include <cstring>

#include "formats/gzip.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

struct TypeCode {
  IdxType code;
  const char* name;
  int size;
};
constexpr TypeCode kTypes[] = {{IdxType::UByte, "ubyte", 1}, {IdxType::Byte, "byte", 1},
                               {IdxType::Short, "short", 2}, {IdxType::Int, "int", 4},
                               {IdxType::Float, "float", 4}, {IdxType::Double, "double", 8}};

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

Idx parse_idx(const uint8_t* b, size_t size, const std::string& name) {
  const char* op = "read_idx";
  if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    std::vector<uint8_t> raw = gunzip(std::vector<uint8_t>(b, b + size), name);
    return parse_idx(raw.data(), raw.size(), name);
  }
  if (size < 4) fail(op, name, ": truncated header: ", size, " bytes, expected at least 4");
  if (b[0] != 0 || b[1] != 0)
    fail(op, name, ": bad magic ", int(b[0]), " ", int(b[1]),
         ", expected an IDX file starting with 0 0");
  const TypeCode* type = nullptr;
  for (const auto& t : kTypes)
    if (uint8_t(t.code) == b[2]) type = &t;
  if (!type)
    fail(op, name, ": unknown element type code ", int(b[2]),
         ", expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E");
  size_t ndim = b[3];
  size_t header = 4 + 4 * ndim;
  if (size < header)
    fail(op, name, ": truncated header: ", ndim, " dimensions need ", header,
         " bytes, the file has ", size);
  Idx out;
  out.type = type->code;
  uint64_t count = 1;
  for (size_t i = 0; i < ndim; ++i) {
    uint32_t d = be32(&b[4 + 4 * i]);
    out.dims.push_back(int64_t(d));
    count *= d;
    // 2^40 elements is far beyond any real file and keeps count * 8 + header in uint64.
    if (count > (uint64_t(1) << 40))
      fail(op, name, ": dimensions ", dims_str(out.dims), "... are too large");
  }
  uint64_t want = header + count * uint64_t(type->size);
  if (size < want)
    fail(op, name, ": truncated data: dims ", dims_str(out.dims), " of ", type->name, " need ",
         want, " bytes, the file has ", size);
  if (size > want)
    fail(op, name, ": ", size - want, " unexpected trailing bytes after ", want,
         " bytes of header and data");
  const uint8_t* p = b + header;
  size_t n = size_t(count);
  switch (type->code) {
    case IdxType::UByte:
    case IdxType::Byte:
    case IdxType::Short:
    case IdxType::Int:
      out.ints.resize(n);
      for (size_t i = 0; i < n; ++i) {
        if (type->code == IdxType::UByte)
          out.ints[i] = p[i];
        else if (type->code == IdxType::Byte)
          out.ints[i] = int8_t(p[i]);
        else if (type->code == IdxType::Short)
          out.ints[i] = int16_t(uint16_t(p[2 * i] << 8 | p[2 * i + 1]));
        else
          out.ints[i] = int32_t(be32(p + 4 * i));
      }
      break;
    case IdxType::Float:
      out.floats.resize(n);
      for (size_t i = 0; i < n; ++i) {
        uint32_t u = be32(p + 4 * i);
        std::memcpy(&out.floats[i], &u, 4);
      }
      break;
    case IdxType::Double:
      out.doubles.resize(n);
      for (size_t i = 0; i < n; ++i) {
        uint64_t u = uint64_t(be32(p + 8 * i)) << 32 | be32(p + 8 * i + 4);
        std::memcpy(&out.doubles[i], &u, 8);
      }
      break;
  }
  return out;
}

}  // namespace kiln::formats
