// Fuzz target `conv_layout`: lax::detail::conv_layout_perms (convolution layout strings).
// Input: 1 byte rank, then the lhs, rhs and out layouts separated by '\n'.
#include <algorithm>
#include <numeric>

#include "fuzz/fuzz_target.h"
#include "ir/error.h"
#include "library/conv_layout.h"

KILN_FUZZ_TARGET(conv_layout) {
  if (size == 0) return 0;
  const int nd = data[0] % 9;  // conv ranks are small; larger ones only lengthen the strings
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1), parts[3];
  for (int k = 0, at = 0; k < 3; k++) {
    size_t nl = k < 2 ? rest.find('\n', size_t(at)) : std::string::npos;
    parts[k] = rest.substr(size_t(at), nl == std::string::npos ? std::string::npos : nl - at);
    if (nl == std::string::npos) break;
    at = int(nl) + 1;
  }
  try {
    auto p = kiln::lax::detail::conv_layout_perms(parts[0], parts[1], parts[2], nd);
    std::vector<int> axes(static_cast<size_t>(nd));
    std::iota(axes.begin(), axes.end(), 0);
    for (auto* perm : {&p.lhs, &p.rhs, &p.out}) {
      std::vector<int> s = *perm;
      std::sort(s.begin(), s.end());
      kiln::fuzz::check(s == axes, "conv_layout: a result is not a permutation of the axes");
    }
  } catch (const kiln::Error&) {
  }
  return 0;
}
