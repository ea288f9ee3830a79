// Checks kiln::nn against jax.nn values and gradients (tests/fixtures/nn.txt from
// tools/gen_nn_fixtures.py), with gradients taken by kiln::grad, plus argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace nn_test {

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
namespace nn = kiln::nn;


kiln::Axes axes_param(const Params& p) {
  if (p.is_none("axis")) return {};
  return kiln::Axes(int(p.integer("axis")));
}
kiln::Axes axis_list(const Params& p) {
  const auto& t = p.tokens("axis");
  if (t.size() > 1 && t[0] == "list") {
    std::vector<int> v;
    for (size_t i = 1; i < t.size(); ++i) v.push_back(std::stoi(t[i]));
    return kiln::Axes(v);
  }
  return axes_param(p);
}

using Unary = std::function<Array(const Array&, const Params&)>;
const std::map<std::string, Unary>& unary() {
  static const std::map<std::string, Unary> t = {
      {"relu", [](const Array& x, const Params&) { return nn::relu(x); }},
      {"relu6", [](const Array& x, const Params&) { return nn::relu6(x); }},
      {"sigmoid", [](const Array& x, const Params&) { return nn::sigmoid(x); }},
      {"log_sigmoid", [](const Array& x, const Params&) { return nn::log_sigmoid(x); }},
      {"silu", [](const Array& x, const Params&) { return nn::silu(x); }},
      {"softplus", [](const Array& x, const Params&) { return nn::softplus(x); }},
      {"elu", [](const Array& x, const Params& p) { return nn::elu(x, p.real("alpha")); }},
      {"leaky_relu",
       [](const Array& x, const Params& p) { return nn::leaky_relu(x, p.real("negative_slope")); }},
      {"gelu",
       [](const Array& x, const Params& p) { return nn::gelu(x, p.integer("approximate") != 0); }},
      {"softmax", [](const Array& x, const Params& p) { return nn::softmax(x, axis_list(p)); }},
      {"log_softmax",
       [](const Array& x, const Params& p) { return nn::log_softmax(x, axis_list(p)); }},
      {"logsumexp",
       [](const Array& x, const Params& p) {
         return nn::logsumexp(x, axis_list(p), p.integer("keepdims") != 0);
       }},
      {"standardize",
       [](const Array& x, const Params& p) {
         return nn::standardize(x, axis_list(p), std::nullopt, std::nullopt,
                                p.has("epsilon") ? p.real("epsilon") : 1e-5);
       }},
  };
  return t;
}

void expect_close(const Array& got, const FixtureArray& want, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), Shape(want.shape)) << what;
  auto g = got.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    double w = want.is_float() ? want.floats[i] : double(want.ints[i]);
    if (std::isinf(w)) {
      EXPECT_EQ(g[i], w) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(g[i], w, atol + rtol * std::fabs(w)) << what << " at " << i;
  }
}

nn::Initializer initializer(const std::string& name) {
  static const std::map<std::string, nn::Initializer> t = {{"glorot_uniform", nn::glorot_uniform()},
                                                           {"glorot_normal", nn::glorot_normal()},
                                                           {"he_uniform", nn::he_uniform()},
                                                           {"he_normal", nn::he_normal()},
                                                           {"lecun_uniform", nn::lecun_uniform()},
                                                           {"lecun_normal", nn::lecun_normal()},
                                                           {"uniform", nn::uniform()},
                                                           {"normal", nn::normal()},
                                                           {"zeros", nn::zeros()},
                                                           {"ones", nn::ones()}};
  return t.at(name);
}

