// Index-set splitting: the boundaries where comparisons of the output index with constants
// change value, and the kernel's expression re-simplified over each range between them.
#include "ir/index_split.h"

#include <cstdlib>
#include <set>
#include <string>
#include <unordered_map>

namespace kiln {

namespace {

// Whether n is int32/bool arithmetic of gidx and constants only (no loads, no other
// variable, no float): its value at a given gidx folds to a constant.
bool index_only(const AluNode& n, std::unordered_map<const AluNode*, bool>& memo) {
  auto it = memo.find(&n);
  if (it != memo.end()) return it->second;
  bool r = !is_float(n.dtype) && n.op != AluOp::Load &&
           (n.op != AluOp::Var || n.arg == int(VarId::Gidx));
  for (const AluExp& s : n.src) r = r && index_only(s.node(), memo);
  return memo[&n] = r;
}

AluExp gidx_in(int64_t lo, int64_t hi) { return AluExp::var(VarId::Gidx, DType::Int32, lo, hi - 1); }

// The value of an index-only comparison at gidx = g.
double at(const AluExp& cmp, int64_t g) { return cmp.substitute(VarId::Gidx, AluExp::idx(g)).value(); }

// Where `cmp` changes value over [0, size), when it changes exactly once (a comparison of a
// monotone index expression: an offset, a floor division, a padding bound) and the
// simplifier decides it on both sides; else -1.
int64_t flip_point(const AluExp& cmp, int64_t size) {
  const double first = at(cmp, 0);
  if (at(cmp, size - 1) == first) return -1;
  int64_t lo = 0, hi = size - 1;  // at(lo) == first, at(hi) != first
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (at(cmp, mid) == first ? lo : hi) = mid;
  }
  if (!cmp.substitute(VarId::Gidx, gidx_in(0, hi)).is_const()) return -1;
  if (!cmp.substitute(VarId::Gidx, gidx_in(hi, size)).is_const()) return -1;
  return hi;
}

}  // namespace

std::optional<std::vector<IndexPiece>> split_index_ranges(const Kernel& k) {
  // KILN_INDEX_SPLIT=0 keeps one loop (A/B measurements within one build).
  static const bool enabled = [] {
    const char* e = std::getenv("KILN_INDEX_SPLIT");
    return !(e && std::string(e) == "0");
  }();
  if (!enabled || k.reduction || k.prelude || k.size < 2 || !k.exp) return std::nullopt;
  std::unordered_map<const AluNode*, bool> memo;
  std::set<int64_t> cuts;
  bool reads_gidx = false;
  k.exp.visit([&](const AluNode& n) {
    reads_gidx |= n.op == AluOp::Var && n.arg == int(VarId::Gidx);
    if (!is_comparison(n.op) || !index_only(n, memo)) return;
    // A non-owning handle: k.exp keeps the node alive.
    const AluExp cmp(std::shared_ptr<const AluNode>(std::shared_ptr<const AluNode>{}, &n));
    const int64_t b = flip_point(cmp, k.size);
    if (b > 0) cuts.insert(b);
  });
  if (!reads_gidx || cuts.empty() || cuts.size() + 1 > kMaxIndexPieces) return std::nullopt;
  cuts.insert(k.size);
  std::vector<IndexPiece> pieces;
  double work = 0;
  int64_t lo = 0;
  for (int64_t hi : cuts) {
    IndexPiece p{lo, hi, k.exp.substitute(VarId::Gidx, gidx_in(lo, hi))};
    work += double(hi - lo) * p.exp.node_count();
    pieces.push_back(std::move(p));
    lo = hi;
  }
  if (work >= kSplitWorkRatio * double(k.size) * k.exp.node_count()) return std::nullopt;
  return pieces;
}

}  // namespace kiln
