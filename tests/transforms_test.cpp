// Tests of the transformations: every differentiable primitive (through the numpy/lax
// function that binds it) checked like JAX's check_grads, plus vmap against a loop.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "frontend/jvp.h"
#include "frontend/linearize.h"
#include "frontend/vmap.h"
#include "kiln/kiln.h"

namespace transforms_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;
using Arrays = std::vector<Array>;
using Func = std::function<Array(const Arrays&)>;

Array rnd(const kiln::Shape& s, double lo, double hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(size_t(kiln::prod(s)));
  for (auto& x : v) x = d(g);
  return np::array(v, s);
}

Fn as_fn(const Func& f) {
  return [f](const std::vector<Tree>& a) {
    Arrays xs;
    for (auto& t : a) xs.push_back(t.as_array());
    return Tree(f(xs));
  };
}
std::vector<Tree> trees(const Arrays& xs) { return std::vector<Tree>(xs.begin(), xs.end()); }

std::vector<double> vals(const Array& a) { return a.astype(kiln::float64).to_vector<double>(); }

void expect_close(const Array& got, const Array& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto g = vals(got), w = vals(want);
  for (size_t i = 0; i < g.size(); i++)
    EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << what << " at flat index " << i;
}

double dot_all(const Array& a, const Array& b) { return np::sum(np::multiply(a, b)).item(); }

// Scalar-valued projections make the checks of any output shape one number each.
struct Check {
  Func f;
  Arrays xs;
  double tol = 1e-6;
  unsigned seed = 7;
};

Arrays axpy(const Arrays& x, const Arrays& v, double e) {
  Arrays r;
  for (size_t i = 0; i < x.size(); i++) r.push_back(np::add(x[i], np::multiply(v[i], Array(e))));
  return r;
}

Arrays randoms_like(const Arrays& xs, unsigned seed) {
  Arrays r;
  for (auto& x : xs)
    r.push_back(is_float(x.dtype()) ? rnd(x.shape(), -1, 1, seed++) : np::zeros_like(x));
  return r;
}

// jvp against central differences, and vjp against jvp (<u, J v> == <J^T u, v>).
void check_first_order(const Func& f, const Arrays& xs, double tol, unsigned seed,
                       const std::string& what) {
  Arrays v = randoms_like(xs, seed);
  auto [y, ty] = kiln::jvp(as_fn(f), trees(xs), trees(v));
  const double eps = 1e-5;
  Array fd = np::divide(np::subtract(f(axpy(xs, v, eps)), f(axpy(xs, v, -eps))), Array(2 * eps));
  expect_close(ty.as_array(), fd, tol, what + ": jvp vs finite differences");
  Array u = rnd(y.as_array().shape(), -1, 1, seed + 100);
  kiln::VjpResult r = kiln::vjp(as_fn(f), trees(xs));
  std::vector<Tree> g = r.pullback(Tree(u));
  double lhs = dot_all(u, ty.as_array()), rhs = 0;
  for (size_t i = 0; i < xs.size(); i++)
    if (is_float(xs[i].dtype())) rhs += dot_all(g[i].as_array(), v[i]);
  EXPECT_NEAR(lhs, rhs, tol * (1 + std::abs(lhs))) << what << ": vjp vs jvp";
}

// check_grads(order=2): the first-order checks, then the same checks applied to the
// (scalarized) jvp and vjp functions themselves.
void check_grads(const Func& f, const Arrays& xs, double tol, const std::string& what,
                 unsigned seed = 7) {
  check_first_order(f, xs, tol, seed, what);
  Arrays v = randoms_like(xs, seed + 1);
  Array y = f(xs);
  Array w = rnd(y.shape(), -1, 1, seed + 2);
  Func jvp_fn = [f, v, w](const Arrays& x) {
    auto [o, t] = kiln::jvp(as_fn(f), trees(x), trees(v));
    return np::sum(np::multiply(t.as_array(), w));
  };
  check_first_order(jvp_fn, xs, tol * 10, seed + 3, what + " (jvp of jvp)");
  Func vjp_fn = [f, v, w](const Arrays& x) {
    std::vector<Tree> g = kiln::vjp(as_fn(f), trees(x)).pullback(Tree(w));
    Array s = np::zeros({}, kiln::float64);
    for (size_t i = 0; i < x.size(); i++)
      if (is_float(x[i].dtype())) s = np::add(s, np::sum(np::multiply(g[i].as_array(), v[i])));
    return s;
  };
  check_first_order(vjp_fn, xs, tol * 10, seed + 4, what + " (jvp/vjp of vjp)");
}

