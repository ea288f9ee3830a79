// Tests of jit: make_jaxpr's text, the signature cache (traces counted), jit against eager
// on a corpus of models with the number of kernels each call launches, and composition.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "frontend/array_impl.h"
#include "backend/backend.h"
#include "frontend/jit_program.h"
#include "kiln/kiln.h"

namespace jit_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;

Array rnd(const kiln::Shape& s, unsigned seed, double lo = -1, double hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d{float(lo), float(hi)};
  size_t n = 1;
  for (auto d0 : s) n *= size_t(d0);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return np::array(v, s);
}

void expect_close(const Array& got, const Array& want, double tol = 2e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  auto g = got.astype(kiln::float64).to_vector<double>(),
       w = want.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); i++) EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "index " << i;
}

void expect_tree_close(const Tree& got, const Tree& want, double tol = 2e-5) {
  auto g = kiln::tree_leaves(got), w = kiln::tree_leaves(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); i++) expect_close(g[i], w[i], tol);
}

// Whether jit copies a padded operand before the windows that read it (jit_fusion.cpp's
// kMinUnmaskedWindow): on the CPU devices, not where a dispatch costs more (webgpu).
bool pads_before_windows() { return !kiln::get_backend(kiln::default_device()).prefers_fewer_kernels(); }

// Kernels launched by one call of f (warm: the program is already compiled).
size_t kernels_of(const Fn& jf, const std::vector<Tree>& args, Tree* out = nullptr) {
  Tree first = jf(args);  // compiles
  kiln::frontend::KernelRecorder rec;
  Tree r = jf(args);
  size_t n = rec.kernels().size();
  if (out) *out = r;
  return n;
}

TEST(Jit, MakeJaxprText) {
  Fn f = [](const std::vector<Tree>& a) {
    Array x = a[0].as_array();
    return Tree(np::sin(x) * 2.0f);
  };
  std::string s = kiln::make_jaxpr(f, {Tree(np::zeros({3}))}).str();
  EXPECT_EQ(s,
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = sin a\n"
            "    c:f32[3] = mul b full(2):f32[3]\n"
            "  in (c,) }");
}

TEST(Jit, EqualsEagerAndCaches) {
  int traces = 0;
  Fn f = [&](const std::vector<Tree>& a) {
    traces++;
    Array x = a[0].as_array();
    return Tree(np::tanh(x) * x + 1.0f);
  };
  Fn jf = kiln::jit(f);
  Array x = rnd({4, 5}, 1);
  expect_close(jf({x}).as_array(), f({x}).as_array());
  EXPECT_EQ(traces, 2);  // once by jit, once eagerly
  jf({rnd({4, 5}, 2)});
  EXPECT_EQ(traces, 2);
  EXPECT_EQ(kernels_of(jf, {x}), 1u);
}


Array gelu(const Array& x) {
  const float c = std::sqrt(2.0f / float(M_PI));
  return 0.5f * x * (1.0f + np::tanh(c * (x + 0.044715f * x * x * x)));
}
Array relu(const Array& x) { return np::maximum(x, 0.0f); }

Array softmax(const Array& x) {
  Array e = np::exp(x - np::max(x, {-1}, true));
  return e / np::sum(e, {-1}, true);
}

// flax's LayerNorm (use_fast_variance): var = E[x^2] - E[x]^2.
Array layer_norm(const Array& x, const Array& g, const Array& b) {
  Array m = np::mean(x, {-1}, true);
  Array m2 = np::mean(x * x, {-1}, true);
  Array var = m2 - m * m;
  return (x - m) * np::rsqrt(var + 1e-5f) * g + b;
}

Tree mlp(const std::vector<Tree>& a) {
  const Tree& p = a[0];
  Array x = a[1].as_array();
  Array h = relu(np::matmul(x, p["w1"].as_array()) + p["b1"].as_array());
  return Tree(np::matmul(h, p["w2"].as_array()) + p["b2"].as_array());
}

Tree mlp_loss(const std::vector<Tree>& a) {
  Array y = mlp(a).as_array();
  Array t = a[2].as_array();
  return Tree(np::mean(np::square(y - t)));
}

Tree mlp_params() {
  return Tree(Tree::Dict{{"w1", Tree(rnd({8, 16}, 11))}, {"b1", Tree(rnd({16}, 12))},
                         {"w2", Tree(rnd({16, 4}, 13))}, {"b2", Tree(rnd({4}, 14))}});
}

