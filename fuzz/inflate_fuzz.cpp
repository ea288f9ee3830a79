// Fuzz target `inflate`: formats::inflate on arbitrary raw DEFLATE bytes (block types,
// Huffman tables, distances). With KILN_FUZZ_ZLIB (make fuzz) zlib is the oracle.
#include <optional>

#include "formats/gzip.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"
#ifdef KILN_FUZZ_ZLIB
#include "fuzz/zlib_oracle.h"
#endif

KILN_FUZZ_TARGET(inflate) {
  std::optional<std::vector<uint8_t>> got;
  size_t used = 0;
  try {
    got = kiln::formats::inflate(data, size, "fuzz.deflate", &used);
    kiln::fuzz::check(used <= size, "inflate: consumed more than the input");
  } catch (const kiln::Error&) {
  }
#ifdef KILN_FUZZ_ZLIB
  auto want = kiln::fuzz::zlib_decode(data, size, -15);
  kiln::fuzz::check(got.has_value() == want.has_value(),
                    "inflate: kiln and zlib disagree on failure");
  if (got) {
    kiln::fuzz::check(*got == want->out, "inflate: kiln and zlib decode different bytes");
    kiln::fuzz::check(used == want->consumed, "inflate: kiln and zlib end at different bytes");
  }
#endif
  return 0;
}
