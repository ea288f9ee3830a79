// Tests of composing and nesting the transformations (grad of grad, vmap of grad, jvp of
// vmap, ...), pytrees, jacobians, custom rules, zero tangents of ints, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kiln/kiln.h"

namespace transforms_compose_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;

Array rnd(const kiln::Shape& s, unsigned seed, double lo = -1, double hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  size_t n = 1;
  for (auto d0 : s) n *= size_t(d0);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return np::array(v, s);
}

void expect_close(const Array& got, const Array& want, double tol = 1e-10) {
  ASSERT_EQ(got.shape(), want.shape());
  auto g = got.astype(kiln::float64).to_vector<double>(),
       w = want.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); i++)
    EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "index " << i;
}

TEST(Compose, GradOfGradToThirdOrder) {
  kiln::ArrayFn f = [](const Array& x) { return np::sin(x); };
  Array x = np::array(std::vector<double>{0.3}, {}).reshape({});
  expect_close(kiln::grad(f)(x), np::cos(x));
  expect_close(kiln::grad(kiln::grad(f))(x), np::negative(np::sin(x)));
  expect_close(kiln::grad(kiln::grad(kiln::grad(f)))(x), np::negative(np::cos(x)));
}

TEST(Compose, VmapOfGradIsPerExampleGradients) {
  kiln::ArrayFn f = [](const Array& x) { return np::sum(np::multiply(np::sin(x), x)); };
  Array xs = rnd({4, 3}, 1);
  Array g = kiln::vmap(kiln::grad(f))(xs);
  expect_close(g, np::add(np::multiply(np::cos(xs), xs), np::sin(xs)));
}

TEST(Compose, JvpOfVmapAndVmapOfJvp) {
  kiln::ArrayFn f = [](const Array& x) { return np::exp(np::sum(x, 0)); };
  Array xs = rnd({3, 2, 4}, 2), ts = rnd({3, 2, 4}, 3);
  auto [y, t] = kiln::jvp(kiln::vmap(f), xs, ts);
  expect_close(y, np::exp(np::sum(xs, 1)));
  expect_close(t, np::multiply(np::exp(np::sum(xs, 1)), np::sum(ts, 1)));
  Fn push = [f](const std::vector<Tree>& a) {
    return kiln::jvp(f, a[0].as_array(), a[1].as_array()).second;
  };
  Array t2 = kiln::vmap(push)({xs, ts}).as_array();
  expect_close(t2, t);
}

TEST(Compose, GradOfAFunctionCallingVmap) {
  // sum over rows of f(row), with f vmapped inside: the gradient is elementwise.
  kiln::ArrayFn inner = [](const Array& r) { return np::sum(np::square(np::sin(r))); };
  kiln::ArrayFn f = [inner](const Array& x) { return np::sum(kiln::vmap(inner)(x)); };
  Array x = rnd({3, 4}, 4);
  expect_close(kiln::grad(f)(x), np::multiply(Array(2.0), np::multiply(np::sin(x), np::cos(x))));
  // and the hessian-vector product through it
  auto [g, hv] = kiln::jvp(kiln::grad(f), x, np::ones_like(x));
  expect_close(hv, np::multiply(Array(2.0), np::cos(np::multiply(Array(2.0), x))));
}

TEST(Compose, VmapAxesNegativeUnbatchedAndSizeOne) {
  Fn f = [](const std::vector<Tree>& a) {
    return Tree(np::add(np::multiply(a[0].as_array(), a[1].as_array()), 1.0));
  };
  Array x = rnd({2, 5}, 5), w = rnd({2}, 6);
  Tree out = kiln::vmap(f, Tree::List{-1, std::nullopt}, 1)({x, w});
  Array want = np::add(np::multiply(x, w.reshape({2, 1})), 1.0);
  expect_close(out.as_array(), want);
  Array one = rnd({1, 2}, 7);
  expect_close(kiln::vmap(f, Tree::List{0, std::nullopt})({one, w}).as_array(),
               np::add(np::multiply(one, w), 1.0));
  // out_axes None for an unbatched output
  Fn g = [](const std::vector<Tree>& a) {
    return Tree(Tree::List{a[0], np::sum(a[1].as_array())});
  };
  Tree r = kiln::vmap(g, Tree::List{0, std::nullopt}, Tree::List{0, std::nullopt})({x, w});
  expect_close(r[1].as_array(), np::sum(w));
}

