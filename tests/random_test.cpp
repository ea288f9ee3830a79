// Checks kiln::random against jax.random bit for bit (tests/fixtures/random.txt from
// tools/gen_random_fixtures.py), plus vmap over keys, tracing and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "kiln/kiln.h"

namespace random_test {

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

const std::vector<FixtureCase>& cases() {
  static const std::vector<FixtureCase> c =
      kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/random.txt");
  return c;
}

Shape shape_param(const Params& p, const std::string& k) { return Shape(p.integers(k)); }

// key(seed) followed by the case's chain of split:<num>:<index> and fold:<data> steps.
Array derive(const Params& p) {
  Array k = rnd::key(p.integer("seed"));
  if (p.is_none("chain")) return k;
  for (const std::string& step : p.tokens("chain")) {
    auto a = step.find(':');
    std::string op = step.substr(0, a);
    if (op == "split") {
      auto b = step.find(':', a + 1);
      k = rnd::split(k, std::stoll(step.substr(a + 1, b - a - 1)))[std::stoll(step.substr(b + 1))];
    } else {
      k = rnd::fold_in(k, Array(int(std::stoll(step.substr(a + 1)))));
    }
  }
  return k;
}

using Op = std::function<Array(const Array& key, const Params&)>;
const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> t = {
      {"key", [](const Array& k, const Params&) { return k; }},
      {"split",
       [](const Array& k, const Params& p) { return rnd::split(k, shape_param(p, "shape")); }},
      {"fold_in",
       [](const Array& k, const Params& p) {
         return rnd::fold_in(k, np::array(std::vector<uint32_t>{uint32_t(p.integer("data"))}, {}));
       }},
      {"bits",
       [](const Array& k, const Params& p) { return rnd::bits(k, shape_param(p, "shape")); }},
      {"uniform",
       [](const Array& k, const Params& p) {
         return rnd::uniform(k, shape_param(p, "shape"), kiln::dtype_from_name(p.str("dtype")),
                             p.real("min"), p.real("max"));
       }},
      {"normal",
       [](const Array& k, const Params& p) { return rnd::normal(k, shape_param(p, "shape")); }},
      {"truncated_normal",
       [](const Array& k, const Params& p) {
         return rnd::truncated_normal(k, p.real("lower"), p.real("upper"), shape_param(p, "shape"));
       }},
      {"bernoulli",
       [](const Array& k, const Params& p) {
         return rnd::bernoulli(k, p.real("p"), shape_param(p, "shape"));
       }},
      {"categorical",
       [](const Array& k, const Params& p) {
         std::vector<float> l(20);
         for (int i = 0; i < 20; ++i) l[size_t(i)] = std::log(float(i + 1));
         std::optional<Shape> s;
         if (!p.is_none("shape")) s = shape_param(p, "shape");
         return rnd::categorical(k, np::array(l, {4, 5}), int(p.integer("axis")), s);
       }},
      {"randint",
       [](const Array& k, const Params& p) {
         return rnd::randint(k, shape_param(p, "shape"), Array(int(p.integer("min"))),
                             Array(int(p.integer("max"))));
       }},
      {"permutation",
       [](const Array& k, const Params& p) { return rnd::permutation(k, p.integer("n")); }},
      {"permutation_x",
       [](const Array& k, const Params& p) {
         return rnd::permutation(k, np::arange(12).reshape({3, 4}), int(p.integer("axis")),
                                 p.integer("independent") != 0);
       }},
  };
  return t;
}

// Distance in float32 ulps (both finite).
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  auto key = [](int32_t i) { return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i); };
  return std::llabs(key(ia) - key(ib));
}

