// Fuzz target `idx`: formats::parse_idx on arbitrary bytes (plain and gzipped IDX files).
// A success must decode exactly prod(dims) elements into the one vector its type names.
#include "formats/idx.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(idx) {
  using kiln::formats::IdxType;
  try {
    kiln::formats::Idx f = kiln::formats::parse_idx(data, size, "fuzz.idx");
    uint64_t n = 1;
    for (int64_t d : f.dims) {
      kiln::fuzz::check(d >= 0 && d <= 0xffffffffll, "idx: a dim outside uint32");
      n *= uint64_t(d);
    }
    const bool is_float = f.type == IdxType::Float, is_double = f.type == IdxType::Double;
    kiln::fuzz::check(f.ints.size() == (is_float || is_double ? 0 : n), "idx: int count");
    kiln::fuzz::check(f.floats.size() == (is_float ? n : 0), "idx: float count");
    kiln::fuzz::check(f.doubles.size() == (is_double ? n : 0), "idx: double count");
    if (f.type == IdxType::UByte)
      for (int32_t v : f.ints) kiln::fuzz::check(v >= 0 && v <= 255, "idx: ubyte range");
    if (f.type == IdxType::Byte)
      for (int32_t v : f.ints) kiln::fuzz::check(v >= -128 && v <= 127, "idx: byte range");
  } catch (const kiln::Error&) {
  }
  return 0;
}
