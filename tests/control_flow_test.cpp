// kiln::lax control flow beyond the JAX fixtures (control_flow_jax_test.cpp): bodies
// compile once, jit runs the loop as one program step, closures over traced values, and
// the errors (carry types, reverse-mode while, branch types).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/call.h"
#include "kiln/kiln.h"

namespace control_flow_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;
namespace lax = kiln::lax;

std::pair<Tree, Tree> accumulate(const Tree& c, const Tree& x) {
  Array n = c.array() * Array(0.5) + np::sin(x.array());
  return {n, np::sum(n)};
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ControlFlow, ScanCompilesPerLayoutNotPerIteration) {
  // A scan runs its compiled step once per iteration: the compiles (once per argument
  // layout: fresh buffers, then the loop's own outputs) do not grow with the length.
  auto compiles = [](int64_t n) {
    size_t before = kiln::frontend::call_compile_count();
    lax::scan(accumulate, np::zeros({3}), np::ones({n, 3})).first.array().eval();
    return kiln::frontend::call_compile_count() - before;
  };
  size_t short_run = compiles(4);
  EXPECT_GE(short_run, 1u);
  EXPECT_LE(short_run, 3u);
  EXPECT_EQ(compiles(40), short_run);
  Array init = np::zeros({3}), xs = np::reshape(np::arange(0.0, 24.0), {8, 3});
  auto [c, ys] = lax::scan(accumulate, init, xs);
  // The same loop written on the host gives the same values.
  Array h = init;
  std::vector<double> want;
  for (int i = 0; i < 8; i++) {
    h = h * Array(0.5) + np::sin(xs[i]);
    want.push_back(np::sum(h).item());
  }
  std::vector<double> got = ys.array().to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])));
  EXPECT_NEAR(c.array()[2].item(), h[2].item(), 1e-5);
}

TEST(ControlFlow, JitRunsTheLoopInsideTheProgramAndCompilesOnce) {
  Fn f = [](const std::vector<Tree>& a) { return lax::scan(accumulate, a[0], a[1]).first; };
  Fn jf = kiln::jit(f);
  Array init = np::ones({3}), xs = np::reshape(np::linspace(0.0, 1.0, 60), {20, 3});
  Array want = f({init, xs}).array();
  Array got = jf({init, xs}).array();
  size_t before = kiln::frontend::call_compile_count();
  for (int k = 0; k < 3; k++) got = jf({init, xs}).array();
  EXPECT_EQ(kiln::frontend::call_compile_count(), before);
  for (int i = 0; i < 3; i++) EXPECT_NEAR(got[i].item(), want[i].item(), 1e-6);
}

TEST(ControlFlow, BodiesCloseOverTracedValues) {
  // w is a tracer of grad's trace inside the body; closure conversion passes it explicitly.
  kiln::ArrayFn loss = [](const Array& w) {
    auto step = [w](const Tree& c, const Tree&) {
      return std::pair<Tree, Tree>{np::tanh(c.array() * w), Tree()};
    };
    return np::sum(lax::scan(step, np::ones({2}), Tree(), 3).first.array());
  };
  Array w = np::array(std::vector<float>{0.3f, -0.7f}, {2});
  Array g = kiln::grad(loss)(w);
  const double eps = 1e-3;
  for (int i = 0; i < 2; i++) {
    std::vector<float> p{0.3f, -0.7f}, m{0.3f, -0.7f};
    p[size_t(i)] += eps;
    m[size_t(i)] -= eps;
    double fd = (loss(np::array(p, {2})).item() - loss(np::array(m, {2})).item()) / (2 * eps);
    EXPECT_NEAR(g[i].item(), fd, 1e-3);
  }
}

TEST(ControlFlow, WhileLoopRunsUntilThePredicateFails) {
  Tree r = lax::while_loop([](const Tree& c) { return c[0].array() < Array(100.0); },
                           [](const Tree& c) { return Tree(Tree::List{c[0].array() * Array(2.0), c[1].array() + Array(1.0)}); },
                           Tree(Tree::List{np::ones({}), np::zeros({})}));
  EXPECT_EQ(r[0].array().item(), 128.0);
  EXPECT_EQ(r[1].array().item(), 7.0);
}

TEST(ControlFlow, ErrorsNameTheMismatch) {
  Array x = np::ones({3});
  std::string e = error_of([&] {
    lax::scan([](const Tree& c, const Tree&) { return std::pair<Tree, Tree>{np::sum(c.array()), Tree()}; }, x, Tree(), 2);
  });
  EXPECT_NE(e.find("scan: the body's carry output 0 is float32[]"), std::string::npos) << e;
  EXPECT_NE(e.find("expected float32[3]"), std::string::npos) << e;
  e = error_of([&] {
    lax::scan([](const Tree& c, const Tree&) { return std::pair<Tree, Tree>{Tree(Tree::List{c, c}), Tree()}; }, x,
              Tree(), 2);
  });
  EXPECT_NE(e.find("structure"), std::string::npos) << e;
  e = error_of([&] {
    lax::cond(Array(true), [](const std::vector<Tree>& o) { return o[0]; },
              [](const std::vector<Tree>& o) { return Tree(np::sum(o[0].array())); }, {x});
  });
  // cond is switch over (false_fn, true_fn), as in JAX.
  EXPECT_NE(e.find("cond: branch 1 returned float32[3] for output 0 and branch 0 float32[]"), std::string::npos) << e;
  // Reverse mode through a while loop is refused, as in JAX; forward mode works.
  kiln::ArrayFn f = [](const Array& a) {
    return lax::while_loop([](const Tree& c) { return np::sum(c.array()) < Array(10.0); },
                           [](const Tree& c) { return Tree(c.array() * Array(2.0)); }, a)
        .array();
  };
  e = error_of([&] { kiln::grad([f](const Array& a) { return np::sum(f(a)); })(x); });
  EXPECT_NE(e.find("while_loop: reverse-mode differentiation"), std::string::npos) << e;
  EXPECT_NEAR(kiln::jvp(f, x, x).second[0].item(), 4.0, 1e-6);
  e = error_of([&] { lax::while_loop([](const Tree&) { return np::ones({2}); }, [](const Tree& c) { return c; }, x); });
  EXPECT_NE(e.find("while_loop: the condition must return one bool scalar"), std::string::npos) << e;
}

}  // namespace

}  // namespace control_flow_test