TEST(JitCorpus, GeluMatmulIsOneKernelWithEpilogue) {
  Fn f = [](const std::vector<Tree>& a) {
    return Tree(gelu(np::matmul(a[0].as_array(), a[1].as_array()) + a[2].as_array()));
  };
  std::vector<Tree> args{rnd({6, 8}, 1), rnd({8, 5}, 2), rnd({5}, 3)};
  Tree out;
  EXPECT_EQ(kernels_of(kiln::jit(f), args, &out), 1u);
  expect_close(out.as_array(), f(args).as_array());
}

TEST(JitCorpus, MlpForward) {
  std::vector<Tree> args{mlp_params(), rnd({5, 8}, 4)};
  Tree out;
  EXPECT_EQ(kernels_of(kiln::jit(mlp), args, &out), 2u);  // one per layer, epilogues fused
  expect_close(out.as_array(), mlp(args).as_array());
}

TEST(JitCorpus, MlpBackward) {
  std::vector<Tree> args{mlp_params(), rnd({5, 8}, 4), rnd({5, 4}, 5)};
  Fn g = kiln::value_and_grad(mlp_loss);
  Tree out;
  size_t n = kernels_of(kiln::jit(g), args, &out);
  expect_tree_close(out, g(args));
  // Forward: layer-1 matmul (bare: relu and its derivative mask both read it), relu (read
  // by the layer-2 matmul), layer-2 matmul, the loss's cotangent. Backward: three weight/
  // input-gradient matmuls (one with the relu mask as epilogue), and the loss and two bias
  // sums (different sizes, so not packed).
  EXPECT_EQ(n, 10u);
}

TEST(JitCorpus, Softmax) {
  Fn f = [](const std::vector<Tree>& a) { return Tree(softmax(a[0].as_array())); };
  std::vector<Tree> args{rnd({4, 10}, 6)};
  Tree out;
  EXPECT_EQ(kernels_of(kiln::jit(f), args, &out), 3u);  // max, sum of exp, the normalization
  expect_close(out.as_array(), f(args).as_array());
}

TEST(JitCorpus, LayerNormInTwoKernels) {
  Fn f = [](const std::vector<Tree>& a) {
    return Tree(layer_norm(a[0].as_array(), a[1].as_array(), a[2].as_array()));
  };
  std::vector<Tree> args{rnd({6, 32}, 7), rnd({32}, 8), rnd({32}, 9)};
  Tree out;
  // Both means in one kernel (two reductions packed), then one elementwise kernel.
  EXPECT_EQ(kernels_of(kiln::jit(f), args, &out), 2u);
  expect_close(out.as_array(), f(args).as_array(), 1e-4);
}

TEST(JitCorpus, ConvBlockWithPooling) {
  Fn f = [](const std::vector<Tree>& a) {
    Array y = kiln::lax::conv(a[0].as_array(), a[1].as_array(), {1, 1}, std::string("SAME"));
    y = relu(y + a[2].as_array().reshape({1, 4, 1, 1}));
    return Tree(kiln::lax::max_pool(y, {2, 2}, {2, 2}));
  };
  std::vector<Tree> args{rnd({2, 3, 8, 8}, 10), rnd({4, 3, 3, 3}, 11), rnd({4}, 12)};
  Tree out;
  EXPECT_EQ(kernels_of(kiln::jit(f), args, &out), 2u);  // conv + bias + relu, then the pool
  expect_close(out.as_array(), f(args).as_array(), 1e-4);
}

