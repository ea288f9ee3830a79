// Checks ONNX graphs translated into kiln functions (kiln/onnx.h): outputs of models from
// tools/gen_onnx_fixtures.py against onnx's reference evaluator, at two sizes of a symbolic
// batch; gradients through Gemm and Conv against finite differences; load-time refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/jit.h"
#include "kiln/lax.h"
#include "kiln/numpy.h"
#include "kiln/transforms.h"
#include "ir/debug.h"
#include "models/conv_lowering.h"
#include "tests/onnx_test_util.h"

namespace onnx_graph_test {

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

kiln::formats::OnnxAttribute ints_attribute(const std::string& name, const std::vector<int64_t>& v) {
  kiln::formats::OnnxAttribute a;
  a.name = name;
  a.type = kiln::formats::OnnxAttributeType::Ints;
  a.ints = v;
  return a;
}

// sin(phase + 0.37 i) over the elements: values of both signs without repeats.
Array wave(const kiln::Shape& s, float phase) {
  int64_t count = 1;
  for (int64_t d : s) count *= d;
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(phase + 0.37f * float(i));
  return np::array(v, s);
}

// A ConvTranspose whose stride equals its kernel (PP-OCR det's 2x2 stride-2 upsampling) is
// computed as a reshaped view of one product (models/conv_transpose.cpp): its values are those
// of ONNX's definition, the convolution of the stride-dilated input with the flipped kernel
// (lax's lhs dilation, itself checked against JAX), with pads cut and output_padding added.
TEST(OnnxGraph, ConvTransposeWithStrideEqualToKernelIsTheDilatedConvolution) {
  struct Case {
    kiln::Shape x, w;
    std::vector<int64_t> pads, out_pad;
  };
  const std::vector<Case> cases = {
      {{1, 3, 4, 5}, {3, 2, 2, 2}, {0, 0, 0, 0}, {0, 0}},
      {{2, 4, 3, 5}, {4, 1, 2, 3}, {1, 0, 0, 2}, {1, 0}},
      {{1, 2, 7}, {2, 3, 4}, {1, 2}, {3}},
      {{1, 2, 2, 3, 2}, {2, 2, 2, 1, 3}, {0, 0, 1, 1, 0, 0}, {0, 1, 0}},
  };
  for (const Case& t : cases) {
    const size_t n = t.x.size() - 2;
    std::vector<int64_t> k(t.w.begin() + 2, t.w.end());
    kiln::formats::OnnxNode node;
    node.name = "up";
    node.op_type = "ConvTranspose";
    node.inputs = {"x", "w"};
    node.outputs = {"y"};
    node.attributes = {ints_attribute("strides", k), ints_attribute("pads", t.pads),
                       ints_attribute("output_padding", t.out_pad)};
    const auto& rule = kiln::onnx::find_rule(node, 17);
    const Array x = wave(t.x, 0.1f), w = wave(t.w, 1.3f);
    auto run = [&](const Array& xv) { return rule.rule(kiln::onnx::NodeContext(node, 17, {xv, w}, {})).at(0); };
    // [C_in, C_out, k...] -> [C_out, C_in, k...], flipped; padding k - 1 - pad (+ output_padding).
    std::vector<int> perm{1, 0}, spatial;
    std::vector<std::pair<int64_t, int64_t>> padding;
    for (size_t i = 0; i < n; ++i) {
      perm.push_back(int(i) + 2);
      spatial.push_back(int(i) + 2);
      padding.push_back({k[i] - 1 - t.pads[i], k[i] - 1 - t.pads[i + n] + t.out_pad[i]});
    }
    const Array rhs = np::flip(np::transpose(w, perm), kiln::Axes(spatial));
    const Array want = kiln::lax::conv_general_dilated(x, rhs, std::vector<int64_t>(n, 1), padding, k);
    for (const Array& got : {run(x), kiln::jit(kiln::ArrayFn(run))(x)}) {
      ASSERT_EQ(got.shape(), want.shape());
      const std::vector<float> g = got.to_vector<float>(), e = want.to_vector<float>();
      for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-6f * (1 + std::abs(e[i]))) << i;
    }
  }
}

// A 2-D Conv node of the given group, strides and ONNX pads (begins, then ends), run through
// its rule eagerly and under jit, against lax's NCHW convolution with the whole kernel.
struct ConvCase {
  kiln::Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, pads;
};

void expect_conv_matches_lax(const ConvCase& t) {
  kiln::formats::OnnxAttribute group;
  group.name = "group";
  group.type = kiln::formats::OnnxAttributeType::Int;
  group.i = t.group;
  kiln::formats::OnnxNode node;
  node.name = "conv";
  node.op_type = "Conv";
  node.inputs = {"x", "w"};
  node.outputs = {"y"};
  node.attributes = {ints_attribute("strides", t.strides), ints_attribute("pads", t.pads), group};
  const auto& rule = kiln::onnx::find_rule(node, 17);
  const Array x = wave(t.x, 0.1f), w = wave(t.w, 1.3f);
  auto run = [&](const Array& xv) { return rule.rule(kiln::onnx::NodeContext(node, 17, {xv, w}, {})).at(0); };
  const std::vector<std::pair<int64_t, int64_t>> padding = {{t.pads[0], t.pads[2]}, {t.pads[1], t.pads[3]}};
  const Array want = kiln::lax::conv_general_dilated(x, w, t.strides, padding, {}, {}, std::nullopt, t.group);
  for (const Array& got : {run(x), kiln::jit(kiln::ArrayFn(run))(x)}) {
    ASSERT_EQ(got.shape(), want.shape());
    const std::vector<float> g = got.to_vector<float>(), e = want.to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-5f * (1 + std::abs(e[i]))) << i;
  }
}

