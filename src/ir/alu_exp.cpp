// AluExp construction with simplification: constant folding, identities, and index
// arithmetic reduced by value ranges (the rules that keep view indexing cheap).
#include "ir/alu_exp.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"

namespace kiln {

namespace {

constexpr int64_t kMinI = std::numeric_limits<int64_t>::min() / 4;
constexpr int64_t kMaxI = std::numeric_limits<int64_t>::max() / 4;

void dtype_range(DType d, int64_t* lo, int64_t* hi) {
  switch (d) {
    case DType::Bool: *lo = 0, *hi = 1; return;
    case DType::Int32: *lo = INT32_MIN, *hi = INT32_MAX; return;
    case DType::Uint32: *lo = 0, *hi = UINT32_MAX; return;
    default: *lo = kMinI, *hi = kMaxI; return;
  }
}

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

AluExp make(AluOp op, DType dtype, std::vector<AluExp> src, double value = 0, int arg = 0) {
  auto n = std::make_shared<AluNode>();
  n->op = op;
  n->dtype = dtype;
  n->src = std::move(src);
  n->value = value;
  n->arg = arg;
  // Value range, used by the index simplifier. Only meaningful for ints and bool.
  int64_t lo, hi;
  dtype_range(dtype, &lo, &hi);
  if (!is_float(dtype)) {
    auto& s = n->src;
    auto within = [&](int64_t a, int64_t b) {
      if (a >= lo && b <= hi) lo = a, hi = b;
    };
    switch (op) {
      case AluOp::Const: lo = hi = int64_t(value); break;
      case AluOp::Var: break;  // set by AluExp::var
      case AluOp::Add: within(s[0].vmin() + s[1].vmin(), s[0].vmax() + s[1].vmax()); break;
      case AluOp::Sub: within(s[0].vmin() - s[1].vmax(), s[0].vmax() - s[1].vmin()); break;
      case AluOp::Mul: {
        int64_t a = s[0].vmin(), b = s[0].vmax(), c = s[1].vmin(), d = s[1].vmax();
        if (std::max({std::abs(a), std::abs(b), std::abs(c), std::abs(d)}) < (int64_t(1) << 31)) {
          within(std::min({a * c, a * d, b * c, b * d}), std::max({a * c, a * d, b * c, b * d}));
        }
        break;
      }
      case AluOp::Idiv:
        if (s[1].is_const() && s[1].value() > 0) {
          int64_t c = int64_t(s[1].value());
          within(floordiv(s[0].vmin(), c), floordiv(s[0].vmax(), c));
        }
        break;
      case AluOp::Mod:
        if (s[1].is_const() && s[1].value() > 0) {
          int64_t c = int64_t(s[1].value());
          if (s[0].vmin() >= 0) within(0, std::min(c - 1, s[0].vmax()));
          else within(0, c - 1);
        }
        break;
      case AluOp::Max:
        within(std::max(s[0].vmin(), s[1].vmin()), std::max(s[0].vmax(), s[1].vmax()));
        break;
      case AluOp::Min:
        within(std::min(s[0].vmin(), s[1].vmin()), std::min(s[0].vmax(), s[1].vmax()));
        break;
      case AluOp::Where:
        within(std::min(s[1].vmin(), s[2].vmin()), std::max(s[1].vmax(), s[2].vmax()));
        break;
      case AluOp::Cast:
        if (!is_float(s[0].dtype())) within(s[0].vmin(), s[0].vmax());
        break;
      case AluOp::And:  // a mask by a non-negative operand bounds the result by it
        if (dtype != DType::Bool && s[1].vmin() >= 0 && s[1].vmax() < (int64_t(1) << 31)) within(0, s[1].vmax());
        break;
      case AluOp::Shr:  // x >> s of a non-negative x never grows it
        if (s[0].vmin() >= 0 && s[1].vmin() >= 0) within(0, s[0].vmax());
        break;
      default: break;
    }
  }
  n->vmin = lo;
  n->vmax = hi;
  return AluExp(std::move(n));
}

bool commutative(AluOp op) {
  switch (op) {
    case AluOp::Add: case AluOp::Mul: case AluOp::Max: case AluOp::Min: case AluOp::And:
    case AluOp::Or: case AluOp::Xor: case AluOp::CmpEq: case AluOp::CmpNe: return true;
    default: return false;
  }
}

// Splits a sum into terms, each with its constant multiplier: x*4 + y + 3 ->
// {(x,4), (y,1), (1,3)}.
void sum_terms(const AluExp& e, std::vector<std::pair<AluExp, int64_t>>& out) {
  if (e.op() == AluOp::Add) {
    sum_terms(e.src(0), out);
    sum_terms(e.src(1), out);
  } else if (e.op() == AluOp::Mul && e.src(1).is_const()) {
    out.push_back({e.src(0), int64_t(e.src(1).value())});
  } else if (e.is_const()) {
    out.push_back({AluExp(), int64_t(e.value())});
  } else {
    out.push_back({e, 1});
  }
}

AluExp build_sum(const std::vector<std::pair<AluExp, int64_t>>& terms) {
  AluExp acc;
  int64_t c = 0;
  for (auto& [t, k] : terms) {
    if (!t) {
      c += k;
      continue;
    }
    AluExp term = t * k;
    acc = acc ? acc + term : term;
  }
  if (!acc) return AluExp::idx(c);
  return c ? acc + c : acc;
}

bool same_exp(const AluExp& x, const AluExp& y) {
  if (x.get() == y.get()) return true;
  const AluNode &a = x.node(), &b = y.node();
  if (a.op != b.op || a.dtype != b.dtype || a.value != b.value || a.arg != b.arg ||
      a.src.size() != b.src.size() || a.vmax != b.vmax)
    return false;
  for (size_t i = 0; i < a.src.size(); i++)
    if (!same_exp(a.src[i], b.src[i])) return false;
  return true;
}

// Undoes an unravel: (x % c) * k + (x // c) * (k * c) == x * k for floor semantics and
// c > 0, also when x = y // e and the quotient was already folded into y // (e * c).
AluExp recombine_divmod(const AluExp& a, const AluExp& b) {
  std::vector<std::pair<AluExp, int64_t>> terms;
  sum_terms(a, terms);
  sum_terms(b, terms);
  for (size_t i = 0; i < terms.size(); i++) {
    const AluExp m = terms[i].first;
    int64_t k = terms[i].second;
    if (!m || m.op() != AluOp::Mod || !m.src(1).is_const() || m.src(1).value() <= 0) continue;
    int64_t c = int64_t(m.src(1).value());
    const AluExp& x = m.src(0);
    for (size_t j = 0; j < terms.size(); j++) {
      const AluExp& q = terms[j].first;
      if (j == i || !q || q.op() != AluOp::Idiv || !q.src(1).is_const() || terms[j].second != k * c) continue;
      int64_t d = int64_t(q.src(1).value());
      bool match = (d == c && same_exp(q.src(0), x)) ||
                   (x.op() == AluOp::Idiv && x.src(1).is_const() && d == int64_t(x.src(1).value()) * c &&
                    same_exp(q.src(0), x.src(0)));
      if (!match) continue;
      terms[i] = {x, k};
      terms.erase(terms.begin() + long(j));
      return build_sum(terms);
    }
  }
  return AluExp();
}

// Rules for floor division and mod of an int expression by a positive constant.
AluExp simplify_divmod(AluOp op, const AluExp& a, int64_t c) {
  if (c == 1) return op == AluOp::Idiv ? a : AluExp::idx(0);
  if (a.vmin() >= 0 && a.vmax() < c) return op == AluOp::Idiv ? AluExp::idx(0) : a;
  if (op == AluOp::Idiv && floordiv(a.vmin(), c) == floordiv(a.vmax(), c))
    return AluExp::idx(floordiv(a.vmin(), c));
  // Within one period the remainder is an offset: a packed kernel's `gidx % n` over the
  // range of one of its outputs (index-set splitting) reads that output's elements in place.
  if (op == AluOp::Mod && floordiv(a.vmin(), c) == floordiv(a.vmax(), c))
    return a - AluExp::idx(floordiv(a.vmin(), c) * c);
  if (op == AluOp::Mod && a.op() == AluOp::Mod && a.src(1).is_const() &&
      int64_t(a.src(1).value()) % c == 0)
    return a.src(0) % c;
  if (op == AluOp::Idiv && a.op() == AluOp::Idiv && a.src(1).is_const() && a.src(1).value() > 0)
    return a.src(0) / (int64_t(a.src(1).value()) * c);
  if (a.op() == AluOp::Mul && a.src(1).is_const() && a.src(1).value() > 0) {
    int64_t k = int64_t(a.src(1).value());
    if (k % c == 0) return op == AluOp::Idiv ? a.src(0) * (k / c) : AluExp::idx(0);
    if (op == AluOp::Idiv && c % k == 0) return a.src(0) / (c / k);
  }
  if (a.op() == AluOp::Add) {
    // (k*t + r) // (k*m) == t // m and (k*t + r) % (k*m) == k*(t % m) + r when r lies in
    // [0, k): the small remainder cannot carry into the quotient.
    std::vector<std::pair<AluExp, int64_t>> parts;
    sum_terms(a, parts);
    for (size_t i = 0; i < parts.size(); i++) {
      auto [t, k] = parts[i];
      if (!t || k <= 1 || c % k != 0 || k == c) continue;
      std::vector<std::pair<AluExp, int64_t>> rest = parts;
      rest.erase(rest.begin() + long(i));
      AluExp r = build_sum(rest);
      if (r.vmin() < 0 || r.vmax() >= k) continue;
      return op == AluOp::Idiv ? t / (c / k) : (t % (c / k)) * k + r;
    }
  }
  if (a.op() == AluOp::Add) {
    // Pull out the terms that are multiples of c: (k*c*t + r) // c == k*t + r // c.
    std::vector<std::pair<AluExp, int64_t>> terms, whole, rest;
    sum_terms(a, terms);
    bool moved = false;
    for (auto& [t, k] : terms) {
      if (k % c == 0) {
        whole.push_back({t, k / c});
        moved = true;
      } else if (!t && (k >= c || k < 0)) {
        whole.push_back({t, floordiv(k, c)});
        rest.push_back({t, k - floordiv(k, c) * c});
        moved = true;
      } else {
        rest.push_back({t, k});
      }
    }
    if (moved) {
      AluExp r = build_sum(rest);
      if (op == AluOp::Mod) return r % c;
      whole.push_back({r / c, 1});
      return build_sum(whole);
    }
  }
  return AluExp();
}

// An operand of arithmetic is a value of its dtype: a full-precision weak constant is
// rounded here (JAX rounds 0.999 to float32 when it meets an int32 array); only a cast to a
// wider float sees the full value.
AluExp settled(const AluExp& e) {
  if (!e.is_const() || !is_float(e.dtype())) return e;
  double r = round_to(e.dtype(), e.value());
  return r == e.value() || std::isnan(r) ? e : AluExp::constant(e.dtype(), r);
}

}  // namespace

AluOp AluExp::op() const { return n_->op; }
DType AluExp::dtype() const { return n_->dtype; }
const AluExp& AluExp::src(int i) const { return n_->src[size_t(i)]; }
bool AluExp::is_const(double v) const { return is_const() && n_->value == v; }
double AluExp::value() const { return n_->value; }
int64_t AluExp::vmin() const { return n_->vmin; }
int64_t AluExp::vmax() const { return n_->vmax; }

AluExp AluExp::constant(DType dtype, double value) {
  return make(AluOp::Const, dtype, {}, round_to(dtype, value));
}

AluExp AluExp::weak_constant(DType dtype, double value) {
  return is_float(dtype) ? make(AluOp::Const, dtype, {}, value) : constant(dtype, value);
}

AluExp AluExp::var(VarId id, DType dtype, int64_t max) { return var(id, dtype, 0, max); }

AluExp AluExp::var(VarId id, DType dtype, int64_t min, int64_t max) {
  AluExp e = make(AluOp::Var, dtype, {}, 0, int(id));
  auto* n = const_cast<AluNode*>(e.get());
  n->vmin = min;
  n->vmax = max;
  return e;
}

AluExp AluExp::accumulator(DType dtype) {
  AluExp e = make(AluOp::Var, dtype, {}, 0, int(VarId::Acc));
  auto* n = const_cast<AluNode*>(e.get());
  dtype_range(dtype, &n->vmin, &n->vmax);
  return e;
}

AluExp AluExp::prelude_value(DType dtype) {
  AluExp e = make(AluOp::Var, dtype, {}, 0, int(VarId::Pre));
  auto* n = const_cast<AluNode*>(e.get());
  dtype_range(dtype, &n->vmin, &n->vmax);
  return e;
}

AluExp AluExp::load(DType dtype, int arg, const AluExp& index) {
  return make(AluOp::Load, dtype, {index}, 0, arg);
}

AluExp AluExp::unary(AluOp op, const AluExp& a0) {
  const AluExp a = settled(a0);
  DType dt = op == AluOp::IsNan ? DType::Bool : a.dtype();
  if (a.is_const()) return constant(dt, alu_eval(op, dt, a.dtype(), a.value()));
  if (op == AluOp::Neg && a.op() == AluOp::Neg) return a.src(0);
  if (op == AluOp::Not && a.op() == AluOp::Not) return a.src(0);
  if (op == AluOp::IsNan && !is_float(a.dtype())) return constant(DType::Bool, 0);
  if ((op == AluOp::Floor || op == AluOp::Ceil || op == AluOp::Round || op == AluOp::Trunc) &&
      !is_float(a.dtype()))
    return a;
  return make(op, dt, {a});
}

AluExp AluExp::cast(DType dtype, const AluExp& a) {
  if (a.is_const()) return constant(dtype, alu_eval(AluOp::Cast, dtype, a.dtype(), a.value()));
  if (a.dtype() == dtype) return a;
  return make(AluOp::Cast, dtype, {a});
}

AluExp AluExp::bitcast(DType dtype, const AluExp& a) {
  if (a.dtype() == dtype) return a;
  if (a.is_const()) return constant(dtype, alu_eval(AluOp::Bitcast, dtype, a.dtype(), a.value()));
  return make(AluOp::Bitcast, dtype, {a});
}

AluExp AluExp::binary(AluOp op, const AluExp& a0, const AluExp& b0) {
  AluExp a = settled(a0), b = settled(b0);
  if (a.dtype() != b.dtype() && op != AluOp::Shl && op != AluOp::Shr)
    fail("AluExp", "operands of ", alu_info(op).name, " have dtypes ", dtype_name(a.dtype()),
         " and ", dtype_name(b.dtype()), ", expected equal dtypes");
  DType dt = is_comparison(op) ? DType::Bool : a.dtype();
  if (a.is_const() && b.is_const())
    return constant(dt, alu_eval(op, dt, a.dtype(), a.value(), b.value()));
  if (commutative(op) && a.is_const()) std::swap(a, b);
  const bool exact = !is_float(a.dtype());  // identities that hold for ints and bool only
  switch (op) {
    case AluOp::Add:
      if (exact && b.is_const(0)) return a;
      if (exact && b.is_const() && a.op() == AluOp::Add && a.src(1).is_const())
        return a.src(0) + constant(dt, a.src(1).value() + b.value());
      if (exact && dt == DType::Int32) {
        AluExp r = recombine_divmod(a, b);
        if (r) return r;
      }
      break;
    case AluOp::Sub:
      if (exact && b.is_const(0)) return a;
      if (exact && b.is_const()) return a + constant(dt, -b.value());
      if (exact && a.get() == b.get()) return constant(dt, 0);
      break;
    case AluOp::Mul:
      if (b.is_const(1)) return a;
      if (exact && b.is_const(0)) return b;
      if (exact && b.is_const() && a.op() == AluOp::Mul && a.src(1).is_const())
        return a.src(0) * constant(dt, a.src(1).value() * b.value());
      break;
    case AluOp::Idiv:
    case AluOp::Mod:
      if (exact && dt == DType::Int32 && b.is_const() && b.value() > 0) {
        AluExp s = simplify_divmod(op, a, int64_t(b.value()));
        if (s) return s;
      }
      break;
    case AluOp::Max:
      if (exact && a.vmin() >= b.vmax()) return a;
      if (exact && b.vmin() >= a.vmax()) return b;
      break;
    case AluOp::Min:
      if (exact && a.vmax() <= b.vmin()) return a;
      if (exact && b.vmax() <= a.vmin()) return b;
      break;
    case AluOp::CmpLt:
      if (exact && a.vmax() < b.vmin()) return constant(DType::Bool, 1);
      if (exact && a.vmin() >= b.vmax()) return constant(DType::Bool, 0);
      break;
    case AluOp::CmpLe:
      if (exact && a.vmax() <= b.vmin()) return constant(DType::Bool, 1);
      if (exact && a.vmin() > b.vmax()) return constant(DType::Bool, 0);
      break;
    case AluOp::And:
      if (dt == DType::Bool && b.is_const()) return b.value() != 0 ? a : b;
      break;
    case AluOp::Or:
      if (dt == DType::Bool && b.is_const()) return b.value() != 0 ? b : a;
      break;
    default: break;
  }
  return make(op, dt, {a, b});
}

AluExp AluExp::where(const AluExp& c, const AluExp& a0, const AluExp& b0) {
  // A constant condition selects without computing: the operand passes through unrounded
  // (a masked view of a weak scalar must still widen exactly).
  if (a0.dtype() != b0.dtype())
    fail("AluExp", "where branches have dtypes ", dtype_name(a0.dtype()), " and ",
         dtype_name(b0.dtype()));
  if (c.is_const()) return c.value() != 0 ? a0 : b0;
  const AluExp a = settled(a0), b = settled(b0);
  if (a.get() == b.get()) return a;
  if (a.is_const() && b.is_const() && a.dtype() == DType::Bool)
    return a.value() != 0 ? (b.value() != 0 ? a : c) : (b.value() != 0 ? unary(AluOp::Not, c) : a);
  return make(AluOp::Where, a.dtype(), {c, a, b});
}

namespace {
AluExp rebuild(const AluNode& n, const std::vector<AluExp>& src) {
  switch (alu_info(n.op).arity) {
    case 0: break;
    case 1:
      if (n.op == AluOp::Load) return AluExp::load(n.dtype, n.arg, src[0]);
      if (n.op == AluOp::Cast) return AluExp::cast(n.dtype, src[0]);
      if (n.op == AluOp::Bitcast) return AluExp::bitcast(n.dtype, src[0]);
      return AluExp::unary(n.op, src[0]);
    case 2: return AluExp::binary(n.op, src[0], src[1]);
    case 3: return AluExp::where(src[0], src[1], src[2]);
  }
  return AluExp();
}

AluExp transform(const AluExp& e, const std::function<AluExp(const AluExp&)>& leaf,
                 std::unordered_map<const AluNode*, AluExp>& memo) {
  auto it = memo.find(e.get());
  if (it != memo.end()) return it->second;
  AluExp out = leaf(e);
  if (!out) {
    if (e.node().src.empty()) {
      out = e;
    } else {
      std::vector<AluExp> src;
      bool same = true;
      for (auto& s : e.node().src) {
        src.push_back(transform(s, leaf, memo));
        same = same && src.back().get() == s.get();
      }
      out = same ? e : rebuild(e.node(), src);
    }
  }
  memo[e.get()] = out;
  return out;
}
}  // namespace

AluExp AluExp::with_src(const std::vector<AluExp>& src) const { return rebuild(*n_, src); }

AluExp AluExp::substitute(VarId id, const AluExp& with) const {
  std::unordered_map<const AluNode*, AluExp> memo;
  return transform(
      *this,
      [&](const AluExp& e) { return (e.op() == AluOp::Var && e.node().arg == int(id)) ? with : AluExp(); },
      memo);
}

AluExp AluExp::remap_loads(const std::function<int(int)>& map) const {
  std::unordered_map<const AluNode*, AluExp> memo;
  std::function<AluExp(const AluExp&)> leaf = [&](const AluExp& e) -> AluExp {
    if (e.op() != AluOp::Load) return AluExp();
    return AluExp::load(e.dtype(), map(e.node().arg), transform(e.src(0), leaf, memo));
  };
  return transform(*this, leaf, memo);
}

void AluExp::visit(const std::function<void(const AluNode&)>& fn) const {
  std::unordered_set<const AluNode*> seen;
  std::function<void(const AluExp&)> go = [&](const AluExp& e) {
    if (!seen.insert(e.get()).second) return;
    for (auto& s : e.node().src) go(s);
    fn(e.node());
  };
  go(*this);
}

int AluExp::node_count() const {
  int n = 0;
  visit([&](const AluNode&) { n++; });
  return n;
}

std::string AluExp::to_string() const {
  const AluNode& n = *n_;
  std::ostringstream os;
  auto infix = [&](const char* sym) {
    os << "(" << src(0).to_string() << " " << sym << " " << src(1).to_string() << ")";
  };
  switch (n.op) {
    case AluOp::Const:
      if (n.dtype == DType::Bool) os << (n.value != 0 ? "true" : "false");
      else if (is_float(n.dtype)) os << n.value << "f";
      else os << int64_t(n.value);
      break;
    case AluOp::Var:
      os << (n.arg == int(VarId::Gidx) ? "gidx" : n.arg == int(VarId::Ridx) ? "ridx" : n.arg == int(VarId::Pre) ? "pre" : "acc");
      break;
    case AluOp::Load: os << "in" << n.arg << "[" << src(0).to_string() << "]"; break;
    case AluOp::Add: infix("+"); break;
    case AluOp::Sub: infix("-"); break;
    case AluOp::Mul: infix("*"); break;
    case AluOp::Div: infix("/"); break;
    case AluOp::Idiv: infix("//"); break;
    case AluOp::Mod: infix("%"); break;
    case AluOp::CmpLt: infix("<"); break;
    case AluOp::CmpLe: infix("<="); break;
    case AluOp::CmpEq: infix("=="); break;
    case AluOp::CmpNe: infix("!="); break;
    case AluOp::And: infix("&"); break;
    case AluOp::Or: infix("|"); break;
    case AluOp::Xor: infix("^"); break;
    case AluOp::Cast:
    case AluOp::Bitcast:
      os << alu_info(n.op).name << "<" << dtype_name(n.dtype) << ">(" << src(0).to_string() << ")";
      break;
    default: {
      os << alu_info(n.op).name << "(";
      for (size_t i = 0; i < n.src.size(); i++) os << (i ? ", " : "") << n.src[i].to_string();
      os << ")";
    }
  }
  return os.str();
}

AluExp operator+(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Add, a, b); }
AluExp operator-(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Sub, a, b); }
AluExp operator*(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Mul, a, b); }
AluExp operator/(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Idiv, a, b); }
AluExp operator%(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Mod, a, b); }
AluExp operator<(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::CmpLt, a, b); }
AluExp operator>=(const AluExp& a, const AluExp& b) {
  return AluExp::unary(AluOp::Not, AluExp::binary(AluOp::CmpLt, a, b));
}
AluExp operator&&(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::And, a, b); }
AluExp operator+(const AluExp& a, int64_t b) { return a + AluExp::constant(a.dtype(), double(b)); }
AluExp operator*(const AluExp& a, int64_t b) { return a * AluExp::constant(a.dtype(), double(b)); }
AluExp operator/(const AluExp& a, int64_t b) { return a / AluExp::constant(a.dtype(), double(b)); }
AluExp operator%(const AluExp& a, int64_t b) { return a % AluExp::constant(a.dtype(), double(b)); }

}  // namespace kiln
