// Checks kiln::lax::conv_transpose against jax.lax.conv_transpose (the conv_transpose cases
// of tests/fixtures/api_gaps.txt, tools/gen_api_gaps_fixtures.py), that it is the input
// gradient of the strided conv it transposes, and its argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fixture_reader.h"
#include "fixture_values.h"
#include "kiln/kiln.h"

namespace api_gaps_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::Array;
namespace np = kiln::numpy;
namespace lax = kiln::lax;

lax::Padding padding_of(const kiln_test::Params& p) {
  if (p.has("padding")) return p.str("padding");
  auto v = p.integers("padding_pairs");
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i + 1 < v.size(); i += 2) pairs.push_back({v[i], v[i + 1]});
  return pairs;
}

TEST(ConvTranspose, MatchesJax) {
  auto cases = kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/api_gaps.txt");
  int n = 0;
  for (const auto& c : cases) {
    if (c.op != "conv_transpose") continue;
    SCOPED_TRACE(c.id);
    ++n;
    std::vector<int64_t> dil;
    if (c.params.has("rhs_dilation")) dil = c.params.integers("rhs_dilation");
    Array out = lax::conv_transpose(kiln_test::to_array(c.inputs[0].array), kiln_test::to_array(c.inputs[1].array),
                                    c.params.integers("strides"), padding_of(c.params), dil,
                                    c.params.integer("transpose_kernel") != 0);
    const auto& want = c.expects[0];
    ASSERT_EQ(out.shape(), kiln::Shape(want.shape));
    auto g = out.astype(kiln::float64).to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_NEAR(g[i], want.floats[i], c.atol + c.rtol * std::fabs(want.floats[i])) << "at " << i;
  }
  EXPECT_EQ(n, 6);
}

// conv_transpose with transpose_kernel is the vjp of conv_general_dilated in its input
// (JAX's documented identity), for a stride and padding where both are defined.
TEST(ConvTranspose, IsTheConvInputGradient) {
  Array x = kiln::random::normal(kiln::random::key(1), {1, 2, 8, 8});
  Array k = kiln::random::normal(kiln::random::key(2), {3, 2, 3, 3});
  Array ct = kiln::random::normal(kiln::random::key(3), {1, 3, 4, 4});
  kiln::ArrayFn f = [&](const Array& v) { return np::sum(lax::conv_general_dilated(v, k, {2, 2}, std::string("SAME")) * ct); };
  Array g = kiln::grad(f)(x);
  Array t = lax::conv_transpose(ct, k, {2, 2}, std::string("SAME"), {}, true);
  ASSERT_EQ(t.shape(), g.shape());
  EXPECT_LT(np::max(np::abs(t - g)).item(), 1e-4);
}

TEST(ConvTranspose, Errors) {
  Array x = np::zeros({1, 2, 4}), k = np::zeros({3, 2, 2});
  EXPECT_THROW(lax::conv_transpose(x, k, {1, 1}, std::string("SAME")), kiln::Error);
  EXPECT_THROW(lax::conv_transpose(x, k, {1}, std::string("FULL")), kiln::Error);
  EXPECT_THROW(lax::conv_transpose(np::zeros({4}), np::zeros({2}), {1}, std::string("SAME")), kiln::Error);
  try {
    lax::conv_transpose(x, k, {1}, std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}});
    FAIL();
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv_transpose"), std::string::npos);
  }
}

}  // namespace

}  // namespace api_gaps_test
