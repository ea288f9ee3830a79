// Checks ONNX graphs translated into kiln functions (kiln/onnx.h): outputs of models from
// tools/gen_onnx_fixtures.py against onnx's reference evaluator, at two sizes of a symbolic
// batch; gradients through Gemm and Conv against finite differences; load-time refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/jit.h"
#include "kiln/numpy.h"
#include "kiln/transforms.h"
#include "tests/onnx_test_util.h"

namespace {

namespace np = kiln::numpy;
using kiln::Array;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/onnx/";

kiln::onnx::Model load(const std::string& name) {
  const std::vector<uint8_t> bytes = kiln_test::read_bytes(kDir + name);
  EXPECT_FALSE(bytes.empty()) << name;
  return kiln::onnx::Model::load(bytes);
}

std::string load_error(const std::string& name) {
  try {
    load(name);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxGraph, MatchesTheReferenceEvaluatorAtEachBatchSize) {
  for (const auto& [name, cases] : {std::pair{"gemm", 2}, {"conv", 1}}) {
    const kiln::onnx::Model m = load(std::string(name) + ".onnx");
    ASSERT_EQ(m.input_names().size(), 1u);
    for (int k = 0; k < cases; ++k) {
      SCOPED_TRACE(std::string(name) + " case " + std::to_string(k));
      const std::string stem = kDir + name + ".";
      Array x = kiln_test::read_tensor_pb(stem + "in" + std::to_string(k) + "_0.pb");
      Array want = kiln_test::read_tensor_pb(stem + "out" + std::to_string(k) + "_0.pb");
      auto out = m.run({{m.input_names()[0], x}});
      EXPECT_EQ(kiln_test::allclose_mismatch(out.at(m.output_names()[0]), want, 1e-5, 1e-6), "");
      // The pure function gives the same values eagerly.
      EXPECT_EQ(kiln_test::allclose_mismatch(m.call({x})[0], want, 1e-5, 1e-6), "");
    }
  }
}

// d/dx sum(graph(x) * weights) by grad and by central differences in float64 of the float32 graph.
void expect_gradient_matches_differences(const std::string& name) {
  SCOPED_TRACE(name);
  const kiln::onnx::Model m = load(name + ".onnx");
  const Array x = kiln_test::read_tensor_pb(kDir + name + ".in0_0.pb");
  const kiln::Fn f = m.function();
  const Array weights = np::cos(np::arange(int64_t(m.call({x})[0].size()), kiln::float32) * 0.7)
                            .reshape(m.call({x})[0].shape());
  auto loss = [&](const Array& v) { return np::sum(f({kiln::Tree(kiln::Tree::List{v})})[0].as_array() * weights); };
  const Array g = kiln::jit(kiln::grad(loss))(x);
  const std::vector<float> xv = x.to_vector<float>(), gv = g.to_vector<float>();
  const double h = 1e-2;
  for (size_t i = 0; i < xv.size(); i += std::max<size_t>(1, xv.size() / 12)) {
    std::vector<float> up = xv, down = xv;
    up[i] += float(h), down[i] -= float(h);
    const double fd = (loss(np::array(up, x.shape())).item() - loss(np::array(down, x.shape())).item()) / (2 * h);
    EXPECT_NEAR(gv[i], fd, 2e-3 + 2e-2 * std::abs(fd)) << "element " << i;
  }
}

TEST(OnnxGraph, GradientThroughGemmAndConvMatchesFiniteDifferences) {
  expect_gradient_matches_differences("gemm");
  expect_gradient_matches_differences("conv");
}

// Pow by a constant exponent 2 is a multiply (onnx_ops_elementwise.cpp): it must give the
// bits of the general pow, on whichever device KILN_DEVICE names, for every kind of float
// (signs, subnormal squares, overflow, infinities, NaN), eagerly and under jit.
TEST(OnnxGraph, PowByConstantTwoGivesThePowBits) {
  kiln::formats::OnnxNode node;
  node.name = "sq";
  node.op_type = "Pow";
  node.inputs = {"x", "two"};
  node.outputs = {"y"};
  const auto& rule = kiln::onnx::find_rule(node, 13);
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, -3.5f, 1e-20f, -1e-23f, 1e20f, -3e19f, 1.5e-45f,
                           std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 300; ++i) xs.push_back(std::sin(0.731f * float(i)) * std::exp2(float(i % 60 - 30)));
  const Array x = np::array(xs, {int64_t(xs.size())});
  for (const kiln::Shape& e : {kiln::Shape{}, kiln::Shape{1}}) {
    const Array two = np::full(e, 2.0f, kiln::float32);
    auto run = [&](const Array& v) {
      const kiln::onnx::NodeContext ctx(node, 13, {v, two}, {});
      return rule.rule(ctx).at(0);
    };
    const Array want = np::power(x, two);
    EXPECT_EQ(run(x).bytes(), want.bytes());
    EXPECT_EQ(kiln::jit(kiln::ArrayFn(run))(x).bytes(), want.bytes());
  }
}

TEST(OnnxGraph, RefusesUnsupportedGraphsAtLoad) {
  std::string e = load_error("bad_op.onnx");
  EXPECT_NE(e.find("node 'mystery' (NoSuchOp, opset 13): operator NoSuchOp is not supported"), std::string::npos) << e;
  e = load_error("bad_attr.onnx");
  EXPECT_NE(e.find("node 'r' (Relu, opset 13): attribute 'alpha' is not supported (supported: none)"), std::string::npos)
      << e;
  e = load_error("bad_order.onnx");
  EXPECT_NE(e.find("node 'late' (Neg, node 0): input 't' is not defined"), std::string::npos) << e;
  e = load_error("bad_opset.onnx");
  EXPECT_NE(e.find("node 'g' (Gelu, opset 17): supported for opsets 20.."), std::string::npos) << e;
}

TEST(OnnxGraph, ChecksFeedsAgainstDeclaredTypes) {
  const kiln::onnx::Model m = load("gemm.onnx");
  EXPECT_EQ(m.inputs()[0].dim_params, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(m.inputs()[0].shape, (kiln::Shape{-1, 3}));
  auto error_of = [&](const std::map<std::string, Array>& feeds) -> std::string {
    try {
      m.run(feeds);
    } catch (const kiln::Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of({{"x", np::zeros({2, 4})}}).find("expected size 3 at axis 1"), std::string::npos);
  EXPECT_NE(error_of({{"x", np::zeros({2, 3}, kiln::int32)}}).find("has dtype int32, expected float32"), std::string::npos);
  EXPECT_NE(error_of({}).find("no feed for input 'x'"), std::string::npos);
  EXPECT_NE(error_of({{"x", np::zeros({2, 3})}, {"z", np::zeros({1})}}).find("feed 'z' is not an input"),
            std::string::npos);
}

TEST(OnnxGraph, SymbolicDimensionsTakeAnySizeButOneAcrossInputs) {
  const kiln::onnx::Model m = load("shared_dim.onnx");
  for (int64_t n : {1, 4, 2}) {
    const Array a = np::arange(n * 3, kiln::float32).reshape({n, 3}), b = np::ones({n, 3});
    const auto out = m.run({{"a", a}, {"b", b}});
    EXPECT_EQ(out.at("y").shape(), (kiln::Shape{n, 3}));
    EXPECT_EQ(kiln_test::allclose_mismatch(out.at("y"), a + 1.0), "");
  }
  try {
    m.run({{"a", np::zeros({2, 3})}, {"b", np::zeros({3, 3})}});
    ADD_FAILURE() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'b': has size 3 at axis 0 for dimension 'N', which another input set to 2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
