// The export corpus: functions with their (deterministic) arguments, exported by
// tests/export_test.cpp and tools/export_corpus_main.cpp (which feeds
// tools/gen_export_fixtures.py's onnxruntime and XLA runs).
#include "tests/export_corpus.h"

#include <cmath>

#include "examples/mnist/model.h"
#include "kiln/jit.h"
#include "kiln/lax.h"
#include "kiln/nn.h"
#include "kiln/numpy.h"
#include "kiln/transforms.h"

namespace kiln_test {

namespace np = kiln::numpy;
namespace lax = kiln::lax;
namespace nn = kiln::nn;
using kiln::Array;
using kiln::Fn;
using kiln::Shape;
using kiln::Tree;

namespace {

// Smooth, sign-changing values: sin(0.731 i + seed) * scale, no RNG involved.
Array floats(const Shape& s, double seed, double scale = 1.0) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return (np::sin(np::arange(n, kiln::float32) * 0.731 + seed) * scale).reshape(s);
}

// Integers in [lo, hi): (7 i + seed) mod (hi - lo) + lo.
Array ints(const Shape& s, int lo, int hi, int seed = 0) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return np::mod(np::arange(n, kiln::int32) * 7 + seed, Array(hi - lo)).reshape(s) + lo;
}

Array arr(const Tree& t) { return t.as_array(); }
const Array& a(const std::vector<Tree>& args, size_t i) { return args.at(i).array(); }

// A function of arrays only, returning one array or a list.
template <class F>
Fn fn(F f) {
  return [f](const std::vector<Tree>& args) { return Tree(f(args)); };
}

Tree list(std::vector<Array> v) {
  Tree::List l;
  for (auto& x : v) l.push_back(x);
  return Tree(l);
}

Array mlp(const Array& x, const Array& w1, const Array& b1, const Array& w2, const Array& b2) {
  return np::matmul(nn::relu(np::matmul(x, w1) + b1), w2) + b2;
}

Array layer_norm(const Array& x, const Array& g, const Array& b) {
  Array mu = np::mean(x, -1, true);
  Array var = np::mean(np::square(x - mu), -1, true);
  return (x - mu) / np::sqrt(var + 1e-5) * g + b;
}

// One pre-norm self-attention block with 2 heads: x [t, d].
Array attention(const std::vector<Tree>& p) {
  const Array& x = a(p, 0);
  const int64_t t = x.shape()[0], d = x.shape()[1], h = 2, hd = d / h;
  Array y = layer_norm(x, a(p, 5), a(p, 6));
  auto heads = [&](const Array& w) { return np::transpose(np::matmul(y, w).reshape({t, h, hd}), std::vector<int>{1, 0, 2}); };
  Array q = heads(a(p, 1)), k = heads(a(p, 2)), v = heads(a(p, 3));
  Array s = np::matmul(q, np::transpose(k, std::vector<int>{0, 2, 1})) / std::sqrt(double(hd));
  Array causal = np::arange(t).reshape({t, 1}) >= np::arange(t).reshape({1, t});
  s = np::where(causal, s, Array(-1e9f));
  Array o = np::transpose(np::matmul(nn::softmax(s, -1), v), std::vector<int>{1, 0, 2}).reshape({t, d});
  return x + np::matmul(o, a(p, 4));
}

// The CNN's parameters (mnist::init's names and shapes) as smooth values scaled by
// 1/sqrt(fan-in): no random initialization, which is slow on the cpu interpreter.
Tree mnist_params() {
  Tree::Dict d;
  const std::vector<std::pair<const char*, Shape>> shapes = {
      {"conv1_w", {24, 1, 5, 5}}, {"conv1_b", {24}}, {"conv2_w", {32, 24, 3, 3}}, {"conv2_b", {32}},
      {"dense1_w", {800, 128}},   {"dense1_b", {128}}, {"dense2_w", {128, 10}},    {"dense2_b", {10}}};
  double seed = 0;
  for (const auto& [name, shape] : shapes) {
    const int64_t fan_in = shape.size() == 4 ? shape[1] * shape[2] * shape[3] : shape.size() == 2 ? shape[0] : 10;
    d[name] = floats(shape, seed += 1, 1.0 / std::sqrt(double(fan_in)));
  }
  return Tree(d);
}

