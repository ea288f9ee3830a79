#include "ir/reduction_unroll.h"

#include <cstring>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace kiln {

namespace {

bool uses_ridx(const AluNode& n, std::unordered_map<const AluNode*, bool>& memo) {
  if (auto it = memo.find(&n); it != memo.end()) return it->second;
  bool r = n.op == AluOp::Var && n.arg == int(VarId::Ridx);
  for (const AluExp& s : n.src) r = r || uses_ridx(s.node(), memo);
  return memo[&n] = r;
}

}  // namespace

int64_t reduction_period(const AluExp& body, int64_t size, int64_t max_period) {
  std::unordered_map<const AluNode*, bool> memo;
  int64_t period = 1;
  bool too_long = false;
  body.visit([&](const AluNode& n) {
    if ((n.op != AluOp::Idiv && n.op != AluOp::Mod) || !n.src[1].is_const()) return;
    const int64_t c = int64_t(n.src[1].value());
    if (c <= 1 || !uses_ridx(n.src[0].node(), memo)) return;
    if (c > max_period) too_long = true;
    else period = std::lcm(period, c);
  });
  if (too_long || period > max_period || size % period != 0) return 1;
  return period;
}

std::vector<AluExp> unroll_reduction(const AluExp& body, int64_t size, int64_t period) {
  const AluExp r = AluExp::var(VarId::Ridx, DType::Int32, size / period - 1);
  std::vector<AluExp> copies;
  for (int64_t u = 0; u < period; u++) copies.push_back(body.substitute(VarId::Ridx, r * period + u));
  return share_equal_nodes(copies);
}

std::vector<AluExp> share_equal_nodes(const std::vector<AluExp>& roots) {
  // A node is identified by its op, dtype, payload and (already shared) sources.
  using Key = std::tuple<AluOp, DType, uint64_t, int, int64_t, int64_t, std::vector<const AluNode*>>;
  std::map<Key, AluExp> canonical;
  std::unordered_map<const AluNode*, AluExp> done;
  std::function<AluExp(const AluExp&)> share = [&](const AluExp& e) -> AluExp {
    if (auto it = done.find(e.get()); it != done.end()) return it->second;
    const AluNode& n = e.node();
    std::vector<AluExp> src;
    std::vector<const AluNode*> src_ptrs;
    bool same = true;
    for (const AluExp& s : n.src) {
      src.push_back(share(s));
      src_ptrs.push_back(src.back().get());
      same = same && src.back().get() == s.get();
    }
    uint64_t bits;
    std::memcpy(&bits, &n.value, sizeof bits);
    Key key{n.op, n.dtype, bits, n.arg, n.vmin, n.vmax, src_ptrs};
    auto [it, inserted] = canonical.try_emplace(key, e);
    if (inserted && !same) it->second = e.with_src(src);
    return done[e.get()] = it->second;
  };
  std::vector<AluExp> out;
  for (const AluExp& root : roots) out.push_back(share(root));
  return out;
}

}  // namespace kiln
