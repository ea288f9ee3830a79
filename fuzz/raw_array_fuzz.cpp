// Fuzz target `raw_array`: formats::check_raw_array (the JS core's fromBytes arguments).
// Input: dtype name length + name, rank, int32 LE dims, then the element bytes.
#include <algorithm>
#include <cstring>

#include "formats/raw_array.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(raw_array) {
  size_t pos = 0;
  auto next = [&]() -> uint8_t { return pos < size ? data[pos++] : 0; };
  // Read the length byte before measuring what is left (argument order is unspecified:
  // g++ evaluated `size - pos` first and read one byte past the input).
  const size_t want_len = next() % 16;
  const size_t name_len = std::min(want_len, size - pos);
  std::string dtype(reinterpret_cast<const char*>(data) + pos, name_len);
  pos += name_len;
  std::vector<int64_t> shape(next() % 8);
  for (auto& d : shape) {
    uint32_t u = 0;
    for (int k = 0; k < 4; k++) u |= uint32_t(next()) << (8 * k);
    int32_t v;
    std::memcpy(&v, &u, 4);  // negative and huge dims, as JS numbers through as<int>()
    d = v;
  }
  const uint8_t* bytes = data + pos;
  const size_t n = size - pos;
  try {
    kiln::formats::RawArray r = kiln::formats::check_raw_array("array", n, shape, dtype);
    kiln::fuzz::check(uint64_t(r.count) * uint64_t(kiln::itemsize(r.dtype)) == n,
                      "raw_array: accepted a byte count that does not match");
    // Read every element's bytes as the core would: ASan reports any read past the input.
    uint8_t acc = 0;
    for (int64_t i = 0; i < r.count * kiln::itemsize(r.dtype); i++) acc ^= bytes[i];
    (void)acc;
  } catch (const kiln::Error&) {
  }
  return 0;
}