std::vector<ExportCase> model_cases() {
  std::vector<ExportCase> c;
  c.push_back({"mlp", fn([](auto& p) { return mlp(a(p, 0), a(p, 1), a(p, 2), a(p, 3), a(p, 4)); }),
               {floats({4, 8}, 0), floats({8, 16}, 1, 0.4), floats({16}, 2, 0.1), floats({16, 3}, 3, 0.3), floats({3}, 4, 0.1)},
               {0},
               {floats({7, 8}, 0.5), floats({8, 16}, 1, 0.4), floats({16}, 2, 0.1), floats({16, 3}, 3, 0.3), floats({3}, 4, 0.1)}});
  c.push_back({"mlp_value_and_grad",
               kiln::value_and_grad(
                   [](const std::vector<Tree>& p) {
                     const Tree& w = p[0];
                     Array y = mlp(a(p, 1), w["w1"].array(), w["b1"].array(), w["w2"].array(), w["b2"].array());
                     return Tree(np::mean(np::square(y - a(p, 2))));
                   }),
               {Tree(Tree::Dict{{"w1", floats({8, 16}, 1, 0.4)}, {"b1", floats({16}, 2, 0.1)}, {"w2", floats({16, 3}, 3, 0.3)},
                                {"b2", floats({3}, 4, 0.1)}}),
                floats({4, 8}, 0), floats({4, 3}, 5)}});
  c.push_back({"mnist_cnn", fn([](auto& p) { return mnist::apply(mnist::Model::Cnn, p[0], a(p, 1)); }),
               {mnist_params(), floats({2, 1, 28, 28}, 0.5, 0.5) + 0.5},
               {1},
               {mnist_params(), floats({3, 1, 28, 28}, 1.5, 0.5) + 0.5}});
  c.push_back({"mnist_cnn_value_and_grad",
               kiln::value_and_grad([](const std::vector<Tree>& p) { return Tree(mnist::loss(mnist::Model::Cnn, p[0], a(p, 1), a(p, 2))); }),
               {mnist_params(), floats({2, 1, 28, 28}, 0.5, 0.5) + 0.5, ints({2}, 0, 10, 3)}});
  c.push_back({"attention_block", fn([](auto& p) { return attention(p); }),
               {floats({6, 8}, 0), floats({8, 8}, 1, 0.3), floats({8, 8}, 2, 0.3), floats({8, 8}, 3, 0.3), floats({8, 8}, 4, 0.3),
                floats({8}, 5, 0.2) + 1.0, floats({8}, 6, 0.1)}});
  c.push_back({"layer_norm", fn([](auto& p) { return layer_norm(a(p, 0), a(p, 1), a(p, 2)); }),
               {floats({5, 16}, 0, 3), floats({16}, 1, 0.2) + 1.0, floats({16}, 2, 0.1)},
               {0},
               {floats({2, 16}, 7, 3), floats({16}, 1, 0.2) + 1.0, floats({16}, 2, 0.1)}});
  c.push_back({"softmax", fn([](auto& p) { return list({nn::softmax(a(p, 0), -1), nn::log_softmax(a(p, 0), 0), nn::logsumexp(a(p, 0), 1)}); }),
               {floats({4, 7}, 0, 4)},
               {0},
               {floats({9, 7}, 2, 4)}});
  c.push_back({"per_example_grads",
               kiln::vmap(kiln::grad([](const std::vector<Tree>& p) {
                            return Tree(np::sum(np::tanh(np::matmul(a(p, 1), a(p, 0))) * a(p, 2)));
                          }),
                          Tree(Tree::List{Tree(std::nullopt), Tree(0), Tree(0)})),
               {floats({3, 2}, 1), floats({5, 3}, 2), floats({5, 2}, 3)}});
  c.push_back({"nested_jit_and_vmap",
               fn([](auto& p) {
                 kiln::Fn inner = kiln::jit([](const std::vector<Tree>& q) { return Tree(np::tanh(a(q, 0)) * 2.0); });
                 kiln::Fn per_row = kiln::vmap([](const std::vector<Tree>& q) { return Tree(np::sum(a(q, 0) * np::arange(int64_t(5), kiln::float32))); });
                 return list({arr(inner({a(p, 0)})), arr(per_row({a(p, 0)}))});
               }),
               {floats({3, 5}, 0)}});
  return c;
}

