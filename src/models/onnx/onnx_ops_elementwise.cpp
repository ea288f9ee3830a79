// ONNX elementwise operators (unary math, activations, broadcasting binary and variadic ops,
// comparisons, logic, Where, Clip) as kiln::numpy / kiln::nn calls.
#include <cmath>
#include <limits>

#include "frontend/trace.h"
#include "library/lax.h"
#include "library/nn.h"
#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;  // the newest opset a rule is written for (no later changes known)

// Unary rules: one input, one output, no attributes.
template <Array (*F)(const Array&)>
std::vector<Array> unary(const NodeContext& c) {
  return {F(c.input(0))};
}

// Keeps ONNX's rule that an op's output has its input's type (numpy promotes ints to float).
Array same_type(const Array& result, const Array& like) { return cast_to(result, like.dtype()); }

Array sigmoid(const Array& x) { return nn::sigmoid(x); }
Array relu(const Array& x) { return same_type(np::maximum(x, np::zeros_like(x)), x); }
Array softsign(const Array& x) { return x / (1.0 + np::abs(x)); }
Array softplus(const Array& x) { return nn::softplus(x); }
Array identity(const Array& x) { return x; }
Array mish(const Array& x) { return x * np::tanh(nn::softplus(x)); }
Array hard_swish(const Array& x) { return x * np::clip(x / 6.0 + 0.5, Array(0.0), Array(1.0)); }
Array is_nan(const Array& x) { return np::isnan(x); }
Array logical_not(const Array& x) { return np::logical_not(x); }
Array bitwise_not(const Array& x) { return np::bitwise_not(x); }
Array floor(const Array& x) { return np::floor(x); }
Array ceil(const Array& x) { return np::ceil(x); }
Array round(const Array& x) { return np::round(x); }
Array sign(const Array& x) { return np::sign(x); }

template <Array (*F)(const Array&, const Array&)>
std::vector<Array> binary(const NodeContext& c) {
  return {F(c.input(0), c.input(1))};
}

Array add(const Array& a, const Array& b) { return np::add(a, b); }
Array sub(const Array& a, const Array& b) { return np::subtract(a, b); }
Array mul(const Array& a, const Array& b) { return np::multiply(a, b); }
Array div(const Array& a, const Array& b) {
  // Integer Div truncates toward zero, as C does.
  if (is_float(a.dtype())) return np::divide(a, b);
  return same_type(np::trunc(np::divide(a, b)), a);
}
Array pow(const Array& a, const Array& b) {
  // The result has the base's type (Pow(int, float) is an int tensor).
  const DType dt = is_float(a.dtype()) ? a.dtype() : float32;
  return same_type(np::power(cast_to(a, dt), cast_to(b, dt)), a);
}
// A square by a constant exponent 2 (openWakeWord's melspectrogram squares the STFT's real and
// imaginary parts) is one multiply, as onnxruntime computes it: the general pow is a scalar
// exp/log routine per element (that kernel took 30% of the model's kernel time on wasm). The
// bits stay: kiln's pow works in double, where a float's square is exact, then rounds to the
// float, which is what the float multiply rounds to as well.
std::vector<Array> pow_rule(const NodeContext& c) {
  const Array &a = c.input(0), &b = c.input(1);
  const bool square = is_float(a.dtype()) && b.size() == 1 && b.ndim() <= a.ndim() && !frontend::tracer_of(b) &&
                      c.host_doubles(1)[0] == 2.0;
  return {square ? a * a : pow(a, b)};
}
Array equal(const Array& a, const Array& b) { return np::equal(a, b); }
Array less(const Array& a, const Array& b) { return np::less(a, b); }
Array less_equal(const Array& a, const Array& b) { return np::less_equal(a, b); }
Array greater(const Array& a, const Array& b) { return np::greater(a, b); }
Array greater_equal(const Array& a, const Array& b) { return np::greater_equal(a, b); }
Array logical_and(const Array& a, const Array& b) { return np::logical_and(a, b); }
Array logical_or(const Array& a, const Array& b) { return np::logical_or(a, b); }
Array logical_xor(const Array& a, const Array& b) { return np::logical_xor(a, b); }
Array bitwise_and(const Array& a, const Array& b) { return np::bitwise_and(a, b); }
Array bitwise_or(const Array& a, const Array& b) { return np::bitwise_or(a, b); }
Array bitwise_xor(const Array& a, const Array& b) { return np::bitwise_xor(a, b); }
Array prelu(const Array& x, const Array& slope) { return np::where(x < 0.0, x * slope, x); }

