// Checks kiln::numpy::at (JAX's x.at[idx] updates and reads) against JAX: values, vjp and
// jvp, eager and under jit, and vmap with batched and shared indices
// (tests/fixtures/scatter.txt, tools/gen_scatter_fixtures.py), on the default device.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace scatter_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln::Tree;
namespace np = kiln::numpy;
using kiln_test::FixtureCase;

// The generator's index tokens: A<k> index array k, i<n>, s<start>:<stop>:<step>, e.
std::vector<np::AtIndex> index_of(const FixtureCase& c, const std::vector<Array>& arrays) {
  std::vector<np::AtIndex> idx;
  for (const std::string& t : c.params.tokens("index")) {
    if (t[0] == 'A') idx.emplace_back(arrays[size_t(std::stoi(t.substr(1)))]);
    else if (t[0] == 'i') idx.emplace_back(int64_t(std::stoll(t.substr(1))));
    else if (t == "e") idx.emplace_back(kiln::ellipsis);
    else idx.emplace_back(std::get<kiln::Slice>(kiln_test::index_term(t.substr(1))));
  }
  return idx;
}

int index_arrays(const FixtureCase& c) {
  int n = 0;
  for (const std::string& t : c.params.tokens("index")) n += t[0] == 'A';
  return n;
}

Array apply(const FixtureCase& c, const Array& x, const std::vector<Array>& arrays, const Array& u) {
  std::string m = c.params.str("method"), mode = c.params.str("mode");
  if (mode == "-") mode = "";
  auto ref = np::at(x, index_of(c, arrays));
  if (m == "get") {
    std::optional<double> fv;
    if (c.params.has("fill_value")) fv = c.params.real("fill_value");
    return ref.get(mode, fv);
  }
  if (m == "set") return ref.set(u, mode);
  if (m == "add") return ref.add(u, mode);
  if (m == "multiply") return ref.multiply(u, mode);
  if (m == "min") return ref.min(u, mode);
  return ref.max(u, mode);
}

void expect_close(const Array& got, const kiln_test::FixtureArray& want, const FixtureCase& c, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.shape(), kiln::Shape(want.shape));
  ASSERT_EQ(kiln::dtype_name(got.dtype()), want.dtype);
  auto g = got.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    double w = want.is_float() ? want.floats[i] : double(want.ints[i]);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g[i])) << "at " << i;
      continue;
    }
    ASSERT_NEAR(g[i], w, c.atol + c.rtol * std::fabs(w)) << "at " << i;
  }
}

// -1 is an unbatched input (None).
Tree axis_tree(int64_t a) {
  if (a < 0) return Tree(std::nullopt);
  return Tree(int(a));
}

std::vector<FixtureCase> cases() {
  return kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/scatter.txt");
}

TEST(Scatter, MatchesJaxEagerJitVjpJvp) {
  int n = 0;
  for (const auto& c : cases()) {
    if (c.op != "at") continue;
    SCOPED_TRACE(c.id);
    ++n;
    std::vector<Array> in;
    for (const auto& i : c.inputs) in.push_back(kiln_test::to_array(i.array));
    const int na = index_arrays(c);
    const bool get = c.params.str("method") == "get";
    const Array x = in[0];
    const std::vector<Array> arrays(in.begin() + 1, in.begin() + 1 + na);
    const Array u = get ? Array() : in[size_t(1 + na)];
    kiln::Fn f = [&](const std::vector<Tree>& a) -> Tree {
      return apply(c, a[0].array(), arrays, get ? Array() : a[1].array());
    };
    const std::vector<Tree> primals = get ? std::vector<Tree>{x} : std::vector<Tree>{x, u};
    expect_close(f(primals).array(), c.expects[0], c, "eager");
    expect_close(kiln::jit(f)(primals).array(), c.expects[0], c, "jit");
    if (c.expects.size() == 1) continue;
    size_t k = primals.size() + size_t(na);
    auto r = kiln::vjp(f, primals);
    auto cts = r.pullback(Tree(in[k]));
    expect_close(cts[0].array(), c.expects[1], c, "vjp x");
    if (!get) expect_close(cts[1].array(), c.expects[2], c, "vjp u");
    const std::vector<Tree> tangents = get ? std::vector<Tree>{in[k + 1]} : std::vector<Tree>{in[k + 1], in[k + 2]};
    // (Out-of-bounds promise_in_bounds reads have no jvp expectation: see the generator.)
    if (c.expects.size() == (get ? 3u : 4u))
      expect_close(kiln::jvp(f, primals, tangents).second.array(), c.expects.back(), c, "jvp");
    // grad of jit: the rules of the call primitive around the scatter.
    auto rj = kiln::vjp(kiln::jit(f), primals);
    expect_close(rj.pullback(Tree(in[k]))[0].array(), c.expects[1], c, "vjp of jit");
  }
  EXPECT_EQ(n, 78);
}