TEST(Compose, PytreeParamsGrad) {
  // A dict of parameters, a list of inputs: grad returns the same dict structure.
  Fn loss = [](const std::vector<Tree>& a) {
    const Tree& p = a[0];
    Array h = np::tanh(np::add(np::matmul(a[1].as_array(), p["w"].as_array()), p["b"].as_array()));
    return Tree(np::mean(np::square(h)));
  };
  Tree params = Tree::Dict{{"w", rnd({3, 2}, 8)}, {"b", rnd({2}, 9)}};
  Array x = rnd({4, 3}, 10);
  Tree g = kiln::grad(loss)({params, x});
  ASSERT_TRUE(g.is_dict());
  EXPECT_EQ(g["w"].as_array().shape(), (kiln::Shape{3, 2}));
  // Finite-difference check of one entry of each.
  const double eps = 1e-6;
  for (std::string key : {"w", "b"}) {
    Array p0 = params[key].as_array();
    Array e = np::zeros(p0.shape(), kiln::float64);
    std::vector<double> ev(size_t(p0.size()), 0.0);
    ev[1] = eps;
    e = np::array(ev, p0.shape());
    Tree::Dict plus = params.dict(), minus = params.dict();
    plus[key] = np::add(p0, e);
    minus[key] = np::subtract(p0, e);
    double fd =
        (loss({Tree(plus), x}).as_array().item() - loss({Tree(minus), x}).as_array().item()) /
        (2 * eps);
    EXPECT_NEAR(g[key].as_array().to_vector<double>()[1], fd, 1e-7);
  }
  // value_and_grad with argnums tuple and has_aux
  Fn with_aux = [loss](const std::vector<Tree>& a) {
    return Tree(Tree::List{loss(a), Tree::Dict{{"n", Array(3.0)}}});
  };
  Tree vg = kiln::value_and_grad(with_aux, {0, 1}, true)({params, x});
  EXPECT_NEAR(vg[0][0].as_array().item(), loss({params, x}).as_array().item(), 1e-12);
  EXPECT_NEAR(vg[0][1]["n"].as_array().item(), 3.0, 0);
  EXPECT_EQ(vg[1][1].as_array().shape(), x.shape());
}

TEST(Compose, JacobiansAndHessian) {
  kiln::ArrayFn f = [](const Array& x) { return np::multiply(np::sin(x), np::sum(x)); };
  Array x = rnd({3}, 11);
  Array jf = kiln::jacfwd(f)(x), jr = kiln::jacrev(f)(x);
  expect_close(jf, jr);
  // J_ij = cos(x_i) s delta_ij + sin(x_i)
  Array s = np::sum(x);
  Array want =
      np::add(np::multiply(np::eye(3, std::nullopt, 0, kiln::float64), np::multiply(np::cos(x), s))
                  .astype(kiln::float64),
              np::broadcast_to(np::sin(x).reshape({3, 1}), {3, 3}));
  expect_close(jf, want);
  // Rosenbrock hessian (closed form)
  kiln::ArrayFn rosen = [](const Array& v) {
    Array a = v[std::vector<kiln::Index>{kiln::Slice{1, std::nullopt, std::nullopt}}];
    Array b = v[std::vector<kiln::Index>{kiln::Slice{std::nullopt, -1, std::nullopt}}];
    return np::sum(np::add(np::multiply(Array(100.0), np::square(np::subtract(a, np::square(b)))),
                           np::square(np::subtract(Array(1.0), b))));
  };
  Array p = np::array(std::vector<double>{1.1, 0.9}, {2});
  Array h = kiln::hessian(rosen)(p);
  double x0 = 1.1, x1 = 0.9;
  Array hw = np::array(
      std::vector<double>{1200 * x0 * x0 - 400 * x1 + 2, -400 * x0, -400 * x0, 200}, {2, 2});
  expect_close(h, hw, 1e-9);
}

TEST(Compose, CustomJvpAndVjp) {
  // custom_jvp: a rule that doubles the true derivative, seen by grad and vmap.
  kiln::ArrayFn f = kiln::custom_jvp(
      [](const Array& x) { return np::sin(x); },
      [](const Array& x, const Array& t) {
        return std::pair{np::sin(x), np::multiply(Array(2.0), np::multiply(np::cos(x), t))};
      });
  Array x = rnd({4}, 12);
  kiln::ArrayFn sf = [f](const Array& v) { return np::sum(f(v)); };
  expect_close(kiln::grad(sf)(x), np::multiply(Array(2.0), np::cos(x)));
  expect_close(kiln::vmap(kiln::grad([f](const Array& v) { return f(v); }))(x),
               np::multiply(Array(2.0), np::cos(x)));
  // custom_vjp gradient clipping: identity forward, clipped cotangent.
  kiln::ArrayFn clip = kiln::custom_vjp(
      [](const Array& v) { return v; },
      [](const Array& v) {
        return std::pair{v, Tree()};
      },
      [](const Tree&, const Array& ct) { return np::clip(ct, Array(-0.5), Array(0.5)); });
  kiln::ArrayFn loss = [clip](const Array& v) {
    return np::sum(np::multiply(Array(3.0), clip(v)));
  };
  expect_close(kiln::grad(loss)(x), np::full_like(x, 0.5));
  // through vmap (per-example) and inside jit-free nesting
  kiln::ArrayFn per = [clip](const Array& v) {
    return np::multiply(np::sin(v), clip(v)).reshape({});
  };
  Array xs = rnd({5, 1}, 13);
  Array g = kiln::vmap(kiln::grad([per](const Array& v) { return per(v); }))(xs);
  Array s = np::sin(xs);
  expect_close(g, np::add(np::multiply(np::cos(xs), xs), np::clip(s, Array(-0.5), Array(0.5))));
  // forward mode through a custom_vjp is an error, as in JAX
  EXPECT_THROW(kiln::jvp(clip, x, x), kiln::Error);
}

