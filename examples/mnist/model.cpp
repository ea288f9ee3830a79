// The CNN and MLP of model.h, written with kiln::lax convolutions and pooling and
// kiln::nn activations so grad and jit see them as ordinary traced functions.
#include "model.h"

namespace mnist {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Tree;

Model parse_model(const std::string& name) {
  if (name == "cnn") return Model::Cnn;
  if (name == "mlp") return Model::Mlp;
  if (name == "small-cnn") return Model::SmallCnn;
  kiln::fail("mnist", "unknown model '", name, "', expected cnn, mlp or small-cnn");
}

const char* model_name(Model m) {
  return m == Model::Cnn ? "cnn" : m == Model::Mlp ? "mlp" : "small-cnn";
}

namespace {

// Conv weights are OIHW: fans come from axis 1 (in) and 0 (out) times the window.
Array conv_weight(const Array& key, int64_t out, int64_t in, int64_t k) {
  return kiln::nn::lecun_normal(1, 0)(key, {out, in, k, k}, kiln::float32);
}
Array dense_weight(const Array& key, int64_t in, int64_t out) {
  return kiln::nn::lecun_normal()(key, {in, out}, kiln::float32);
}
Array zeros(int64_t n) { return np::zeros({n}, kiln::float32); }

const Array& p(const Tree& params, const char* name) { return params[name].array(); }

}  // namespace

Tree init(Model m, const Array& key, int64_t hidden) {
  Array k = kiln::random::split(key, 4);
  if (m == Model::Mlp)
    return Tree(Tree::Dict{{"w1", dense_weight(k[0], 784, hidden)}, {"b1", zeros(hidden)},
                           {"w2", dense_weight(k[1], hidden, 10)}, {"b2", zeros(10)}});
  if (m == Model::SmallCnn)
    return Tree(Tree::Dict{{"conv1_w", conv_weight(k[0], 16, 1, 3)}, {"conv1_b", zeros(16)},
                           {"dense1_w", dense_weight(k[1], 2704, 10)}, {"dense1_b", zeros(10)}});
  return Tree(Tree::Dict{{"conv1_w", conv_weight(k[0], 24, 1, 5)}, {"conv1_b", zeros(24)},
                         {"conv2_w", conv_weight(k[1], 32, 24, 3)}, {"conv2_b", zeros(32)},
                         {"dense1_w", dense_weight(k[2], 800, 128)}, {"dense1_b", zeros(128)},
                         {"dense2_w", dense_weight(k[3], 128, 10)}, {"dense2_b", zeros(10)}});
}

Array apply(Model m, const Tree& params, const Array& x) {
  const int64_t b = x.shape(0);
  if (m == Model::Mlp) {
    Array h = kiln::nn::relu(np::matmul(x.reshape({b, 784}), p(params, "w1")) + p(params, "b1"));
    return np::matmul(h, p(params, "w2")) + p(params, "b2");
  }
  auto conv_block = [&](const Array& in, const char* w, const char* bias) {
    Array c = kiln::lax::conv(in, p(params, w), {1, 1}, std::string("VALID"));
    Array r = kiln::nn::relu(c + p(params, bias).reshape({1, -1, 1, 1}));
    return kiln::lax::max_pool(r, {2, 2}, {2, 2});
  };
  if (m == Model::SmallCnn) {
    Array h = conv_block(x, "conv1_w", "conv1_b");  // [b, 16, 13, 13]
    return np::matmul(h.reshape({b, 2704}), p(params, "dense1_w")) + p(params, "dense1_b");
  }
  Array h = conv_block(x, "conv1_w", "conv1_b");   // [b, 24, 12, 12]
  h = conv_block(h, "conv2_w", "conv2_b");         // [b, 32, 5, 5]
  h = kiln::nn::relu(np::matmul(h.reshape({b, 800}), p(params, "dense1_w")) + p(params, "dense1_b"));
  return np::matmul(h, p(params, "dense2_w")) + p(params, "dense2_b");
}

Array loss(Model m, const Tree& params, const Array& x, const Array& y) {
  Array logp = kiln::nn::log_softmax(apply(m, params, x));
  return -np::mean(np::sum(logp * kiln::nn::one_hot(y, 10), -1));
}

}  // namespace mnist