TEST(Scatter, VmapMatchesJax) {
  int n = 0;
  for (const auto& c : cases()) {
    if (c.op != "at_vmap") continue;
    SCOPED_TRACE(c.id);
    ++n;
    std::vector<Array> arrays;
    for (const auto& i : c.inputs) arrays.push_back(kiln_test::to_array(i.array));
    const std::vector<Tree> in(arrays.begin(), arrays.end());
    const bool get = c.params.str("method") == "get";
    Tree::List axes;
    for (int64_t a : c.params.integers("in_axes")) axes.push_back(axis_tree(a));
    kiln::Fn f = [&](const std::vector<Tree>& a) -> Tree {
      return apply(c, a[0].array(), {a[1].array()}, get ? Array() : a[2].array());
    };
    expect_close(kiln::vmap(f, Tree(axes))(in).array(), c.expects[0], c, "vmap");
    expect_close(kiln::jit(kiln::vmap(f, Tree(axes)))(in).array(), c.expects[0], c, "jit(vmap)");
  }
  EXPECT_EQ(n, 13);
}

TEST(Scatter, GradientOfMultiplyWithDuplicatesIsTheProductRule) {
  // JAX has no rule for scatter_mul with duplicate indices; kiln's is the product rule of
  // x[i] * u[a] * u[b]: checked against central differences in float64.
  Array x = np::array(std::vector<double>{0.5, -1.5, 2.0, 0.25}, {4});
  Array u = np::array(std::vector<double>{1.25, -0.75, 3.0}, {3});
  Array idx = np::array(std::vector<int32_t>{2, 2, 0}, {3});
  auto loss = [&](const Array& uu) { return np::sum(np::sin(np::at(x, {idx}).multiply(uu))); };
  Array g = kiln::grad(kiln::ArrayFn(loss))(u);
  auto gv = g.to_vector<double>();
  for (int i = 0; i < 3; i++) {
    std::vector<double> e(3, 0.0);
    e[size_t(i)] = 1e-6;
    Array d = np::array(e, {3});
    double fd = (loss(u + d).item() - loss(u - d).item()) / 2e-6;
    EXPECT_NEAR(gv[size_t(i)], fd, 1e-6) << i;
  }
}

TEST(Scatter, Errors) {
  Array x = np::zeros({3, 4});
  Array fi = np::array(std::vector<float>{1.0f}, {1});
  auto msg = [](auto f) {
    try {
      f();
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([&] { np::at(x, {0}).set(1.0, "wrap"); }).find("at.set: got mode 'wrap'"), std::string::npos);
  EXPECT_NE(msg([&] { np::at(x, {fi}).get(); }).find("expected an integer dtype"), std::string::npos);
  EXPECT_NE(msg([&] { np::at(x, {0, 1, 2}).add(1.0); }).find("too many indices"), std::string::npos);
  EXPECT_NE(msg([&] { np::at(x, {0}).set(np::zeros({5})); }).find("at.set"), std::string::npos);
}

}  // namespace

}  // namespace scatter_test