std::vector<ExportCase> op_cases() {
  std::vector<ExportCase> c;
  c.push_back({"unary_float", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({np::sin(x), np::cos(x), np::tan(x), np::tanh(x), np::exp(x), np::exp2(x), np::expm1(x),
                              np::log(np::abs(x) + 0.5), np::log2(np::abs(x) + 0.5), np::log1p(np::abs(x)), np::sqrt(np::abs(x)),
                              np::arcsin(x * 0.9), np::arccos(x * 0.9), np::arctan(x), np::sinh(x), np::cosh(x), np::arcsinh(x),
                              np::arccosh(np::abs(x) + 1.0), np::arctanh(x * 0.9), np::erf(x), np::reciprocal(x + 3.0), -x});
               }),
               {floats({3, 4}, 0.3)}});
  c.push_back({"binary_float", fn([](auto& p) {
                 const Array &x = a(p, 0), &y = a(p, 1);
                 return list({x + y, x - y, x * y, x / y, np::power(np::abs(x) + 0.1, y), np::maximum(x, y), np::minimum(x, y),
                              np::arctan2(x, y), np::logaddexp(x, y), np::mod(x * 5.0, y), np::floor_divide(x * 5.0, y)});
               }),
               {floats({2, 6}, 0, 2), floats({2, 6}, 1.3, 1.5) + np::where(floats({2, 6}, 1.3) >= 0, Array(0.2f), Array(-0.2f))}});
  c.push_back({"rounding", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({np::floor(x), np::ceil(x), np::round(x), np::trunc(x), np::sign(x), np::abs(x)});
               }),
               {floats({10}, 0, 3.3)}});
  c.push_back({"int_ops", fn([](auto& p) {
                 const Array &x = a(p, 0), &y = a(p, 1);
                 return list({x + y, x - y, x * y, np::floor_divide(x, y), np::mod(x, y), np::bitwise_and(x, y), np::bitwise_or(x, y),
                              np::bitwise_xor(x, y), np::bitwise_not(x), np::left_shift(x, np::abs(y) % 5), np::right_shift(x, np::abs(y) % 5),
                              np::maximum(x, y), np::minimum(x, y), np::power(x, np::abs(y) % 3), -x});
               }),
               {ints({12}, -20, 20, 1), ints({12}, 1, 7, 2) * np::where(ints({12}, 0, 2, 5) > 0, Array(1), Array(-1))}});
  c.push_back({"compare_where_logic", fn([](auto& p) {
                 const Array &x = a(p, 0), &y = a(p, 1);
                 Array lt = x < y, ge = x >= y;
                 return list({np::where(lt, x, y), np::where(x == y, x, Array(0.0f)), (x != y).astype(kiln::float32),
                              np::logical_and(lt, x > 0.0).astype(kiln::int32), np::logical_or(ge, y < -0.5).astype(kiln::int32),
                              np::logical_xor(lt, y > 0.0).astype(kiln::float32), np::logical_not(lt), np::isnan(np::log(x)),
                              np::clip(x, Array(-0.3f), Array(0.4f))});
               }),
               {floats({3, 5}, 0), floats({3, 5}, 0.5) * np::where(np::arange(15).reshape({3, 5}) % 4 == 0, Array(0.0f), Array(1.0f)) +
                                       np::where(np::arange(15).reshape({3, 5}) % 4 == 0, floats({3, 5}, 0), Array(0.0f))}});
  c.push_back({"activations", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({nn::gelu(x), nn::gelu(x, false), nn::silu(x), nn::sigmoid(x), nn::softplus(x), nn::elu(x),
                              nn::leaky_relu(x), nn::relu6(x * 4.0), nn::log_sigmoid(x)});
               }),
               {floats({4, 6}, 0.2, 3)}});
  c.push_back({"uint32_ops", fn([](auto& p) {
                 const Array &x = a(p, 0), &y = a(p, 1);
                 return list({x + y, x * y, np::floor_divide(x, y), np::mod(x, y), np::right_shift(x, np::mod(y, np::array(std::vector<uint32_t>{4}, {1}))), np::left_shift(x, np::mod(y, np::array(std::vector<uint32_t>{4}, {1}))),
                              np::bitwise_xor(x, y), np::maximum(x, y), (x < y).astype(kiln::int32)});
               }),
               {ints({10}, 0, 1000, 3).astype(kiln::uint32), ints({10}, 1, 9, 4).astype(kiln::uint32)}});
  c.push_back({"casts", fn([](auto& p) {
                 const Array &x = a(p, 0), &i = a(p, 1);
                 return list({x.astype(kiln::int32), x.astype(kiln::bool_), i.astype(kiln::float32), (i > 0).astype(kiln::float32),
                              x.astype(kiln::float64) * 3.0, i.astype(kiln::uint32) + np::array(std::vector<uint32_t>{7}, {1})});
               }),
               {floats({8}, 0, 7.5), ints({8}, 0, 50, 1)}});
  c.push_back({"reductions", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({np::sum(x), np::sum(x, 1), np::prod(x, 0), np::max(x, {0, 2}), np::min(x, -1), np::mean(x, 2),
                              np::var(x, 1), np::argmax(x, 1), np::argmin(x.reshape({-1})), np::sum(a(p, 1), 0), np::max(a(p, 1), 1)});
               }),
               {floats({3, 4, 5}, 0, 1.2), ints({4, 6}, -9, 9, 2)}});
  return c;
}

