// Checks kiln::optax against optax step for step (tests/fixtures/optax.txt from
// tools/gen_optax_fixtures.py): optimizers fed optax's gradients, and schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace optax_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln::Shape;
using kiln::Tree;
using kiln_test::FixtureArray;
using kiln_test::FixtureCase;
using kiln_test::Params;
using kiln_test::to_array;
namespace np = kiln::numpy;
namespace ox = kiln::optax;

double real_or(const Params& p, const std::string& k, double d) { return p.has(k) ? p.real(k) : d; }

ox::Schedule schedule(const std::string& name, const Params& p) {
  if (name == "constant") return ox::constant_schedule(p.real("value"));
  if (name == "linear")
    return ox::linear_schedule(p.real("init"), p.real("end"), p.integer("steps"),
                               p.integer("begin"));
  if (name == "polynomial")
    return ox::polynomial_schedule(p.real("init"), p.real("end"), p.real("power"),
                                   p.integer("steps"), p.integer("begin"));
  if (name == "cosine" || name == "cosine_exp")
    return ox::cosine_decay_schedule(p.real("init"), p.integer("steps"), p.real("alpha"),
                                     p.real("exponent"));
  if (name == "exponential" || name == "exponential_stair") {
    std::optional<double> end;
    if (!p.is_none("end")) end = p.real("end");
    return ox::exponential_decay(p.real("init"), p.integer("steps"), p.real("rate"),
                                 p.integer("begin"), p.integer("staircase") != 0, end);
  }
  if (name == "warmup_cosine")
    return ox::warmup_cosine_decay_schedule(p.real("init"), p.real("peak"), p.integer("warmup"),
                                            p.integer("steps"), p.real("end"));
  if (name == "piecewise")
    return ox::piecewise_constant_schedule(
        p.real("init"), {{p.integer("b1"), p.real("s1")}, {p.integer("b2"), p.real("s2")}});
  throw std::runtime_error("unknown schedule " + name);
}

// The fixture's schedules for `schedule` params of optimizer cases use the same arguments
// as the schedule cases of that name.
ox::ScalarOrSchedule lr(const Params& p, const std::vector<FixtureCase>& all) {
  if (!p.has("schedule")) return p.real("lr");
  for (const auto& c : all)
    if (c.op == "schedule" && c.params.str("name") == p.str("schedule"))
      return schedule(p.str("schedule"), c.params);
  throw std::runtime_error("no schedule case " + p.str("schedule"));
}

ox::GradientTransformation optimizer(const Params& p, const std::vector<FixtureCase>& all) {
  std::string n = p.str("name");
  std::optional<double> momentum;
  if (p.has("momentum")) momentum = p.real("momentum");
  if (n.rfind("sgd", 0) == 0)
    return ox::sgd(lr(p, all), momentum, p.has("nesterov") && p.integer("nesterov"));
  if (n.rfind("adamw", 0) == 0)
    return ox::adamw(lr(p, all), 0.9, 0.999, 1e-8, 0.0, p.real("weight_decay"));
  if (n.rfind("adam", 0) == 0)
    return ox::adam(lr(p, all), real_or(p, "b1", 0.9), real_or(p, "b2", 0.999),
                    real_or(p, "eps", 1e-8), real_or(p, "eps_root", 0.0));
  if (n.rfind("rmsprop", 0) == 0)
    return ox::rmsprop(lr(p, all), real_or(p, "decay", 0.9), 1e-8, 0.0, true, p.has("centered"),
                       momentum);
  if (n == "clip_adam")
    return ox::chain({ox::clip_by_global_norm(p.real("max_norm")), ox::adam(p.real("lr"))});
  if (n == "clip_sgd")
    return ox::chain({ox::clip_by_global_norm(p.real("max_norm")), ox::sgd(p.real("lr"))});
  throw std::runtime_error("unknown optimizer " + n);
}

void expect_close(const Array& got, const FixtureArray& want, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), Shape(want.shape)) << what;
  auto g = got.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want.floats[i], atol + rtol * std::fabs(want.floats[i]))
        << what << " at " << i;
}

TEST(Optax, MatchesOptaxStepForStep) {
  auto all = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/optax.txt");
  ASSERT_GT(all.size(), 15u);
  for (const auto& c : all) {
    SCOPED_TRACE(c.id + " (line " + std::to_string(c.line) + ")");
    if (c.op == "schedule") {
      ox::Schedule s = schedule(c.params.str("name"), c.params);
      std::vector<float> got;
      for (int i = 0; i < int(c.expects[0].size()); ++i)
        got.push_back(float(s(Array(np::array(std::vector<int32_t>{i}, {}))).item()));
      expect_close(np::array(got, {int64_t(got.size())}), c.expects[0], c.rtol, c.atol, "schedule");
      continue;
    }
    auto opt = optimizer(c.params, all);
    Tree params =
        Tree::Dict{{"b", to_array(c.inputs[0].array)}, {"w", to_array(c.inputs[1].array)}};
    Tree state = opt.init(params);
    for (size_t step = 0; 2 * step + 3 < c.inputs.size(); ++step) {
      Tree grads = Tree::Dict{{"b", to_array(c.inputs[2 + 2 * step].array)},
                              {"w", to_array(c.inputs[3 + 2 * step].array)}};
      auto [updates, new_state] = opt.update(grads, state, params);
      state = new_state;
      params = ox::apply_updates(params, updates);
      expect_close(params["b"].array(), c.expects[2 * step], c.rtol, c.atol,
                   "b at step " + std::to_string(step));
      expect_close(params["w"].array(), c.expects[2 * step + 1], c.rtol, c.atol,
                   "w at step " + std::to_string(step));
    }
  }
}

TEST(Optax, TrainsUnderGradAndDtypes) {
  // A whole loop with kiln::grad: adam minimizes a quadratic; params keep their dtype.
  auto opt = ox::adam(0.1);
  Tree params = Tree::Dict{{"x", np::array(std::vector<float>{3.0f, -2.0f}, {2})}};
  Tree state = opt.init(params);
  kiln::Fn loss = [](const std::vector<Tree>& a) -> Tree {
    return np::sum(np::square(a[0]["x"].array()));
  };
  for (int i = 0; i < 100; ++i) {
    Tree g = kiln::grad(loss)({params});
    auto [u, s] = opt.update(g, state, params);
    state = s;
    params = ox::apply_updates(params, u);
  }
  EXPECT_EQ(params["x"].array().dtype(), kiln::float32);
  for (float v : params["x"].array().to_vector<float>()) EXPECT_LT(std::fabs(v), 0.1f);
  EXPECT_EQ(state[0]["count"].array().item(), 100);
}

TEST(Optax, Errors) {
  auto opt = ox::adamw(0.1);
  Tree p = Tree::Dict{{"x", np::zeros({2})}};
  EXPECT_THROW(opt.update(p, Tree::List{}, p), kiln::Error);      // wrong state
  EXPECT_THROW(opt.update(p, opt.init(p), Tree()), kiln::Error);  // adamw needs params
  EXPECT_THROW(ox::cosine_decay_schedule(0.1, 0), kiln::Error);
  EXPECT_THROW(ox::join_schedules({ox::constant_schedule(1)}, {3}), kiln::Error);
  EXPECT_THROW(ox::piecewise_constant_schedule(0.1, {{2, -1.0}}), kiln::Error);
}

}  // namespace

}  // namespace optax_test
