// Checks composite transformed functions (MLP loss, softmax cross-entropy, a conv net,
// hessians, per-example gradients, custom_vjp) against JAX: tests/fixtures/transforms_jax.txt.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "jax_fixture_reader.h"
#include "kiln/kiln.h"

namespace transforms_jax_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;
namespace lax = kiln::lax;
using Named = std::map<std::string, Array>;

using JaxCase = kiln_test::JaxFixtureCase;

const std::vector<JaxCase>& all_cases() {
  static const std::vector<JaxCase> c = kiln_test::read_jax_fixture("transforms_jax.txt");
  return c;
}

Array mlp_loss(const Tree& p, const Array& x, const Array& y) {
  Array h = np::tanh(np::add(np::matmul(x, p["w1"].as_array()), p["b1"].as_array()));
  Array out = np::add(np::matmul(h, p["w2"].as_array()), p["b2"].as_array());
  return np::mean(np::square(np::subtract(out, y)));
}

Array log_softmax(const Array& x) {
  Array shifted = np::subtract(x, kiln::stop_gradient(np::max(x, -1, true)));
  return np::subtract(shifted, np::log(np::sum(np::exp(shifted), -1, true)));
}

Array convnet(const Array& x, const Array& k1, const Array& k2) {
  lax::ConvDimensionNumbers dn{"NCHW", "OIHW", "NCHW"};
  Array h = np::maximum(lax::conv_general_dilated(x, k1, {1, 1}, std::string("SAME"), {}, {}, dn),
                        Array(0.0));
  h = lax::reduce_window(h, lax::WindowOp::Max, {1, 1, 2, 2}, {1, 1, 2, 2}, std::string("VALID"));
  h = lax::conv_general_dilated(
      h, k2, {2, 1}, std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {0, 1}}, {}, {1, 2}, dn);
  return np::sum(np::square(np::tanh(h)));
}

Array rosenbrock(const Array& v) {
  Array a = v[std::vector<kiln::Index>{kiln::Slice{1, std::nullopt, std::nullopt}}];
  Array b = v[std::vector<kiln::Index>{kiln::Slice{std::nullopt, -1, std::nullopt}}];
  return np::sum(np::add(np::multiply(Array(100.0), np::square(np::subtract(a, np::square(b)))),
                         np::square(np::subtract(Array(1.0), b))));
}

using Impl = std::function<Named(const Named&)>;

const std::map<std::string, Impl>& table() {
  static const std::map<std::string, Impl> t = {
      {"mlp",
       [](const Named& in) {
         Tree p = Tree::Dict{
             {"w1", in.at("w1")}, {"b1", in.at("b1")}, {"w2", in.at("w2")}, {"b2", in.at("b2")}};
         Fn loss = [](const std::vector<Tree>& a) {
           return Tree(mlp_loss(a[0], a[1].as_array(), a[2].as_array()));
         };
         Tree r = kiln::value_and_grad(loss)({p, in.at("x"), in.at("y")});
         Named out{{"loss", r[0].as_array()}};
         for (auto& [k, v] : r[1].dict()) out["g_" + k] = v.as_array();
         return out;
       }},
      {"xent",
       [](const Named& in) {
         Array labels = in.at("labels");
         auto loss = [labels](const Array& logits) {
           Array lp = log_softmax(logits);
           return np::negative(
               np::mean(np::take_along_axis(lp, labels.reshape({labels.size(), 1}), 1)));
         };
         auto [l, g] = kiln::value_and_grad(loss)(in.at("logits"));
         return Named{{"loss", l}, {"g_logits", g}};
       }},
      {"convnet",
       [](const Named& in) {
         Fn f = [](const std::vector<Tree>& a) {
           return Tree(convnet(a[0].as_array(), a[1].as_array(), a[2].as_array()));
         };
         Tree r = kiln::value_and_grad(f, {0, 1, 2})({in.at("x"), in.at("k1"), in.at("k2")});
         return Named{{"loss", r[0].as_array()},
                      {"g_x", r[1][0].as_array()},
                      {"g_k1", r[1][1].as_array()},
                      {"g_k2", r[1][2].as_array()}};
       }},
      {"rosenbrock",
       [](const Named& in) {
         return Named{{"hessian", kiln::hessian(rosenbrock)(in.at("v"))},
                      {"grad", kiln::grad(rosenbrock)(in.at("v"))}};
       }},
      {"per_example",
       [](const Named& in) {
         Fn loss = [](const std::vector<Tree>& a) {
           Array d =
               np::subtract(np::tanh(np::dot(a[1].as_array(), a[0].as_array())), a[2].as_array());
           return Tree(np::square(d));
         };
         Tree g = kiln::vmap(kiln::grad(loss), Tree::List{std::nullopt, 0, 0})(
             {in.at("w"), in.at("xs"), in.at("ys")});
         return Named{{"grads", g.as_array()}};
       }},
      {"sin3",
       [](const Named& in) {
         kiln::ArrayFn s = [](const Array& x) { return np::sin(x); };
         return Named{{"d3", kiln::vmap(kiln::grad(kiln::grad(kiln::grad(s))))(in.at("xs"))}};
       }},
      {"clip",
       [](const Named& in) {
         kiln::ArrayFn clip = kiln::custom_vjp(
             [](const Array& x) { return x; },
             [](const Array& x) {
               return std::pair{x, Tree()};
             },
             [](const Tree&, const Array& g) { return np::clip(g, Array(-0.1), Array(0.1)); });
         kiln::ArrayFn loss = [clip](const Array& x) {
           return np::sum(np::add(np::multiply(Array(3.0), clip(np::multiply(np::sin(x), x))),
                                  np::multiply(Array(0.05), np::square(x))));
         };
         return Named{{"grad", kiln::grad(loss)(in.at("x"))}};
       }},
  };
  return t;
}

class JaxFixtures : public ::testing::TestWithParam<size_t> {};

TEST_P(JaxFixtures, Matches) {
  const JaxCase& c = all_cases()[GetParam()];
  ASSERT_TRUE(table().count(c.function)) << "no C++ implementation of " << c.function;
  // Inputs made here, on the device the suite runs on.
  kiln_test::expect_matches_jax(c, table().at(c.function)(kiln_test::fixture_inputs(c)));
}

INSTANTIATE_TEST_SUITE_P(Transforms, JaxFixtures, ::testing::Range<size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                           return all_cases()[i.param].id;
                         });

TEST(JaxFixturesFile, HasEveryCase) { EXPECT_EQ(all_cases().size(), 14u); }

}  // namespace

}  // namespace transforms_jax_test
