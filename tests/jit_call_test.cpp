// Tests of the call primitive: grad/vmap/jvp/linearize of jit(f) compile rather than
// inline. Transformed-jit results equal the transformed eager function on the jit corpus,
// f is traced once across a training loop, nothing recompiles after the first step, and
// the transformations compose in any order around jit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "frontend/array_impl.h"
#include "frontend/call.h"
#include "kiln/kiln.h"

namespace jit_call_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;

Array rnd(const kiln::Shape& s, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d{-1.0f, 1.0f};
  size_t n = 1;
  for (auto d0 : s) n *= size_t(d0);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return np::array(v, s);
}

void expect_trees_close(const Tree& got, const Tree& want, double tol = 1e-5) {
  auto g = kiln::tree_leaves(got), w = kiln::tree_leaves(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); i++) {
    ASSERT_EQ(g[i].shape(), w[i].shape()) << "leaf " << i;
    auto a = g[i].astype(kiln::float64).to_vector<double>(), b = w[i].astype(kiln::float64).to_vector<double>();
    for (size_t k = 0; k < a.size(); k++) EXPECT_NEAR(a[k], b[k], tol * (1 + std::abs(b[k]))) << "leaf " << i << " index " << k;
  }
}

Array relu(const Array& x) { return np::maximum(x, 0.0f); }
Array softmax(const Array& x) {
  Array e = np::exp(x - np::max(x, {-1}, true));
  return e / np::sum(e, {-1}, true);
}

// The jit corpus as scalar losses of (params, data), so each has a gradient.
struct Case {
  const char* name;
  Fn loss;
  std::vector<Tree> args;
};

std::vector<Case> corpus() {
  std::vector<Case> c;
  c.push_back({"mlp",
               [](const std::vector<Tree>& a) {
                 const Tree& p = a[0];
                 Array h = relu(np::matmul(a[1].as_array(), p["w1"].as_array()) + p["b1"].as_array());
                 Array y = np::matmul(h, p["w2"].as_array()) + p["b2"].as_array();
                 return Tree(np::mean(np::square(y - a[2].as_array())));
               },
               {Tree(Tree::Dict{{"w1", Tree(rnd({8, 16}, 11))}, {"b1", Tree(rnd({16}, 12))},
                                {"w2", Tree(rnd({16, 4}, 13))}, {"b2", Tree(rnd({4}, 14))}}),
                Tree(rnd({5, 8}, 4)), Tree(rnd({5, 4}, 5))}});
  c.push_back({"softmax",
               [](const std::vector<Tree>& a) { return Tree(np::sum(softmax(a[0].as_array()) * a[1].as_array())); },
               {Tree(rnd({4, 10}, 6)), Tree(rnd({4, 10}, 7))}});
  c.push_back({"layer_norm",
               [](const std::vector<Tree>& a) {
                 Array x = a[0].as_array();
                 Array m = np::mean(x, {-1}, true), m2 = np::mean(x * x, {-1}, true);
                 Array y = (x - m) * np::rsqrt(m2 - m * m + 1e-5f) * a[1].as_array();
                 return Tree(np::sum(np::tanh(y)));
               },
               {Tree(rnd({6, 32}, 8)), Tree(rnd({32}, 9))}});
  c.push_back({"conv_block",
               [](const std::vector<Tree>& a) {
                 Array y = kiln::lax::conv(a[0].as_array(), a[1].as_array(), {1, 1}, std::string("SAME"));
                 y = relu(y + a[2].as_array().reshape({1, 4, 1, 1}));
                 return Tree(np::sum(np::square(kiln::lax::max_pool(y, {2, 2}, {2, 2}))));
               },
               {Tree(rnd({2, 3, 8, 8}, 10)), Tree(rnd({4, 3, 3, 3}, 11)), Tree(rnd({4}, 12))}});
  c.push_back({"attention",
               [](const std::vector<Tree>& a) {
                 Array q = a[0].as_array(), k = a[1].as_array(), v = a[2].as_array();
                 Array s = np::matmul(q, np::swapaxes(k, -1, -2)) * (1.0f / std::sqrt(float(q.shape(-1))));
                 return Tree(np::sum(np::square(np::matmul(softmax(s), v))));
               },
               {Tree(rnd({2, 6, 8}, 13)), Tree(rnd({2, 7, 8}, 14)), Tree(rnd({2, 7, 8}, 15))}});
  c.push_back({"adam",
               [](const std::vector<Tree>& a) {
                 Array p = a[0].as_array(), g = a[1].as_array(), m = a[2].as_array(), v = np::square(a[3].as_array());
                 Array m1 = 0.9f * m + 0.1f * g, v1 = 0.999f * v + 0.001f * g * g;
                 Array upd = p - 1e-3f * (m1 / 0.1f) / (np::sqrt(v1 / 0.001f) + 1e-8f);
                 return Tree(np::sum(upd * upd) + np::sum(m1) + np::sum(v1));
               },
               {Tree(rnd({64}, 16)), Tree(rnd({64}, 17)), Tree(rnd({64}, 18)), Tree(rnd({64}, 19))}});
  return c;
}