// Max, Min, Sum, Mean: any number of inputs, broadcast together.
template <Array (*F)(const Array&, const Array&)>
std::vector<Array> variadic(const NodeContext& c) {
  std::vector<Array> xs = c.present_inputs();
  if (xs.empty()) c.fail("needs at least one input");
  Array acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) acc = F(acc, xs[i]);
  return {acc};
}
std::vector<Array> mean(const NodeContext& c) {
  Array s = variadic<add>(c)[0];
  return {s / double(c.present_inputs().size())};
}
Array maximum(const Array& a, const Array& b) { return np::maximum(a, b); }
Array minimum(const Array& a, const Array& b) { return np::minimum(a, b); }

std::vector<Array> leaky_relu(const NodeContext& c) {
  return {nn::leaky_relu(c.input(0), c.attr_float("alpha", 0.01f))};
}
std::vector<Array> elu(const NodeContext& c) {
  const Array& x = c.input(0);
  const double alpha = c.attr_float("alpha", 1.0f);
  return {np::where(x < 0.0, alpha * np::expm1(x), x)};
}
std::vector<Array> celu(const NodeContext& c) {
  const Array& x = c.input(0);
  const double alpha = c.attr_float("alpha", 1.0f);
  return {np::maximum(x, np::zeros_like(x)) + np::minimum(np::zeros_like(x), alpha * np::expm1(x / alpha))};
}
std::vector<Array> selu(const NodeContext& c) {
  const Array& x = c.input(0);
  const double alpha = c.attr_float("alpha", 1.67326319217681884765625f);
  const double gamma = c.attr_float("gamma", 1.05070102214813232421875f);
  return {gamma * np::where(x <= 0.0, alpha * np::expm1(x), x)};
}
std::vector<Array> thresholded_relu(const NodeContext& c) {
  const Array& x = c.input(0);
  return {np::where(x > double(c.attr_float("alpha", 1.0f)), x, np::zeros_like(x))};
}
std::vector<Array> hard_sigmoid(const NodeContext& c) {
  const Array& x = c.input(0);
  const double alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
  return {np::clip(alpha * x + beta, Array(0.0), Array(1.0))};
}
std::vector<Array> shrink(const NodeContext& c) {
  const Array& x = c.input(0);
  const double bias = c.attr_float("bias", 0.0f), lambd = c.attr_float("lambd", 0.5f);
  Array zero = np::zeros_like(x);
  return {same_type(np::where(x < -lambd, x + bias, np::where(x > lambd, x - bias, zero)), x)};
}
std::vector<Array> gelu(const NodeContext& c) {
  const std::string approx = c.attr_string("approximate", "none");
  if (approx != "none" && approx != "tanh") c.fail("approximate '", approx, "', expected none or tanh");
  return {nn::gelu(c.input(0), approx == "tanh")};
}
std::vector<Array> is_inf(const NodeContext& c) {
  const Array& x = c.input(0);
  const bool neg = c.attr_int("detect_negative", 1) != 0, pos = c.attr_int("detect_positive", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  Array none = np::zeros_like(x, bool_);
  return {np::logical_or(neg ? np::equal(x, -inf) : none, pos ? np::equal(x, inf) : none)};
}
std::vector<Array> mod(const NodeContext& c) {
  const Array &a = c.input(0), &b = c.input(1);
  if (c.attr_int("fmod", 0) == 0) return {np::mod(a, b)};
  // fmod: the sign of the dividend (C's fmod), for floats and ints.
  Array q = np::trunc(np::divide(a, b));
  return {same_type(a - same_type(q, a) * b, a)};
}
std::vector<Array> bit_shift(const NodeContext& c) {
  const std::string dir = c.attr_string("direction", "");
  if (dir == "LEFT") return {np::left_shift(c.input(0), c.input(1))};
  if (dir == "RIGHT") return {np::right_shift(c.input(0), c.input(1))};
  c.fail("direction '", dir, "', expected LEFT or RIGHT");
}
std::vector<Array> where(const NodeContext& c) { return {np::where(c.input(0), c.input(1), c.input(2))}; }

std::vector<Array> clip(const NodeContext& c) {
  const Array& x = c.input(0);
  std::optional<Array> lo, hi;
  if (c.opset() < 11) {
    lo = Array(double(c.attr_float("min", -std::numeric_limits<float>::infinity())));
    hi = Array(double(c.attr_float("max", std::numeric_limits<float>::infinity())));
  } else {
    if (c.has_input(1)) lo = c.input(1);
    if (c.has_input(2)) hi = c.input(2);
  }
  Array y = x;
  if (lo) y = np::maximum(y, cast_to(*lo, x.dtype()));
  if (hi) y = np::minimum(y, cast_to(*hi, x.dtype()));
  return {y};
}

}  // namespace

