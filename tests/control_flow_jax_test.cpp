// Checks kiln::lax control flow (scan, while_loop, fori_loop, cond, switch, map) under jit,
// grad, vmap, jvp and their compositions against JAX: tests/fixtures/control_flow_jax.txt
// (tools/gen_control_flow_fixtures.py). Runs on the suite's default device.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "jax_fixture_reader.h"
#include "kiln/kiln.h"

namespace control_flow_jax_test {

namespace {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;
namespace lax = kiln::lax;
using Named = std::map<std::string, Array>;

using FlowCase = kiln_test::JaxFixtureCase;

const std::vector<FlowCase>& all_cases() {
  static const std::vector<FlowCase> c = kiln_test::read_jax_fixture("control_flow_jax.txt");
  return c;
}

Array dot(const Array& a, const Array& b) { return np::matmul(a, b); }

std::pair<Array, Array> rnn(const Array& w, const Array& u, const Array& h0, const Array& xs, bool reverse = false) {
  auto step = [w, u](const Tree& h, const Tree& x) {
    Array h2 = np::tanh(dot(h.array(), w) + dot(x.array(), u));
    return std::pair<Tree, Tree>{h2, np::sum(h2 * h2)};
  };
  auto [h, ys] = lax::scan(step, h0, xs, std::nullopt, reverse);
  return {h.array(), ys.array()};
}

Array rnn_loss(const std::vector<Tree>& a) {
  auto [h, ys] = rnn(a[0].array(), a[1].array(), a[2].array(), a[3].array());
  return np::sum(ys) + np::sum(h);
}

Array hess_f(const Array& v, const Array& w, const Array& xs) {
  auto step = [w](const Tree& c, const Tree& x) {
    return std::pair<Tree, Tree>{np::sin(c.array()) * w + c.array() * x.array(), Tree()};
  };
  return np::sum(np::square(lax::scan(step, v, xs).first.array()));
}

Tree grow(const Array& x, const Array& limit) {
  return lax::while_loop([limit](const Tree& c) { return c[0].array() < limit; },
                         [](const Tree& c) {
                           return Tree(Tree::List{c[0].array() * Array(1.5) + Array(0.25), c[1].array() + Array(1)});
                         },
                         Tree(Tree::List{x, np::array(std::vector<int32_t>{0}, {})}));
}

Array fori_body(const Array& w, const Array& i, const Array& x) {
  return np::tanh(dot(x, w)) * Array(0.5) + x * (i.astype(x.dtype()) * Array(0.1));
}

std::pair<Array, Array> cond_scan(const Array& a, const Array& xs) {
  auto step = [a](const Tree& c, const Tree& x) {
    Tree r = lax::cond(
        np::sum(c.array()) > Array(0.0),
        [a](const std::vector<Tree>& o) { return Tree(o[0].array() * o[1].array() - a); },
        [a](const std::vector<Tree>& o) { return Tree(np::sin(o[0].array()) + o[1].array() * a); }, {c, x});
    return std::pair<Tree, Tree>{r, np::sum(r.array())};
  };
  auto [c, ys] = lax::scan(step, np::ones_like(a), xs);
  return {c.array(), ys.array()};
}

Array switch_f(const Array& i, const Array& x, const Array& y) {
  std::vector<lax::BranchFn> b = {
      [](const std::vector<Tree>& o) { return Tree(np::sin(o[0].array()) * o[1].array()); },
      [](const std::vector<Tree>& o) { return Tree(o[0].array() * o[0].array() + o[1].array()); },
      [](const std::vector<Tree>& o) { return Tree(np::exp(-o[0].array()) * np::cos(o[1].array())); }};
  return lax::switch_(i, b, {x, y}).array();
}

Array cond_pred(const Array& x) {
  return lax::cond(
             np::sum(x) > Array(0.0), [](const std::vector<Tree>& o) { return Tree(np::sin(o[0].array()) * Array(2.0)); },
             [](const std::vector<Tree>& o) { return Tree(o[0].array() * o[0].array() - Array(1.0)); }, {x})
      .array();
}

Array i32(int v) { return np::array(std::vector<int32_t>{v}, {}); }

using Impl = std::function<Named(const Named&)>;

const std::map<std::string, Impl>& table() {
  static const std::map<std::string, Impl> t = {
      {"scan_rnn",
       [](const Named& in) {
         Fn f = [](const std::vector<Tree>& a) {
           auto [h, ys] = rnn(a[0].array(), a[1].array(), a[2].array(), a[3].array(), a[4].as_array().item() != 0);
           return Tree(Tree::List{h, ys});
         };
         const Array &w = in.at("w"), &u = in.at("u"), &h0 = in.at("h0"), &xs = in.at("xs");
         Tree fw = kiln::jit(f, {4})({w, u, h0, xs, 0.0}), rv = kiln::jit(f, {4})({w, u, h0, xs, 1.0});
         Tree g = kiln::grad(Fn([](const std::vector<Tree>& a) { return Tree(rnn_loss(a)); }), {0, 1, 2, 3})(
             {w, u, h0, xs});
         auto [p, tan] = kiln::jvp([&](const std::vector<Tree>& a) {
           auto [h, ys] = rnn(a[0].array(), u, h0, xs);
           return Tree(Tree::List{h, ys});
         }, {w}, {in.at("dw")});
         return Named{{"h", fw[0].array()},     {"ys", fw[1].array()},     {"h_rev", rv[0].array()},
                      {"ys_rev", rv[1].array()}, {"g_w", g[0].array()},     {"g_u", g[1].array()},
                      {"g_h0", g[2].array()},   {"g_xs", g[3].array()},    {"jvp_h", tan[0].array()},
                      {"jvp_ys", tan[1].array()}};
       }},
      {"scan_vmap",
       [](const Named& in) {
         Fn f = [](const std::vector<Tree>& a) {
           auto [h, ys] = rnn(a[0].array(), a[1].array(), a[2].array(), a[3].array());
           return Tree(Tree::List{h, ys});
         };
         Tree axes = Tree::List{std::nullopt, std::nullopt, 0, 0};
         Tree r = kiln::vmap(f, axes)({in.at("w"), in.at("u"), in.at("h0"), in.at("xs")});
         Fn loss = [](const std::vector<Tree>& a) { return Tree(rnn_loss(a)); };
         Tree g = kiln::vmap(kiln::grad(loss), axes)({in.at("w"), in.at("u"), in.at("h0"), in.at("xs")});
         return Named{{"h", r[0].array()}, {"ys", r[1].array()}, {"g_w", g.array()}};
       }},
      {"scan_hessian",
       [](const Named& in) {
         Array w = in.at("w"), xs = in.at("xs");
         kiln::ArrayFn f = [w, xs](const Array& v) { return hess_f(v, w, xs); };
         return Named{{"hessian", kiln::hessian(f)(in.at("v"))}, {"grad", kiln::grad(f)(in.at("v"))}};
       }},
      {"while_vmap",
       [](const Named& in) {
         Fn f = [](const std::vector<Tree>& a) { return grow(a[0].array(), a[1].array()); };
         Tree r = kiln::jit(kiln::vmap(f, Tree::List{0, std::nullopt}))({in.at("xs"), in.at("limit")});
         Tree r2 = kiln::vmap(f)({in.at("xs"), in.at("limits")});
         Array limit = in.at("limit");
         auto [p, t] = kiln::jvp([limit](const Array& x) {
           Fn g = [limit](const std::vector<Tree>& a) { return grow(a[0].array(), limit)[0]; };
           return kiln::vmap(g)({x}).array();
         }, in.at("xs"), np::ones_like(in.at("xs")));
         return Named{{"x", r[0].array()}, {"n", r[1].array()}, {"x2", r2[0].array()}, {"n2", r2[1].array()}, {"jvp_x", t}};
       }},
      {"fori",
       [](const Named& in) {
         Array w = in.at("w"), x0 = in.at("x0"), n = in.at("n");
         auto f = [](const Array& w_, const Array& x_) {
           return lax::fori_loop(0, 4, [w_](const Array& i, const Tree& x) { return Tree(fori_body(w_, i, x.array())); }, x_).array();
         };
         Fn jf = [f](const std::vector<Tree>& a) { return Tree(f(a[0].array(), a[1].array())); };
         Array y = kiln::jit(jf)({w, x0}).array();
         Tree g = kiln::grad(Fn([f](const std::vector<Tree>& a) { return Tree(np::sum(np::square(f(a[0].array(), a[1].array())))); }),
                             {0, 1})({w, x0});
         auto dyn = [](const Array& w_, const Array& x_, const Array& n_) {
           return lax::fori_loop(i32(1), n_, [w_](const Array& i, const Tree& x) { return Tree(fori_body(w_, i, x.array())); }, x_).array();
         };
         Fn jd = [dyn](const std::vector<Tree>& a) { return Tree(dyn(a[0].array(), a[1].array(), a[2].array())); };
         Array yd = kiln::jit(jd)({w, x0, n}).array();
         auto [p, td] = kiln::jvp([&](const Array& x) { return dyn(w, x, n); }, x0, np::ones_like(x0));
         return Named{{"y", y}, {"g_w", g[0].array()}, {"g_x0", g[1].array()}, {"y_dyn", yd}, {"jvp_dyn", td}};
       }},
      {"cond_scan",
       [](const Named& in) {
         Fn f = [](const std::vector<Tree>& a) {
           auto [c, ys] = cond_scan(a[0].array(), a[1].array());
           return Tree(Tree::List{c, ys});
         };
         Tree r = kiln::jit(f)({in.at("a"), in.at("xs")});
         Tree g = kiln::grad(Fn([](const std::vector<Tree>& a) {
                               return Tree(np::sum(np::square(cond_scan(a[0].array(), a[1].array()).second)));
                             }),
                             {0, 1})({in.at("a"), in.at("xs")});
         return Named{{"c", r[0].array()}, {"ys", r[1].array()}, {"g_a", g[0].array()}, {"g_xs", g[1].array()}};
       }},
      {"switch",
       [](const Named& in) {
         Array x = in.at("x"), y = in.at("y");
         Named out;
         Fn jf = [](const std::vector<Tree>& a) { return Tree(switch_f(a[0].array(), a[1].array(), a[2].array())); };
         for (int i : {0, 1, 2, 5, -1}) {
           std::string k = i < 0 ? "m" + std::to_string(-i) : std::to_string(i);
           out["f_" + k] = kiln::jit(jf)({i32(i), x, y}).array();
           out["g_" + k] = kiln::grad([i, y](const Array& x_) { return np::sum(switch_f(i32(i), x_, y)); })(x);
         }
         Tree ax = Tree::List{0, 0, std::nullopt};
         out["vmap"] = kiln::vmap(jf, ax)({in.at("idx"), in.at("xb"), y}).array();
         Fn gl = [y](const std::vector<Tree>& a) { return Tree(np::sum(switch_f(a[1].array(), a[0].array(), y))); };
         out["vmap_grad"] = kiln::vmap(kiln::grad(gl), Tree::List{0, 0})({in.at("xb"), in.at("idx")}).array();
         out["jvp"] = kiln::jvp([y](const Array& x_) { return switch_f(i32(1), x_, y); }, x, y).second;
         return out;
       }},
      {"cond_vmap",
       [](const Named& in) {
         kiln::ArrayFn vf = kiln::vmap(kiln::ArrayFn(cond_pred));
         return Named{{"y", vf(in.at("xs"))},
                      {"grad", kiln::grad([vf](const Array& a) { return np::sum(vf(a)); })(in.at("xs"))}};
       }},
      {"map",
       [](const Named& in) {
         auto f = [](const Array& w, const Array& xs) {
           return lax::map([w](const Tree& x) { return Tree(np::tanh(dot(x.array(), w))); }, xs).array();
         };
         Fn jf = [f](const std::vector<Tree>& a) { return Tree(f(a[0].array(), a[1].array())); };
         Array xs = in.at("xs");
         return Named{{"y", kiln::jit(jf)({in.at("w"), xs}).array()},
                      {"g_w", kiln::grad([f, xs](const Array& w) { return np::sum(np::square(f(w, xs))); })(in.at("w"))}};
       }},
  };
  return t;
}

class ControlFlowJax : public ::testing::TestWithParam<size_t> {};

TEST_P(ControlFlowJax, Matches) {
  const FlowCase& c = all_cases()[GetParam()];
  ASSERT_TRUE(table().count(c.function)) << "no C++ implementation of " << c.function;
  // Inputs made here, on the device the suite runs on.
  kiln_test::expect_matches_jax(c, table().at(c.function)(kiln_test::fixture_inputs(c)));
}

INSTANTIATE_TEST_SUITE_P(ControlFlow, ControlFlowJax, ::testing::Range<size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) { return all_cases()[i.param].id; });

TEST(ControlFlowJaxFile, HasEveryCase) { EXPECT_EQ(all_cases().size(), 18u); }

}  // namespace

}  // namespace control_flow_jax_test