Fn counted(const Fn& f, int* traces) {
  return [f, traces](const std::vector<Tree>& a) {
    (*traces)++;
    return f(a);
  };
}

TEST(JitCall, GradJvpVmapOfJitEqualEagerOnTheCorpus) {
  for (const Case& c : corpus()) {
    SCOPED_TRACE(c.name);
    Fn jf = kiln::jit(c.loss);
    std::vector<int> all;
    for (size_t i = 0; i < c.args.size(); i++) all.push_back(int(i));
    expect_trees_close(kiln::value_and_grad(jf, kiln::Argnums(all))(c.args),
                       kiln::value_and_grad(c.loss, kiln::Argnums(all))(c.args));
    std::vector<Tree> tangents;
    for (auto& a : c.args) tangents.push_back(kiln::tree_map([](const Array& x) { return np::cos(x); }, a));
    auto [o1, t1] = kiln::jvp(jf, c.args, tangents);
    auto [o2, t2] = kiln::jvp(c.loss, c.args, tangents);
    expect_trees_close(Tree(Tree::List{o1, t1}), Tree(Tree::List{o2, t2}));
    // vmap over a stack of 3 copies of the first argument (scaled), the rest unbatched.
    auto stack = [](const Array& x) { return np::stack({x, x * 0.5f, x * -2.0f}); };
    std::vector<Tree> bargs = c.args;
    bargs[0] = kiln::tree_map(stack, c.args[0]);
    std::vector<Tree> ax(c.args.size(), Tree());
    ax[0] = Tree(0.0);
    Tree in_axes(Tree::List(ax.begin(), ax.end()));
    expect_trees_close(kiln::vmap(jf, in_axes)(bargs), kiln::vmap(c.loss, in_axes)(bargs), 1e-4);
  }
}

// A training loop: value_and_grad of a jitted loss traces the loss once, compiles its
// forward and backward calls at the first step only, and each step launches the kernels
// of those two programs.
TEST(JitCall, TrainingLoopTracesOnceAndCompilesOnce) {
  Case c = corpus()[0];
  int traces = 0;
  Fn step = kiln::value_and_grad(kiln::jit(counted(c.loss, &traces)));
  Tree first = step(c.args);
  EXPECT_EQ(traces, 1);
  size_t compiled = kiln::frontend::call_compile_count();
  for (unsigned s = 0; s < 3; s++) {
    std::vector<Tree> args = c.args;
    args[1] = Tree(rnd({5, 8}, 100 + s));
    kiln::frontend::KernelRecorder rec;
    Tree r = step(args);
    // 14, read from the kernel list: the forward call (the known part of the jvp) runs 6
    // (layer-1 matmul, relu, layer-2 matmul, the loss, two tangent factors); the cotangent
    // 1.0 is realized (2 one-element kernels, eager); the backward call (the transpose of
    // the unknown part) runs 6 (weight and input-gradient matmuls, the bias sums).
    // jit(value_and_grad(f)) fuses the same step into 10 (tests/jit_test.cpp).
    EXPECT_EQ(rec.kernels().size(), 14u);
    expect_trees_close(r, kiln::value_and_grad(c.loss)(args));
  }
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(kiln::frontend::call_compile_count(), compiled);
  // A new shape traces and compiles again.
  std::vector<Tree> bigger = c.args;
  bigger[1] = Tree(rnd({7, 8}, 7));
  bigger[2] = Tree(rnd({7, 4}, 8));
  step(bigger);
  EXPECT_EQ(traces, 2);
  EXPECT_GT(kiln::frontend::call_compile_count(), compiled);
}

