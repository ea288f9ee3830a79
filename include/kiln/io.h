// Public header: kiln::io, file readers (IDX for MNIST and Fashion-MNIST, gzip/DEFLATE).
// The pure decoders live in src/formats (namespace kiln::formats); io re-exports them.
#pragma once
#include "formats/gzip.h"
#include "library/idx.h"

namespace kiln::io {
using formats::crc32;
using formats::gunzip;
using formats::inflate;
using formats::is_gzip;
}  // namespace kiln::io