// vmap over axis 0 of every argument against a loop of the unbatched function.
void check_vmap(const Func& f, const Arrays& xs, const std::string& what, int64_t n = 3) {
  Arrays batched;
  unsigned seed = 50;
  for (auto& x : xs) {
    std::vector<Array> copies;
    for (int64_t b = 0; b < n; b++)
      copies.push_back(is_float(x.dtype())
                           ? np::add(x, np::multiply(rnd(x.shape(), -0.05, 0.05, seed++), x))
                           : x);
    batched.push_back(np::stack(copies, 0));
  }
  Tree out = kiln::vmap(as_fn(f))(trees(batched));
  Arrays rows;
  for (int64_t b = 0; b < n; b++) {
    Arrays xb;
    for (auto& x : batched) xb.push_back(x[b]);
    rows.push_back(f(xb));
  }
  expect_close(out.as_array(), np::stack(rows, 0), 1e-12, what + ": vmap vs loop");
}

// jit of f (fused kernels from the traced jaxpr) agrees with f run eagerly.
void check_jit(const Func& f, const Arrays& xs, const std::string& what) {
  Tree out = kiln::jit(as_fn(f))(trees(xs));
  expect_close(out.as_array(), f(xs), 1e-12, what + ": jit vs eager");
}

struct Case {
  std::string name;
  Func f;
  std::vector<std::pair<double, double>> domains;  // per argument
  kiln::Shape shape{2, 3};
  double tol = 1e-6;
};

