// Fuzz target `einsum`: numpy::detail::parse_einsum (subscripts checked against shapes).
// Input: 1 byte operand count, per operand a rank byte and dim bytes, the rest subscripts.
#include <algorithm>
#include <set>

#include "fuzz/fuzz_target.h"
#include "ir/error.h"
#include "library/einsum_spec.h"

KILN_FUZZ_TARGET(einsum) {
  using kiln::fuzz::check;
  size_t pos = 0;
  auto next = [&]() -> int { return pos < size ? data[pos++] : 0; };
  // Up to 4 operands of rank <= 6 with dims 0..3: small enough that the parser, not the
  // decoding of this format, is what the fuzzer explores.
  std::vector<std::vector<int64_t>> shapes(size_t(next() % 5));
  for (auto& s : shapes) {
    s.resize(size_t(next() % 7));
    for (auto& d : s) d = next() % 4;
  }
  std::string subscripts(reinterpret_cast<const char*>(data) + pos, size - pos);
  try {
    auto spec = kiln::numpy::detail::parse_einsum(subscripts, shapes);
    check(spec.labels.size() == shapes.size(), "einsum: one label list per operand");
    std::set<int> in;
    for (size_t i = 0; i < shapes.size(); i++) {
      check(spec.labels[i].size() == shapes[i].size(), "einsum: one label per axis");
      in.insert(spec.labels[i].begin(), spec.labels[i].end());
    }
    std::set<int> out(spec.out.begin(), spec.out.end());
    check(out.size() == spec.out.size(), "einsum: an output label twice");
    for (int l : spec.out) check(in.count(l) == 1, "einsum: an output label not in the inputs");
  } catch (const kiln::Error&) {
  }
  return 0;
}
