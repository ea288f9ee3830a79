// Index-set splitting: the boundaries where comparisons of the output index with constants
// change value, and the kernel's expression re-simplified over each range between them.
#include "ir/index_split.h"

#include <cstdlib>
#include <functional>
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
  bool r = !is_float(n.dtype) && n.op != AluOp::Load && (n.op != AluOp::Var || n.arg == int(VarId::Gidx));
  for (const AluExp& s : n.src) r = r && index_only(s.node(), memo);
  return memo[&n] = r;
}

bool is_gidx(const AluExp& e) { return e.op() == AluOp::Var && e.node().arg == int(VarId::Gidx); }

AluExp alias(const AluNode& n) { return AluExp(std::shared_ptr<const AluNode>(std::shared_ptr<const AluNode>{}, &n)); }

// gidx over rows of `period`: row * period + j, the row any (Lane stands for it) and j in
// [lo, hi). With period == size the row is 0 and this is gidx in [lo, hi).
struct Domain {
  int64_t size, period;
  AluExp at(int64_t lo, int64_t hi) const {
    AluExp j = AluExp::var(VarId::Gidx, DType::Int32, lo, hi - 1);
    if (period == size) return j;
    return AluExp::var(VarId::Lane, DType::Int32, size / period - 1) * AluExp::idx(period) + j;
  }
  bool decided(const AluExp& cmp, int64_t lo, int64_t hi) const {
    return cmp.substitute(VarId::Gidx, at(lo, hi)).is_const();
  }
};

// Where `cmp` changes value within a row, when it changes exactly once there (a comparison
// of a monotone index expression: an offset, a floor division, a padding bound), the same in
// every row, and the simplifier decides it on both sides; else -1.
int64_t flip_point(const AluExp& cmp, const Domain& d) {
  auto at = [&](int64_t j) { return cmp.substitute(VarId::Gidx, AluExp::idx(j)).value(); };
  const double first = at(0);
  if (at(d.period - 1) == first) return -1;
  int64_t lo = 0, hi = d.period - 1;  // at(lo) == first, at(hi) != first
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (at(mid) == first ? lo : hi) = mid;
  }
  return d.decided(cmp, 0, hi) && d.decided(cmp, hi, d.period) ? hi : -1;
}

// Rows shorter than the whole: the periods of `gidx % c` and `(gidx // q) % c` in the
// comparisons (a concatenation along an inner axis), longest first.
std::set<int64_t, std::greater<>> periods(const std::vector<AluExp>& cmps, int64_t size) {
  std::set<int64_t, std::greater<>> out{size};
  for (const AluExp& c : cmps)
    c.visit([&](const AluNode& n) {
      if (n.op != AluOp::Mod || !n.src[1].is_const()) return;
      int64_t p = int64_t(n.src[1].value());
      const AluExp& x = n.src[0];
      if (x.op() == AluOp::Idiv && is_gidx(x.src(0)) && x.src(1).is_const()) p *= int64_t(x.src(1).value());
      else if (!is_gidx(x)) return;
      if (p > 1 && p < size && size % p == 0) out.insert(p);
    });
  return out;
}

// e with each comparison of `decided` replaced by its value (re-simplified as it rebuilds).
AluExp replace(const AluExp& e, const std::unordered_map<const AluNode*, AluExp>& decided,
               std::unordered_map<const AluNode*, AluExp>& memo) {
  auto it = memo.find(e.get());
  if (it != memo.end()) return it->second;
  auto d = decided.find(e.get());
  AluExp out = e;
  if (d != decided.end()) {
    out = d->second;
  } else if (!e.node().src.empty()) {
    std::vector<AluExp> src;
    bool same = true;
    for (const AluExp& s : e.node().src) {
      src.push_back(replace(s, decided, memo));
      same = same && src.back().get() == s.get();
    }
    if (!same) out = e.with_src(src);
  }
  return memo[e.get()] = out;
}

}  // namespace

std::optional<IndexSplit> split_index_ranges(const Kernel& k) {
  // KILN_INDEX_SPLIT=0 keeps one loop (A/B measurements within one build).
  static const bool enabled = [] {
    const char* e = std::getenv("KILN_INDEX_SPLIT");
    return !(e && std::string(e) == "0");
  }();
  if (!enabled || k.reduction || k.prelude || k.size < 2 || !k.exp) return std::nullopt;
  std::unordered_map<const AluNode*, bool> memo;
  std::vector<AluExp> cmps;
  k.exp.visit([&](const AluNode& n) {
    if (is_comparison(n.op) && index_only(n, memo)) cmps.push_back(alias(n));  // k.exp keeps n alive
  });
  for (int64_t period : periods(cmps, k.size)) {
    const Domain d{k.size, period};
    std::set<int64_t> cuts;
    for (const AluExp& c : cmps)
      if (const int64_t b = flip_point(c, d); b > 0) cuts.insert(b);
    if (cuts.empty()) continue;
    if (cuts.size() + 1 > kMaxIndexPieces) return std::nullopt;
    cuts.insert(period);
    IndexSplit s{period, {}};
    double work = 0;
    int64_t lo = 0;
    for (int64_t hi : cuts) {
      if (period < k.size && hi - lo < kMinInnerPiece) return std::nullopt;
      IndexPiece p{lo, hi, {}};
      if (period == k.size) {
        p.exp = k.exp.substitute(VarId::Gidx, d.at(lo, hi));
      } else {
        // In gidx, valid where gidx % period lies in [lo, hi): each comparison decided there
        // becomes its value (a code generator may substitute its own row and column).
        std::unordered_map<const AluNode*, AluExp> decided, memo2;
        for (const AluExp& c : cmps) {
          const AluExp v = c.substitute(VarId::Gidx, d.at(lo, hi));
          if (v.is_const()) decided[c.get()] = v;
        }
        p.exp = replace(k.exp, decided, memo2);
      }
      work += double(hi - lo) * p.exp.node_count();
      s.pieces.push_back(std::move(p));
      lo = hi;
    }
    if (work >= kSplitWorkRatio * double(period) * k.exp.node_count()) return std::nullopt;
    return s;
  }
  return std::nullopt;
}

}  // namespace kiln
