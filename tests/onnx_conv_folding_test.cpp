// Per-channel affines after a Conv folded into its weights and bias at load
// (models/onnx/onnx_conv_folding.cpp, models/conv_folding.cpp): a model written here with
// formats::WireWriter in which one Conv (its bias a Constant node's value, as PaddleOCR's exports
// give every weight) is followed by BatchNormalization, a Mul by a per-channel constant and an
// Add of a scalar constant (all three fold), and a second Conv whose
// output a graph output also reads (nothing folds: that output must stay the raw conv). The
// pass must leave the expected nodes, and the model's outputs must match the unfolded graph
// computed on the host in float64.
#include <gtest/gtest.h>

#include <cmath>

#include "formats/onnx.h"
#include "formats/protobuf_writer.h"
#include "kiln/numpy.h"
#include "kiln/onnx.h"
#include "models/conv_folding.h"
#include "models/onnx/onnx_conv_folding.h"
#include "models/onnx/onnx_ops.h"

namespace onnx_conv_folding_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::formats::WireWriter;

constexpr int32_t kFloat = 1;                    // TensorProto.FLOAT
constexpr int64_t kC = 2, kO = 4, kH = 3, kW = 5;  // x [1, C, H, W], 3x3 kernels, pads 1

WireWriter value_info(const std::string& name, const std::vector<int64_t>& dims) {
  WireWriter shape, tensor, type, v;
  for (int64_t d : dims) {
    WireWriter dim;
    dim.varint(1, uint64_t(d));
    shape.message(1, dim);
  }
  tensor.varint(1, kFloat);
  tensor.message(2, shape);
  type.message(1, tensor);
  v.string(1, name);
  v.message(2, type);
  return v;
}

WireWriter node(const std::string& op, const std::vector<std::string>& ins, const std::string& out,
                const std::vector<WireWriter>& attributes = {}) {
  WireWriter n;
  for (const std::string& in : ins) n.string(1, in);
  n.string(2, out);
  n.string(3, out + "_node");
  n.string(4, op);
  for (const WireWriter& a : attributes) n.message(5, a);
  return n;
}

WireWriter ints_attribute(const std::string& name, const std::vector<int64_t>& v) {
  WireWriter a;
  a.string(1, name);
  for (int64_t x : v) a.varint(8, uint64_t(x));
  a.varint(20, 7);  // INTS
  return a;
}

WireWriter initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
  WireWriter t;
  t.packed_varints(1, std::span<const int64_t>(dims));
  t.varint(2, kFloat);
  t.packed_floats(4, v);
  t.string(8, name);
  return t;
}

WireWriter constant_node(const std::string& out, const WireWriter& tensor) {
  WireWriter a;
  a.string(1, "value");
  a.message(5, tensor);  // t
  a.varint(20, 4);       // TENSOR
  return node("Constant", {}, out, {a});
}

std::vector<float> wave(size_t n, float phase, float scale = 1) {
  std::vector<float> v(n);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(phase + 0.37f * float(i));
  return v;
}

struct Params {
  std::vector<float> w = wave(kO * kC * 9, 0.3f), b = wave(kO, 2.0f), gamma = wave(kO, 0.9f),
                     beta = wave(kO, 1.7f), mean = wave(kO, 0.4f), mul = wave(kO, 2.5f), add = {0.75f},
                     w2 = wave(kO * kC * 9, 1.3f);
  std::vector<float> var{0.5f, 1.5f, 2.0f, 0.25f};
};

// y = Relu(Add(Mul(BN(Conv(x, w, b)), mul [O, 1, 1]), add [1])); z = BN(Conv(x, w2)), and
// z_raw = Conv(x, w2) itself is an output too.
std::vector<uint8_t> model_bytes(const Params& p) {
  WireWriter g, opset, m;
  const WireWriter pads = ints_attribute("pads", {1, 1, 1, 1});
  g.message(1, constant_node("b", initializer("b", {kO}, p.b)));
  g.message(1, node("Conv", {"x", "w", "b"}, "c", {pads}));
  g.message(1, node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, "n"));
  g.message(1, node("Mul", {"mul", "n"}, "s"));
  g.message(1, node("Add", {"s", "add"}, "t"));
  g.message(1, node("Relu", {"t"}, "y"));
  g.message(1, node("Conv", {"x", "w2"}, "z_raw", {pads}));
  g.message(1, node("BatchNormalization", {"z_raw", "gamma", "beta", "mean", "var"}, "z"));
  g.string(2, "folding");
  g.message(5, initializer("w", {kO, kC, 3, 3}, p.w));
  g.message(5, initializer("gamma", {kO}, p.gamma));
  g.message(5, initializer("beta", {kO}, p.beta));
  g.message(5, initializer("mean", {kO}, p.mean));
  g.message(5, initializer("var", {kO}, p.var));
  g.message(5, initializer("mul", {kO, 1, 1}, p.mul));
  g.message(5, initializer("add", {1}, p.add));
  g.message(5, initializer("w2", {kO, kC, 3, 3}, p.w2));
  g.message(11, value_info("x", {1, kC, kH, kW}));
  for (const char* out : {"y", "z", "z_raw"}) g.message(12, value_info(out, {1, kO, kH, kW}));
  opset.string(1, "");
  opset.varint(2, 15);
  m.varint(1, 8);
  m.message(8, opset);
  m.message(7, g);
  return m.take();
}

