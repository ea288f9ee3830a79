// NumPy view chains through the public API (tests/fixtures/views.txt from
// tools/gen_view_fixtures.py), and how many views the corpus' trackers reach.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_values.h"
#include "fixture_reader.h"
#include "frontend/array_impl.h"

#include "view_model.h"

namespace view_numpy_test {

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using namespace view_model;
namespace np = kiln::numpy;

// ---- 2b. NumPy chains through the public API -----------------------------------------------

const std::vector<kiln_test::FixtureCase>& view_cases() {
  static std::vector<kiln_test::FixtureCase> cases = [] {
    try {
      return kiln_test::read_fixture_file(std::string(KILN_FIXTURE_DIR) + "/views.txt");
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      return std::vector<kiln_test::FixtureCase>{};
    }
  }();
  return cases;
}

std::vector<int> int_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) out.push_back(std::stoi(part));
  return out;
}

std::vector<int64_t> int64s(const std::vector<std::string>& args, size_t from = 0) {
  std::vector<int64_t> out;
  for (size_t i = from; i < args.size(); i++) out.push_back(std::stoll(args[i]));
  return out;
}

std::vector<std::pair<int64_t, int64_t>> pairs(const std::vector<int64_t>& w) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i + 1 < w.size(); i += 2) out.push_back({w[i], w[i + 1]});
  return out;
}

kiln::Array apply_step(const kiln::Array& x, const kiln_test::FixtureView& v) {
  const auto& a = v.args;
  const std::string& k = v.kind;
  if (k == "reshape") return np::reshape(x, int64s(a));
  if (k == "ravel") return np::ravel(x);
  if (k == "transpose") {
    if (a.empty()) return np::transpose(x);
    std::vector<int> perm;
    for (auto& t : a) perm.push_back(std::stoi(t));
    return np::transpose(x, perm);
  }
  if (k == "T") return x.T();
  if (k == "swapaxes") return np::swapaxes(x, std::stoi(a.at(0)), std::stoi(a.at(1)));
  if (k == "moveaxis") return np::moveaxis(x, int_list(a.at(0)), int_list(a.at(1)));
  if (k == "broadcast_to") return np::broadcast_to(x, int64s(a));
  if (k == "expand_dims") return np::expand_dims(x, kiln::Axes(int_list(a.at(0))));
  if (k == "squeeze") return a.empty() ? np::squeeze(x) : np::squeeze(x, kiln::Axes(int_list(a.at(0))));
  if (k == "pad") return np::pad(x, pairs(int64s(a, 1)), "constant", kiln::Array(std::stoi(a.at(0))));
  if (k == "padm") return np::pad(x, pairs(int64s(a, 1)), a.at(0));
  if (k == "index") {
    std::vector<kiln::Index> terms;
    for (auto& t : a) terms.push_back(kiln_test::index_term(t));
    return x[terms];
  }
  if (k == "flip") {
    if (a.empty()) return np::flip(x);
    std::vector<int> axes;
    for (auto& t : a) axes.push_back(std::stoi(t));
    return np::flip(x, kiln::Axes(axes));
  }
  if (k == "tile") return np::tile(x, int64s(a));
  if (k == "repeat")
    return np::repeat(x, std::stoll(a.at(0)), a.at(1) == "none" ? std::nullopt : std::optional<int>(std::stoi(a.at(1))));
  if (k == "split") return np::split(x, std::stoll(a.at(0)), std::stoi(a.at(2))).at(size_t(std::stoll(a.at(1))));
  if (k == "concat_flip") {
    int ax = std::stoi(a.at(0));
    return np::concatenate({x, np::flip(x, kiln::Axes(ax))}, ax);
  }
  if (k == "add") return x + kiln::Array(std::stoi(a.at(0)));
  if (k == "eval") {
    x.eval();
    return x;
  }
  throw std::runtime_error("unknown view kind " + k);
}

kiln::Axes axes_of(const kiln_test::Params& p) {
  const auto& t = p.tokens("axis");
  if (t.size() == 1 && t[0] == "none") return kiln::Axes();
  if (t.at(0) == "list") {
    std::vector<int> v;
    for (size_t i = 1; i < t.size(); i++) v.push_back(std::stoi(t[i]));
    return kiln::Axes(v);
  }
  return kiln::Axes(std::stoi(t.at(0)));
}

kiln::Array apply_terminal(const kiln_test::FixtureCase& c, const kiln::Array& x) {
  if (c.op == "identity") return x;
  if (c.op == "affine") return x * 3 - 2;
  if (c.op == "add_flip") return x + np::flip(x);
  bool keep = c.params.integer("keepdims", 0) != 0;
  if (c.op == "sum") return np::sum(x, axes_of(c.params), keep);
  if (c.op == "max") return np::max(x, axes_of(c.params), keep);
  throw std::runtime_error("unknown terminal " + c.op);
}

