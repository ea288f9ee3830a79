// Mixed-radix digit analysis of a reduction kernel's indices (see contraction.h).
#include "ir/contraction.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "ir/alu_exp.h"

namespace kiln {

namespace {

struct Digit {
  bool red;       // a digit of ridx (else of gidx)
  int64_t place;  // the variable's value is the sum of place * digit over its digits
  int64_t radix;  // the digit ranges over [0, radix)
};

using Mask = uint64_t;  // a set of digits (at most 64)

// An int32 value as c0 + sum co[d] * digit_d, exactly; or only the digits it depends on.
struct Info {
  bool exact = false;
  int64_t c0 = 0;
  std::vector<int64_t> co;
  Mask support = 0;
};

int64_t floordiv(int64_t a, int64_t c) { return a >= 0 ? a / c : -((-a + c - 1) / c); }

// The digits a value depends on: those with a coefficient, or the recorded set.
Mask support_of(const Info& r) {
  if (!r.exact) return r.support;
  Mask m = 0;
  for (size_t d = 0; d < r.co.size(); d++)
    if (r.co[d]) m |= Mask(1) << d;
  return m;
}

constexpr int64_t kBig = int64_t(1) << 40;  // coefficients beyond this: not exact

class DigitAnalysis {
 public:
  std::vector<Digit> digits;
  // The first digit split an exact `//` or `%` needs: (digit, new radix of its low part).
  std::optional<std::pair<size_t, int64_t>> split;

  const Info& of(const AluExp& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    Info r = compute(e.node());
    if (r.exact) {
      bool big = std::abs(r.c0) > kBig;
      for (int64_t c : r.co) big |= std::abs(c) > kBig;
      if (big) r.exact = false;
    }
    return memo_[e.get()] = r;
  }

 private:
  std::unordered_map<const AluNode*, Info> memo_;

  Info exact(int64_t c0) const {
    Info r;
    r.exact = true;
    r.c0 = c0;
    r.co.assign(digits.size(), 0);
    return r;
  }
  Info opaque(Mask m) const {
    Info r;
    r.support = m;
    return r;
  }

  Info compute(const AluNode& nd) {
    Mask all = 0;
    std::vector<const Info*> s;
    for (auto& x : nd.src) {
      s.push_back(&of(x));
      all |= support_of(*s.back());
    }
    const bool int_exact = nd.dtype == DType::Int32 &&
                           std::all_of(s.begin(), s.end(), [](const Info* i) { return i->exact; });
    if (nd.op == AluOp::Const && nd.dtype == DType::Int32) return exact(int64_t(nd.value));
    // A Var past VarId's own is a run-time constant of the kernel (webgpu's uniform words: a
    // load offset, wgsl_uniform_offsets.h): exact, its value unknown here, so counted as 0 in
    // c0 (only the WGSL tiles meet such Vars, and they read the coefficients, not c0).
    if (nd.op == AluOp::Var && nd.arg > int(VarId::Lane)) return exact(0);
    if (nd.op == AluOp::Var && (nd.arg == int(VarId::Gidx) || nd.arg == int(VarId::Ridx))) {
      const bool red = nd.arg == int(VarId::Ridx);
      Info r = exact(0);
      for (size_t d = 0; d < digits.size(); d++)
        if (digits[d].red == red) r.co[d] = digits[d].place;
      return r;
    }
    if (!int_exact || s.size() != 2) return opaque(all);
    const Info &a = *s[0], &b = *s[1];
    auto is_c = [](const Info& i) { return std::all_of(i.co.begin(), i.co.end(), [](int64_t c) { return c == 0; }); };
    switch (nd.op) {
      case AluOp::Add:
      case AluOp::Sub: {
        const int64_t sg = nd.op == AluOp::Add ? 1 : -1;
        Info r = exact(a.c0 + sg * b.c0);
        for (size_t d = 0; d < digits.size(); d++) r.co[d] = a.co[d] + sg * b.co[d];
        return r;
      }
      case AluOp::Mul: {
        if (!is_c(a) && !is_c(b)) return opaque(all);
        const Info& x = is_c(a) ? b : a;
        const int64_t c = is_c(a) ? a.c0 : b.c0;
        Info r = exact(x.c0 * c);
        for (size_t d = 0; d < digits.size(); d++) r.co[d] = x.co[d] * c;
        return r;
      }
      case AluOp::Idiv:
      case AluOp::Mod: {
        if (!is_c(b) || b.c0 <= 0) return opaque(all);
        return divmod(a, b.c0, nd.op == AluOp::Idiv, all);
      }
      default: return opaque(all);
    }
  }

