// Checks sort/argsort/top_k and kiln::linalg against JAX values and gradients
// (tests/fixtures/sort_linalg.txt from tools/gen_sort_linalg_fixtures.py), plus vmap against
// a loop, jit against eager, forward against reverse mode, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace sort_linalg_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln::Shape;
using kiln::Tree;
using kiln_test::FixtureArray;
using kiln_test::FixtureCase;
using kiln_test::Params;
using kiln_test::to_array;
namespace np = kiln::numpy;
namespace la = kiln::linalg;

void expect_close(const Array& got, const FixtureArray& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.shape(), Shape(want.shape)) << what;
  ASSERT_EQ(kiln::dtype_name(got.dtype()), want.dtype) << what;
  auto g = got.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    double w = want.is_float() ? want.floats[i] : double(want.ints[i]);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " at " << i;
    } else if (std::isinf(w)) {
      EXPECT_EQ(g[i], w) << what << " at " << i;
    } else {
      ASSERT_NEAR(g[i], w, atol + rtol * std::fabs(w)) << what << " at " << i;
    }
  }
}

std::optional<int> axis_param(const Params& p) {
  if (p.is_none("axis")) return std::nullopt;
  return int(p.integer("axis"));
}
bool flag(const Params& p, const char* k) { return p.integer(k) != 0; }

using Op = std::function<std::vector<Array>(const std::vector<Array>&, const Params&)>;
const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> t = {
      {"sort", [](const std::vector<Array>& x, const Params& p) {
         return std::vector<Array>{np::sort(x[0], axis_param(p), flag(p, "descending"))};
       }},
      {"argsort", [](const std::vector<Array>& x, const Params& p) {
         return std::vector<Array>{np::argsort(x[0], axis_param(p), flag(p, "descending"))};
       }},
      {"top_k", [](const std::vector<Array>& x, const Params& p) {
         auto [v, i] = kiln::lax::top_k(x[0], p.integer("k"));
         return std::vector<Array>{v, i};
       }},
      {"cholesky", [](const std::vector<Array>& x, const Params& p) {
         return std::vector<Array>{la::cholesky(x[0], flag(p, "upper"))};
       }},
      {"triangular_solve", [](const std::vector<Array>& x, const Params& p) {
         return std::vector<Array>{la::triangular_solve(x[0], x[1], flag(p, "left_side"), flag(p, "lower"),
                                                        flag(p, "transpose_a"), flag(p, "unit_diagonal"))};
       }},
      {"lu", [](const std::vector<Array>& x, const Params&) {
         auto [l, piv, perm] = la::lu(x[0]);
         return std::vector<Array>{l, piv, perm};
       }},
      {"solve", [](const std::vector<Array>& x, const Params&) { return std::vector<Array>{la::solve(x[0], x[1])}; }},
      {"inv", [](const std::vector<Array>& x, const Params&) { return std::vector<Array>{la::inv(x[0])}; }},
      {"det", [](const std::vector<Array>& x, const Params&) { return std::vector<Array>{la::det(x[0])}; }},
      {"slogdet", [](const std::vector<Array>& x, const Params&) {
         auto [s, l] = la::slogdet(x[0]);
         return std::vector<Array>{s, l};
       }},
  };
  return t;
}

// The differentiated output of each grad_<op> case (the generator's loss uses it).
Array grad_output(const std::string& op, const std::vector<Array>& x, const Params& p) {
  if (op == "slogdet") return la::slogdet(x[0]).second;
  if (op == "top_k") return kiln::lax::top_k(x[0], p.integer("k")).first;
  if (op == "sort") return np::sort(x[0]);
  return ops().at(op)(x, p)[0];
}