std::vector<ExportCase> movement_cases() {
  std::vector<ExportCase> c;
  c.push_back({"reshape_transpose_broadcast", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({x.reshape({6, 4}), np::transpose(x, std::vector<int>{2, 0, 1}), x.reshape({2, 1, 3, 4}) + a(p, 1), np::expand_dims(x, 1) * 2.0,
                              np::squeeze(x.reshape({1, 2, 3, 1, 4}), {0, 3}), np::broadcast_to(a(p, 1), {2, 5, 3, 4})});
               }),
               {floats({2, 3, 4}, 0), floats({5, 1, 4}, 1)}});
  c.push_back({"slices_flips_strides", fn([](auto& p) {
                 using kiln::Slice;
                 const Array& x = a(p, 0);
                 return list({x[{Slice{1, 5, std::nullopt}, Slice{}}], x[{Slice{std::nullopt, std::nullopt, 2}, Slice{1, std::nullopt, 3}}],
                              np::flip(x, 0), np::flip(x), x[int64_t(2)], x[{Slice{}, int64_t(-1)}],
                              x[{Slice{std::nullopt, std::nullopt, -2}, Slice{}}]});
               }),
               {floats({7, 6}, 0)}});
  c.push_back({"pad_concat_stack_tile", fn([](auto& p) {
                 const Array &x = a(p, 0), &y = a(p, 1);
                 return list({np::pad(x, {{1, 2}, {0, 3}}), np::pad(x, {{2, 1}, {1, 1}}, "edge"), np::pad(x, {{2, 2}, {1, 2}}, "reflect"),
                              np::concatenate({x, y}, 0), np::concatenate({x, x * 2.0}, 1), np::stack({x, -x}, 1), np::tile(x, {2, 1}),
                              np::repeat(x, 2, 1)});
               }),
               {floats({3, 4}, 0), floats({2, 4}, 1)}});
  c.push_back({"gather_take", fn([](auto& p) {
                 const Array &x = a(p, 0), &i = a(p, 1);
                 return list({np::take(x, i, 0), np::take(x, i.reshape({2, 3}), 1), np::take_along_axis(x[{kiln::Slice{0, 3, std::nullopt}}], np::abs(i.reshape({3, 2})) % 4, 1),
                              x[int64_t(1)], nn::one_hot(np::abs(i) % 5, 5)});
               }),
               {floats({5, 4}, 0), np::array(std::vector<int32_t>{0, -1, 3, 2, -4, 1}, {6})}});
  c.push_back({"cumsum_cumprod", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({np::cumsum(x, 1), np::cumsum(x, 0), np::cumprod(x * 0.5 + 1.0, 1), np::cumsum(a(p, 1))});
               }),
               {floats({3, 6}, 0), ints({9}, -5, 5, 1)}});
  c.push_back({"matmul_einsum", fn([](auto& p) {
                 const Array &x = a(p, 0), &y = a(p, 1);
                 return list({np::matmul(x, y), np::einsum("bij,bjk->bik", {x, y}), np::einsum("bij->j", {x}), np::dot(x[int64_t(0)][int64_t(0)], y[int64_t(0)])});
               }),
               {floats({2, 3, 4}, 0), floats({2, 4, 5}, 1)}});
  return c;
}