TEST(JitCall, VmapOfJitTracesOnce) {
  int traces = 0;
  Fn f = [](const std::vector<Tree>& a) { return Tree(np::sum(np::exp(a[0].as_array()) * a[1].as_array())); };
  Fn vf = kiln::vmap(kiln::jit(counted(f, &traces)), Tree(Tree::List{Tree(0.0), Tree()}));
  Array w = rnd({4}, 2);
  for (unsigned s = 0; s < 3; s++) {
    Array xs = rnd({3, 4}, 30 + s);
    expect_trees_close(vf({Tree(xs), Tree(w)}), kiln::vmap(f, Tree(Tree::List{Tree(0.0), Tree()}))({Tree(xs), Tree(w)}));
  }
  EXPECT_EQ(traces, 1);
}

TEST(JitCall, ComposesInAnyOrder) {
  kiln::ArrayFn f = [](const Array& x) { return np::sum(np::sin(x) * x * x); };
  kiln::ArrayFn jf = kiln::jit(f);
  Array x = rnd({5}, 20);
  auto close = [](const Array& a, const Array& b) { expect_trees_close(Tree(a), Tree(b)); };
  close(kiln::jit(kiln::grad(jf))(x), kiln::grad(f)(x));
  close(kiln::grad(kiln::grad(jf))(x[0]), kiln::grad(kiln::grad(f))(x[0]));
  kiln::ArrayFn per_row = [](const Array& r) { return np::sum(np::exp(r) * r); };
  kiln::ArrayFn jrow = kiln::jit(per_row);
  Array xs = rnd({3, 4}, 21);
  close(kiln::vmap(kiln::grad(jrow))(xs), kiln::vmap(kiln::grad(per_row))(xs));
  close(kiln::jit(kiln::vmap(kiln::grad(jrow)))(xs), kiln::vmap(kiln::grad(per_row))(xs));
  kiln::ArrayFn sum_v = [jrow](const Array& m) { return np::sum(kiln::vmap(jrow)(m)); };
  kiln::ArrayFn sum_e = [per_row](const Array& m) { return np::sum(kiln::vmap(per_row)(m)); };
  close(kiln::grad(sum_v)(xs), kiln::grad(sum_e)(xs));
  // jvp of grad (a Hessian-vector product) and the linearized / vjp'd jitted function.
  Array t = rnd({5}, 22);
  close(kiln::jvp(kiln::grad(jf), x, t).second, kiln::jvp(kiln::grad(f), x, t).second);
  auto [y1, lin1] = kiln::linearize(jf, x);
  auto [y2, lin2] = kiln::linearize(f, x);
  close(y1, y2);
  close(lin1(t), lin2(t));
  auto [z1, pull1] = kiln::vjp(jf, x);
  auto [z2, pull2] = kiln::vjp(f, x);
  close(pull1(Array(1.5f)), pull2(Array(1.5f)));
  // Jit inside jit inside grad: the inner jit inlines into the outer one's program.
  kiln::ArrayFn nested = kiln::jit([jf](const Array& v) { return jf(v) * 2.0f; });
  close(kiln::grad(nested)(x), kiln::grad(f)(x) * 2.0f);
}

TEST(JitCall, CustomRulesInsideJitStillApply) {
  kiln::ArrayFn clip = kiln::custom_vjp(
      [](const Array& v) { return v; }, [](const Array& v) { return std::pair{v, Tree()}; },
      [](const Tree&, const Array& ct) { return np::clip(ct, Array(-0.5), Array(0.5)); });
  kiln::ArrayFn loss = kiln::jit([clip](const Array& v) { return np::sum(3.0f * clip(v)); });
  Array x = rnd({4}, 23);
  expect_trees_close(Tree(kiln::grad(loss)(x)), Tree(np::full_like(x, 0.5)));
}

TEST(JitCall, ErrorsNameTheOperation) {
  Fn bad = [](const std::vector<Tree>& a) { return Tree(np::sum(a[0].as_array() + a[1].as_array())); };
  Fn g = kiln::grad(kiln::jit(bad));
  try {
    g({Tree(rnd({3}, 1)), Tree(rnd({4}, 2))});
    FAIL() << "expected a kiln::Error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("add"), std::string::npos) << e.what();
  }
  // The failed trace left nothing behind: a good call still works.
  Array x = rnd({3}, 3);
  expect_trees_close(g({Tree(x), Tree(x)}), Tree(np::full_like(x, 1.0f)));
}

}  // namespace

}  // namespace jit_call_test
