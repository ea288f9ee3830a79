// The AluExp forms of float32_math.h's exp_f32 and tanh_f32: the same steps in the same order,
// so that alu_eval of the expansion equals the scalar function bit for bit.
#include "ir/float32_math.h"

#include "ir/alu_exp.h"

namespace kiln {

namespace {

using namespace float32_math;

AluExp f32(float v) { return AluExp::constant(DType::Float32, double(v)); }
AluExp i32(int32_t v) { return AluExp::constant(DType::Int32, double(v)); }
AluExp add(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Add, a, b); }
AluExp sub(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Sub, a, b); }
AluExp mul(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::Mul, a, b); }
AluExp less(const AluExp& a, const AluExp& b) { return AluExp::binary(AluOp::CmpLt, a, b); }

AluExp pow2(const AluExp& k) {
  const AluExp bits = mul(add(AluExp::cast(DType::Int32, k), i32(127)), i32(8388608));
  return AluExp::bitcast(DType::Float32, bits);
}

}  // namespace

AluExp expand_exp_f32(const AluExp& x) {
  const AluExp xc = AluExp::where(less(x, f32(kExpLo)), f32(0.0f), AluExp::where(less(f32(kExpHi), x), f32(0.0f), x));
  const AluExp n = AluExp::unary(AluOp::Round, mul(xc, f32(kLog2e)));
  const AluExp r = sub(sub(xc, mul(n, f32(kLn2Hi))), mul(n, f32(kLn2Lo)));
  AluExp p = f32(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = add(mul(p, r), f32(kExpPoly[i]));
  p = add(add(mul(p, mul(r, r)), r), f32(1.0f));
  const AluExp a = AluExp::unary(AluOp::Floor, mul(n, f32(0.5f)));
  const AluExp y = mul(mul(p, pow2(a)), pow2(sub(n, a)));
  return AluExp::where(less(f32(kExpHi), x), f32(std::numeric_limits<float>::infinity()),
                       AluExp::where(less(x, f32(kExpLo)), f32(0.0f), y));
}

AluExp expand_tanh_f32(const AluExp& x) {
  const AluExp z = mul(x, x);
  AluExp s = f32(kTanhPoly[0]);
  for (int i = 1; i < 5; ++i) s = add(mul(s, z), f32(kTanhPoly[i]));
  const AluExp negative = less(x, f32(0.0f));
  const AluExp ax = AluExp::where(negative, AluExp::unary(AluOp::Neg, x), x);
  const AluExp small = AluExp::where(less(ax, f32(kTanhTiny)), x, add(mul(mul(s, z), x), x));
  const AluExp large = sub(f32(1.0f), AluExp::binary(AluOp::Div, f32(2.0f),
                                                     add(expand_exp_f32(mul(ax, f32(2.0f))), f32(1.0f))));
  return AluExp::where(less(ax, f32(kTanhSmall)), small,
                       AluExp::where(negative, AluExp::unary(AluOp::Neg, large), large));
}

}  // namespace kiln
