// read_idx / parse_idx: the file read and the Array made from formats::parse_idx's decoded
// elements (int32, float32 or float64).
#include "library/idx.h"

#include <optional>

#include "formats/idx.h"
#include "ir/file_bytes.h"
#include "library/numpy.h"

namespace kiln::io {

Array parse_idx(const std::vector<uint8_t>& bytes, const std::string& name) {
  formats::Idx f = formats::parse_idx(bytes.data(), bytes.size(), name);
  switch (f.type) {
    case formats::IdxType::Float:
      return numpy::array(f.floats, f.dims);
    case formats::IdxType::Double:
      return numpy::array(f.doubles, f.dims);
    default:
      return numpy::array(f.ints, f.dims);
  }
}

Array read_idx(const std::string& path) {
  std::optional<std::vector<uint8_t>> bytes = read_file_bytes(path);
  if (!bytes) fail("read_idx", path, ": cannot read the file");
  return parse_idx(*bytes, path);
}

}  // namespace kiln::io
