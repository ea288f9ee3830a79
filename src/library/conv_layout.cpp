// Convolution layout strings: each checked on its own (length, N/C or O/I once, no repeated
// letter), then across the three (same spatial letters), then turned into permutations.
#include "library/conv_layout.h"

#include <algorithm>
#include <numeric>

#include "ir/error.h"

namespace kiln::lax::detail {

ConvPerms conv_layout_perms(const std::string& lhs, const std::string& rhs,
                            const std::string& out, int nd) {
  const char* op = "conv_general_dilated";
  if (nd < 0) fail(op, "got rank ", nd, ", expected a non-negative rank");
  ConvPerms p;
  if (lhs.empty() && rhs.empty() && out.empty()) {
    p.lhs.resize(size_t(nd));
    std::iota(p.lhs.begin(), p.lhs.end(), 0);
    p.rhs = p.out = p.lhs;
    return p;
  }
  const std::string* specs[3] = {&lhs, &rhs, &out};
  const char* names[3] = {"lhs", "rhs", "out"};
  const char pairs[3][2] = {{'N', 'C'}, {'O', 'I'}, {'N', 'C'}};
  std::string spatial[3];
  for (int k = 0; k < 3; k++) {
    const std::string& s = *specs[k];
    if (s.size() != size_t(nd))
      fail(op, "got ", names[k], " layout '", s, "' of length ", s.size(),
           ", expected one letter per dimension (", nd, ")");
    for (char c : pairs[k])
      if (std::count(s.begin(), s.end(), c) != 1)
        fail(op, "got ", names[k], " layout '", s, "', expected exactly one '", c, "'");
    for (size_t i = 0; i < s.size(); i++) {
      if (s.find(s[i]) != i)
        fail(op, "got ", names[k], " layout '", s, "' with '", s[i], "' twice");
      if (s[i] != pairs[k][0] && s[i] != pairs[k][1]) spatial[k] += s[i];
    }
  }
  auto sorted = [](std::string s) { return std::sort(s.begin(), s.end()), s; };
  if (sorted(spatial[0]) != sorted(spatial[1]) || sorted(spatial[1]) != sorted(spatial[2]))
    fail(op, "got layouts '", lhs, "', '", rhs, "', '", out,
         "', expected the same spatial letters in each");
  std::vector<int>* perms[3] = {&p.lhs, &p.rhs, &p.out};
  for (int k = 0; k < 3; k++) {
    const std::string& s = *specs[k];
    perms[k]->push_back(int(s.find(pairs[k][0])));
    perms[k]->push_back(int(s.find(pairs[k][1])));
    for (char c : spatial[1]) perms[k]->push_back(int(s.find(c)));
  }
  return p;
}

}  // namespace kiln::lax::detail