std::vector<Case> cases() {
  using kiln::Axes;
  auto u = [](Array (*g)(const Array&)) { return Func([g](const Arrays& a) { return g(a[0]); }); };
  auto b = [](Array (*g)(const Array&, const Array&)) {
    return Func([g](const Arrays& a) { return g(a[0], a[1]); });
  };
  std::pair<double, double> any{-2, 2}, pos{0.5, 2}, unit{-0.9, 0.9}, big{1.2, 3};
  return {
      {"negative", u(np::negative), {any}},
      {"reciprocal", u(np::reciprocal), {pos}},
      {"sqrt", u(np::sqrt), {pos}},
      {"exp", u(np::exp), {any}},
      {"exp2", u(np::exp2), {any}},
      {"expm1", u(np::expm1), {any}},
      {"log", u(np::log), {pos}},
      {"log2", u(np::log2), {pos}},
      {"log1p", u(np::log1p), {pos}},
      {"sin", u(np::sin), {any}},
      {"cos", u(np::cos), {any}},
      {"tan", u(np::tan), {unit}},
      {"arcsin", u(np::arcsin), {unit}},
      {"arccos", u(np::arccos), {unit}},
      {"arctan", u(np::arctan), {any}},
      {"sinh", u(np::sinh), {any}},
      {"cosh", u(np::cosh), {any}},
      {"tanh", u(np::tanh), {any}},
      {"arcsinh", u(np::arcsinh), {any}},
      {"arccosh", u(np::arccosh), {big}},
      {"arctanh", u(np::arctanh), {unit}},
      {"erf", u(np::erf), {any}},
      {"floor", u(np::floor), {any}},
      {"ceil", u(np::ceil), {any}},
      {"round", u(np::round), {any}},
      {"trunc", u(np::trunc), {any}},
      {"abs", u(np::abs), {any}},
      {"add", b(np::add), {any, any}},
      {"subtract", b(np::subtract), {any, any}},
      {"multiply", b(np::multiply), {any, any}},
      {"divide", b(np::divide), {any, pos}},
      {"floor_divide", b(np::floor_divide), {pos, pos}},
      {"mod", b(np::mod), {pos, pos}},
      {"power", b(np::power), {pos, any}},
      {"arctan2", b(np::arctan2), {any, pos}},
      {"logaddexp", b(np::logaddexp), {any, any}},
      {"maximum", b(np::maximum), {any, any}},
      {"minimum", b(np::minimum), {any, any}},
      {"where_less",
       Func([](const Arrays& a) { return np::where(np::less(a[0], a[1]), np::sin(a[0]), a[1]); }),
       {any, any}},
      {"weak_scalar", Func([](const Arrays& a) { return np::multiply(a[0], Array(2.5)); }), {any}},
      {"sum", Func([](const Arrays& a) { return np::sum(a[0], 1); }), {any}},
      {"prod", Func([](const Arrays& a) { return np::prod(a[0], 1); }), {any}},
      {"prod_all", Func([](const Arrays& a) { return np::prod(a[0]); }), {any}},
      {"max", Func([](const Arrays& a) { return np::max(a[0], 0); }), {any}},
      {"min", Func([](const Arrays& a) { return np::min(a[0], 1); }), {any}},
      {"mean_var_std",
       Func([](const Arrays& a) { return np::add(np::mean(a[0], 0), np::std(a[0], 0)); }),
       {any}},
      {"reshape",
       Func([](const Arrays& a) {
         return np::sin(a[0]).reshape({3, 2});
       }),
       {any}},
      {"transpose", Func([](const Arrays& a) { return np::transpose(np::sin(a[0])); }), {any}},
      {"broadcast_to",
       Func([](const Arrays& a) {
         return np::broadcast_to(np::sin(a[0]), {4, 2, 3});
       }),
       {any}},
      {"pad",
       Func([](const Arrays& a) {
         return np::pad(np::sin(a[0]), {{1, 2}, {0, 1}});
       }),
       {any}},
      {"slice_stride_flip",
       Func([](const Arrays& a) {
         return np::exp(a[0])[{kiln::Slice{std::nullopt, std::nullopt, -1}, kiln::Slice{0, 3, 2}}];
       }),
       {any}},
      {"flip", Func([](const Arrays& a) { return np::flip(np::sin(a[0]), 1); }), {any}},
      {"concatenate",
       Func([](const Arrays& a) {
         return np::concatenate({np::sin(a[0]), a[1]}, 1);
       }),
       {any, any}},
      {"take",
       Func([](const Arrays& a) {
         return np::take(a[0], np::array(std::vector<int32_t>{2, 0, -1, 2}, {2, 2}), 1);
       }),
       {any}},
      {"take_along_axis",
       Func([](const Arrays& a) {
         return np::take_along_axis(a[0], np::array(std::vector<int32_t>{1, 0, 1, 1, 0, 0}, {2, 3}),
                                    0);
       }),
       {any}},
      {"cumsum", Func([](const Arrays& a) { return np::cumsum(a[0], 1); }), {any}},
      {"cumprod", Func([](const Arrays& a) { return np::cumprod(a[0], 1); }), {any}},
      {"matmul",
       Func([](const Arrays& a) { return np::matmul(a[0], np::transpose(a[1])); }),
       {any, any}},
      {"max_pool",
       Func([](const Arrays& a) {
         return kiln::lax::max_pool(a[0], {2, 2}, {1, 2}, std::string("SAME"));
       }),
       {any},
       {1, 2, 3, 4}},
      // Disjoint windows (stride >= window) take the one-view transpose: windows that stop
      // short of the end (7 columns, stride 2) and a gap past it (5 rows, window 2, stride 3).
      {"max_pool_disjoint",
       Func([](const Arrays& a) {
         return kiln::lax::max_pool(a[0], {2, 2}, {3, 2}, std::string("VALID"));
       }),
       {any},
       {1, 2, 5, 7}},
      {"avg_pool_disjoint",
       Func([](const Arrays& a) {
         return kiln::lax::avg_pool(a[0], {2, 3}, {2, 3}, std::string("SAME"), false);
       }),
       {any},
       {2, 1, 5, 7}},
      {"avg_pool",
       Func([](const Arrays& a) {
         return kiln::lax::avg_pool(a[0], {2, 2}, {2, 1}, std::string("SAME"), false);
       }),
       {any},
       {1, 2, 3, 4}},
  };
}

class PrimitiveGrads : public ::testing::TestWithParam<size_t> {};

TEST_P(PrimitiveGrads, CheckGradsVmapAndJit) {
  Case c = cases()[GetParam()];
  Arrays xs;
  unsigned seed = 1;
  for (auto [lo, hi] : c.domains) xs.push_back(rnd(c.shape, lo, hi, seed++));
  check_grads(c.f, xs, c.tol, c.name);
  check_vmap(c.f, xs, c.name);
  check_jit(c.f, xs, c.name);
}

INSTANTIATE_TEST_SUITE_P(Transforms, PrimitiveGrads, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                           return cases()[i.param].name;
                         });

TEST(Transforms, ConvGradsStridesDilationGroups) {
  // Input and filter gradients of conv_general_dilated with strides, both dilations,
  // padding and feature groups.
  Func f = [](const Arrays& a) {
    return kiln::lax::conv_general_dilated(a[0], a[1], {2, 1},
                                           std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {1, 1}},
                                           {1, 1}, {1, 2}, std::nullopt, 2);
  };
  Arrays xs{rnd({2, 4, 5, 5}, -1, 1, 3), rnd({4, 2, 2, 2}, -1, 1, 4)};
  check_grads(f, xs, 1e-6, "conv");
  check_vmap(f, xs, "conv", 2);
  Func g = [](const Arrays& a) {
    return kiln::lax::conv_general_dilated(a[0], a[1], {1, 1},
                                           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {0, 0}},
                                           {2, 1}, {}, std::nullopt, 1);
  };
  check_grads(g, {rnd({1, 1, 3, 3}, -1, 1, 5), rnd({2, 1, 2, 2}, -1, 1, 6)}, 1e-6,
              "conv lhs_dilation");
}