std::vector<ExportCase> window_cases() {
  std::vector<ExportCase> c;
  c.push_back({"conv2d_strides_padding", fn([](auto& p) {
                 const Array &x = a(p, 0), &w = a(p, 1);
                 return list({lax::conv(x, w, {2, 2}, std::string("SAME")), lax::conv(x, w, {1, 2}, std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {2, 1}}),
                              lax::conv_general_dilated(x, w, {1, 1}, std::string("VALID"), {}, {2, 1})});
               }),
               {floats({2, 3, 9, 8}, 0), floats({4, 3, 3, 2}, 1, 0.5)}});
  c.push_back({"conv_groups_1d", fn([](auto& p) {
                 return list({lax::conv_general_dilated(a(p, 0), a(p, 1), {1, 1}, std::string("SAME"), {}, {}, std::nullopt, 2),
                              lax::conv(a(p, 2), a(p, 3), {2}, std::string("VALID"))});
               }),
               {floats({1, 4, 6, 6}, 0), floats({6, 2, 3, 3}, 1, 0.4), floats({2, 3, 11}, 2), floats({5, 3, 3}, 3)}});
  c.push_back({"pooling", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 return list({lax::max_pool(x, {2, 2}, {2, 2}), lax::avg_pool(x, {3, 3}, {1, 2}, std::string("SAME")),
                              lax::reduce_window(x, lax::WindowOp::Min, {1, 1, 2, 3}, {1, 1, 1, 1})});
               }),
               {floats({2, 3, 8, 7}, 0)}});
  c.push_back({"conv_transpose", fn([](auto& p) { return lax::conv_transpose(a(p, 0), a(p, 1), {2, 2}, std::string("SAME")); }),
               {floats({1, 2, 4, 5}, 0), floats({3, 2, 3, 3}, 1, 0.5)}});
  return c;
}


// One tanh RNN cell, h' = tanh(h W + x U + b): the body closes over W, U and b (traced
// arguments), which become the scan's consts.
std::pair<Tree, Tree> rnn(const std::vector<Tree>& p, const Array& h0, const Array& xs) {
  const Array &w = a(p, 0), &u = a(p, 1), &b = a(p, 2);
  return lax::scan([&](const Tree& h, const Tree& x) {
                     Array next = np::tanh(np::matmul(h.array(), w) + np::matmul(x.array(), u) + b);
                     return std::pair<Tree, Tree>{Tree(next), Tree(next * 2.0)};
                   },
                   Tree(h0), Tree(xs));
}

std::vector<Tree> rnn_args() { return {floats({4, 4}, 1, 0.5), floats({3, 4}, 2, 0.5), floats({4}, 3, 0.1), floats({4}, 4), floats({6, 3}, 5)}; }