struct ViewCaseRef {
  const kiln_test::FixtureCase* c;
};

std::vector<ViewCaseRef> view_case_refs() {
  std::vector<ViewCaseRef> out;
  for (const auto& c : view_cases()) out.push_back({&c});
  return out;
}

// The array a case reads before its terminal op: the base with the chain applied.
kiln::Array build_chain(const kiln_test::FixtureCase& c, kiln::Array* base, std::string* trail) {
  const kiln_test::FixtureArray& in = c.inputs.at(0).array;
  std::vector<uint8_t> bytes = in.bytes();
  *base = np::array(bytes.data(), in.shape, kiln::int32);
  kiln::Array x = *base;
  for (const auto& v : c.inputs[0].views) {
    *trail += " " + v.kind;
    for (auto& a : v.args) *trail += " " + a;
    x = apply_step(x, v);
  }
  return x;
}

class ViewChains : public testing::TestWithParam<ViewCaseRef> {};

TEST_P(ViewChains, MatchesNumpy) {
  const kiln_test::FixtureCase& c = *GetParam().c;
  ASSERT_EQ(c.inputs.size(), 1u);
  ASSERT_EQ(c.expects.size(), 1u);
  std::vector<uint8_t> bytes = c.inputs[0].array.bytes();
  kiln::Array base, x, out;
  std::string trail;
  try {
    x = build_chain(c, &base, &trail);
    out = apply_terminal(c, x);
    out.eval();
  } catch (const std::exception& e) {
    FAIL() << "case " << c.id << " (line " << c.line << "):" << trail << ": threw " << e.what();
  }
  const kiln_test::FixtureArray& want = c.expects[0];
  std::string where = "case " + c.id + " (line " + std::to_string(c.line) + "):" + trail + " | " + c.op +
                      "\n  tracker before " + c.op + ": " + x.impl()->st.to_string();
  ASSERT_EQ(out.shape(), want.shape) << where;
  ASSERT_EQ(out.dtype(), kiln::int32) << where;
  std::vector<int32_t> got = out.to_vector<int32_t>();
  int bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < got.size(); i++)
    if (got[i] != want.ints[i] && bad++ < 8) msg << "\n  [" << i << "] got " << got[i] << ", want " << want.ints[i];
  EXPECT_EQ(bad, 0) << where << ": " << bad << " of " << got.size() << " values differ" << msg.str();
  // The base array is untouched by any chain.
  EXPECT_EQ(base.bytes(), bytes) << where;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ViewChains, testing::ValuesIn(view_case_refs()),
                         [](const testing::TestParamInfo<ViewCaseRef>& info) { return info.param.c->id; });

// The corpus must keep reaching multi-view trackers through the public API, and the
// hand-picked chains must land on the side of the one-view boundary they were picked for.
TEST(ViewChainsCoverage, CorpusReachesMultiViewTrackers) {
  ASSERT_GT(view_cases().size(), 400u);
  std::map<std::string, size_t> views;
  std::map<size_t, int> hist;
  for (const auto& c : view_cases()) {
    kiln::Array base;
    std::string trail;
    try {
      views[c.id] = build_chain(c, &base, &trail).impl()->st.views().size();
      hist[std::min<size_t>(views[c.id], 3)]++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.id << ": " << e.what();
    }
  }
  EXPECT_GE(hist[2] + hist[3], 40) << "one view: " << hist[1] << ", two: " << hist[2] << ", three+: " << hist[3];
  EXPECT_GE(hist[3], 5);
  std::printf("view chains: %d one-view, %d two-view, %d with three or more\n", hist[1], hist[2], hist[3]);
  for (const char* id : {"h_T_merge", "h_pad_merge", "h_expand_merge", "h_perm021_8x3", "h_perm021_2x12",
                         "h_eval_then_T_merge", "h_expr_T_merge", "h_T_merge_split"})
    EXPECT_EQ(views[id], 2u) << id;
  EXPECT_EQ(views["h_T_merge_T_merge"], 3u);
  for (const char* id : {"h_T_split", "h_perm021_split", "h_perm120_12x2", "h_perm201_4x6",
                         "h_expand_unit_axes", "h_expand_split", "h_pad_permute", "h_pad_unit_axes",
                         "h_shrink_flip_stride", "h_flip_flip"})
    EXPECT_EQ(views[id], 1u) << id;
}

}  // namespace

}  // namespace view_numpy_test
