// Tests of ir/legalize: every rewrite agrees with the original expression under alu_eval for
// every input it can see (bools exhaustively, casts and conditions on special values), and
// the legalized expression holds none of the ops the pass promises to remove.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ir/legalize.h"

namespace legalize_test {

namespace {

using kiln::AluExp;
using kiln::AluNode;
using kiln::AluOp;
using kiln::DType;

// alu_eval over the tree, Load arg i reading in[i] (the interpreter's semantics, unscheduled).
double eval(const AluExp& e, const std::vector<double>& in) {
  const AluNode& n = e.node();
  if (n.op == AluOp::Const) return n.value;
  if (n.op == AluOp::Load) return in[size_t(n.arg)];
  double v[3] = {0, 0, 0};
  for (size_t i = 0; i < n.src.size(); i++) v[i] = eval(n.src[i], in);
  return kiln::alu_eval(n.op, n.dtype, n.src[0].dtype(), v[0], v[1], v[2]);
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Whether e computes arithmetic (anything but logic, comparisons, Where) on a bool.
bool has_bool_arithmetic(const AluExp& e) {
  bool found = false;
  e.visit([&](const AluNode& n) {
    if (n.src.empty() || n.op == AluOp::Load || n.op == AluOp::Not || n.op == AluOp::And ||
        n.op == AluOp::Or || n.op == AluOp::Xor || n.op == AluOp::Where || kiln::is_comparison(n.op))
      return;
    if (n.src[0].dtype() == DType::Bool && n.dtype == DType::Bool) found = true;
  });
  return found;
}

void expect_equal_on(const AluExp& before, const AluExp& after, const std::vector<std::vector<double>>& inputs) {
  for (auto& in : inputs) {
    double want = eval(before, in), got = eval(after, in);
    EXPECT_TRUE(same_value(want, got)) << before.to_string() << " -> " << after.to_string() << " at " << in[0]
                                       << ", " << (in.size() > 1 ? in[1] : 0) << ": " << want << " vs " << got;
  }
}

const std::vector<std::vector<double>> kBoolPairs = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};

TEST(Legalize, BoolArithmeticBecomesLogicOnEveryInput) {
  AluExp a = AluExp::load(DType::Bool, 0, AluExp::idx(0)), b = AluExp::load(DType::Bool, 1, AluExp::idx(0));
  int rewritten = 0;
  for (int o = int(AluOp::Neg); o <= int(AluOp::Shr); o++) {
    const AluOp op = AluOp(o);
    if (op == AluOp::Cast || op == AluOp::Bitcast || op == AluOp::Shl || op == AluOp::Shr) continue;
    AluExp e = kiln::alu_info(op).arity == 1 ? AluExp::unary(op, a) : AluExp::binary(op, a, b);
    AluExp l = kiln::legalize(e);
    expect_equal_on(e, l, kBoolPairs);
    rewritten += l.get() != e.get();
    const bool promised = op == AluOp::Neg || op == AluOp::Recip || op == AluOp::Sqrt || op == AluOp::Add ||
                          op == AluOp::Sub || op == AluOp::Mul || op == AluOp::Div || op == AluOp::Idiv ||
                          op == AluOp::Mod || op == AluOp::Pow || op == AluOp::Max || op == AluOp::Min;
    if (promised) {
      EXPECT_FALSE(has_bool_arithmetic(l)) << kiln::alu_info(op).name << ": " << l.to_string();
    }
  }
  EXPECT_EQ(rewritten, 12);
}

TEST(Legalize, BoolOrderAsLogicOnlyWhenAsked) {
  AluExp a = AluExp::load(DType::Bool, 0, AluExp::idx(0)), b = AluExp::load(DType::Bool, 1, AluExp::idx(0));
  kiln::LegalizeOptions logic;
  logic.bool_order_as_logic = true;
  for (AluOp op : {AluOp::CmpLt, AluOp::CmpLe}) {
    AluExp e = AluExp::binary(op, a, b);
    EXPECT_EQ(kiln::legalize(e).get(), e.get());
    AluExp l = kiln::legalize(e, logic);
    expect_equal_on(e, l, kBoolPairs);
    bool compares = false;
    l.visit([&](const AluNode& n) { compares |= n.op == op; });
    EXPECT_FALSE(compares) << l.to_string();
  }
}

std::vector<std::vector<double>> special_values(DType d) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (d) {
    case DType::Int32: return {{0}, {1}, {-1}, {7}, {-2147483648.0}, {2147483647.0}};
    case DType::Uint32: return {{0}, {1}, {7}, {4294967295.0}};
    case DType::Bool: return {{0}, {1}};
    default: return {{0.0}, {-0.0}, {1.5}, {-2.0}, {inf}, {-inf}, {std::nan("")}, {1e-40}};
  }
}

TEST(Legalize, CastToBoolAndNumericConditionsCompareWithZero) {
  for (DType d : {DType::Int32, DType::Uint32, DType::Float16, DType::Float32, DType::Float64}) {
    SCOPED_TRACE(kiln::dtype_name(d));
    AluExp x = AluExp::load(d, 0, AluExp::idx(0));
    AluExp cast = AluExp::cast(DType::Bool, x);
    AluExp l = kiln::legalize(cast);
    EXPECT_EQ(l.op(), AluOp::CmpNe);
    expect_equal_on(cast, l, special_values(d));
    AluExp sel = AluExp::where(x, AluExp::constant(DType::Float32, 2), AluExp::constant(DType::Float32, 3));
    AluExp ls = kiln::legalize(sel);
    EXPECT_EQ(ls.src(0).dtype(), DType::Bool);
    expect_equal_on(sel, ls, special_values(d));
  }
}

// float32 exp and tanh become kiln's float32 steps (ir/float32_math.h), equal under alu_eval;
// other dtypes, and WGSL's kernels, keep the op.
TEST(Legalize, Float32ExpAndTanhExpandToTheirSteps) {
  for (AluOp op : {AluOp::Exp, AluOp::Tanh}) {
    AluExp x = AluExp::load(DType::Float32, 0, AluExp::idx(0));
    AluExp e = AluExp::unary(op, x);
    AluExp l = kiln::legalize(e);
    EXPECT_NE(l.op(), op);
    // A float32 load reads float32 values (special_values has doubles such as 1e-40).
    std::vector<std::vector<double>> in = special_values(DType::Float32);
    for (auto& v : in) v[0] = double(float(v[0]));
    for (float v : {0.3f, -0.7f, 5.0f, -60.0f, 88.72f, -103.9f, 1e-4f}) in.push_back({double(v)});
    expect_equal_on(e, l, in);
    EXPECT_EQ(kiln::legalize(e, kiln::LegalizeOptions{.expand_float32_math = false}).get(), e.get());
    for (DType d : {DType::Float16, DType::Float64}) {
      AluExp other = AluExp::unary(op, AluExp::load(d, 0, AluExp::idx(0)));
      EXPECT_EQ(kiln::legalize(other).get(), other.get());
    }
  }
}

TEST(Legalize, KeepsUntouchedSubtreesAndMapsBoolReductions) {
  AluExp x = AluExp::load(DType::Float32, 0, AluExp::var(kiln::VarId::Gidx, DType::Int32, 9));
  AluExp body = AluExp::binary(AluOp::Max, AluExp::unary(AluOp::Sqrt, x), x);
  EXPECT_EQ(kiln::legalize(body).get(), body.get());  // nothing to rewrite: the same node
  kiln::Kernel k;
  k.inputs = {DType::Bool};
  k.size = 4;
  k.exp = AluExp::load(DType::Bool, 0, AluExp::var(kiln::VarId::Ridx, DType::Int32, 2));
  const AluExp acc = AluExp::var(kiln::VarId::Acc, DType::Bool, 1);
  for (auto [op, want] : {std::pair{AluOp::Add, AluOp::Or}, {AluOp::Max, AluOp::Or}, {AluOp::Mul, AluOp::And},
                          {AluOp::Min, AluOp::And}}) {
    k.reduction = kiln::Reduction{op, 3, AluExp::binary(AluOp::Add, acc, acc)};
    kiln::Kernel l = kiln::legalize(k);
    EXPECT_EQ(l.reduction->op, want);
    EXPECT_EQ(l.reduction->epilogue.op(), AluOp::Or);
    EXPECT_EQ(kiln::Reduction::identity(want, DType::Bool), kiln::Reduction::identity(op, DType::Bool));
  }
}

TEST(Legalize, IndexDivmodNeedsANonNegativeDividendAndPositiveConstant) {
  AluExp g = AluExp::var(kiln::VarId::Gidx, DType::Int32, 99);
  AluExp neg = g + AluExp::idx(-50);
  EXPECT_TRUE(kiln::is_index_divmod(AluOp::Idiv, g, AluExp::idx(7)));
  EXPECT_TRUE(kiln::is_index_divmod(AluOp::Mod, g, AluExp::idx(7)));
  EXPECT_FALSE(kiln::is_index_divmod(AluOp::Mod, neg, AluExp::idx(7)));
  EXPECT_FALSE(kiln::is_index_divmod(AluOp::Idiv, g, AluExp::idx(-7)));
  EXPECT_FALSE(kiln::is_index_divmod(AluOp::Idiv, g, g));
  AluExp u = AluExp::load(DType::Uint32, 0, g);
  EXPECT_TRUE(kiln::is_index_divmod(AluOp::Mod, u, AluExp::constant(DType::Uint32, 3)));
}

}  // namespace

}  // namespace legalize_test