  // a // c or a % c: terms whose coefficient c divides go to the quotient; the rest must
  // stay in [0, c) over the digits' ranges. If a digit straddles c, ask for it to be split.
  Info divmod(const Info& a, int64_t c, bool div, Mask all) {
    Info q = exact(floordiv(a.c0, c)), rem = exact(a.c0 - q.c0 * c);
    int64_t lo = rem.c0, hi = rem.c0;
    for (size_t d = 0; d < digits.size(); d++) {
      if (a.co[d] % c == 0) {
        q.co[d] = a.co[d] / c;
      } else {
        rem.co[d] = a.co[d];
        lo += std::min<int64_t>(0, a.co[d] * (digits[d].radix - 1));
        hi += std::max<int64_t>(0, a.co[d] * (digits[d].radix - 1));
      }
    }
    if (lo >= 0 && hi < c) return div ? q : rem;
    for (size_t d = 0; d < digits.size() && !split; d++) {
      const int64_t k = rem.co[d];
      if (k <= 0 || c % k) continue;
      const int64_t low = c / k;
      if (low < digits[d].radix && digits[d].radix % low == 0) split = {d, low};
    }
    return opaque(all);
  }
};

// The row-major grouping of the gidx digits as [batch | rows | columns] for factors (a, b).
struct Grouping {
  int64_t batch = 1, m = 1, n = 1;
};

std::optional<Grouping> group(const std::vector<Digit>& digits, Mask sa, Mask sb) {
  std::vector<size_t> g;  // gidx digits, least significant first
  for (size_t d = 0; d < digits.size(); d++)
    if (!digits[d].red) g.push_back(d);
  std::sort(g.begin(), g.end(), [&](size_t x, size_t y) { return digits[x].place < digits[y].place; });
  Grouping r;
  size_t i = 0;
  for (; i < g.size() && !(sa >> g[i] & 1); i++) r.n *= digits[g[i]].radix;
  for (; i < g.size() && !(sb >> g[i] & 1); i++) r.m *= digits[g[i]].radix;
  for (; i < g.size(); i++) r.batch *= digits[g[i]].radix;
  if (r.n < 2 || r.m < 2) return std::nullopt;
  return r;
}

// The (cb, ci, cj, cr) form of an exact index, if each group's digits enter it as the
// group's value times one coefficient.
bool linear_form(const std::vector<Digit>& digits, const Info& ix, const Grouping& g,
                 ContractionOperand& op) {
  int64_t* coef[4] = {&op.cb, &op.ci, &op.cj, &op.cr};
  bool seen[4] = {};
  for (size_t d = 0; d < digits.size(); d++) {
    const Digit& dg = digits[d];
    int grp;
    int64_t base;  // the place at which the group's value starts
    if (dg.red) grp = 3, base = 1;
    else if (dg.place < g.n) grp = 2, base = 1;
    else if (dg.place < g.n * g.m) grp = 1, base = g.n;
    else grp = 0, base = g.n * g.m;
    const int64_t unit = dg.place / base;
    if (ix.co[d] % unit) return false;
    const int64_t c = ix.co[d] / unit;
    if (seen[grp] && *coef[grp] != c) return false;
    seen[grp] = true;
    *coef[grp] = c;
  }
  op.c0 = ix.c0;
  op.lo = op.hi = ix.c0;
  for (size_t d = 0; d < digits.size(); d++) {
    op.lo += std::min<int64_t>(0, ix.co[d] * (digits[d].radix - 1));
    op.hi += std::max<int64_t>(0, ix.co[d] * (digits[d].radix - 1));
  }
  op.linear = true;
  return true;
}

}  // namespace

std::optional<ContractionShape> analyze_contraction(const Kernel& k) {
  if (!k.reduction || k.reduction->op != AluOp::Add || k.reduction->size <= 0 || k.size <= 0)
    return std::nullopt;
  if (k.exp.op() != AluOp::Mul) return std::nullopt;
  DigitAnalysis da;
  da.digits = {{false, 1, k.size}, {true, 1, k.reduction->size}};
  const AluExp &x = k.exp.src(0), &y = k.exp.src(1);
  // Split digits until every // and % the factors use is exact (or cannot be made so).
  for (;;) {
    DigitAnalysis pass;
    pass.digits = da.digits;
    pass.of(x), pass.of(y);
    if (!pass.split) {
      da = std::move(pass);
      break;
    }
    auto [d, low] = *pass.split;
    if (da.digits.size() >= 64) return std::nullopt;
    Digit hi = da.digits[d];
    hi.place *= low;
    hi.radix /= low;
    da.digits[d].radix = low;
    da.digits.push_back(hi);
  }
  const Mask sx = support_of(da.of(x)), sy = support_of(da.of(y));
  std::optional<ContractionShape> best;
  for (int swap = 0; swap < 2; swap++) {
    const AluExp& fa = swap ? y : x;
    const AluExp& fb = swap ? x : y;
    auto g = group(da.digits, swap ? sy : sx, swap ? sx : sy);
    if (!g || (best && best->n >= g->n)) continue;
    ContractionShape s;
    s.batch = g->batch, s.m = g->m, s.n = g->n, s.k = k.reduction->size;
    s.a.factor = fa, s.b.factor = fb;
    for (auto [e, op] : {std::pair{&fa, &s.a}, std::pair{&fb, &s.b}}) {
      if (e->op() != AluOp::Load) continue;
      const Info& ix = da.of(e->src(0));
      ContractionOperand lin = *op;
      lin.arg = e->node().arg;
      if (ix.exact && linear_form(da.digits, ix, *g, lin)) *op = lin;
    }
    best = s;
  }
  return best;
}

}  // namespace kiln
