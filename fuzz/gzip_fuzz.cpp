// Fuzz target `gzip`: formats::gunzip on arbitrary bytes (header fields, members, trailer).
// Built for make fuzz with KILN_FUZZ_ZLIB, it must also agree with zlib on every input.
#include <optional>

#include "formats/gzip.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"
#ifdef KILN_FUZZ_ZLIB
#include "fuzz/zlib_oracle.h"
#endif

KILN_FUZZ_TARGET(gzip) {
  std::vector<uint8_t> in(data, data + size);
  std::optional<std::vector<uint8_t>> got;
  try {
    got = kiln::formats::gunzip(in, "fuzz.gz");
    kiln::fuzz::check(kiln::formats::is_gzip(in), "gzip: success without the magic");
  } catch (const kiln::Error&) {
  }
#ifdef KILN_FUZZ_ZLIB
  auto want = kiln::fuzz::zlib_decode(data, size, 31);
  kiln::fuzz::check(got.has_value() == want.has_value(), "gzip: kiln and zlib disagree on failure");
  if (got) kiln::fuzz::check(*got == want->out, "gzip: kiln and zlib decode different bytes");
#endif
  return 0;
}
