// Fuzz target `ptd`: formats::parse_ptd (and the FlatBuffer reader) on arbitrary bytes. A
// success must leave every entry's segment index in range, its bytes inside the file and
// its layout's bytes inside its segment.
#include "formats/ptd.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(ptd) {
  using namespace kiln::formats;
  using kiln::fuzz::check;
  const std::span<const uint8_t> file(data, size);
  Ptd ptd;
  try {
    ptd = parse_ptd(file);
  } catch (const kiln::Error&) {
    return 0;
  }
  for (const PtdEntry& e : ptd.named_data) {
    check(e.segment_index < ptd.segments.size(), "ptd: segment index");
    check(ptd_entry_data(file, e).size() == e.data_size, "ptd: entry bytes");
    check(e.layout_nbytes() <= e.data_size, "ptd: layout past its segment");
    check(e.dim_order.size() == e.sizes.size(), "ptd: dim_order rank");
    check(ptd.find(e.key) == &e, "ptd: keys unique");
  }
  return 0;
}
