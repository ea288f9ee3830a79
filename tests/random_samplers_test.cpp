// Checks kiln::random's samplers built on uniform/normal against jax.random
// (tests/fixtures/random_samplers.txt from tools/gen_random_samplers_fixtures.py; the js_
// cases are for the JS package), plus vmap over keys and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace random_samplers_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln::Shape;
using kiln_test::FixtureCase;
using kiln_test::Params;
namespace np = kiln::numpy;
namespace rnd = kiln::random;

using Sampler = std::function<Array(const Array& key, const Shape&, const Params&, const FixtureCase&)>;
const std::map<std::string, Sampler>& samplers() {
  using P = const Params&;
  using C = const FixtureCase&;
  static const std::map<std::string, Sampler> t = {
      {"exponential", [](const Array& k, const Shape& s, P, C) { return rnd::exponential(k, s); }},
      {"gumbel", [](const Array& k, const Shape& s, P, C) { return rnd::gumbel(k, s); }},
      {"laplace", [](const Array& k, const Shape& s, P, C) { return rnd::laplace(k, s); }},
      {"logistic", [](const Array& k, const Shape& s, P, C) { return rnd::logistic(k, s); }},
      {"cauchy", [](const Array& k, const Shape& s, P, C) { return rnd::cauchy(k, s); }},
      {"lognormal", [](const Array& k, const Shape& s, P p, C) { return rnd::lognormal(k, p.real("sigma"), s); }},
      {"rayleigh", [](const Array& k, const Shape& s, P p, C) { return rnd::rayleigh(k, p.real("scale"), s); }},
      {"maxwell", [](const Array& k, const Shape& s, P, C) { return rnd::maxwell(k, s); }},
      {"double_sided_maxwell",
       [](const Array& k, const Shape& s, P p, C) {
         return rnd::double_sided_maxwell(k, p.real("loc"), p.real("scale"), s);
       }},
      {"pareto", [](const Array& k, const Shape& s, P p, C) { return rnd::pareto(k, p.real("b"), s); }},
      {"weibull_min",
       [](const Array& k, const Shape& s, P p, C) {
         return rnd::weibull_min(k, p.real("scale"), p.real("concentration"), s);
       }},
      {"triangular",
       [](const Array& k, const Shape& s, P p, C) {
         return rnd::triangular(k, p.real("left"), p.real("mode"), p.real("right"), s);
       }},
      {"geometric", [](const Array& k, const Shape& s, P p, C) { return rnd::geometric(k, p.real("p"), s); }},
      {"rademacher", [](const Array& k, const Shape& s, P, C) { return rnd::rademacher(k, s); }},
      {"multivariate_normal",
       [](const Array& k, const Shape& s, P, C c) {
         return rnd::multivariate_normal(k, kiln_test::to_array(c.inputs[0].array),
                                         kiln_test::to_array(c.inputs[1].array), s);
       }},
  };
  return t;
}

TEST(RandomSamplers, MatchJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/random_samplers.txt");
  int checked = 0;
  for (const FixtureCase& c : cases) {
    if (c.op.rfind("js_", 0) == 0) continue;
    SCOPED_TRACE(c.id);
    Array got = samplers().at(c.op)(rnd::key(c.params.integer("seed")), Shape(c.params.integers("shape")),
                                    c.params, c);
    const auto& want = c.expects[0];
    ASSERT_EQ(got.shape(), Shape(want.shape));
    ASSERT_EQ(kiln::dtype_name(got.dtype()), want.dtype);
    auto g = got.astype(kiln::float64).to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) {
      double w = want.is_float() ? want.floats[i] : double(want.ints[i]);
      ASSERT_NEAR(g[i], w, c.atol + c.rtol * std::fabs(w)) << "at " << i;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 60);
}

TEST(RandomSamplers, VmapOverKeysMatchesLoop) {
  Array keys = rnd::split(rnd::key(9), 3);
  for (const char* name : {"laplace", "maxwell", "rademacher"}) {
    SCOPED_TRACE(name);
    const Sampler& f = samplers().at(name);
    Params none;
    FixtureCase c;
    Array batched = kiln::vmap(kiln::ArrayFn([&](const Array& k) { return f(k, {5}, none, c); }))(keys);
    for (int64_t i = 0; i < 3; ++i) {
      auto got = batched[i].astype(kiln::float64).to_vector<double>();
      auto want = f(keys[i], {5}, none, c).astype(kiln::float64).to_vector<double>();
      for (size_t j = 0; j < got.size(); ++j) EXPECT_EQ(got[j], want[j]);
    }
  }
}

TEST(RandomSamplers, Errors) {
  Array k = rnd::key(0);
  EXPECT_THROW(rnd::exponential(k, {3}, kiln::int32), kiln::Error);
  EXPECT_THROW(rnd::pareto(k, np::ones({4}), {3}), kiln::Error);  // b does not broadcast to (3,)
  EXPECT_THROW(rnd::geometric(k, 0.5, {3}, kiln::float32), kiln::Error);
  EXPECT_THROW(rnd::rademacher(k, {3}, kiln::uint32), kiln::Error);
  EXPECT_THROW(rnd::multivariate_normal(k, np::zeros({3}), np::eye(2)), kiln::Error);
  EXPECT_THROW(rnd::cauchy(np::zeros({3}, kiln::uint32), {2}), kiln::Error);  // not a key
}

}  // namespace

}  // namespace random_samplers_test