// A conv's windows over a padded input read a padded copy of it on the CPU devices: the
// reduction's body then has no padding mask (no `where`), and the values are eager's. A
// 5x5 depthwise conv (PP-OCR rec's) and a dense 5x5 one; a 3x3 depthwise conv and a dense
// 3x3 one keep their masks (measured on wasm: the copy cost more than the masks, even for the
// dense conv that reads each element taps * Cout times; jit_fusion.cpp).
TEST(JitCorpus, WindowsOverPaddingReadAPaddedCopy) {
  auto conv = [](int64_t groups, int64_t pad) {
    return Fn([groups, pad](const std::vector<Tree>& a) {
      const std::vector<std::pair<int64_t, int64_t>> pads{{pad, pad}, {pad, pad}};
      return Tree(kiln::lax::conv_general_dilated(a[0].as_array(), a[1].as_array(), {1, 1}, pads, {}, {}, std::nullopt,
                                                  groups));
    });
  };
  struct Case {
    Fn f;
    std::vector<Tree> args;
    bool copied;  // on the CPU devices
  };
  const std::vector<Case> cases{
      {conv(6, 2), {Tree(rnd({2, 6, 7, 12}, 21)), Tree(rnd({6, 1, 5, 5}, 22))}, true},
      {conv(1, 2), {Tree(rnd({1, 6, 7, 12}, 23)), Tree(rnd({4, 6, 5, 5}, 24))}, true},
      {conv(6, 1), {Tree(rnd({2, 6, 7, 12}, 25)), Tree(rnd({6, 1, 3, 3}, 26))}, false},
      {conv(1, 1), {Tree(rnd({2, 6, 7, 12}, 27)), Tree(rnd({4, 6, 3, 3}, 28))}, false}};
  for (const Case& c : cases) {
    Fn jf = kiln::jit(c.f);
    Tree first = jf(c.args);  // compiles
    kiln::frontend::KernelRecorder rec;
    const Tree got = jf(c.args);
    bool masked_reduction = false;
    for (const kiln::Kernel& k : rec.kernels())
      if (k.reduction) k.exp.visit([&](const kiln::AluNode& n) { masked_reduction |= n.op == kiln::AluOp::Where; });
    EXPECT_EQ(masked_reduction, !(c.copied && pads_before_windows()));
    expect_close(got.as_array(), c.f(c.args).as_array(), 1e-6);
  }
}

TEST(JitCorpus, ScaledDotProductAttention) {
  Fn f = [](const std::vector<Tree>& a) {
    Array q = a[0].as_array(), k = a[1].as_array(), v = a[2].as_array();
    Array s = np::matmul(q, np::swapaxes(k, -1, -2)) * (1.0f / std::sqrt(float(q.shape(-1))));
    return Tree(np::matmul(softmax(s), v));
  };
  std::vector<Tree> args{rnd({2, 6, 8}, 13), rnd({2, 7, 8}, 14), rnd({2, 7, 8}, 15)};
  Tree out;
  // scores (scale fused), row max, sum of exp, the probabilities, probabilities @ v.
  EXPECT_EQ(kernels_of(kiln::jit(f), args, &out), 5u);
  expect_close(out.as_array(), f(args).as_array(), 1e-4);
}

// Two slices of one elementwise value, each broadcast into a contraction (a decode step's
// RoPE of q and k heads rotated together, then read apart by the scores): the value is computed
// whole in one kernel and both slices read it, where each slice was a kernel of its own. A
// slice of less than half of its value is still computed alone (the unread work stays bounded).
TEST(JitCorpus, SlicesOfOneValueAreComputedWhole) {
  Fn f = [](const std::vector<Tree>& a) {
    Array y = np::sin(a[0].as_array()) * 2.0f;  // [2, 6, 8]
    Array head = np::index(y, {kiln::Slice{}, kiln::Slice{0, 4, {}}}), tail = np::index(y, {kiln::Slice{}, kiln::Slice{4, {}, {}}});
    return Tree(Tree::List{Tree(np::matmul(head, a[1].as_array())), Tree(np::matmul(tail, a[2].as_array()))});
  };
  Fn g = [](const std::vector<Tree>& a) {
    Array y = np::sin(a[0].as_array()) * 2.0f;
    return Tree(np::matmul(np::index(y, {kiln::Slice{}, kiln::Slice{0, 1, {}}}), a[1].as_array()));
  };
  std::vector<Tree> args{rnd({2, 6, 8}, 31), rnd({8, 3}, 32), rnd({8, 5}, 33)};
  auto elementwise_sizes = [&](const Fn& fn, Tree* out) {
    Tree first = kiln::jit(fn)(args);
    kiln::frontend::KernelRecorder rec;
    *out = kiln::jit(fn)(args);
    std::vector<int64_t> sizes;
    for (const kiln::Kernel& k : rec.kernels())
      if (!k.reduction) sizes.push_back(k.size);
    return sizes;
  };
  Tree out;
  EXPECT_EQ(elementwise_sizes(f, &out), std::vector<int64_t>{2 * 6 * 8});  // sin(x) * 2 once, whole
  expect_tree_close(out, f(args), 1e-5);
  EXPECT_EQ(elementwise_sizes(g, &out), std::vector<int64_t>{2 * 1 * 8});  // the slice alone
  expect_tree_close(out, g(args), 1e-5);
}