std::vector<ExportCase> control_cases() {
  std::vector<ExportCase> c;
  c.push_back({"scan_rnn", fn([](auto& p) {
                 auto [h, ys] = rnn(p, a(p, 3), a(p, 4));
                 return list({h.array(), ys.array()});
               }),
               rnn_args()});
  c.push_back({"scan_reverse", fn([](auto& p) {
                 auto [c, ys] = lax::scan([](const Tree& c, const Tree& x) {
                                            const Array& v = c[0].array();
                                            Tree next = Tree(Tree::List{v * 0.9 + x.array(), c[1].array() + 1});
                                            return std::pair<Tree, Tree>{next, Tree(Tree::List{v * x.array(), np::sum(x.array())})};
                                          },
                                          Tree(Tree::List{a(p, 0), Array(0)}), Tree(a(p, 1)), std::nullopt, true);
                 return list({c[0].array(), c[1].array(), ys[0].array(), ys[1].array()});
               }),
               {floats({3}, 0), floats({5, 3}, 1)}});
  // Newton's method for sqrt(a), elementwise, until every residual is small (or 50 steps).
  c.push_back({"while_newton_sqrt", fn([](auto& p) {
                 const Array& target = a(p, 0);
                 Tree out = lax::while_loop(
                     [&](const Tree& s) {
                       const Array& x = s[1].array();
                       return np::logical_and(np::any(np::abs(x * x - target) > 1e-5), s[0].array() < 50);
                     },
                     [&](const Tree& s) {
                       const Array& x = s[1].array();
                       return Tree(Tree::List{s[0].array() + 1, (x + target / x) * 0.5});
                     },
                     Tree(Tree::List{Array(0), target}));
                 return list({out[0].array(), out[1].array()});
               }),
               {np::abs(floats({5}, 0, 3)) + 0.5}});
  c.push_back({"fori_loop_static", fn([](auto& p) {
                 return lax::fori_loop(1, 6, [](const Array& i, const Tree& x) { return Tree(x.array() * 0.5 + i.astype(kiln::float32)); },
                                       Tree(a(p, 0)))
                     .array();
               }),
               {floats({2, 3}, 0)}});
  c.push_back({"fori_loop_dynamic", fn([](auto& p) {
                 Tree r = lax::fori_loop(a(p, 1), a(p, 2), [](const Array& i, const Tree& x) {
                   return Tree(Tree::List{x[0].array() * 1.1 - i.astype(kiln::float32) * 0.1, x[1].array() + i});
                 }, Tree(Tree::List{a(p, 0), Array(0)}));
                 return list({r[0].array(), r[1].array()});
               }),
               {floats({4}, 0), Array(2), Array(7)}});
  // Both branches taken: one predicate is true, the other false.
  c.push_back({"cond", fn([](auto& p) {
                 const Array& x = a(p, 0);
                 auto branches = [&](const Array& pred) {
                   return lax::cond(pred, [](const std::vector<Tree>& o) { return Tree(np::sin(o[0].array()) + o[1].array()); },
                                    [](const std::vector<Tree>& o) { return Tree(o[0].array() * o[1].array()); }, {Tree(x), Tree(a(p, 1))});
                 };
                 return list({branches(np::sum(x) > 0).array(), branches(np::sum(x) < 0).array()});
               }),
               {floats({2, 3}, 0), floats({2, 3}, 1)}});
  // Indices -1, 1 and 5 over 3 branches: clamped to 0, 1 and 2.
  c.push_back({"switch_3_branches", fn([](auto& p) {
                 const Array &x = a(p, 0), &idx = a(p, 1);
                 std::vector<lax::BranchFn> fs = {[](const std::vector<Tree>& o) { return Tree(o[0].array() + 1.0); },
                                                  [](const std::vector<Tree>& o) { return Tree(np::exp(o[0].array())); },
                                                  [](const std::vector<Tree>& o) { return Tree(np::sum(o[0].array()) * o[0].array()); }};
                 Tree::List outs;
                 for (int64_t k = 0; k < 3; k++) outs.push_back(lax::switch_(idx[k], fs, {Tree(x)}));
                 return Tree(outs);
               }),
               {floats({4}, 0), np::array(std::vector<int32_t>{-1, 1, 5}, {3})}});
  // The gradient of a scan is a scan (the body transposed), under jit.
  c.push_back({"scan_rnn_value_and_grad", kiln::jit(kiln::value_and_grad([](const std::vector<Tree>& p) {
                 auto [h, ys] = rnn(p, a(p, 3), a(p, 4));
                 return Tree(np::sum(np::square(ys.array())) + np::sum(h.array()));
               }, kiln::Argnums{0, 1, 2})),
               rnn_args()});
  // Control flow inside control flow: a switch and a fori_loop in a scan's body.
  c.push_back({"nested_scan_switch_fori", fn([](auto& p) {
                 auto [c, ys] = lax::scan([](const Tree& c, const Tree& x) {
                   const Array& v = c.array();
                   Array idx = (np::sum(x.array()) * 2.0).astype(kiln::int32);
                   Tree y = lax::switch_(idx, {[](const std::vector<Tree>& o) { return Tree(o[0].array() - 1.0); },
                                               [](const std::vector<Tree>& o) {
                                                 return lax::fori_loop(0, 3, [](const Array&, const Tree& z) { return Tree(np::cos(z.array())); }, o[0]);
                                               }},
                                         {Tree(v + x.array())});
                   return std::pair<Tree, Tree>{y, Tree(np::max(y.array()))};
                 }, Tree(a(p, 0)), Tree(a(p, 1)));
                 return list({c.array(), ys.array()});
               }),
               {floats({3}, 0), floats({6, 3}, 1, 0.6)}});
  return c;
}
}  // namespace

kiln::ExportOptions export_options(const ExportCase& c) {
  kiln::ExportOptions o;
  if (!c.other_batch.empty()) o.batch_dim = "batch", o.batch_argnums = c.batch_argnums;
  return o;
}

std::vector<ExportRun> export_runs(const std::vector<ExportCase>& corpus) {
  std::vector<ExportRun> runs;
  for (const ExportCase& c : corpus) runs.push_back({c.name, &c, &c.args, true});
  for (const ExportCase& c : corpus)
    if (!c.other_batch.empty()) {
      const Array x = kiln::tree_flatten(c.other_batch[size_t(c.batch_argnums.at(0))]).first.at(0);
      runs.push_back({c.name + "_batch" + std::to_string(x.shape()[0]), &c, &c.other_batch, false});
    }
  return runs;
}

std::vector<ExportCase> export_corpus() {
  std::vector<ExportCase> all;
  for (auto part : {model_cases, op_cases, movement_cases, window_cases, control_cases})
    for (ExportCase& c : part()) all.push_back(std::move(c));
  return all;
}

}  // namespace kiln_test
