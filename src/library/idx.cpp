// read_idx / parse_idx: the file read and the Array made from formats::parse_idx's decoded
// elements (int32, float32 or float64).
#include "library/idx.h"

#include <fstream>
#include <iterator>

#include "formats/idx.h"
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
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read_idx", path, ": cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) fail("read_idx", path, ": read error");
  return parse_idx(bytes, path);
}

}  // namespace kiln::io