Tree adam(const std::vector<Tree>& a) {
  Array p = a[0].as_array(), g = a[1].as_array(), m = a[2].as_array(), v = a[3].as_array();
  Array t = a[4].as_array();
  const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  Array m1 = b1 * m + (1 - b1) * g;
  Array v1 = b2 * v + (1 - b2) * g * g;
  Array mh = m1 / (1.0f - np::power(Array(b1), t));
  Array vh = v1 / (1.0f - np::power(Array(b2), t));
  return Tree(Tree::List{p - lr * mh / (np::sqrt(vh) + eps), m1, v1});
}

TEST(JitCorpus, AdamUpdateInOneKernel) {
  std::vector<Tree> args{rnd({64}, 16), rnd({64}, 17), rnd({64}, 18), rnd({64}, 19, 0, 1),
                         np::array(std::vector<float>{3}, {})};
  Tree out;
  // The three results (param, m, v) share one buffer, written by one kernel: independent
  // outputs of one size and dtype are packed (each result is a view at its offset).
  Fn jf = kiln::jit(adam);
  EXPECT_EQ(kernels_of(jf, args, &out), 1u);
  expect_tree_close(out, adam(args), 1e-5);
  // Feeding the packed results back in binds them without copies.
  std::vector<Tree> next{out[0], args[1], out[1], out[2], args[4]};
  EXPECT_EQ(kernels_of(jf, next, &out), 1u);
  expect_tree_close(out, adam(next), 1e-5);
}

// A training step's update: the gradient is a contraction (x^T dy) that param, m and v all
// read. It is computed once, as a bare reduction (so backends can tile it), and the three
// outputs are one packed elementwise kernel reading it, not three copies of the reduction.
TEST(JitCorpus, SharedGradientIsReducedOnceBeforeThePackedUpdate) {
  Fn step = [](const std::vector<Tree>& a) {
    Array g = np::matmul(np::transpose(a[5].as_array()), a[6].as_array());  // [8, 16]
    return adam({a[0], Tree(g), a[2], a[3], a[4]});
  };
  std::vector<Tree> args{rnd({8, 16}, 20), rnd({1}, 25), rnd({8, 16}, 21), rnd({8, 16}, 22, 0, 1),
                         np::array(std::vector<float>{3}, {}), rnd({32, 8}, 23), rnd({32, 16}, 24)};
  Fn jf = kiln::jit(step);
  Tree out = jf(args);
  kiln::frontend::KernelRecorder rec;
  out = jf(args);
  ASSERT_EQ(rec.kernels().size(), 2u);
  const kiln::Kernel& red = rec.kernels()[0];
  ASSERT_TRUE(red.reduction.has_value());
  EXPECT_EQ(red.size, 8 * 16);
  EXPECT_EQ(red.exp.op(), kiln::AluOp::Mul);  // one contraction, no where chain of copies
  EXPECT_FALSE(rec.kernels()[1].reduction.has_value());
  EXPECT_EQ(rec.kernels()[1].size, 3 * 8 * 16);
  expect_tree_close(out, step(args), 1e-5);
}

// Several parameters, each with its own shared gradient (a training step's update): the bare
// reductions are emitted in the order of the outputs that read them, whatever addresses malloc
// gave the fusion's objects. (They went in address order, so the program, and the heap's
// allocation pattern when it ran, varied between runs of the threaded core.) Each trial
// compiles afresh after leaving the heap fragmented differently.
TEST(JitCorpus, SharedGradientsAreReducedInTheOrderOfTheOutputs) {
  const int64_t rows[] = {3, 5, 7, 9};  // gradient i is [rows[i], 16]: its size names it
  Fn step = [&](const std::vector<Tree>& a) {
    Tree::List outs;
    for (size_t i = 0; i < 4; i++) {
      Array g = np::matmul(np::transpose(a[4 + i].as_array()), a[8].as_array());
      Tree u = adam({a[i], Tree(g), a[i], a[i], a[9]});
      for (int k = 0; k < 3; k++) outs.emplace_back(u[size_t(k)]);
    }
    return Tree(outs);
  };
  std::vector<Tree> args;
  for (int i = 0; i < 4; i++) args.emplace_back(rnd({rows[i], 16}, unsigned(30 + i), 0, 1));
  for (int i = 0; i < 4; i++) args.emplace_back(rnd({32, rows[i]}, unsigned(40 + i)));
  args.emplace_back(rnd({32, 16}, 50));
  args.emplace_back(np::array(std::vector<float>{3}, {}));
  std::mt19937 gen(7);
  std::vector<std::vector<char>> holes;
  for (int trial = 0; trial < 6; trial++) {
    for (int k = 0; k < 200; k++) holes.emplace_back(size_t(8 + gen() % 200));
    for (size_t k = trial % 2; k < holes.size(); k += 2) holes[k] = {};
    Fn jf = kiln::jit(step);
    Tree out = jf(args);
    kiln::frontend::KernelRecorder rec;
    out = jf(args);
    std::vector<int64_t> reduced;
    for (const kiln::Kernel& k : rec.kernels())
      if (k.reduction) reduced.push_back(k.size / 16);
    EXPECT_EQ(reduced, (std::vector<int64_t>{3, 5, 7, 9})) << "trial " << trial;
  }
}

