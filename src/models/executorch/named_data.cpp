// Named data of ExecuTorch programs: `.ptd` entries and constant bytes to kiln Arrays.
#include "models/executorch/named_data.h"

#include <cstring>

#include "formats/ptd.h"
#include "ir/error.h"
#include "library/numpy.h"
#include "models/executorch/frame.h"

namespace kiln::executorch {

using namespace formats;

Array tensor_array(std::span<const uint8_t> data, PteScalarType type, const Shape& shape,
                   const std::string& where) {
  const DType dtype = kiln_dtype(type, where);
  size_t n = 1;
  for (int64_t d : shape) n *= size_t(d);
  const size_t itemsize = pte_scalar_type_size(type);
  if (data.size() < n * itemsize)
    fail("executorch", where, ": ", data.size(), " bytes for ", n, " items of ", itemsize);
  if (dtype != int32 || type == PteScalarType::Int) return numpy::array(data.data(), shape, dtype);
  const bool is_signed = type != PteScalarType::Byte;
  std::vector<int32_t> values(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * itemsize, itemsize);
    int64_t v = int64_t(raw);
    if (is_signed && itemsize < 8 && (raw >> (8 * itemsize - 1)) & 1) v -= int64_t(1) << (8 * itemsize);
    if (v < INT32_MIN || v > INT32_MAX)
      fail("executorch", where, ": integer constant ", v, " does not fit kiln's int32");
    values[i] = int32_t(v);
  }
  return numpy::array(values, shape);
}

std::map<std::string, Array> read_ptd(std::span<const uint8_t> ptd) {
  const Ptd parsed = parse_ptd(ptd);
  std::map<std::string, Array> out;
  for (const PtdEntry& e : parsed.named_data) {
    if (!e.has_layout) continue;
    // Arrays are row-major; the exporter writes contiguous tensors (dim order 0..rank-1).
    for (size_t d = 0; d < e.dim_order.size(); ++d)
      if (e.dim_order[d] != d) fail("executorch", "ptd: '", e.key, "' is not contiguous (dim order)");
    const std::span<const uint8_t> data = ptd_entry_data(ptd, e).first(e.layout_nbytes());
    out.emplace(e.key, tensor_array(data, e.scalar_type, Shape(e.sizes.begin(), e.sizes.end()),
                                    "ptd: '" + e.key + "'"));
  }
  return out;
}

}  // namespace kiln::executorch
