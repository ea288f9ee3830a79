// Bad-input rows for kiln::numpy: creation, elementwise functions and reductions (the
// movement, sorting and linear-algebra rows are in bad_input_numpy_more_test.cpp).
#include <cmath>
#include <limits>

#include "bad_input.h"

namespace bad_input {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Shape;

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// NaN, +-Inf and zeros: inputs whose IEEE results are exact, so a host reference is exact too.
Array specials() { return np::array(std::vector<float>{NAN, INFINITY, -INFINITY, 0.0f, -0.0f}, {5}); }
const std::vector<double> kSpecials = {kNan, kInf, -kInf, 0.0, -0.0};

using Unary = Array (*)(const Array&);
using Binary = Array (*)(const Array&, const Array&);

// A float unary function: NaN/Inf in, the host's IEEE result out; an empty array stays empty.
void float_unary(std::vector<Row>& rows, const std::string& name, Unary f, double (*host)(double)) {
  rows.push_back(ok_row("numpy::" + name, [=] {
    std::vector<double> want;
    for (double v : kSpecials) want.push_back(double(float(host(v))));
    std::vector<double> got = values(f(specials()));
    expect_true(same_values(got, want), name + " of NaN/Inf/0");
  }));
  rows.push_back(ok_row("numpy::" + name, [=] {
    Array out = f(np::zeros({0, 3}));
    expect_true(out.shape() == Shape{0, 3} && values(out).empty(), name + " of an empty array");
  }));
}

// A binary function: operands that do not broadcast.
void no_broadcast(std::vector<Row>& rows, const std::string& name, Binary f) {
  rows.push_back(err("numpy::" + name, [=] { f(f23(), np::ones({4})); }, {name, "(2, 3)", "(4,)"}));
}

// An integer-only function called on floats.
void ints_only(std::vector<Row>& rows, const std::string& name, std::function<void(const Array&)> call) {
  rows.push_back(err("numpy::" + name, [=] { call(f23()); }, {name, "float32"}));
}

void creation(std::vector<Row>& r) {
  r.push_back(err("numpy::array", [] { np::array(std::vector<float>{1, 2, 3}, {2, 2}); }, {"array", "3", "(2, 2)"}));
  r.push_back(err("numpy::array", [] { np::array(std::vector<double>{1}, {-1}); }, {"array", "-1"}));
  r.push_back(err("numpy::array", [] { np::array(std::vector<int32_t>{1, 2}, {3}); }, {"array"}));
  r.push_back(err("numpy::array", [] { np::array(std::vector<uint32_t>{1}, {0}); }, {"array"}));
  r.push_back(err("numpy::array", [] { np::array(std::vector<bool>{true}, {2}); }, {"array"}));
  r.push_back(err("numpy::array", [] { float v = 1; np::array(&v, Shape{-2}, kiln::float32); }, {"array", "-2"}));
  r.push_back(err("numpy::array", [] { np::array(nullptr, Shape{int64_t(1) << 40}, kiln::float32); }, {"array"}));
  r.push_back(ok_row("numpy::asarray", [] {
    expect_true(same_values(values(np::asarray(specials(), kiln::float64)), kSpecials), "asarray keeps NaN/Inf");
  }));
  r.push_back(err("numpy::asarray", [] { np::asarray(Array()); }, {"asarray"}));
  for (auto [name, f] : {std::pair<const char*, Array (*)(const Shape&, kiln::DType)>{"zeros", np::zeros}, {"ones", np::ones}}) {
    std::string n = name;
    r.push_back(err("numpy::" + n, [f = f] { f({2, -3}, kiln::float32); }, {n, "(2, -3)"}));
    // Beyond any device: the size overflows int64 or the allocation fails with an Error.
    r.push_back(err("numpy::" + n, [f = f] { f({int64_t(1) << 40, int64_t(1) << 40}, kiln::float32).eval(); }, {n}));
    r.push_back(err("numpy::" + n, [f = f] { f({int64_t(1) << 45}, kiln::float64).eval(); }, {n}));
  }
  r.push_back(err("numpy::full", [] { np::full({2, 3}, np::ones({4})); }, {"full", "(4,)", "(2, 3)"}));
  r.push_back(err("numpy::full", [] { np::full({-1}, 1.0); }, {"full"}));
  r.push_back(ok_row("numpy::full", [] { expect_true(std::isnan(np::full({2}, kNan).to_vector<float>()[1]), "full of NaN"); }));
  r.push_back(err("numpy::zeros_like", [] { np::zeros_like(Array()); }, {"zeros_like"}));
  r.push_back(err("numpy::ones_like", [] { np::ones_like(Array()); }, {"ones_like"}));
  r.push_back(err("numpy::full_like", [] { np::full_like(f23(), np::ones({5})); }, {"full_like", "(5,)"}));
  r.push_back(err("numpy::arange", [] { np::arange(0, 10, 0); }, {"arange", "step"}));
  r.push_back(err("numpy::arange", [] { np::arange(kNan); }, {"arange", "stop nan", "finite"}));
  r.push_back(err("numpy::arange", [] { np::arange(1e30); }, {"arange"}));
  r.push_back(err("numpy::arange_impl", [] { np::arange_impl(0, kInf, 1, false, std::nullopt); }, {"arange", "stop inf", "finite"}));
  r.push_back(err("numpy::linspace", [] { np::linspace(0, 1, -1); }, {"linspace", "-1"}));
  r.push_back(ok_row("numpy::linspace", [] { expect_true(np::linspace(0, 1, 0).size() == 0, "linspace of 0"); }));
  r.push_back(err("numpy::eye", [] { np::eye(-2); }, {"eye", "-2"}));
  r.push_back(err("numpy::eye", [] { np::eye(int64_t(1) << 32).eval(); }, {"eye"}));
}

void elementwise(std::vector<Row>& r) {
  for (auto [name, f] : std::vector<std::pair<std::string, Binary>>{
           {"add", np::add}, {"subtract", np::subtract}, {"multiply", np::multiply}, {"divide", np::divide},
           {"true_divide", np::true_divide}, {"floor_divide", np::floor_divide}, {"mod", np::mod},
           {"remainder", np::remainder}, {"power", np::power}, {"arctan2", np::arctan2},
           {"logaddexp", np::logaddexp}, {"maximum", np::maximum}, {"minimum", np::minimum},
           {"equal", np::equal}, {"not_equal", np::not_equal}, {"less", np::less},
           {"less_equal", np::less_equal}, {"greater", np::greater}, {"greater_equal", np::greater_equal},
           {"logical_and", np::logical_and}, {"logical_or", np::logical_or}, {"logical_xor", np::logical_xor},
           {"bitwise_and", np::bitwise_and}, {"bitwise_or", np::bitwise_or}, {"bitwise_xor", np::bitwise_xor},
           {"left_shift", np::left_shift}, {"right_shift", np::right_shift}})
    no_broadcast(r, name, f);
  r.push_back(err("numpy::subtract", [] { np::subtract(Array(true), Array(false)); }, {"subtract", "bool"}));
  r.push_back(ok_row("numpy::divide", [] {
    expect_true(same_values(values(np::divide(np::array(std::vector<float>{1, -1, 0}, {3}), 0.0)), {kInf, -kInf, kNan}),
                "x / 0 is +-inf or nan");
  }));
  for (auto [name, f] : std::vector<std::pair<std::string, Binary>>{
           {"bitwise_and", np::bitwise_and}, {"bitwise_or", np::bitwise_or}, {"bitwise_xor", np::bitwise_xor},
           {"left_shift", np::left_shift}, {"right_shift", np::right_shift}})
    ints_only(r, name, [f = f](const Array& a) { f(a, a); });
  ints_only(r, "bitwise_not", [](const Array& a) { np::bitwise_not(a); });
  ints_only(r, "invert", [](const Array& a) { np::invert(a); });

  auto sign = [](double x) { return std::isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : x; };
  auto sq = [](double x) { return x * x; };
  std::vector<std::tuple<std::string, Unary, double (*)(double)>> unary = {
      {"negative", np::negative, [](double x) { return -x; }}, {"positive", np::positive, [](double x) { return x; }},
      {"abs", np::abs, [](double x) { return std::fabs(x); }}, {"absolute", np::absolute, [](double x) { return std::fabs(x); }},
      {"sign", np::sign, +sign}, {"exp", np::exp, [](double x) { return std::exp(x); }},
      {"exp2", np::exp2, [](double x) { return std::exp2(x); }}, {"expm1", np::expm1, [](double x) { return std::expm1(x); }},
      {"log", np::log, [](double x) { return std::log(x); }}, {"log1p", np::log1p, [](double x) { return std::log1p(x); }},
      {"log2", np::log2, [](double x) { return std::log2(x); }}, {"log10", np::log10, [](double x) { return std::log10(x); }},
      {"sqrt", np::sqrt, [](double x) { return std::sqrt(x); }}, {"rsqrt", np::rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {"square", np::square, +sq}, {"reciprocal", np::reciprocal, [](double x) { return 1 / x; }},
      {"sin", np::sin, [](double x) { return std::sin(x); }}, {"cos", np::cos, [](double x) { return std::cos(x); }},
      {"tan", np::tan, [](double x) { return std::tan(x); }}, {"arcsin", np::arcsin, [](double x) { return std::asin(x); }},
      {"arccos", np::arccos, [](double x) { return std::acos(x); }}, {"arctan", np::arctan, [](double x) { return std::atan(x); }},
      {"sinh", np::sinh, [](double x) { return std::sinh(x); }}, {"cosh", np::cosh, [](double x) { return std::cosh(x); }},
      {"tanh", np::tanh, [](double x) { return std::tanh(x); }}, {"arcsinh", np::arcsinh, [](double x) { return std::asinh(x); }},
      {"arccosh", np::arccosh, [](double x) { return std::acosh(x); }}, {"arctanh", np::arctanh, [](double x) { return std::atanh(x); }},
      {"erf", np::erf, [](double x) { return std::erf(x); }}, {"floor", np::floor, [](double x) { return std::floor(x); }},
      {"ceil", np::ceil, [](double x) { return std::ceil(x); }}, {"round", np::round, [](double x) { return std::nearbyint(x); }},
      {"trunc", np::trunc, [](double x) { return std::trunc(x); }},
      {"isnan", np::isnan, [](double x) { return double(std::isnan(x)); }},
      {"isinf", np::isinf, [](double x) { return double(std::isinf(x)); }},
      {"isfinite", np::isfinite, [](double x) { return double(std::isfinite(x)); }},
      {"logical_not", np::logical_not, [](double x) { return double(!(x != 0)); }}};
  for (auto& [name, f, host] : unary) float_unary(r, name, f, host);

  r.push_back(err("numpy::where", [] { np::where(np::ones({4}, kiln::bool_), f23(), 0.0); }, {"where", "(4,)", "(2, 3)"}));
  r.push_back(err("numpy::clip", [] { np::clip(f23(), np::zeros({4}), std::nullopt); }, {"clip", "(4,)"}));
}

void reductions(std::vector<Row>& r) {
  using Reduce = Array (*)(const Array&, kiln::Axes, bool);
  for (auto [name, f] : std::vector<std::pair<std::string, Reduce>>{
           {"sum", np::sum}, {"prod", np::prod}, {"max", np::max}, {"min", np::min}, {"amax", np::amax},
           {"amin", np::amin}, {"mean", np::mean}, {"any", np::any}, {"all", np::all}}) {
    r.push_back(err("numpy::" + name, [f = f] { f(f23(), 2, false); }, {name, "axis 2", "rank 2"}));
    r.push_back(err("numpy::" + name, [f = f] { f(f23(), kiln::Axes{0, -2}, false); }, {name, "repeated"}));
  }
  // max/min of nothing has no identity (NumPy: "zero-size array to reduction operation").
  r.push_back(err("numpy::max", [] { np::max(np::zeros({0, 3}), 0); }, {"max", "empty"}));
  r.push_back(err("numpy::min", [] { np::min(np::zeros({0})); }, {"min", "empty"}));
  r.push_back(ok_row("numpy::sum", [] { expect_true(np::sum(np::zeros({0, 3})).item() == 0, "sum of nothing is 0"); }));
  r.push_back(ok_row("numpy::max", [] { expect_true(std::isnan(np::max(specials()).item()), "max with a NaN is NaN"); }));
  r.push_back(ok_row("numpy::mean", [] { expect_true(std::isnan(np::mean(np::zeros({0})).item()), "mean of nothing is NaN"); }));
  for (auto [name, f] : std::vector<std::pair<std::string, Array (*)(const Array&, kiln::Axes, bool, int64_t)>>{
           {"var", np::var}, {"std", np::std}}) {
    r.push_back(err("numpy::" + name, [f = f] { f(f23(), 3, false, 0); }, {name, "axis 3"}));
    // ddof >= n is NumPy's inf/nan, not an error.
    r.push_back(ok_row("numpy::" + name, [f = f, name = name] { expect_true(std::isnan(f(specials(), {}, false, 0).item()), name + " with a NaN"); }));
  }
  for (auto [name, f] : std::vector<std::pair<std::string, Array (*)(const Array&, std::optional<int>, bool)>>{
           {"argmax", np::argmax}, {"argmin", np::argmin}}) {
    r.push_back(err("numpy::" + name, [f = f] { f(f23(), -3, false); }, {name, "axis -3"}));
    r.push_back(err("numpy::" + name, [f = f] { f(np::zeros({0, 2}), 0, false); }, {name, "empty"}));
  }
  r.push_back(err("numpy::cumsum", [] { np::cumsum(f23(), 2); }, {"cumsum", "axis 2"}));
  r.push_back(err("numpy::cumprod", [] { np::cumprod(f23(), -3); }, {"cumprod", "axis -3"}));
}

}  // namespace

std::vector<Row> numpy_rows() {
  std::vector<Row> r;
  creation(r);
  elementwise(r);
  reductions(r);
  return r;
}

}  // namespace bad_input