void check_case(const FixtureCase& c) {
  SCOPED_TRACE(c.id + " (line " + std::to_string(c.line) + ")");
  Array got = ops().at(c.op)(derive(c.params), c.params);
  const auto& want = c.expects.at(0);
  ASSERT_EQ(got.shape(), Shape(want.shape));
  ASSERT_EQ(kiln::dtype_name(got.dtype()), want.dtype);
  if (!want.is_float()) {
    auto g = got.astype(kiln::float64).to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(int64_t(g[i]), want.ints[i]) << "at " << i;
    return;
  }
  auto g = got.to_vector<double>();
  // normal goes through erf_inv, where XLA's log1p differs by up to 2 ulp;
  // truncated_normal also through XLA's float32 erf of the bounds (not kiln's).
  for (size_t i = 0; i < g.size(); ++i) {
    if (c.op == "truncated_normal")
      ASSERT_NEAR(g[i], want.floats[i], 1e-7 + 1e-6 * std::fabs(want.floats[i])) << "at " << i;
    else if (c.op == "normal")
      ASSERT_LE(ulps(float(g[i]), float(want.floats[i])), 3)
          << "at " << i << ": " << g[i] << " vs " << want.floats[i];
    else
      ASSERT_EQ(g[i], want.floats[i]) << "at " << i;
  }
}

TEST(Random, MatchesJax) {
  ASSERT_GT(cases().size(), 100u);
  for (const auto& c : cases()) check_case(c);
}

TEST(Random, VmapOverKeysMatchesLoop) {
  Array keys = rnd::split(rnd::key(42), 4);
  auto f = [](const Array& k) { return rnd::uniform(rnd::fold_in(k, Array(3)), {5}); };
  Array batched = kiln::vmap(kiln::ArrayFn(f))(keys);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(batched[i].to_vector<float>(), f(keys[i]).to_vector<float>()) << i;
  // split under vmap: one (2, 2) block of keys per batch element.
  Array sp = kiln::vmap(kiln::ArrayFn([](const Array& k) { return rnd::split(k); }))(keys);
  EXPECT_EQ(sp.shape(), (Shape{4, 2, 2}));
  EXPECT_EQ(sp[2].to_vector<uint32_t>(), rnd::split(keys[2]).to_vector<uint32_t>());
}

TEST(Random, TracedPermutationMatchesHost) {
  // Under vmap the O(n^2) ranking path runs; it must agree with the host sort.
  Array keys = rnd::split(rnd::key(7), 3);
  Array traced =
      kiln::vmap(kiln::ArrayFn([](const Array& k) { return rnd::permutation(k, 50); }))(keys);
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ(traced[i].to_vector<int32_t>(), rnd::permutation(keys[i], 50).to_vector<int32_t>());
}

TEST(Random, GradThroughSamplerParams) {
  // uniform is affine in (minval, maxval): d/dmax of sum(uniform) = sum(u).
  Array k = rnd::key(1);
  auto g = kiln::grad(kiln::ArrayFn(
      [&](const Array& hi) { return np::sum(rnd::uniform(k, {6}, kiln::float32, 0.0, hi)); }));
  double want = np::sum(rnd::uniform(k, {6})).item();
  EXPECT_NEAR(g(Array(1.0f)).item(), want, 1e-5);
}

TEST(Random, Errors) {
  Array k = rnd::key(0);
  EXPECT_THROW(rnd::split(np::zeros({3})), kiln::Error);
  EXPECT_THROW(rnd::bits(rnd::split(k)), kiln::Error);  // a batch of keys: vmap instead
  EXPECT_THROW(rnd::uniform(k, {2}, kiln::int32), kiln::Error);
  EXPECT_THROW(rnd::uniform(k, {2}, kiln::float32, np::zeros({3})), kiln::Error);
  EXPECT_THROW(rnd::randint(k, {2}, 0.0, 5.0, kiln::float32), kiln::Error);
  EXPECT_THROW(rnd::fold_in(k, np::zeros({2}, kiln::int32)), kiln::Error);
  EXPECT_THROW(rnd::categorical(k, np::zeros({3, 4}), -1, Shape{5}), kiln::Error);
  EXPECT_THROW(rnd::permutation(k, -1), kiln::Error);
  try {
    rnd::split(np::zeros({3}));
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("split"), std::string::npos) << e.what();
  }
}

}  // namespace

}  // namespace random_test
