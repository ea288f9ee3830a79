// The legalization rules (see legalize.h): each takes a node whose sources are already
// legalized and returns its replacement, or the node itself.
#include "ir/legalize.h"

#include <unordered_map>

#include "ir/float32_math.h"

namespace kiln {

namespace {

AluExp zero_of(DType d) { return AluExp::constant(d, 0); }
AluExp bool_not(const AluExp& a) { return AluExp::unary(AluOp::Not, a); }

// alu_eval on bools is its int rule rounded back to 0/1 (x != 0): a + b and max are a | b,
// a * b, min, a / b and a // b (x / 0 == 0) are a & b, a - b is a ^ b, a % b is 0 (x % 1 == 0,
// x % 0 == 0) and a ** b is 1 for b == 0, else a.
AluExp bool_binary(AluOp op, const AluExp& a, const AluExp& b) {
  switch (op) {
    case AluOp::Add:
    case AluOp::Max: return AluExp::binary(AluOp::Or, a, b);
    case AluOp::Mul:
    case AluOp::Min:
    case AluOp::Div:
    case AluOp::Idiv: return AluExp::binary(AluOp::And, a, b);
    case AluOp::Sub: return AluExp::binary(AluOp::Xor, a, b);
    case AluOp::Mod: return zero_of(DType::Bool);
    case AluOp::Pow: return AluExp::binary(AluOp::Or, a, bool_not(b));
    default: return AluExp();
  }
}

// -a, 1 / a (1 / 0 == 0) and sqrt(a) of 0 or 1 are a.
bool bool_unary_is_identity(AluOp op) { return op == AluOp::Neg || op == AluOp::Recip || op == AluOp::Sqrt; }

// b < a and a <= b on bools as logic: 0 < 1 is the only true strict order.
AluExp bool_order(AluOp op, const AluExp& a, const AluExp& b) {
  if (op == AluOp::CmpLt) return AluExp::binary(AluOp::And, bool_not(a), b);
  return AluExp::binary(AluOp::Or, bool_not(a), b);
}

AluExp rule(const AluExp& e, const LegalizeOptions& opts) {
  const AluOp op = e.op();
  const int arity = alu_info(op).arity;
  if (opts.expand_float32_math && e.dtype() == DType::Float32) {
    if (op == AluOp::Exp) return expand_exp_f32(e.src(0));
    if (op == AluOp::Tanh) return expand_tanh_f32(e.src(0));
  }
  if (op == AluOp::Cast && e.dtype() == DType::Bool)  // NaN != 0 is true, as the cast
    return AluExp::binary(AluOp::CmpNe, e.src(0), zero_of(e.src(0).dtype()));
  if (op == AluOp::Where && e.src(0).dtype() != DType::Bool)
    return AluExp::where(AluExp::binary(AluOp::CmpNe, e.src(0), zero_of(e.src(0).dtype())), e.src(1), e.src(2));
  if (op == AluOp::Load || op == AluOp::Cast || op == AluOp::Bitcast || arity == 0) return e;
  if (arity == 1 && e.dtype() == DType::Bool && bool_unary_is_identity(op)) return e.src(0);
  if (arity != 2 || e.src(0).dtype() != DType::Bool || op == AluOp::Shl || op == AluOp::Shr) return e;
  if (opts.bool_order_as_logic && (op == AluOp::CmpLt || op == AluOp::CmpLe))
    return bool_order(op, e.src(0), e.src(1));
  if (e.dtype() != DType::Bool) return e;  // other comparisons
  AluExp r = bool_binary(op, e.src(0), e.src(1));
  return r ? r : e;
}

class Legalizer {
 public:
  explicit Legalizer(const LegalizeOptions& opts) : opts_(opts) {}

  AluExp run(const AluExp& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    std::vector<AluExp> src;
    bool same = true;
    for (auto& s : e.node().src) {
      src.push_back(run(s));
      same = same && src.back().get() == s.get();
    }
    AluExp out = rule(same ? e : e.with_src(src), opts_);
    memo_[e.get()] = out;
    return out;
  }

 private:
  const LegalizeOptions& opts_;
  std::unordered_map<const AluNode*, AluExp> memo_;
};

}  // namespace

AluExp legalize(const AluExp& e, const LegalizeOptions& opts) { return Legalizer(opts).run(e); }

Kernel legalize(const Kernel& k, const LegalizeOptions& opts) {
  Kernel out = k;
  Legalizer l(opts);
  out.exp = l.run(k.exp);
  if (out.reduction) {
    out.reduction->op = legal_reduce_op(k.reduction->op, k.exp.dtype());
    out.reduction->epilogue = l.run(k.reduction->epilogue);
  }
  if (out.prelude) {
    out.prelude->op = legal_reduce_op(k.prelude->op, k.prelude->exp.dtype());
    out.prelude->exp = l.run(k.prelude->exp);
    out.prelude->value = l.run(k.prelude->value);
  }
  return out;
}

AluOp legal_reduce_op(AluOp op, DType dtype) {
  if (dtype != DType::Bool) return op;
  if (op == AluOp::Add || op == AluOp::Max) return AluOp::Or;
  if (op == AluOp::Mul || op == AluOp::Min) return AluOp::And;
  return op;
}

bool is_index_divmod(AluOp op, DType dt, int64_t dividend_vmin, bool divisor_is_const, double divisor) {
  if (op != AluOp::Idiv && op != AluOp::Mod) return false;
  return (dt == DType::Int32 || dt == DType::Uint32) && divisor_is_const && divisor > 0 && dividend_vmin >= 0;
}

}  // namespace kiln