TEST(JitCache, RecompilesOnlyOnSignatureChanges) {
  int traces = 0;
  Fn f = [&](const std::vector<Tree>& a) {
    traces++;
    return Tree(a[0].as_array() * a[1].scalar());
  };
  Fn jf = kiln::jit(f, {1});
  auto call = [&](const Array& x, double s) { return jf({Tree(x), Tree(s)}).as_array(); };
  call(rnd({3}, 1), 2);
  EXPECT_EQ(traces, 1);
  call(rnd({3}, 2), 2);  // new values, same signature
  EXPECT_EQ(traces, 1);
  call(rnd({4}, 3), 2);  // shape
  EXPECT_EQ(traces, 2);
  call(rnd({3}, 4).astype(kiln::float64), 2);  // dtype
  EXPECT_EQ(traces, 3);
  call(rnd({3}, 5), 3);  // static value
  EXPECT_EQ(traces, 4);
  call(rnd({3}, 6), 2);  // back to a cached signature
  EXPECT_EQ(traces, 4);
  // The key holds a static scalar exactly: the next double after 2 is another signature.
  call(rnd({3}, 7), std::nextafter(2.0, 3.0));
  EXPECT_EQ(traces, 5);
  call(rnd({3}, 8), 2);
  EXPECT_EQ(traces, 5);
  // Weak types: a Python-like scalar (weak float32) and a float32 array of shape ().
  Fn g = kiln::jit([&](const std::vector<Tree>& a) {
    traces++;
    return Tree(a[0].as_array() + 1);
  });
  g({Tree(Array(2.0))});
  g({Tree(Array(3.0))});
  EXPECT_EQ(traces, 6);
  Tree strong = g({Tree(np::array(std::vector<float>{2}, {}))});
  EXPECT_EQ(traces, 7);
  EXPECT_FALSE(strong.as_array().weak_type());
  EXPECT_TRUE(g({Tree(Array(4.0))}).as_array().weak_type());
  EXPECT_EQ(traces, 7);
}

// The signature spells the argument tree's structure (dict keys, nesting, None) and each
// leaf's shape in its place.
TEST(JitCache, TreeStructureIsPartOfTheSignature) {
  int traces = 0;
  Fn f = kiln::jit([&](const std::vector<Tree>& a) {
    traces++;
    Array total(0.0);
    for (const Array& l : kiln::tree_leaves(a[0])) total = total + np::sum(l);
    return Tree(total);
  });
  const Array x = rnd({2}, 1), y = rnd({3}, 2);
  auto d = [](const char* k1, Tree v1, const char* k2, Tree v2) { return Tree(Tree::Dict{{k1, v1}, {k2, v2}}); };
  const Tree weights = d("a", x, "b", y);
  const double want = np::sum(x).item() + np::sum(y).item();
  EXPECT_NEAR(f({weights}).as_array().item(), want, 1e-6);
  EXPECT_EQ(traces, 1);
  f({Tree(weights)});
  f({d("a", rnd({2}, 3), "b", rnd({3}, 4))});  // new values, same signature
  EXPECT_EQ(traces, 1);
  f({d("a", x, "c", y)});  // a key
  EXPECT_EQ(traces, 2);
  f({d("a", y, "b", x)});  // the leaves' shapes in their places
  EXPECT_EQ(traces, 3);
  f({Tree(Tree::List{x, y})});  // a list of the same leaves
  EXPECT_EQ(traces, 4);
  f({d("a", Tree(Tree::List{x}), "b", y)});  // nesting
  EXPECT_EQ(traces, 5);
  f({Tree(Tree::List{x, y, Tree()})});  // None
  EXPECT_EQ(traces, 6);
  f({weights});
  f({Tree(Tree::List{x, y})});
  EXPECT_EQ(traces, 6);
}

