// The jvp rule of every primitive, in one table keyed by Prim. Tangents are computed
// linearly (primal factors times tangents) so that linearize can transpose them.
#include <cmath>
#include <numeric>

#include "frontend/jvp.h"
#include "frontend/routine.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

namespace {

using namespace ops;
using Arrays = std::vector<Array>;
using Out = std::pair<Array, Array>;

Array k(const Array& like, double v) { return full_like(like, v); }
Array sq(const Array& x) { return mul(x, x); }
Array recip(const Array& x) { return unary(Prim::Recip, x); }

// d(x, y) is f'(x) given the primal output y; the tangent is t * f'(x).
JvpRule unary_rule(Prim p, std::function<Array(const Array&, const Array&)> d) {
  return [p, d](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(p, x, prm);
    if (!t[0].valid()) return {y, Array()};
    return {y, mul(t[0], d(x[0], y))};
  };
}

// Piecewise-constant and integer-valued primitives: the tangent is zero.
JvpRule zero_rule(Prim p) {
  return [p](const Arrays& x, const Arrays&, const Params& prm) -> Out {
    return {frontend::bind(p, x, prm), Array()};
  };
}

// Primitives linear in their first operand (movement, sums, gathers): the tangent is the
// same primitive applied to the tangent, the other operands (indices) unchanged.
JvpRule linear_rule(Prim p) {
  return [p](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(p, x, prm);
    if (!t[0].valid()) return {y, Array()};
    Arrays args = x;
    args[0] = t[0];
    return {y, frontend::bind(p, args, prm)};
  };
}

// max/min: the tangent of the selected operand; ties split it evenly, as JAX does.
JvpRule minmax_rule(Prim p) {
  return [p](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(p, x, prm);
    const Array &a = x[0], &b = x[1];
    Array a_wins = p == Prim::Max ? binary(Prim::CmpLt, b, a) : binary(Prim::CmpLt, a, b);
    Array b_wins = p == Prim::Max ? binary(Prim::CmpLt, a, b) : binary(Prim::CmpLt, b, a);
    Array tie = binary(Prim::CmpEq, a, b);
    auto share = [&](const Array& wins) {
      return where(wins, k(y, 1), where(tie, k(y, 0.5), k(y, 0)));
    };
    Array ta = t[0].valid() ? mul(t[0], share(a_wins)) : Array();
    Array tb = t[1].valid() ? mul(t[1], share(b_wins)) : Array();
    return {y, add_any(ta, tb)};
  };
}

Out pow_jvp(const Arrays& x, const Arrays& t, const Params& prm) {
  Array y = frontend::bind(Prim::Pow, x, prm);
  const Array &a = x[0], &b = x[1];
  Array ta, tb;
  if (t[0].valid()) {
    // b * a^(b-1), defined as 0 where b == 0 (so 0^0 has derivative 0, as JAX).
    Array d = mul(b, frontend::bind(Prim::Pow, {a, sub(b, k(b, 1))}));
    ta = mul(t[0], where(binary(Prim::CmpEq, b, k(b, 0)), k(y, 0), d));
  }
  if (t[1].valid()) {
    // log(a) * a^b with log(0) replaced by 0, so 0^b has a finite b-derivative.
    Array safe = where(binary(Prim::CmpEq, a, k(a, 0)), k(a, 1), a);
    tb = mul(t[1], mul(unary(Prim::Log, safe), y));
  }
  return {y, add_any(ta, tb)};
}

// Products of all other elements along the reduced axes: an n x n table with the
// diagonal replaced by ones, reduced. Exact at zeros (unlike prod / x) and built from
// primitives only, so it differentiates again.
Out reduce_prod_jvp(const Arrays& x, const Arrays& t, const Params& prm) {
  Array y = frontend::bind(Prim::ReduceProd, x, prm);
  if (!t[0].valid()) return {y, Array()};
  const Shape& s = x[0].shape();
  std::vector<int> perm, red = prm.axes;
  Shape kept;
  int64_t n = 1;
  for (int i = 0; i < int(s.size()); i++)
    if (std::find(red.begin(), red.end(), i) == red.end()) {
      perm.push_back(i);
      kept.push_back(s[size_t(i)]);
    }
  for (int i : red) {
    perm.push_back(i);
    n *= s[size_t(i)];
  }
  Shape flat = kept;
  flat.push_back(n);
  Array xf = reshape(transpose(x[0], perm), flat);
  Array tf = reshape(transpose(t[0], perm), flat);
  const int r = int(kept.size());
  Shape sq_shape = kept, row = kept;
  sq_shape.insert(sq_shape.end(), {n, n});
  row.insert(row.end(), {1, n});
  Array table = expand(reshape(xf, row), sq_shape);
  Array diag =
      binary(Prim::CmpEq, iota(sq_shape, r, x[0].device()), iota(sq_shape, r + 1, x[0].device()));
  Array others = reduce(Prim::ReduceProd, where(diag, k(table, 1), table), {r + 1});
  return {y, reduce_sum(mul(tf, others), {r})};
}

// max/min reductions: the tangent averaged over the positions that attain the extreme.
JvpRule reduce_chooser_rule(Prim p) {
  return [p](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(p, x, prm);
    if (!t[0].valid()) return {y, Array()};
    Array hit = binary(Prim::CmpEq, x[0], unreduce(y, x[0].shape(), prm.axes));
    Array ones = where(hit, k(x[0], 1), k(x[0], 0));
    Array count = reduce_sum(ones, prm.axes);
    return {y, div(reduce_sum(mul(t[0], ones), prm.axes), count)};
  };
}

std::vector<JvpRule> build_table() {
  std::vector<JvpRule> r(kNumPrims);
  auto set = [&](Prim p, JvpRule f) { r[size_t(p)] = std::move(f); };
  const double ln2 = std::log(2.0);
  set(Prim::Neg, linear_rule(Prim::Neg));
  set(Prim::Recip,
      unary_rule(Prim::Recip, [](const Array&, const Array& y) { return neg(sq(y)); }));
  set(Prim::Sqrt,
      unary_rule(Prim::Sqrt, [](const Array&, const Array& y) { return div(k(y, 0.5), y); }));
  set(Prim::Exp, unary_rule(Prim::Exp, [](const Array&, const Array& y) { return y; }));
  set(Prim::Exp2,
      unary_rule(Prim::Exp2, [ln2](const Array&, const Array& y) { return mul(y, k(y, ln2)); }));
  set(Prim::Expm1,
      unary_rule(Prim::Expm1, [](const Array&, const Array& y) { return add(y, k(y, 1)); }));
  set(Prim::Log, unary_rule(Prim::Log, [](const Array& x, const Array&) { return recip(x); }));
  set(Prim::Log2, unary_rule(Prim::Log2, [ln2](const Array& x, const Array&) {
        return recip(mul(x, k(x, ln2)));
      }));
  set(Prim::Log1p,
      unary_rule(Prim::Log1p, [](const Array& x, const Array&) { return recip(add(x, k(x, 1))); }));
  set(Prim::Sin,
      unary_rule(Prim::Sin, [](const Array& x, const Array&) { return unary(Prim::Cos, x); }));
  set(Prim::Cos,
      unary_rule(Prim::Cos, [](const Array& x, const Array&) { return neg(unary(Prim::Sin, x)); }));
  set(Prim::Tan,
      unary_rule(Prim::Tan, [](const Array&, const Array& y) { return add(k(y, 1), sq(y)); }));
  set(Prim::Asin, unary_rule(Prim::Asin, [](const Array& x, const Array&) {
        return recip(unary(Prim::Sqrt, sub(k(x, 1), sq(x))));
      }));
  set(Prim::Acos, unary_rule(Prim::Acos, [](const Array& x, const Array&) {
        return neg(recip(unary(Prim::Sqrt, sub(k(x, 1), sq(x)))));
      }));
  set(Prim::Atan, unary_rule(Prim::Atan, [](const Array& x, const Array&) {
        return recip(add(k(x, 1), sq(x)));
      }));
  set(Prim::Sinh,
      unary_rule(Prim::Sinh, [](const Array& x, const Array&) { return unary(Prim::Cosh, x); }));
  set(Prim::Cosh,
      unary_rule(Prim::Cosh, [](const Array& x, const Array&) { return unary(Prim::Sinh, x); }));
  set(Prim::Tanh,
      unary_rule(Prim::Tanh, [](const Array&, const Array& y) { return sub(k(y, 1), sq(y)); }));
  set(Prim::Asinh, unary_rule(Prim::Asinh, [](const Array& x, const Array&) {
        return recip(unary(Prim::Sqrt, add(sq(x), k(x, 1))));
      }));
  // sqrt(x-1)*sqrt(x+1) rather than sqrt(x*x-1): no cancellation near x = 1.
  set(Prim::Acosh, unary_rule(Prim::Acosh, [](const Array& x, const Array&) {
        return recip(mul(unary(Prim::Sqrt, sub(x, k(x, 1))), unary(Prim::Sqrt, add(x, k(x, 1)))));
      }));
  set(Prim::Atanh, unary_rule(Prim::Atanh, [](const Array& x, const Array&) {
        return recip(sub(k(x, 1), sq(x)));
      }));
  set(Prim::Erf, unary_rule(Prim::Erf, [](const Array& x, const Array&) {
        return mul(k(x, 2 / std::sqrt(M_PI)), unary(Prim::Exp, neg(sq(x))));
      }));
  for (Prim p : {Prim::Floor, Prim::Ceil, Prim::Round, Prim::Trunc, Prim::Not, Prim::IsNan,
                 Prim::Idiv, Prim::CmpLt, Prim::CmpLe, Prim::CmpEq, Prim::CmpNe, Prim::And,
                 Prim::Or, Prim::Xor, Prim::Shl, Prim::Shr, Prim::Bitcast})
    set(p, zero_rule(p));
  set(Prim::Add, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    return {frontend::bind(Prim::Add, x, prm), add_any(t[0], t[1])};
  });
  set(Prim::Sub, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    return {frontend::bind(Prim::Sub, x, prm), add_any(t[0], neg_any(t[1]))};
  });
  set(Prim::Mul, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array ta = t[0].valid() ? mul(t[0], x[1]) : Array();
    Array tb = t[1].valid() ? mul(x[0], t[1]) : Array();
    return {frontend::bind(Prim::Mul, x, prm), add_any(ta, tb)};
  });
  set(Prim::Div, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(Prim::Div, x, prm);
    Array ta = t[0].valid() ? div(t[0], x[1]) : Array();
    Array tb = t[1].valid() ? neg(div(mul(t[1], y), x[1])) : Array();
    return {y, add_any(ta, tb)};
  });
  // a mod b = a - b * floor(a / b).
  set(Prim::Mod, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(Prim::Mod, x, prm);
    Array tb = t[1].valid() ? neg(mul(t[1], unary(Prim::Floor, div(x[0], x[1])))) : Array();
    return {y, add_any(t[0], tb)};
  });
  set(Prim::Pow, pow_jvp);
  set(Prim::Atan2, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array z = frontend::bind(Prim::Atan2, x, prm);
    const Array &y = x[0], &xx = x[1];
    Array denom = add(sq(xx), sq(y));
    Array ty = t[0].valid() ? mul(t[0], div(xx, denom)) : Array();
    Array tx = t[1].valid() ? neg(mul(t[1], div(y, denom))) : Array();
    return {z, add_any(ty, tx)};
  });
  // d/da logaddexp(a, b) = exp(a - y), with +inf read as 0 first so that a = y = +inf
  // gives weight 1 instead of NaN (JAX's rule; -inf operands keep weight 0).
  set(Prim::Logaddexp, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(Prim::Logaddexp, x, prm);
    auto posinf_to_zero = [](const Array& v) { return where(binary(Prim::CmpEq, v, k(v, INFINITY)), k(v, 0), v); };
    auto weight = [&](const Array& v) { return unary(Prim::Exp, sub(posinf_to_zero(v), posinf_to_zero(y))); };
    Array ta = t[0].valid() ? mul(t[0], weight(x[0])) : Array();
    Array tb = t[1].valid() ? mul(t[1], weight(x[1])) : Array();
    return {y, add_any(ta, tb)};
  });
  set(Prim::Max, minmax_rule(Prim::Max));
  set(Prim::Min, minmax_rule(Prim::Min));
  set(Prim::Where, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(Prim::Where, x, prm);
    if (!t[1].valid() && !t[2].valid()) return {y, Array()};
    return {y, where(x[0], instantiate(t[1], x[1]), instantiate(t[2], x[2]))};
  });
  set(Prim::Cast, [](const Arrays& x, const Arrays& t, const Params& prm) -> Out {
    Array y = frontend::bind(Prim::Cast, x, prm);
    if (!t[0].valid() || !is_float(x[0].dtype()) || !is_float(prm.dtype)) return {y, Array()};
    return {y, frontend::bind(Prim::Cast, {t[0]}, prm)};
  });
  set(Prim::ReduceSum, linear_rule(Prim::ReduceSum));
  set(Prim::ReduceProd, reduce_prod_jvp);
  set(Prim::ReduceMax, reduce_chooser_rule(Prim::ReduceMax));
  set(Prim::ReduceMin, reduce_chooser_rule(Prim::ReduceMin));
  for (Prim p : {Prim::Reshape, Prim::Transpose, Prim::Expand, Prim::Pad, Prim::Shrink, Prim::Flip,
                 Prim::Stride, Prim::Window, Prim::Gather})
    set(p, linear_rule(p));
  set(Prim::QuantizedMatmul, quantized_matmul_jvp);
  set(Prim::DecodeAttention, decode_attention_jvp);
  return r;
}

const std::vector<JvpRule>& table() {
  static const std::vector<JvpRule> t = [] {
    auto r = build_table();
    check_rule_table("jvp", r, [](Prim) { return true; });
    return r;
  }();
  return t;
}

}  // namespace

bool has_jvp_rule(Prim p) { return bool(table()[size_t(p)]); }

const JvpRule& jvp_rule(Prim p) {
  const JvpRule& r = table()[size_t(p)];
  if (!r) fail("jvp", "primitive ", prim_name(p), " has no jvp rule");
  return r;
}

}  // namespace kiln::frontend
