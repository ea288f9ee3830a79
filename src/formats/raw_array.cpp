// Raw array checks: the dtype by name, each dim non-negative, the element count without
// overflow, then the byte count against count * itemsize.
#include "formats/raw_array.h"

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
  // A count above byte_count / itemsize cannot match, so the product stops there and never
  // overflows.
  const uint64_t limit = uint64_t(byte_count) / size;
  uint64_t count = empty ? 0 : 1;
  bool too_many = false;
  for (int64_t d : shape) {
    if (empty || too_many) break;
    if (count > limit / uint64_t(d))
      too_many = true;
    else
      count *= uint64_t(d);
  }
  if (too_many || count * size != uint64_t(byte_count))
    fail(op, "got ", byte_count, " bytes of ", dtype_name(r.dtype), " data for shape ",
         shape_text(shape), ", expected ",
         too_many ? std::string("more than that") : std::to_string(count * size), " (", size,
         " per element)");
  r.count = int64_t(count);
  return r;
}

}  // namespace kiln::formats