TEST(JitCompose, AllOrders) {
  kiln::ArrayFn f = [](const Array& x) { return np::sum(np::sin(x) * x); };
  Array x = rnd({5}, 20);
  Array want = kiln::grad(f)(x);
  expect_close(kiln::jit(kiln::grad(f))(x), want);
  expect_close(kiln::grad(kiln::jit(f))(x), want);
  expect_close(kiln::jit(kiln::jit(f))(x), f(x));
  kiln::ArrayFn per_row = [](const Array& r) { return np::sum(np::exp(r)); };
  Array xs = rnd({3, 4}, 21);
  expect_close(kiln::vmap(kiln::jit(per_row))(xs), kiln::vmap(per_row)(xs));
  expect_close(kiln::jit(kiln::vmap(per_row))(xs), kiln::vmap(per_row)(xs));
  expect_close(kiln::jit(kiln::grad(kiln::jit(f)))(x), want);
  // Second order through jit, and a jitted function closing over a traced value.
  expect_close(kiln::grad(kiln::grad(kiln::jit(f)))(x.reshape({5})[0].reshape({})),
               kiln::grad(kiln::grad(f))(x[0]));
  kiln::ArrayFn outer = [](const Array& s) {
    kiln::ArrayFn inner = [s](const Array& y) { return np::sum(y * s); };
    return kiln::jit(inner)(np::ones({3}));
  };
  expect_close(kiln::grad(outer)(Array(2.0f)), Array(3.0f));
}

TEST(JitPasses, CseDceAndFolding) {
  Fn f = [](const std::vector<Tree>& a) {
    Array x = a[0].as_array();
    Array unused = np::exp(x);
    (void)unused;
    Array c = np::ones({3}) * 2.0f;  // constants only: folded while tracing
    return Tree(np::sin(x) + np::sin(x) * 1.0f + c);
  };
  auto cj = kiln::make_jaxpr(f, {Tree(np::zeros({3}))});
  auto s = kiln::frontend::simplify_jaxpr(*cj.jaxpr);
  std::string text = kiln::frontend::jaxpr_text(s);
  EXPECT_EQ(text.find("exp"), std::string::npos) << text;
  EXPECT_EQ(text.find("mul"), std::string::npos) << text;
  size_t first = text.find("sin");
  EXPECT_EQ(text.find("sin", first + 1), std::string::npos) << text;
}

// An LSTM-like recurrence: the cell state c_t = sigmoid(g) c_{t-1} + tanh(g) is read by h_t
// (a buffer: the next step's matmul reads it) and by c_{t+1}. Were c_t recomputed inside its
// readers, step t's kernel would hold c_1..c_t, so the largest kernel would grow with the
// step count; computed once into a buffer (jit fusion's shared elementwise operands, on the
// CPU devices) every step's kernels have the same size.
TEST(Jit, RecurrenceKernelsDoNotGrowWithTheStepCount) {
  auto largest_kernel = [](int steps) {
    Fn f = kiln::jit([steps](const std::vector<Tree>& a) {
      const Array x = a[0].as_array(), w = a[1].as_array();
      Array h = np::zeros({4, 8}), c = np::zeros({4, 8});
      auto sigmoid = [](const Array& v) { return 1.0f / (1.0f + np::exp(-v)); };
      for (int t = 0; t < steps; ++t) {
        const Array g = np::matmul(h, w) + x[t];
        c = sigmoid(g) * c + np::tanh(g);
        h = np::tanh(c) * sigmoid(g);
      }
      return Tree(Tree::List{h, c});
    });
    const std::vector<Tree> args{rnd({steps, 4, 8}, 1), rnd({8, 8}, 2)};
    Tree first = f(args);  // compiles
    kiln::frontend::KernelRecorder rec;
    Tree again = f(args);
    int largest = 0;
    for (const kiln::Kernel& k : rec.kernels())
      largest = std::max(largest, k.exp.node_count() + (k.reduction ? k.reduction->epilogue.node_count() : 0));
    return largest;
  };
  const int three = largest_kernel(3), twelve = largest_kernel(12);
  EXPECT_GT(three, 0);
  EXPECT_LE(twelve, three + three / 2) << "3 steps: " << three << " nodes, 12 steps: " << twelve;
}

}  // namespace

}  // namespace jit_test
