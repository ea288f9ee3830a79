// IDX parsing: header checks first, then a big-endian decode into an int32/float32/float64
// buffer handed to numpy::array.
#include "library/idx.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "library/gzip.h"
#include "library/numpy.h"

namespace kiln::io {

namespace {

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

struct TypeCode {
  uint8_t code;
  const char* name;
  int size;
};
constexpr TypeCode kTypes[] = {{0x08, "ubyte", 1}, {0x09, "byte", 1},  {0x0B, "short", 2},
                               {0x0C, "int", 4},   {0x0D, "float", 4}, {0x0E, "double", 8}};

}  // namespace

Array parse_idx(const std::vector<uint8_t>& b, const std::string& name) {
  const char* op = "read_idx";
  if (is_gzip(b)) return parse_idx(gunzip(b, name), name);
  if (b.size() < 4) fail(op, name, ": truncated header: ", b.size(), " bytes, expected at least 4");
  if (b[0] != 0 || b[1] != 0)
    fail(op, name, ": bad magic ", int(b[0]), " ", int(b[1]),
         ", expected an IDX file starting with 0 0");
  const TypeCode* type = nullptr;
  for (const auto& t : kTypes)
    if (t.code == b[2]) type = &t;
  if (!type)
    fail(op, name, ": unknown element type code ", int(b[2]),
         ", expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E");
  size_t ndim = b[3];
  size_t header = 4 + 4 * ndim;
  if (b.size() < header)
    fail(op, name, ": truncated header: ", ndim, " dimensions need ", header,
         " bytes, the file has ", b.size());
  Shape shape;
  uint64_t count = 1;
  for (size_t i = 0; i < ndim; ++i) {
    uint32_t d = be32(&b[4 + 4 * i]);
    shape.push_back(int64_t(d));
    count *= d;
    if (count > (uint64_t(1) << 40))
      fail(op, name, ": dimensions ", shape_str(shape), "... are too large");
  }
  uint64_t want = header + count * uint64_t(type->size);
  if (b.size() < want)
    fail(op, name, ": truncated data: dims ", shape_str(shape), " of ", type->name, " need ", want,
         " bytes, the file has ", b.size());
  if (b.size() > want)
    fail(op, name, ": ", b.size() - want, " unexpected trailing bytes after ", want,
         " bytes of header and data");
  const uint8_t* p = b.data() + header;
  size_t n = size_t(count);
  switch (type->code) {
    case 0x08:
    case 0x09:
    case 0x0B:
    case 0x0C: {
      std::vector<int32_t> v(n);
      for (size_t i = 0; i < n; ++i) {
        if (type->code == 0x08)
          v[i] = p[i];
        else if (type->code == 0x09)
          v[i] = int8_t(p[i]);
        else if (type->code == 0x0B)
          v[i] = int16_t(uint16_t(p[2 * i] << 8 | p[2 * i + 1]));
        else
          v[i] = int32_t(be32(p + 4 * i));
      }
      return numpy::array(v, shape);
    }
    case 0x0D: {
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i) {
        uint32_t u = be32(p + 4 * i);
        std::memcpy(&v[i], &u, 4);
      }
      return numpy::array(v, shape);
    }
    default: {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) {
        uint64_t u = uint64_t(be32(p + 8 * i)) << 32 | be32(p + 8 * i + 4);
        std::memcpy(&v[i], &u, 8);
      }
      return numpy::array(v, shape);
    }
  }
}

Array read_idx(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read_idx", path, ": cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) fail("read_idx", path, ": read error");
  return parse_idx(bytes, path);
}

}  // namespace kiln::io
