// Gemm's transB weights stored transposed at load (onnx_model.cpp, pretranspose_gemm_weights):
// a model written here with formats::WireWriter, whose Gemms read B as a constant (twice, one
// initializer shared by two nodes), as a constant that a graph output also reads, and as a
// graph input fed at run time. Every output must be x @ B^T (+ C) as computed on the host, by
// run() under jit and by call(), and grad through call() must give the weights' sums.
#include <gtest/gtest.h>

#include <cmath>

#include "formats/protobuf_writer.h"
#include "kiln/numpy.h"
#include "kiln/onnx.h"
#include "kiln/transforms.h"

namespace onnx_gemm_weights_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::formats::WireWriter;

constexpr int32_t kFloat = 1;  // TensorProto.FLOAT

WireWriter value_info(const std::string& name, const std::vector<int64_t>& dims) {
  WireWriter shape, tensor, type, v;
  for (int64_t d : dims) {
    WireWriter dim;
    dim.varint(1, uint64_t(d));  // dim_value
    shape.message(1, dim);
  }
  tensor.varint(1, kFloat);  // elem_type
  tensor.message(2, shape);
  type.message(1, tensor);  // tensor_type
  v.string(1, name);
  v.message(2, type);
  return v;
}

WireWriter gemm(const std::string& name, const std::vector<std::string>& ins, const std::string& out) {
  WireWriter trans, n;
  trans.string(1, "transB");
  trans.varint(3, 1);   // i
  trans.varint(20, 2);  // type INT
  for (const std::string& in : ins) n.string(1, in);
  n.string(2, out);
  n.string(3, name);
  n.string(4, "Gemm");
  n.message(5, trans);
  return n;
}

// sin(phase + 0.37 i): values of both signs without repeats.
std::vector<float> wave(size_t n, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(phase + 0.37f * float(i));
  return v;
}

// x [2, 5]; w [3, 5] and bias [3] initializers; v [3, 5] a graph input.
// y1 = Gemm(x, w, bias, transB), y2 = Gemm(x, w, transB), y3 = Gemm(x, v, transB), and w
// itself is output y4 (so its constant must stay beside the transposed copy).
std::vector<uint8_t> model_bytes(const std::vector<float>& w, const std::vector<float>& bias) {
  WireWriter g, winit, binit, opset, m;
  g.message(1, gemm("fc1", {"x", "w", "bias"}, "y1"));
  g.message(1, gemm("fc2", {"x", "w"}, "y2"));
  g.message(1, gemm("fc3", {"x", "v"}, "y3"));
  {
    WireWriter id;
    id.string(1, "w");
    id.string(2, "y4");
    id.string(3, "copy");
    id.string(4, "Identity");
    g.message(1, id);
  }
  g.string(2, "gemms");
  const std::vector<int64_t> wdims{3, 5}, bdims{3};
  winit.packed_varints(1, std::span<const int64_t>(wdims));
  winit.varint(2, kFloat);
  winit.packed_floats(4, w);
  winit.string(8, "w");
  binit.packed_varints(1, std::span<const int64_t>(bdims));
  binit.varint(2, kFloat);
  binit.packed_floats(4, bias);
  binit.string(8, "bias");
  g.message(5, winit);
  g.message(5, binit);
  g.message(11, value_info("x", {2, 5}));
  g.message(11, value_info("v", {3, 5}));
  g.message(12, value_info("y1", {2, 3}));
  g.message(12, value_info("y2", {2, 3}));
  g.message(12, value_info("y3", {2, 3}));
  g.message(12, value_info("y4", {3, 5}));
  opset.string(1, "");
  opset.varint(2, 13);
  m.varint(1, 8);  // ir_version
  m.message(8, opset);
  m.message(7, g);
  return m.take();
}

// x @ b^T (+ bias) on the host, in float64.
std::vector<float> host_gemm(const std::vector<float>& x, const std::vector<float>& b, const std::vector<float>& bias) {
  std::vector<float> y(6);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j) {
      double s = bias.empty() ? 0.0 : bias[j];
      for (size_t k = 0; k < 5; ++k) s += double(x[i * 5 + k]) * double(b[j * 5 + k]);
      y[i * 3 + j] = float(s);
    }
  return y;
}

void expect_near(const Array& got, const std::vector<float>& want) {
  const std::vector<float> g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << i;
}

TEST(OnnxGemmWeights, TransposedConstantsGiveTheProductsOfTheirLayout) {
  const std::vector<float> w = wave(15, 0.3f), bias = wave(3, 2.0f), x = wave(10, 1.1f), v = wave(15, 0.7f);
  const kiln::onnx::Model m = kiln::onnx::Model::load(model_bytes(w, bias));
  ASSERT_EQ(m.input_names(), (std::vector<std::string>{"x", "v"}));
  const Array xa = np::array(x, {2, 5}), va = np::array(v, {3, 5});
  const std::map<std::string, Array> out = m.run({{"x", xa}, {"v", va}});
  const std::vector<Array> called = m.call({xa, va});
  for (const auto& got : {std::vector<Array>{out.at("y1"), out.at("y2"), out.at("y3"), out.at("y4")}, called}) {
    expect_near(got[0], host_gemm(x, w, bias));
    expect_near(got[1], host_gemm(x, w, {}));
    expect_near(got[2], host_gemm(x, v, {}));
    EXPECT_EQ(got[3].shape(), (kiln::Shape{3, 5}));
    EXPECT_EQ(got[3].to_vector<float>(), w);
  }
  // d/dx sum(y2) = the column sums of w^T, i.e. each row of x gets sum_j w[j, k];
  // d/dv sum(y3) = the column sums of x for each row of v.
  const kiln::Fn f = m.function();
  auto loss = [&](const Array& xv, const Array& vv) {
    const kiln::Tree r = f({kiln::Tree(kiln::Tree::List{xv, vv})});
    return np::sum(r[1].as_array()) + np::sum(r[2].as_array());
  };
  const Array gx = kiln::grad([&](const Array& xv) { return loss(xv, va); })(xa);
  const Array gv = kiln::grad([&](const Array& vv) { return loss(xa, vv); })(va);
  std::vector<float> want_x(10), want_v(15);
  for (size_t i = 0; i < 2; ++i)
    for (size_t k = 0; k < 5; ++k) {
      for (size_t j = 0; j < 3; ++j) want_x[i * 5 + k] += w[j * 5 + k] + v[j * 5 + k];
      for (size_t j = 0; j < 3; ++j) want_v[j * 5 + k] += x[i * 5 + k];
    }
  expect_near(gx, want_x);
  expect_near(gv, want_v);
}

}  // namespace

}  // namespace onnx_gemm_weights_test