void check_case(const FixtureCase& c) {
  SCOPED_TRACE(c.id + " (line " + std::to_string(c.line) + ")");
  const Params& p = c.params;
  const double rtol = 2e-6, atol = 1e-6;
  if (c.op == "one_hot") {
    Array x = to_array(c.inputs[0].array);
    expect_close(nn::one_hot(x, p.integer("num_classes"), kiln::float32, int(p.integer("axis"))),
                 c.expects[0], 0, 0, "value");
  } else if (c.op == "init") {
    Array v = initializer(p.str("name"))(kiln::random::key(p.integer("seed")),
                                         Shape(p.integers("shape")), kiln::float32);
    // truncated_normal goes through XLA's erf of the bounds and erf_inv: a few ulp.
    expect_close(v, c.expects[0], 1e-5, 1e-7, "value");
  } else if (c.op == "dot_product_attention") {
    std::vector<Array> in;
    for (const auto& i : c.inputs) in.push_back(to_array(i.array));
    std::optional<Array> bias, mask;
    size_t next = 4;
    if (p.integer("bias")) bias = in[next++];
    if (p.integer("mask")) mask = in[next++] > Array(0.5);
    std::optional<double> scale;
    if (!p.is_none("scale")) scale = p.real("scale");
    bool causal = p.integer("is_causal") != 0;
    Array cot = in[3];
    kiln::Fn f = [&](const std::vector<Tree>& a) -> Tree {
      return np::sum(nn::dot_product_attention(a[0].array(), a[1].array(), a[2].array(), bias, mask,
                                               scale, causal) *
                     cot);
    };
    expect_close(nn::dot_product_attention(in[0], in[1], in[2], bias, mask, scale, causal),
                 c.expects[0], rtol, atol, "out");
    Tree g = kiln::grad(f, {0, 1, 2})({in[0], in[1], in[2]});
    for (int i = 0; i < 3; ++i)
      expect_close(g[size_t(i)].array(), c.expects[size_t(1 + i)], 1e-5, 1e-5,
                   "grad " + std::to_string(i));
  } else {
    const Unary& fn = unary().at(c.op);
    Array x = to_array(c.inputs[0].array), cot = to_array(c.inputs[1].array);
    expect_close(fn(x, p), c.expects[0], rtol, atol, "value");
    if (c.expects.size() > 1) {
      auto g =
          kiln::grad(kiln::ArrayFn([&](const Array& v) { return np::sum(fn(v, p) * cot); }))(x);
      expect_close(g, c.expects[1], 1e-5, 1e-5, "grad");
    }
  }
}

TEST(Nn, MatchesJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/nn.txt");
  ASSERT_GT(cases.size(), 40u);
  for (const auto& c : cases) check_case(c);
}

TEST(Nn, SoftmaxVmapMatchesLoop) {
  Array x = kiln::random::normal(kiln::random::key(3), {4, 6});
  Array b = kiln::vmap(kiln::ArrayFn([](const Array& r) { return nn::softmax(r); }))(x);
  for (int64_t i = 0; i < 4; ++i) {
    auto got = b[i].to_vector<float>(), want = nn::softmax(x[i]).to_vector<float>();
    for (size_t j = 0; j < got.size(); ++j) EXPECT_FLOAT_EQ(got[j], want[j]);
  }
}

// JAX returns an empty result for an empty input (max would have no identity to start from).
TEST(Nn, SoftmaxOfEmptyIsEmpty) {
  EXPECT_EQ(nn::softmax(np::zeros({2, 0})).shape(), (Shape{2, 0}));
  EXPECT_EQ(nn::log_softmax(np::zeros({0, 3}), 0).shape(), (Shape{0, 3}));
}

TEST(Nn, Errors) {
  Array q = np::zeros({2, 3, 4, 8}), k = np::zeros({2, 5, 3, 8});
  EXPECT_THROW(nn::dot_product_attention(q, k, k), kiln::Error);  // 3 kv heads do not divide 4
  EXPECT_THROW(nn::dot_product_attention(np::zeros({3, 4}), q, q), kiln::Error);
  Array k2 = np::zeros({2, 5, 2, 8});
  EXPECT_THROW(nn::dot_product_attention(q, k2, k2, np::zeros({3, 3})), kiln::Error);
  EXPECT_THROW(nn::one_hot(np::zeros({2}, kiln::int32), -1), kiln::Error);
  EXPECT_THROW(nn::softmax(np::zeros({2, 3}), 2), kiln::Error);
  EXPECT_THROW(nn::glorot_uniform()(kiln::random::key(0), {5}, kiln::float32), kiln::Error);
  EXPECT_THROW(nn::variance_scaling(1.0, "fan_sideways", "uniform"), kiln::Error);
}

}  // namespace

}  // namespace nn_test
