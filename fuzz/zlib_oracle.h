// zlib as the oracle of the inflate and gzip fuzz targets (make fuzz only: the library and
// its tests never link zlib): the same input must succeed or fail alike, with equal bytes.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz/fuzz_target.h"

namespace kiln::fuzz {

struct ZlibResult {
  std::vector<uint8_t> out;
  size_t consumed = 0;  // input bytes up to the end of the (last) stream
};

// Decodes with zlib: raw DEFLATE (window_bits -15, one stream, trailing bytes left), or
// gzip (31) member after member until the input ends. nullopt for any error.
inline std::optional<ZlibResult> zlib_decode(const uint8_t* data, size_t size, int window_bits) {
  ZlibResult r;
  size_t pos = 0;
  do {
    z_stream s{};
    if (inflateInit2(&s, window_bits) != Z_OK) throw PropertyError("zlib: inflateInit2 failed");
    s.next_in = const_cast<uint8_t*>(data + pos);
    s.avail_in = uInt(size - pos);
    int rc = Z_OK;
    uint8_t buf[16384];
    while (rc == Z_OK) {
      s.next_out = buf;
      s.avail_out = sizeof buf;
      rc = inflate(&s, Z_NO_FLUSH);
      r.out.insert(r.out.end(), buf, buf + (sizeof buf - s.avail_out));
      // With fresh output room each call, Z_BUF_ERROR means the input ran out: truncated.
    }
    pos += s.total_in;
    inflateEnd(&s);
    if (rc != Z_STREAM_END) return std::nullopt;
  } while (window_bits > 0 && pos < size);
  r.consumed = pos;
  return r;
}

}  // namespace kiln::fuzz
