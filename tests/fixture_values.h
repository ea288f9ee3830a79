// Fixture values as kiln objects: NumPy index terms as the generators write them ("None",
// "...", an integer, or a slice "start:stop:step" with any part empty), and arrays.
#pragma once
#include <optional>
#include <string>

#include "fixture_reader.h"
#include "kiln/kiln.h"

namespace kiln_test {

inline kiln::Index index_term(const std::string& t) {
  if (t == "None") return kiln::newaxis;
  if (t == "...") return kiln::ellipsis;
  if (t.find(':') == std::string::npos) return static_cast<int64_t>(std::stoll(t));
  kiln::Slice s;
  std::optional<int64_t>* parts[3] = {&s.start, &s.stop, &s.step};
  size_t from = 0;
  for (int k = 0; k < 3; ++k) {
    size_t to = t.find(':', from);
    std::string part = t.substr(from, to == std::string::npos ? std::string::npos : to - from);
    if (!part.empty()) *parts[k] = std::stoll(part);
    if (to == std::string::npos) break;
    from = to + 1;
  }
  return s;
}

// A fixture array as a kiln Array of the same dtype, shape and bytes.
inline kiln::Array to_array(const FixtureArray& a) {
  return kiln::numpy::array(a.bytes().data(), kiln::Shape(a.shape), kiln::dtype_from_name(a.dtype));
}

}  // namespace kiln_test