// Primitives with zero derivatives (comparisons, bitwise, integer ops): vmap against a
// loop, and jvp gives symbolic-zero tangents of the right dtype.
TEST(Transforms, NonDifferentiablePrimitivesVmapAndZeroTangents) {
  auto ints = [](const Array& x) {
    return np::floor(np::multiply(x, Array(3.0))).astype(kiln::int32);
  };
  std::vector<std::pair<std::string, Func>> fs = {
      {"less", [](const Arrays& a) { return np::less(a[0], a[1]); }},
      {"less_equal", [](const Arrays& a) { return np::less_equal(a[0], a[1]); }},
      {"equal", [](const Arrays& a) { return np::equal(np::round(a[0]), np::round(a[1])); }},
      {"not_equal",
       [](const Arrays& a) { return np::not_equal(np::round(a[0]), np::round(a[1])); }},
      {"logical",
       [](const Arrays& a) {
         return np::logical_xor(
             np::logical_and(np::less(a[0], 0.0), np::less(a[1], 0.0)),
             np::logical_not(np::logical_or(np::less(a[0], 0.5), np::less(a[1], 0.5))));
       }},
      {"bitwise_shift",
       [ints](const Arrays& a) {
         Array i = ints(a[0]), j = np::abs(ints(a[1]));
         return np::bitwise_xor(np::bitwise_or(np::bitwise_and(i, j), np::left_shift(i, j)),
                                np::bitwise_not(np::right_shift(i, j)));
       }},
      {"int_arith",
       [ints](const Arrays& a) {
         Array i = ints(a[0]), j = np::add(np::abs(ints(a[1])), Array(1));
         return np::add(np::floor_divide(i, j), np::mod(i, j));
       }},
      {"isnan", [](const Arrays& a) { return np::isnan(np::log(a[0])); }},
      {"argmax", [](const Arrays& a) { return np::argmax(a[0], 1); }},
      {"argmin", [](const Arrays& a) { return np::argmin(a[1], 0); }},
      {"bitcast",
       [](const Arrays& a) {
         return kiln::lax::bitcast_convert_type(a[0].astype(kiln::float32), kiln::int32);
       }},
  };
  Arrays xs{rnd({2, 3}, -2, 2, 21), rnd({2, 3}, -2, 2, 22)};
  for (auto& [name, f] : fs) {
    check_vmap(f, xs, name);
    auto [y, t] = kiln::jvp(as_fn(f), trees(xs), trees(xs));
    EXPECT_EQ(t.as_array().dtype(), y.as_array().dtype()) << name;
    for (double v : vals(t.as_array())) EXPECT_EQ(v, 0) << name;
  }
}

TEST(Transforms, EveryPrimitiveHasRules) {
  using kiln::frontend::Prim;
  for (size_t i = 0; i < kiln::frontend::kNumPrims; i++) {
    Prim p = Prim(i);
    const auto& info = kiln::frontend::prim_info(p);
    EXPECT_EQ(info.prim, p) << info.name;
    EXPECT_TRUE(kiln::frontend::has_jvp_rule(p)) << info.name;
    EXPECT_TRUE(kiln::frontend::has_vmap_rule(p)) << info.name;
    EXPECT_EQ(kiln::frontend::has_transpose_rule(p), info.linear) << info.name;
  }
}

// A primitive appended to the enum without its rules (simulated: a table one rule short, or
// one slot short) is an error naming it, not a read past the table.
TEST(Transforms, AMissingRuleIsAnErrorNamingThePrimitive) {
  using kiln::frontend::Prim;
  std::vector<std::function<void()>> rules(kiln::frontend::kNumPrims, [] {});
  auto all = [](Prim) { return true; };
  EXPECT_NO_THROW(kiln::frontend::check_rule_table("test", rules, all));
  rules.back() = nullptr;
  try {
    kiln::frontend::check_rule_table("test", rules, all);
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    const std::string last = kiln::frontend::prim_name(Prim(kiln::frontend::kNumPrims - 1));
    EXPECT_NE(std::string(e.what()).find(last + " has no rule"), std::string::npos) << e.what();
  }
  rules.pop_back();
  EXPECT_THROW(kiln::frontend::check_rule_table("test", rules, all), kiln::Error);
}

}  // namespace

}  // namespace transforms_test
