// kiln::io::read_idx: reads IDX files (the MNIST / Fashion-MNIST format) into Arrays; the
// bytes are decoded and validated by formats/idx.h, so a bad file gets a clear kiln::Error.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/array.h"

namespace kiln::io {

// Reads an IDX file (formats::parse_idx). kiln has no 8/16-bit dtypes, so integer types
// (ubyte, byte, short, int) come back as int32 (exact: labels stay usable as indices,
// images are cast and scaled by the caller); float as float32 and double as float64.
// Throws kiln::Error naming the file for: a missing file, a bad magic, an unknown type
// code, a truncated header or data, trailing bytes, or dims whose product overflows.
// Gzipped files (.gz, as Debian ships Fashion-MNIST) are detected by their magic and
// decompressed first (formats/gzip.h); a corrupt or truncated gzip stream is a kiln::Error.
Array read_idx(const std::string& path);
// The same from bytes in memory; `name` is used in error messages.
Array parse_idx(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace kiln::io
