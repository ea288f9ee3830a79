// Raw array checks: the dtype by name, each dim non-negative, the element count without
// overflow, then the byte count against count * itemsize.
#include "formats/raw_array.h"

#include <cstdint>

#include "ir/error.h"

namespace kiln::formats {

namespace {
std::string shape_text(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}
}  // namespace

RawArray check_raw_array(const std::string& op, size_t byte_count,
                         const std::vector<int64_t>& shape, const std::string& dtype) {
  RawArray r;
  r.shape = shape;
  try {
    r.dtype = dtype_from_name(dtype);
  } catch (const Error&) {
    fail(op, "got dtype '", dtype, "', expected one of bool, int32, uint32, float16, float32, ",
         "float64");
  }
  const uint64_t size = uint64_t(itemsize(r.dtype));
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) fail(op, "got shape ", shape_text(shape), ", expected non-negative dimensions");
    empty = empty || d == 0;
  }
  // The element count and its bytes, stopping at int64's range (no real array is near it).
  const uint64_t max = uint64_t(INT64_MAX) / size;
  uint64_t count = empty ? 0 : 1;
  for (int64_t d : shape) {
    if (empty) break;
    if (count > max / uint64_t(d))
      fail(op, "got shape ", shape_text(shape), " of ", dtype_name(r.dtype),
           ", whose size in bytes overflows int64");
    count *= uint64_t(d);
  }
  if (count * size != uint64_t(byte_count))
    fail(op, "got ", byte_count, " bytes of ", dtype_name(r.dtype), " data for shape ",
         shape_text(shape), ", expected ", count * size, " (", count, " elements of ", size,
         " bytes)");
  r.count = int64_t(count);
  return r;
}

}  // namespace kiln::formats