// Depthwise and pointwise Convs whose output rows are not a multiple of 4 wide run channels-last
// (models/conv_channels_last.cpp); they must give lax's NCHW convolution, strided and padded
// (asymmetric pads as auto_pad SAME_UPPER makes them), eager and under jit.
TEST(OnnxGraph, ConvsOfNarrowRowsRunChannelsLastAndMatchLax) {
  for (const ConvCase& t : std::vector<ConvCase>{
           {{1, 8, 3, 10}, {8, 1, 5, 5}, 8, {1, 1}, {2, 2, 2, 2}},     // PP-OCR det's last stage
           {{2, 12, 6, 13}, {12, 1, 3, 3}, 12, {2, 2}, {0, 1, 1, 0}},  // strided, asymmetric pads
           {{1, 4, 5, 9}, {4, 1, 3, 5}, 4, {1, 2}, {1, 1, 2, 2}},      // rectangular window
           {{2, 6, 3, 5}, {8, 6, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}},      // pointwise
       })
    expect_conv_matches_lax(t);
}

// Between two channels-last convs (a pointwise conv, its bias and ReLU, a depthwise conv over
// 10-pixel rows, as in PP-OCR det's last stage) the activation is written to a channels-last
// buffer under jit: the kernel computing it reads the product at its own flat index, not 8
// floats apart as it did when it wrote the NCHW value (models/conv_channels_last.cpp). The
// result is lax's NCHW convolutions'.
TEST(OnnxGraph, ActivationBetweenChannelsLastConvsIsWrittenChannelsLast) {
  const int64_t c = 8;
  auto values = [](int64_t n, float phase) {
    std::vector<float> v(size_t(n), 0.0f);
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(phase + 0.37f * float(i));
    return v;
  };
  const Array x = np::array(values(c * 30, 0.1f), {1, c, 3, 10}), w1 = np::array(values(c * c, 0.5f), {c, c, 1, 1}),
              b = np::array(values(c, 0.9f), {1, c, 1, 1}), w2 = np::array(values(c * 9, 1.3f), {c, 1, 3, 3});
  const std::vector<std::pair<int64_t, int64_t>> none{{0, 0}, {0, 0}}, one{{1, 1}, {1, 1}};
  auto net = [&](const Array& in) {
    const Array h = np::maximum(kiln::models::convolution(in, w1, {1, 1}, none, {1, 1}, 1) + b, Array(0.0f));
    return kiln::models::convolution(h, w2, {1, 1}, one, {1, 1}, c);
  };
  std::string log;
  const int saved = kiln::debug_level();
  kiln::set_debug(3);
  kiln::set_debug_sink([&](const std::string& line) { log += line + "\n"; });
  const Array got = kiln::jit(kiln::ArrayFn(net))(x);
  got.eval();
  kiln::set_debug_sink(nullptr);
  kiln::set_debug(saved);
  const Array h = np::maximum(kiln::lax::conv_general_dilated(x, w1, {1, 1}, none, {}, {}, std::nullopt, 1) + b, Array(0.0f));
  const Array want = kiln::lax::conv_general_dilated(h, w2, {1, 1}, one, {}, {}, std::nullopt, c);
  const std::vector<float> g = got.to_vector<float>(), e = want.to_vector<float>();
  ASSERT_EQ(g.size(), e.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-5f * (1 + std::abs(e[i]))) << i;
  // The ReLU's kernel: its one "max(" line, whose loads are all at gidx.
  const size_t kernels = log.find("jit kernels:");
  ASSERT_NE(kernels, std::string::npos) << log;
  std::vector<std::string> relu;
  for (size_t at = log.find("max(", kernels); at != std::string::npos; at = log.find("max(", at + 1)) {
    const size_t begin = log.rfind('\n', at) + 1, end = log.find('\n', at);
    relu.push_back(log.substr(begin, end - begin));
    at = end;
  }
  ASSERT_EQ(relu.size(), 1u) << log;
  EXPECT_NE(relu[0].find("in0[gidx]"), std::string::npos) << relu[0];
}

// Convs over maps smaller than their window (PP-OCR cls's 5x5 depthwise convs over 2 rows) drop
// the taps that read only padding (onnx_ops_nn.cpp); the result must still be lax's convolution
// with the whole kernel.
TEST(OnnxGraph, ConvsOverFewRowsDropPaddingOnlyTapsAndMatchLax) {
  for (const ConvCase& t : std::vector<ConvCase>{
           {{1, 8, 2, 12}, {8, 1, 5, 5}, 8, {1, 1}, {2, 2, 2, 2}},  // cls: kernel rows 0 and 4 go
           {{1, 3, 1, 8}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}},   // one row: rows 0 and 2 go
           {{2, 4, 3, 1}, {4, 2, 5, 5}, 2, {2, 1}, {2, 3, 1, 3}},   // strided, asymmetric, both axes
       })
    expect_conv_matches_lax(t);
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

}  // namespace onnx_graph_test
