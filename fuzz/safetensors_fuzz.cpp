// Fuzz target `safetensors`: formats::parse_safetensors (and its JSON parser) on arbitrary
// bytes. A success must size every tensor by its shape and keep it inside the data section.
#include <algorithm>

#include "formats/safetensors.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(safetensors) {
  using namespace kiln::formats;
  using kiln::fuzz::check;
  const std::span<const uint8_t> file(data, size);
  Safetensors st;
  try {
    st = parse_safetensors(file);
  } catch (const kiln::Error&) {
    return 0;
  }
  check(st.data_offset == 8 + st.header_size && st.data_offset <= size, "safetensors: header");
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const SafetensorsTensor& t : st.tensors) {
    uint64_t n = safetensors_dtype_size(t.dtype);
    for (int64_t d : t.shape) {
      check(d >= 0, "safetensors: negative dim");
      n *= uint64_t(d);
    }
    check(n == t.size(), "safetensors: size != prod(shape) * itemsize");
    check(t.file_offset == st.data_offset + t.begin, "safetensors: file offset");
    check(safetensors_tensor_data(file, t).size() == n, "safetensors: data span");
    if (n) ranges.emplace_back(t.begin, t.end);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    check(ranges[i - 1].second <= ranges[i].first, "safetensors: overlapping tensors");
  return 0;
}
