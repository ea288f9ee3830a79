// Checks kiln::linalg::qr against jnp.linalg.qr (tests/fixtures/qr.txt from
// tools/gen_qr_fixtures.py): q and r in reduced and complete modes, batched, a matrix that
// needs no reflection, and the jvp of the reduced factorization, eager and under jit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace qr_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
using kiln::Tree;

void expect_close(const Array& got, const kiln_test::FixtureArray& want, const kiln_test::FixtureCase& c, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.shape(), kiln::Shape(want.shape));
  auto g = got.astype(kiln::float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want.floats[i], c.atol + c.rtol * std::fabs(want.floats[i])) << "at " << i;
}

TEST(Qr, MatchesJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/qr.txt");
  int n = 0, jvps = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    ++n;
    const std::string mode = c.params.str("mode");
    Array a = kiln_test::to_array(c.inputs[0].array);
    kiln::Fn f = [&](const std::vector<Tree>& x) -> Tree {
      auto [q, r] = kiln::linalg::qr(x[0].array(), mode);
      return Tree(Tree::List{q, r});
    };
    Tree out = f({a});
    expect_close(out.list()[0].array(), c.expects[0], c, "q");
    expect_close(out.list()[1].array(), c.expects[1], c, "r");
    Tree jout = kiln::jit(f)({a});
    expect_close(jout.list()[0].array(), c.expects[0], c, "jit q");
    if (c.expects.size() == 2) continue;
    ++jvps;
    Array t = kiln_test::to_array(c.inputs[1].array);
    auto [o, tan] = kiln::jvp(f, {a}, {t});
    expect_close(tan.list()[0].array(), c.expects[2], c, "dq");
    expect_close(tan.list()[1].array(), c.expects[3], c, "dr");
  }
  EXPECT_EQ(n, 13);
  EXPECT_EQ(jvps, 5);
}

TEST(Qr, Errors) {
  EXPECT_THROW(kiln::linalg::qr(kiln::numpy::zeros({3})), kiln::Error);
  EXPECT_THROW(kiln::linalg::qr(kiln::numpy::zeros({3, 3}), "full"), kiln::Error);
}

}  // namespace

}  // namespace qr_test