TEST(Compose, StopGradientAndIntInputs) {
  kiln::ArrayFn f = [](const Array& x) { return np::sum(np::multiply(x, kiln::stop_gradient(x))); };
  Array x = rnd({3}, 14);
  expect_close(kiln::grad(f)(x), x);
  // int inputs and comparisons: zero tangents of the primal's dtype (kiln has no float0)
  Fn g = [](const std::vector<Tree>& a) {
    return Tree(Tree::List{np::less(a[0].as_array(), 0.0), np::multiply(a[1].as_array(), 2)});
  };
  Array i = np::array(std::vector<int32_t>{1, 2}, {2});
  auto [out, tan] = kiln::jvp(g, {x, i}, {x, i});
  EXPECT_EQ(tan[0].as_array().dtype(), kiln::bool_);
  EXPECT_EQ(tan[1].as_array().dtype(), kiln::int32);
  EXPECT_EQ(tan[1].as_array().to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
  // argmax has a zero gradient; casts to int cut the derivative
  kiln::ArrayFn h = [](const Array& v) {
    return np::add(np::sum(np::argmax(v).astype(kiln::float64)),
                   np::sum(v.astype(kiln::int32).astype(kiln::float64)));
  };
  expect_close(kiln::grad(h)(x), np::zeros_like(x));
  // float casts pass tangents through
  auto [y, t] =
      kiln::jvp([](const Array& v) { return v.astype(kiln::float32).astype(kiln::float64); }, x, x);
  expect_close(t, x.astype(kiln::float32).astype(kiln::float64));
}

TEST(Compose, LinearizeMatchesJvp) {
  kiln::ArrayFn f = [](const Array& x) { return np::cumsum(np::exp(x)); };
  Array x = rnd({5}, 15), t = rnd({5}, 16);
  auto [y, lin] = kiln::linearize(f, x);
  expect_close(lin(t), kiln::jvp(f, x, t).second);
}

TEST(TransformErrors, Messages) {
  kiln::ArrayFn vec = [](const Array& x) { return np::sin(x); };
  Array x = rnd({3}, 17);
  auto msg = [](auto fn) {
    try {
      fn();
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([&] { kiln::grad(vec)(x); }).find("scalar output"), std::string::npos);
  Fn two = [](const std::vector<Tree>& a) {
    return Tree(np::sum(np::multiply(a[0].as_array(), a[1].as_array())));
  };
  EXPECT_NE(msg([&] {
              kiln::grad(two, 2)({x, x});
            }).find("argnums 2 is out of range"),
            std::string::npos);
  Fn add = [](const std::vector<Tree>& a) {
    return Tree(np::add(a[0].as_array(), a[1].as_array()));
  };
  EXPECT_NE(msg([&] {
              kiln::vmap(add)({rnd({3}, 1), rnd({4}, 2)});
            }).find("inconsistent sizes"),
            std::string::npos);
  EXPECT_NE(msg([&] {
              kiln::vmap(add, Tree::List{0, 0, 0})({x, x});
            }).find("in_axes has 3 entries"),
            std::string::npos);
  EXPECT_NE(msg([&] {
              kiln::vmap(add, Tree::List{Tree::List{0, 0}, 0})({x, x});
            }).find("tree prefix"),
            std::string::npos);
  Fn list_out = [](const std::vector<Tree>& a) { return Tree(Tree::List{a[0], a[0]}); };
  EXPECT_NE(msg([&] { kiln::grad(list_out)({x}); }).find("return a scalar array"),
            std::string::npos);
  Fn empty_out = [](const std::vector<Tree>&) { return Tree(Array()); };
  EXPECT_NE(msg([&] { kiln::grad(empty_out)({x}); }).find("expected arrays"), std::string::npos);
  Array i = np::array(std::vector<int32_t>{1}, {}).reshape({});
  EXPECT_NE(msg([&] { kiln::grad(vec)(i); }).find("floating-point inputs"), std::string::npos);
  // reading a traced value
  EXPECT_NE(msg([&] {
              kiln::grad([](const Array& v) {
                v[0].item();
                return np::sum(v);
              })(x);
            }).find("cannot read the value of a traced array"),
            std::string::npos);
  // a tracer that escapes its transformation
  Array leaked;
  kiln::grad([&](const Array& v) {
    leaked = v;
    return np::sum(v);
  })(x);
  EXPECT_NE(msg([&] { np::sin(leaked); }).find("escaped"), std::string::npos);
}

}  // namespace

}  // namespace transforms_compose_test