void check_case(const FixtureCase& c) {
  SCOPED_TRACE(c.id + " (line " + std::to_string(c.line) + ")");
  std::vector<Array> in;
  for (const auto& i : c.inputs) in.push_back(to_array(i.array));
  if (c.op.rfind("grad_", 0) == 0) {
    std::string op = c.op.substr(5);
    Array w = in.back();
    std::vector<Array> args(in.begin(), in.end() - 1);
    kiln::Fn loss = [&](const std::vector<Tree>& a) -> Tree {
      std::vector<Array> v;
      for (const Tree& t : a) v.push_back(t.array());
      return np::sum(grad_output(op, v, c.params) * w);
    };
    std::vector<int> argnums;
    for (size_t i = 0; i < args.size(); ++i) argnums.push_back(int(i));
    std::vector<Tree> targs(args.begin(), args.end());
    Tree g = kiln::grad(loss, argnums)(targs);
    for (size_t i = 0; i < args.size(); ++i)
      expect_close(g[i].array(), c.expects[i], c.rtol, c.atol, "grad " + std::to_string(i));
    return;
  }
  std::vector<Array> out = ops().at(c.op)(in, c.params);
  ASSERT_EQ(out.size(), c.expects.size());
  for (size_t i = 0; i < out.size(); ++i) expect_close(out[i], c.expects[i], c.rtol, c.atol, "out " + std::to_string(i));
}

TEST(SortLinalg, MatchesJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/sort_linalg.txt");
  ASSERT_GT(cases.size(), 80u);
  for (const auto& c : cases) check_case(c);
}

void expect_equal(const Array& a, const Array& b) {
  ASSERT_EQ(a.shape(), b.shape());
  auto x = a.astype(kiln::float64).to_vector<double>(), y = b.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 1e-5 * (1 + std::fabs(y[i]))) << "at " << i;
}

TEST(SortLinalg, VmapMatchesLoop) {
  Array x = kiln::random::normal(kiln::random::key(1), {3, 5, 5});
  Array spd = np::matmul(x, np::swapaxes(x, -1, -2)) + np::eye(5) * Array(5.0);
  std::vector<std::pair<std::string, kiln::ArrayFn>> fns = {
      {"argsort", [](const Array& m) { return np::argsort(m, 0); }},
      {"sort", [](const Array& m) { return np::sort(m); }},
      {"cholesky", [](const Array& m) { return la::cholesky(m); }},
      {"inv", [](const Array& m) { return la::inv(m); }},
      {"det", [](const Array& m) { return la::det(m); }},
  };
  for (auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    Array batched = kiln::vmap(f)(spd);
    for (int64_t i = 0; i < 3; ++i) expect_equal(batched[i], f(spd[i]));
  }
}

TEST(SortLinalg, JitMatchesEager) {
  Array x = kiln::random::normal(kiln::random::key(2), {4, 13});
  kiln::ArrayFn f = [](const Array& a) { return np::sort(a) * Array(2.0) + np::argsort(a).astype(kiln::float32); };
  expect_equal(kiln::jit(f)(x), f(x));
  Array m = np::matmul(x, x.T()) + np::eye(4);
  kiln::ArrayFn g = [](const Array& a) { return la::solve(a, la::cholesky(a)); };
  expect_equal(kiln::jit(g)(m), g(m));
}

TEST(SortLinalg, ForwardModeMatchesReverse) {
  Array m = kiln::random::normal(kiln::random::key(4), {3, 3}) + np::eye(3) * Array(3.0);
  Array t = kiln::random::normal(kiln::random::key(5), {3, 3});
  kiln::ArrayFn f = [](const Array& a) { return np::sum(la::inv(a) * np::sort(a, std::nullopt).reshape({3, 3})); };
  double fwd = kiln::jvp(f, m, t).second.item();
  double rev = np::sum(kiln::grad(f)(m) * t).item();
  EXPECT_NEAR(fwd, rev, 1e-4 * (1 + std::fabs(rev)));
}

TEST(SortLinalg, Errors) {
  EXPECT_THROW(np::sort(Array(1.0)), kiln::Error);
  EXPECT_THROW(np::argsort(np::zeros({2, 3}), 2), kiln::Error);
  EXPECT_THROW(kiln::lax::top_k(np::zeros({2, 3}), 4), kiln::Error);
  EXPECT_THROW(la::cholesky(np::zeros({2, 3})), kiln::Error);
  EXPECT_THROW(la::inv(np::zeros({3, 3}, kiln::int32)), kiln::Error);
  EXPECT_THROW(la::solve(np::eye(3), np::zeros({4})), kiln::Error);
  EXPECT_THROW(la::triangular_solve(np::eye(3), np::zeros({3})), kiln::Error);
  try {
    la::det(np::zeros({2, 3}));
    FAIL();
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("det"), std::string::npos);
  }
}

}  // namespace

}  // namespace sort_linalg_test
