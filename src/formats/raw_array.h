// kiln::formats::check_raw_array: validates raw array bytes (little-endian, C order, as JS
// typed arrays hold them) against the shape and dtype name that come with them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace kiln::formats {

struct RawArray {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  int64_t count = 0;  // elements: prod(shape), whose bytes are exactly the input's
};

// Checks that `byte_count` bytes hold exactly prod(shape) elements of the dtype named
// `dtype`. Throws kiln::Error("<op>: ...") for an unknown dtype, a negative dim, a size
// that overflows, or a byte count that does not match: the caller then never reads past
// the bytes it has (the JS core's fromBytes, js/src/core/bindings.cpp).
RawArray check_raw_array(const std::string& op, size_t byte_count,
                         const std::vector<int64_t>& shape, const std::string& dtype);

}  // namespace kiln::formats
