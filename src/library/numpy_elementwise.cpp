// numpy elementwise functions: broadcasting and JAX promotion, then one primitive (or a
// short composition of them) per function.
#include <cmath>

#include "library/array_args.h"

namespace kiln::numpy {

using namespace detail;

namespace {

Array binary(const char* op, Prim p, const Array& a, const Array& b) {
  auto args = promote_broadcast(op, {a, b});
  return bind2(p, args[0], args[1]);
}

// Unary functions defined on floats: ints and bool become float32 (weak stays weak).
Array to_inexact(const Array& a) {
  return is_float(a.dtype()) ? a : cast(a, DType::Float32, a.weak_type());
}

Array float_unary(Prim p, const Array& a) { return bind1(p, to_inexact(a)); }

std::vector<Array> inexact_pair(const char* op, const Array& a, const Array& b) {
  auto args = promote_broadcast(op, {a, b});
  if (!is_float(args[0].dtype())) {
    bool w = args[0].weak_type();
    for (auto& x : args) x = cast(x, DType::Float32, w);
  }
  return args;
}

Array scalar_like(const Array& a, double v) {
  return constant(a.shape(), a.dtype(), v, a.device(), a.weak_type());
}

// Bool arithmetic follows NumPy/JAX: + is or, * is and; other ops compute in int32.
std::vector<Array> numeric_pair(const char* op, const Array& a, const Array& b) {
  auto args = promote_broadcast(op, {a, b});
  if (args[0].dtype() == DType::Bool)
    for (auto& x : args) x = cast(x, DType::Int32, false);
  return args;
}

}  // namespace

Array add(const Array& a, const Array& b) {
  return with_name("add", [&]() -> Array {
    auto args = promote_broadcast("add", {a, b});
    return bind2(args[0].dtype() == DType::Bool ? Prim::Or : Prim::Add, args[0], args[1]);
  });
}
Array subtract(const Array& a, const Array& b) {
  return with_name("subtract", [&]() -> Array {
    auto args = promote_broadcast("subtract", {a, b});
    if (args[0].dtype() == DType::Bool)
      fail("subtract", "got bool operands, expected numeric ones (use logical_xor for booleans)");
    return bind2(Prim::Sub, args[0], args[1]);
  });
}
Array multiply(const Array& a, const Array& b) {
  return with_name("multiply", [&]() -> Array {
    auto args = promote_broadcast("multiply", {a, b});
    return bind2(args[0].dtype() == DType::Bool ? Prim::And : Prim::Mul, args[0], args[1]);
  });
}
Array divide(const Array& a, const Array& b) {
  return with_name("divide", [&]() -> Array {
    auto args = inexact_pair("divide", a, b);
    return bind2(Prim::Div, args[0], args[1]);
  });
}
Array true_divide(const Array& a, const Array& b) {
  return with_name("true_divide", [&]() -> Array { return divide(a, b); });
}
Array floor_divide(const Array& a, const Array& b) {
  return with_name("floor_divide", [&]() -> Array {
    auto args = numeric_pair("floor_divide", a, b);
    return bind2(Prim::Idiv, args[0], args[1]);
  });
}
Array mod(const Array& a, const Array& b) {
  return with_name("mod", [&]() -> Array {
    auto args = numeric_pair("mod", a, b);
    return bind2(Prim::Mod, args[0], args[1]);
  });
}
Array remainder(const Array& a, const Array& b) {
  return with_name("remainder", [&]() -> Array { return mod(a, b); });
}
Array power(const Array& a, const Array& b) {
  return with_name("power", [&]() -> Array {
    auto args = numeric_pair("power", a, b);
    return bind2(Prim::Pow, args[0], args[1]);
  });
}
Array negative(const Array& a) {
  return with_name("negative", [&]() -> Array {
    if (a.dtype() == DType::Bool) fail("negative", "got a bool array, expected a numeric one");
    return bind1(Prim::Neg, a);
  });
}
Array positive(const Array& a) {
  return with_name("positive", [&]() -> Array { return a; });
}
Array abs(const Array& a) {
  return with_name("abs", [&]() -> Array {
    if (a.dtype() == DType::Bool || a.dtype() == DType::Uint32) return a;
    // 0 - x (not -x) so that abs(-0.0) is +0.0.
    Array zero = scalar_like(a, 0);
    return where(less_equal(a, zero), bind2(Prim::Sub, zero, a), a);
  });
}
Array absolute(const Array& a) {
  return with_name("absolute", [&]() -> Array { return abs(a); });
}
Array sign(const Array& a) {
  return with_name("sign", [&]() -> Array {
    if (a.dtype() == DType::Bool) return a;
    Array zero = scalar_like(a, 0), one = scalar_like(a, 1);
    Array pos = where(greater(a, zero), one, a.dtype() == DType::Uint32 ? zero : a);
    if (a.dtype() == DType::Uint32) return pos;
    return where(less(a, zero), scalar_like(a, -1), pos);
  });
}
Array exp(const Array& a) {
  return with_name("exp", [&]() -> Array { return float_unary(Prim::Exp, a); });
}
Array exp2(const Array& a) {
  return with_name("exp2", [&]() -> Array { return float_unary(Prim::Exp2, a); });
}
Array expm1(const Array& a) {
  return with_name("expm1", [&]() -> Array { return float_unary(Prim::Expm1, a); });
}
Array log(const Array& a) {
  return with_name("log", [&]() -> Array { return float_unary(Prim::Log, a); });
}
Array log1p(const Array& a) {
  return with_name("log1p", [&]() -> Array { return float_unary(Prim::Log1p, a); });
}
Array log2(const Array& a) {
  return with_name("log2", [&]() -> Array { return float_unary(Prim::Log2, a); });
}
Array log10(const Array& a) {
  return with_name("log10", [&]() -> Array {
    Array x = to_inexact(a);
    return bind2(Prim::Mul, bind1(Prim::Log, x), scalar_like(x, 1.0 / std::log(10.0)));
  });
}
Array sqrt(const Array& a) {
  return with_name("sqrt", [&]() -> Array { return float_unary(Prim::Sqrt, a); });
}
Array rsqrt(const Array& a) {
  return with_name("rsqrt", [&]() -> Array { return bind1(Prim::Recip, sqrt(a)); });
}
Array square(const Array& a) {
  return with_name("square", [&]() -> Array {
    if (a.dtype() == DType::Bool) return a;
    return bind2(Prim::Mul, a, a);
  });
}
Array reciprocal(const Array& a) {
  return with_name("reciprocal", [&]() -> Array { return float_unary(Prim::Recip, a); });
}
Array sin(const Array& a) {
  return with_name("sin", [&]() -> Array { return float_unary(Prim::Sin, a); });
}
Array cos(const Array& a) {
  return with_name("cos", [&]() -> Array { return float_unary(Prim::Cos, a); });
}
Array tan(const Array& a) {
  return with_name("tan", [&]() -> Array { return float_unary(Prim::Tan, a); });
}
Array arcsin(const Array& a) {
  return with_name("arcsin", [&]() -> Array { return float_unary(Prim::Asin, a); });
}
Array arccos(const Array& a) {
  return with_name("arccos", [&]() -> Array { return float_unary(Prim::Acos, a); });
}
Array arctan(const Array& a) {
  return with_name("arctan", [&]() -> Array { return float_unary(Prim::Atan, a); });
}
Array arctan2(const Array& y, const Array& x) {
  return with_name("arctan2", [&]() -> Array {
    auto args = inexact_pair("arctan2", y, x);
    return bind2(Prim::Atan2, args[0], args[1]);
  });
}
Array logaddexp(const Array& a, const Array& b) {
  return with_name("logaddexp", [&]() -> Array {
    auto args = inexact_pair("logaddexp", a, b);
    return bind2(Prim::Logaddexp, args[0], args[1]);
  });
}
Array sinh(const Array& a) {
  return with_name("sinh", [&]() -> Array { return float_unary(Prim::Sinh, a); });
}
Array cosh(const Array& a) {
  return with_name("cosh", [&]() -> Array { return float_unary(Prim::Cosh, a); });
}
Array tanh(const Array& a) {
  return with_name("tanh", [&]() -> Array { return float_unary(Prim::Tanh, a); });
}
Array arcsinh(const Array& a) {
  return with_name("arcsinh", [&]() -> Array { return float_unary(Prim::Asinh, a); });
}
Array arccosh(const Array& a) {
  return with_name("arccosh", [&]() -> Array { return float_unary(Prim::Acosh, a); });
}
Array arctanh(const Array& a) {
  return with_name("arctanh", [&]() -> Array { return float_unary(Prim::Atanh, a); });
}
Array erf(const Array& a) {
  return with_name("erf", [&]() -> Array { return float_unary(Prim::Erf, a); });
}
// floor/ceil/round/trunc leave integers as they are (JAX returns them unchanged).
Array floor(const Array& a) {
  return with_name("floor", [&]() -> Array { return is_float(a.dtype()) ? bind1(Prim::Floor, a) : a; });
}
Array ceil(const Array& a) {
  return with_name("ceil", [&]() -> Array { return is_float(a.dtype()) ? bind1(Prim::Ceil, a) : a; });
}
Array round(const Array& a) {
  return with_name("round", [&]() -> Array { return is_float(a.dtype()) ? bind1(Prim::Round, a) : a; });
}
Array trunc(const Array& a) {
  return with_name("trunc", [&]() -> Array { return is_float(a.dtype()) ? bind1(Prim::Trunc, a) : a; });
}
Array maximum(const Array& a, const Array& b) {
  return with_name("maximum", [&]() -> Array { return binary("maximum", Prim::Max, a, b); });
}
Array minimum(const Array& a, const Array& b) {
  return with_name("minimum", [&]() -> Array { return binary("minimum", Prim::Min, a, b); });
}
Array equal(const Array& a, const Array& b) {
  return with_name("equal", [&]() -> Array { return binary("equal", Prim::CmpEq, a, b); });
}
Array not_equal(const Array& a, const Array& b) {
  return with_name("not_equal", [&]() -> Array { return binary("not_equal", Prim::CmpNe, a, b); });
}
Array less(const Array& a, const Array& b) {
  return with_name("less", [&]() -> Array { return binary("less", Prim::CmpLt, a, b); });
}
Array less_equal(const Array& a, const Array& b) {
  return with_name("less_equal", [&]() -> Array { return binary("less_equal", Prim::CmpLe, a, b); });
}
Array greater(const Array& a, const Array& b) {
  return with_name("greater", [&]() -> Array { return binary("greater", Prim::CmpLt, b, a); });
}
Array greater_equal(const Array& a, const Array& b) {
  return with_name("greater_equal", [&]() -> Array { return binary("greater_equal", Prim::CmpLe, b, a); });
}

namespace {
Array logical(const char* op, Prim p, const Array& a, const Array& b) {
  Shape s = broadcast_shape(op, {a.shape(), b.shape()});
  return bind2(p, broadcast(cast(a, DType::Bool, false), s), broadcast(cast(b, DType::Bool, false), s));
}
Array bitwise(const char* op, Prim p, const Array& a, const Array& b) {
  auto args = promote_broadcast(op, {a, b});
  if (is_float(args[0].dtype()))
    fail_as(ErrorKind::Type, op, "got dtype ", dtype_name(args[0].dtype()), ", expected bool or an integer dtype");
  return bind2(p, args[0], args[1]);
}
}  // namespace

Array logical_and(const Array& a, const Array& b) {
  return with_name("logical_and", [&]() -> Array { return logical("logical_and", Prim::And, a, b); });
}
Array logical_or(const Array& a, const Array& b) {
  return with_name("logical_or", [&]() -> Array { return logical("logical_or", Prim::Or, a, b); });
}
Array logical_xor(const Array& a, const Array& b) {
  return with_name("logical_xor", [&]() -> Array { return logical("logical_xor", Prim::Xor, a, b); });
}
Array logical_not(const Array& a) {
  return with_name("logical_not", [&]() -> Array { return bind1(Prim::Not, cast(a, DType::Bool, false)); });
}
Array bitwise_and(const Array& a, const Array& b) {
  return with_name("bitwise_and", [&]() -> Array { return bitwise("bitwise_and", Prim::And, a, b); });
}
Array bitwise_or(const Array& a, const Array& b) {
  return with_name("bitwise_or", [&]() -> Array { return bitwise("bitwise_or", Prim::Or, a, b); });
}
Array bitwise_xor(const Array& a, const Array& b) {
  return with_name("bitwise_xor", [&]() -> Array { return bitwise("bitwise_xor", Prim::Xor, a, b); });
}
Array bitwise_not(const Array& a) {
  return with_name("bitwise_not", [&]() -> Array {
    if (is_float(a.dtype()))
      fail_as(ErrorKind::Type, "bitwise_not", "got dtype ", dtype_name(a.dtype()), ", expected bool or an integer dtype");
    return bind1(Prim::Not, a);
  });
}
Array invert(const Array& a) {
  return with_name("invert", [&]() -> Array { return bitwise_not(a); });
}
Array left_shift(const Array& a, const Array& b) {
  return with_name("left_shift", [&]() -> Array { return bitwise("left_shift", Prim::Shl, a, b); });
}
Array right_shift(const Array& a, const Array& b) {
  return with_name("right_shift", [&]() -> Array { return bitwise("right_shift", Prim::Shr, a, b); });
}

Array isnan(const Array& a) {
  return with_name("isnan", [&]() -> Array {
    if (!is_float(a.dtype())) return constant(a.shape(), DType::Bool, 0, a.device());
    return bind1(Prim::IsNan, a);
  });
}
Array isinf(const Array& a) {
  return with_name("isinf", [&]() -> Array {
    if (!is_float(a.dtype())) return constant(a.shape(), DType::Bool, 0, a.device());
    Array inf = scalar_like(a, INFINITY);
    return logical_or(equal(a, inf), equal(a, negative(inf)));
  });
}
Array isfinite(const Array& a) {
  return with_name("isfinite", [&]() -> Array {
    if (!is_float(a.dtype())) return constant(a.shape(), DType::Bool, 1, a.device());
    // x - x is 0 exactly for finite x and NaN for inf and NaN.
    return equal(bind2(Prim::Sub, a, a), scalar_like(a, 0));
  });
}

Array where(const Array& cond, const Array& x, const Array& y) {
  return with_name("where", [&]() -> Array {
    TypeInfo t = result_type({x, y});
    Shape s = broadcast_shape("where", {cond.shape(), x.shape(), y.shape()});
    return frontend::bind(Prim::Where, {broadcast(cast(cond, DType::Bool, false), s),
                                        broadcast(cast(x, t.dtype, t.weak), s),
                                        broadcast(cast(y, t.dtype, t.weak), s)});
  });
}

Array clip(const Array& a, std::optional<Array> a_min, std::optional<Array> a_max) {
  return with_name("clip", [&]() -> Array {
    Array r = a;
    if (a_min) r = maximum(r, *a_min);
    if (a_max) r = minimum(r, *a_max);
    return r;
  });
}

}  // namespace kiln::numpy