// The unfolded graph on the host, in float64: conv (+ bias), then BN, then the rest.
std::vector<double> host_conv(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* b) {
  std::vector<double> y(size_t(kO * kH * kW));
  for (int64_t o = 0; o < kO; ++o)
    for (int64_t i = 0; i < kH; ++i)
      for (int64_t j = 0; j < kW; ++j) {
        double s = b ? (*b)[size_t(o)] : 0.0;
        for (int64_t c = 0; c < kC; ++c)
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t d = 0; d < 3; ++d) {
              const int64_t r = i + a - 1, q = j + d - 1;
              if (r < 0 || r >= kH || q < 0 || q >= kW) continue;
              s += double(x[size_t((c * kH + r) * kW + q)]) * double(w[size_t(((o * kC + c) * 3 + a) * 3 + d)]);
            }
        y[size_t((o * kH + i) * kW + j)] = s;
      }
  return y;
}

double host_bn(const Params& p, double v, size_t o) {
  return (v - p.mean[o]) / std::sqrt(double(p.var[o]) + 1e-5) * p.gamma[o] + p.beta[o];
}

void expect_near(const Array& got, const std::vector<double>& want) {
  const std::vector<float> g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
}

TEST(OnnxConvFolding, AffinesAfterAConvFoldIntoItsWeights) {
  const Params p;
  const std::vector<uint8_t> bytes = model_bytes(p);
  // The pass itself: the first chain becomes Conv -> Relu; the second Conv's output is also
  // a graph output, so its BatchNormalization stays.
  kiln::formats::OnnxModel parsed = kiln::formats::parse_onnx_model(bytes);
  std::map<std::string, Array> constants;
  for (const auto& t : parsed.graph.initializers) constants[t.name] = kiln::onnx::tensor_to_array(bytes, t);
  kiln::onnx::fold_conv_affines(parsed.graph, constants, bytes);
  std::vector<std::string> ops;
  for (const auto& n : parsed.graph.nodes) ops.push_back(n.op_type + ":" + n.outputs.at(0));
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv:t", "Relu:y", "Conv:z_raw", "BatchNormalization:z"}))
      << "the bias's Constant node goes too";
  EXPECT_EQ(constants.count("w"), 0u) << "read by the folded Conv only";
  EXPECT_EQ(constants.count("mul"), 0u);
  EXPECT_EQ(constants.count("gamma"), 1u) << "the second BatchNormalization still reads it";

  const kiln::onnx::Model m = kiln::onnx::Model::load(bytes);
  const std::vector<float> x = wave(size_t(kC * kH * kW), 1.1f, 2.0f);
  const std::map<std::string, Array> out = m.run({{"x", np::array(x, {1, kC, kH, kW})}});
  const std::vector<double> c = host_conv(x, p.w, &p.b), c2 = host_conv(x, p.w2, nullptr);
  std::vector<double> y(c.size()), z(c.size());
  for (size_t k = 0; k < c.size(); ++k) {
    const size_t o = k / size_t(kH * kW);
    y[k] = std::max(0.0, host_bn(p, c[k], o) * p.mul[o] + p.add[0]);
    z[k] = host_bn(p, c2[k], o);
  }
  expect_near(out.at("y"), y);
  expect_near(out.at("z"), z);
  expect_near(out.at("z_raw"), c2);
}

TEST(OnnxConvFolding, OnlyPerChannelOperandsFold) {
  // Against a conv output [N, 4, H, W]: scalars and [4, 1, 1] vary along the channels at most.
  EXPECT_TRUE(kiln::models::per_channel_operand(np::ones({}), 4, 4));
  EXPECT_TRUE(kiln::models::per_channel_operand(np::ones({1}), 4, 4));
  EXPECT_TRUE(kiln::models::per_channel_operand(np::ones({4, 1, 1}), 4, 4));
  EXPECT_TRUE(kiln::models::per_channel_operand(np::ones({1, 4, 1, 1}), 4, 4));
  EXPECT_FALSE(kiln::models::per_channel_operand(np::ones({4}), 4, 4)) << "broadcasts along W";
  EXPECT_FALSE(kiln::models::per_channel_operand(np::ones({4, 1}), 4, 4)) << "along H";
  EXPECT_FALSE(kiln::models::per_channel_operand(np::ones({2, 4, 1, 1}), 4, 4)) << "along N";
  EXPECT_FALSE(kiln::models::per_channel_operand(np::ones({1, 1, 4, 1, 1}), 4, 4)) << "a larger rank";
  EXPECT_FALSE(kiln::models::per_channel_operand(np::ones({4, 1, 1}, kiln::int32), 4, 4));
  const auto v = kiln::models::per_channel_operand(np::array(std::vector<float>{2.5f}, {1}), 4, 4);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
}

}  // namespace

}  // namespace onnx_conv_folding_test