std::vector<OpRule> elementwise_rules() {
  return {
      {"Abs", 1, kMax, {}, unary<np::abs>},
      {"Neg", 1, kMax, {}, unary<np::negative>},
      {"Exp", 1, kMax, {}, unary<np::exp>},
      {"Log", 1, kMax, {}, unary<np::log>},
      {"Sqrt", 1, kMax, {}, unary<np::sqrt>},
      {"Reciprocal", 1, kMax, {}, unary<np::reciprocal>},
      {"Floor", 1, kMax, {}, unary<floor>},
      {"Ceil", 1, kMax, {}, unary<ceil>},
      {"Round", 11, kMax, {}, unary<round>},
      {"Sign", 9, kMax, {}, unary<sign>},
      {"Sin", 7, kMax, {}, unary<np::sin>},
      {"Cos", 7, kMax, {}, unary<np::cos>},
      {"Tan", 7, kMax, {}, unary<np::tan>},
      {"Asin", 7, kMax, {}, unary<np::arcsin>},
      {"Acos", 7, kMax, {}, unary<np::arccos>},
      {"Atan", 7, kMax, {}, unary<np::arctan>},
      {"Sinh", 9, kMax, {}, unary<np::sinh>},
      {"Cosh", 9, kMax, {}, unary<np::cosh>},
      {"Tanh", 1, kMax, {}, unary<np::tanh>},
      {"Asinh", 9, kMax, {}, unary<np::arcsinh>},
      {"Acosh", 9, kMax, {}, unary<np::arccosh>},
      {"Atanh", 9, kMax, {}, unary<np::arctanh>},
      {"Erf", 9, kMax, {}, unary<np::erf>},
      {"Sigmoid", 1, kMax, {}, unary<sigmoid>},
      {"Relu", 1, kMax, {}, unary<relu>},
      {"Softsign", 1, kMax, {}, unary<softsign>},
      {"Softplus", 1, kMax, {}, unary<softplus>},
      {"Mish", 18, kMax, {}, unary<mish>},
      {"HardSwish", 14, kMax, {}, unary<hard_swish>},
      {"Identity", 1, kMax, {}, unary<identity>},
      {"IsNaN", 9, kMax, {}, unary<is_nan>},
      {"Not", 1, kMax, {}, unary<logical_not>},
      {"BitwiseNot", 18, kMax, {}, unary<bitwise_not>},
      {"Add", 7, kMax, {}, binary<add>},
      {"Sub", 7, kMax, {}, binary<sub>},
      {"Mul", 7, kMax, {}, binary<mul>},
      {"Div", 7, kMax, {}, binary<div>},
      {"Pow", 7, kMax, {}, pow_rule},
      {"Equal", 7, kMax, {}, binary<equal>},
      {"Less", 7, kMax, {}, binary<less>},
      {"LessOrEqual", 12, kMax, {}, binary<less_equal>},
      {"Greater", 7, kMax, {}, binary<greater>},
      {"GreaterOrEqual", 12, kMax, {}, binary<greater_equal>},
      {"And", 7, kMax, {}, binary<logical_and>},
      {"Or", 7, kMax, {}, binary<logical_or>},
      {"Xor", 7, kMax, {}, binary<logical_xor>},
      {"BitwiseAnd", 18, kMax, {}, binary<bitwise_and>},
      {"BitwiseOr", 18, kMax, {}, binary<bitwise_or>},
      {"BitwiseXor", 18, kMax, {}, binary<bitwise_xor>},
      {"PRelu", 7, kMax, {}, binary<prelu>},
      {"Max", 8, kMax, {}, variadic<maximum>},
      {"Min", 8, kMax, {}, variadic<minimum>},
      {"Sum", 8, kMax, {}, variadic<add>},
      {"Mean", 8, kMax, {}, mean},
      {"LeakyRelu", 6, kMax, {"alpha"}, leaky_relu},
      {"Elu", 6, kMax, {"alpha"}, elu},
      {"Celu", 12, kMax, {"alpha"}, celu},
      {"Selu", 6, kMax, {"alpha", "gamma"}, selu},
      {"ThresholdedRelu", 10, kMax, {"alpha"}, thresholded_relu},
      {"HardSigmoid", 6, kMax, {"alpha", "beta"}, hard_sigmoid},
      {"Shrink", 9, kMax, {"bias", "lambd"}, shrink},
      {"Gelu", 20, kMax, {"approximate"}, gelu},
      {"IsInf", 10, kMax, {"detect_negative", "detect_positive"}, is_inf},
      {"Mod", 10, kMax, {"fmod"}, mod},
      {"BitShift", 11, kMax, {"direction"}, bit_shift},
      {"Where", 9, kMax, {}, where},
      {"Clip", 6, kMax, {"min", "max"}, clip},
  };
}

}  // namespace kiln::onnx
