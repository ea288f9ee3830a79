// Tests of View/ShapeTracker: which movement chains stay one view, that index expressions
// match a brute-force model and NumPy (tests/fixtures/views.txt), and that they simplify.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "fixture_reader.h"
#include "frontend/array_impl.h"
#include "ir/view.h"
#include "kiln/kiln.h"

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace {

using kiln::AluExp;
using kiln::AluNode;
using kiln::AluOp;
using kiln::Dims;
using kiln::DType;
using kiln::Ranges;
using kiln::ShapeTracker;
using kiln::VarId;
using kiln::View;
namespace np = kiln::numpy;

// ---- helpers -------------------------------------------------------------------------------

AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, std::max<int64_t>(n - 1, 0)); }

// Evaluates an index expression (no loads) at gidx = g with the scalar semantics that
// every backend reproduces.
double eval_at(const AluExp& e, int64_t g, std::unordered_map<const AluNode*, double>& memo) {
  auto it = memo.find(e.get());
  if (it != memo.end()) return it->second;
  const AluNode& n = e.node();
  double v = 0;
  if (n.op == AluOp::Const) {
    v = n.value;
  } else if (n.op == AluOp::Var) {
    EXPECT_EQ(n.arg, int(VarId::Gidx)) << "index expression uses a variable other than gidx";
    v = double(g);
  } else {
    EXPECT_NE(n.op, AluOp::Load) << "index expression loads";
    double a[3] = {0, 0, 0};
    for (size_t i = 0; i < n.src.size() && i < 3; i++) a[i] = eval_at(n.src[i], g, memo);
    v = kiln::alu_eval(n.op, n.dtype, n.src[0].dtype(), a[0], a[1], a[2]);
  }
  memo[e.get()] = v;
  return v;
}

double eval_at(const AluExp& e, int64_t g) {
  std::unordered_map<const AluNode*, double> memo;
  return eval_at(e, g, memo);
}

std::string flat_index(const ShapeTracker& st) { return st.to_index_flat(gidx(st.size())).first.to_string(); }
std::string flat_valid(const ShapeTracker& st) { return st.to_index_flat(gidx(st.size())).second.to_string(); }

// ---- a brute-force model of movement ops ---------------------------------------------------
// Grid: the buffer index of every logical element, row-major; -1 marks padding.
struct Grid {
  Dims shape;
  std::vector<int64_t> v;
};

Dims unravel_int(int64_t flat, const Dims& shape) {
  Dims idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

int64_t ravel_int(const Dims& idx, const Dims& shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); i++) f = f * shape[i] + idx[i];
  return f;
}

Grid grid_contiguous(const Dims& shape) {
  Grid g{shape, std::vector<int64_t>(size_t(kiln::prod(shape)))};
  for (size_t i = 0; i < g.v.size(); i++) g.v[i] = int64_t(i);
  return g;
}

// Builds a grid of `out_shape` whose element at `out` is g's element at `in` (set by `map`,
// which returns false for padding).
Grid grid_map(const Grid& g, const Dims& out_shape, const std::function<bool(const Dims&, Dims&)>& map) {
  Grid o{out_shape, std::vector<int64_t>(size_t(kiln::prod(out_shape)))};
  Dims in(g.shape.size());
  for (size_t f = 0; f < o.v.size(); f++) {
    Dims out = unravel_int(int64_t(f), out_shape);
    o.v[f] = map(out, in) ? g.v[size_t(ravel_int(in, g.shape))] : -1;
  }
  return o;
}

// One movement op, applied to both a ShapeTracker and a Grid.
struct Op {
  enum Kind { Reshape, Permute, Expand, Pad, Shrink, Flip, Stride } kind;
  Dims dims;
  std::vector<int> perm;
  Ranges ranges;
  std::vector<bool> axes;

  std::string str() const {
    std::ostringstream os;
    const char* names[] = {"reshape", "permute", "expand", "pad", "shrink", "flip", "stride"};
    os << names[kind] << "(";
    for (int64_t d : dims) os << d << ",";
    for (int p : perm) os << p << ",";
    for (auto [a, b] : ranges) os << "(" << a << "," << b << "),";
    for (bool b : axes) os << (b ? "T" : "F") << ",";
    os << ")";
    return os.str();
  }

  ShapeTracker apply(const ShapeTracker& t) const {
    switch (kind) {
      case Reshape: return t.reshape(dims);
      case Permute: return t.permute(perm);
      case Expand: return t.expand(dims);
      case Pad: return t.pad(ranges);
      case Shrink: return t.shrink(ranges);
      case Flip: return t.flip(axes);
      case Stride: return t.stride(dims);
    }
    return t;
  }

  Grid apply(const Grid& g) const {
    const Dims& s = g.shape;
    Dims out = s;
    switch (kind) {
      case Reshape: return Grid{dims, g.v};
      case Permute:
        for (size_t k = 0; k < perm.size(); k++) out[k] = s[size_t(perm[k])];
        return grid_map(g, out, [&](const Dims& o, Dims& in) {
          for (size_t k = 0; k < perm.size(); k++) in[size_t(perm[k])] = o[k];
          return true;
        });
      case Expand:
        return grid_map(g, dims, [&](const Dims& o, Dims& in) {
          for (size_t k = 0; k < s.size(); k++) in[k] = s[k] == 1 ? 0 : o[k];
          return true;
        });
      case Pad:
        for (size_t k = 0; k < s.size(); k++) out[k] = s[k] + ranges[k].first + ranges[k].second;
        return grid_map(g, out, [&](const Dims& o, Dims& in) {
          for (size_t k = 0; k < s.size(); k++) {
            in[k] = o[k] - ranges[k].first;
            if (in[k] < 0 || in[k] >= s[k]) return false;
          }
          return true;
        });
      case Shrink:
        for (size_t k = 0; k < s.size(); k++) out[k] = ranges[k].second - ranges[k].first;
        return grid_map(g, out, [&](const Dims& o, Dims& in) {
          for (size_t k = 0; k < s.size(); k++) in[k] = o[k] + ranges[k].first;
          return true;
        });
      case Flip:
        return grid_map(g, s, [&](const Dims& o, Dims& in) {
          for (size_t k = 0; k < s.size(); k++) in[k] = axes[k] ? s[k] - 1 - o[k] : o[k];
          return true;
        });
      case Stride:
        for (size_t k = 0; k < s.size(); k++) out[k] = (s[k] + dims[k] - 1) / dims[k];
        return grid_map(g, out, [&](const Dims& o, Dims& in) {
          for (size_t k = 0; k < s.size(); k++) in[k] = o[k] * dims[k];
          return true;
        });
    }
    return g;
  }
};

// Checks every element of `t` against the brute-force grid.
::testing::AssertionResult matches_grid(const ShapeTracker& t, const Grid& g) {
  if (t.shape() != g.shape) return ::testing::AssertionFailure() << "shape differs from the model";
  int64_t n = t.size();
  if (n == 0) return ::testing::AssertionSuccess();
  auto [flat, valid] = t.to_index_flat(gidx(n));
  for (int64_t i = 0; i < n; i++) {
    std::unordered_map<const AluNode*, double> memo;
    bool ok = eval_at(valid, i, memo) != 0;
    int64_t want = g.v[size_t(i)];
    if (want < 0 && ok)
      return ::testing::AssertionFailure() << "element " << i << " should be padding but is valid";
    if (want >= 0 && !ok)
      return ::testing::AssertionFailure() << "element " << i << " should read buffer[" << want
                                           << "] but is masked";
    if (want >= 0) {
      auto got = int64_t(eval_at(flat, i, memo));
      if (got != want)
        return ::testing::AssertionFailure() << "element " << i << " reads buffer[" << got << "], want buffer["
                                             << want << "]";
    }
  }
  return ::testing::AssertionSuccess();
}

// ---- 1. which chains stay one view ---------------------------------------------------------

View view(Dims shape, Dims strides, int64_t offset = 0, std::optional<Ranges> mask = std::nullopt) {
  View v;
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  v.offset = offset;
  v.mask = std::move(mask);
  return v;
}

// Reshape, checked against the model too.
ShapeTracker reshaped(const ShapeTracker& t, const Grid& g, const Dims& s, Grid* out) {
  Op op{Op::Reshape, s, {}, {}, {}};
  *out = op.apply(g);
  return op.apply(t);
}

TEST(ShapeTrackerViews, ReshapeOfContiguousStaysContiguous) {
  auto t = ShapeTracker::contiguous({2, 3, 4});
  for (Dims s : {Dims{24}, Dims{6, 4}, Dims{4, 6}, Dims{1, 2, 12, 1}, Dims{2, 3, 2, 2}}) {
    auto r = t.reshape(s);
    ASSERT_EQ(r.views().size(), 1u) << r.to_string();
    EXPECT_TRUE(r.is_contiguous()) << r.to_string();
    EXPECT_EQ(r.views()[0], View::contiguous(s));
  }
  // Size-1 axes get stride 0 in a contiguous view.
  EXPECT_EQ(t.reshape({1, 24, 1}).views()[0], view({1, 24, 1}, {0, 1, 0}));
}

TEST(ShapeTrackerViews, PermutedReshapesThatMergeContiguousRunsStayOneView) {
  auto base = ShapeTracker::contiguous({2, 3, 4});  // strides (12, 4, 1)
  Grid g = grid_contiguous({2, 3, 4}), r;
  // permute(1,2,0): shape (3,4,2) strides (4,1,12); axes 0,1 are contiguous among
  // themselves (4 == 1*4), so they merge.
  auto p120 = base.permute({1, 2, 0});
  Grid g120 = Op{Op::Permute, {}, {1, 2, 0}, {}, {}}.apply(g);
  auto m = reshaped(p120, g120, {12, 2}, &r);
  ASSERT_EQ(m.views().size(), 1u) << m.to_string();
  EXPECT_EQ(m.views()[0], view({12, 2}, {1, 12}));
  EXPECT_TRUE(matches_grid(m, r));
  // permute(2,0,1): shape (4,2,3) strides (1,12,4); axes 1,2 merge (12 == 4*3).
  auto p201 = base.permute({2, 0, 1});
  Grid g201 = Op{Op::Permute, {}, {2, 0, 1}, {}, {}}.apply(g);
  m = reshaped(p201, g201, {4, 6}, &r);
  ASSERT_EQ(m.views().size(), 1u) << m.to_string();
  EXPECT_EQ(m.views()[0], view({4, 6}, {1, 4}));
  EXPECT_TRUE(matches_grid(m, r));
  // permute(0,2,1): shape (2,4,3) strides (12,1,4): no two adjacent axes merge, but
  // splitting an axis always works.
  auto p021 = base.permute({0, 2, 1});
  Grid g021 = Op{Op::Permute, {}, {0, 2, 1}, {}, {}}.apply(g);
  m = reshaped(p021, g021, {2, 2, 2, 3}, &r);
  ASSERT_EQ(m.views().size(), 1u) << m.to_string();
  EXPECT_EQ(m.views()[0], view({2, 2, 2, 3}, {12, 2, 1, 4}));
  EXPECT_TRUE(matches_grid(m, r));
  // Splitting and merging inside a contiguous run at once: (3,4,2) -> (2,6,2).
  m = reshaped(p120, g120, {2, 6, 2}, &r);
  ASSERT_EQ(m.views().size(), 1u) << m.to_string();
  EXPECT_EQ(m.views()[0], view({2, 6, 2}, {6, 1, 12}));
  EXPECT_TRUE(matches_grid(m, r));
}

TEST(ShapeTrackerViews, MergingNonContiguousAxesPushesASecondView) {
  auto t = ShapeTracker::contiguous({3, 4}).permute({1, 0});
  ASSERT_EQ(t.views().size(), 1u);
  EXPECT_EQ(t.views()[0], view({4, 3}, {1, 4}));
  auto m = t.reshape({12});
  ASSERT_EQ(m.views().size(), 2u) << m.to_string();
  EXPECT_EQ(m.views()[0], view({4, 3}, {1, 4}));
  EXPECT_EQ(m.views()[1], View::contiguous({12}));
  Grid g = Op{Op::Permute, {}, {1, 0}, {}, {}}.apply(grid_contiguous({3, 4}));
  EXPECT_TRUE(matches_grid(m, Grid{{12}, g.v}));
  // Splitting the transposed axes is fine: one view.
  auto s = t.reshape({2, 2, 3});
  ASSERT_EQ(s.views().size(), 1u) << s.to_string();
  EXPECT_EQ(s.views()[0], view({2, 2, 3}, {2, 1, 4}));
  // (2,3,4) permute(0,2,1) -> (8,3) or (2,12): each merges a non-contiguous pair.
  auto p = ShapeTracker::contiguous({2, 3, 4}).permute({0, 2, 1});
  EXPECT_EQ(p.reshape({8, 3}).views().size(), 2u);
  EXPECT_EQ(p.reshape({2, 12}).views().size(), 2u);
  EXPECT_EQ(p.reshape({24}).views().size(), 2u);
  // A reshape on top of a two-view tracker edits the top view when it can, and pushes
  // a third view when it cannot.
  auto two = m.reshape({2, 6});
  EXPECT_EQ(two.views().size(), 2u) << two.to_string();
  auto three = two.permute({1, 0}).reshape({12});
  ASSERT_EQ(three.views().size(), 3u) << three.to_string();
}

TEST(ShapeTrackerViews, ExpandThenReshapeAddingUnitAxes) {
  auto e = ShapeTracker::contiguous({3, 1}).expand({3, 4});
  ASSERT_EQ(e.views().size(), 1u);
  EXPECT_EQ(e.views()[0], view({3, 4}, {1, 0}));
  auto r = e.reshape({3, 1, 4, 1});
  ASSERT_EQ(r.views().size(), 1u) << r.to_string();
  EXPECT_EQ(r.views()[0], view({3, 1, 4, 1}, {1, 0, 0, 0}));
  // Splitting a broadcast axis keeps stride 0; merging it with a real axis cannot.
  auto s = e.reshape({3, 2, 2});
  ASSERT_EQ(s.views().size(), 1u) << s.to_string();
  EXPECT_EQ(s.views()[0], view({3, 2, 2}, {1, 0, 0}));
  EXPECT_EQ(e.reshape({12}).views().size(), 2u);
  // Two broadcast axes merge (0 == 0 * n).
  auto e2 = ShapeTracker::contiguous({1, 1, 5}).expand({2, 3, 5}).reshape({6, 5});
  ASSERT_EQ(e2.views().size(), 1u) << e2.to_string();
  EXPECT_EQ(e2.views()[0], view({6, 5}, {0, 1}));
}

TEST(ShapeTrackerViews, PadThenPermute) {
  auto p = ShapeTracker::contiguous({2, 3}).pad({{1, 1}, {0, 2}});
  ASSERT_EQ(p.views().size(), 1u);
  EXPECT_EQ(p.views()[0], view({4, 5}, {3, 1}, -3, Ranges{{1, 3}, {0, 3}}));
  auto t = p.permute({1, 0});
  ASSERT_EQ(t.views().size(), 1u);
  EXPECT_EQ(t.views()[0], view({5, 4}, {1, 3}, -3, Ranges{{0, 3}, {1, 3}}));
  Grid g = Op{Op::Pad, {}, {}, {{1, 1}, {0, 2}}, {}}.apply(grid_contiguous({2, 3}));
  g = Op{Op::Permute, {}, {1, 0}, {}, {}}.apply(g);
  EXPECT_TRUE(matches_grid(t, g));
}

TEST(ShapeTrackerViews, ShrinkFlipStride) {
  // x[2:9][::-1][::3] == [8, 5, 2]
  auto t = ShapeTracker::contiguous({10}).shrink({{2, 9}}).flip({true}).stride({3});
  ASSERT_EQ(t.views().size(), 1u);
  EXPECT_EQ(t.views()[0], view({3}, {-3}, 8));
  // 2-D: rows 1..3 reversed, every other column.
  auto u = ShapeTracker::contiguous({4, 5}).shrink({{1, 4}, {0, 5}}).flip({true, false}).stride({1, 2});
  ASSERT_EQ(u.views().size(), 1u);
  EXPECT_EQ(u.views()[0], view({3, 3}, {-5, 2}, 15));
}

TEST(ShapeTrackerViews, FlipOfFlipIsContiguousAgain) {
  auto t = ShapeTracker::contiguous({2, 3, 4});
  auto f = t.flip({true, false, true});
  EXPECT_FALSE(f.is_contiguous());
  EXPECT_EQ(f.views()[0], view({2, 3, 4}, {-12, 4, -1}, 15));
  auto ff = f.flip({true, false, true});
  EXPECT_TRUE(ff.is_contiguous()) << ff.to_string();
  // ...and a reshape of it is a plain contiguous view.
  EXPECT_EQ(ff.reshape({24}).views(), std::vector<View>{View::contiguous({24})});
}

TEST(ShapeTrackerViews, ReshapeOfPaddedViewMovingUnitAxesOrKeepingTheMaskedAxis) {
  auto p = ShapeTracker::contiguous({2, 3}).pad({{1, 1}, {0, 2}});
  Grid g = Op{Op::Pad, {}, {}, {{1, 1}, {0, 2}}, {}}.apply(grid_contiguous({2, 3})), r;
  // Only inserting size-1 axes: the masks move with their axes.
  auto u = reshaped(p, g, {4, 1, 5}, &r);
  ASSERT_EQ(u.views().size(), 1u) << u.to_string();
  EXPECT_EQ(u.views()[0], view({4, 1, 5}, {3, 0, 1}, -3, Ranges{{1, 3}, {0, 1}, {0, 3}}));
  EXPECT_TRUE(matches_grid(u, r));
  // ...and removing them again gives the padded view back.
  auto back = u.reshape({4, 5});
  ASSERT_EQ(back.views().size(), 1u);
  EXPECT_EQ(back.views()[0], p.views()[0]);
  // A masked axis carried one-to-one while unmasked axes split and merge.
  auto q = ShapeTracker::contiguous({2, 3, 4}).pad({{0, 0}, {1, 2}, {0, 0}});  // (2, 6, 4)
  Grid gq = Op{Op::Pad, {}, {}, {{0, 0}, {1, 2}, {0, 0}}, {}}.apply(grid_contiguous({2, 3, 4}));
  auto s = reshaped(q, gq, {2, 1, 6, 2, 2}, &r);
  ASSERT_EQ(s.views().size(), 1u) << s.to_string();
  EXPECT_EQ(s.views()[0], view({2, 1, 6, 2, 2}, {12, 0, 4, 2, 1}, -4, Ranges{{0, 2}, {0, 1}, {1, 4}, {0, 2}, {0, 2}}));
  EXPECT_TRUE(matches_grid(s, r));
  auto q0 = ShapeTracker::contiguous({2, 3, 4}).pad({{1, 0}, {0, 0}, {0, 0}});  // (3, 3, 4)
  Grid gq0 = Op{Op::Pad, {}, {}, {{1, 0}, {0, 0}, {0, 0}}, {}}.apply(grid_contiguous({2, 3, 4}));
  auto mq = reshaped(q0, gq0, {3, 12}, &r);
  ASSERT_EQ(mq.views().size(), 1u) << mq.to_string();
  EXPECT_EQ(mq.views()[0], view({3, 12}, {12, 1}, -12, Ranges{{1, 3}, {0, 12}}));
  EXPECT_TRUE(matches_grid(mq, r));
}

TEST(ShapeTrackerViews, ReshapeMergingOrSplittingAPaddedAxisPushesASecondView) {
  auto p = ShapeTracker::contiguous({2, 3}).pad({{1, 1}, {0, 2}});  // (4, 5)
  Grid g = Op{Op::Pad, {}, {}, {{1, 1}, {0, 2}}, {}}.apply(grid_contiguous({2, 3})), r;
  auto m = reshaped(p, g, {20}, &r);
  ASSERT_EQ(m.views().size(), 2u) << m.to_string();
  EXPECT_EQ(m.views()[0], p.views()[0]);
  EXPECT_EQ(m.views()[1], View::contiguous({20}));
  EXPECT_TRUE(matches_grid(m, r));
  auto sp = reshaped(p, g, {2, 2, 5}, &r);  // splits the padded axis 0
  ASSERT_EQ(sp.views().size(), 2u) << sp.to_string();
  EXPECT_TRUE(matches_grid(sp, r));
  // Padding only the outer axis of a merge: one view could express it (mask (3, 9) on the
  // merged axis), but kiln carries masks one-to-one only, so it takes two views.
  auto o = ShapeTracker::contiguous({2, 3}).pad({{1, 0}, {0, 0}});
  EXPECT_EQ(o.reshape({9}).views().size(), 2u);
}

TEST(ShapeTrackerViews, FullyMaskedViewsStayCorrect) {
  // Shrinking onto the padding leaves a view whose mask is empty.
  auto t = ShapeTracker::contiguous({3}).pad({{2, 0}}).shrink({{0, 2}});
  ASSERT_TRUE(t.views()[0].mask.has_value());
  EXPECT_EQ(*t.views()[0].mask, Ranges(1, {0, 0}));
  Grid g = Op{Op::Shrink, {}, {}, {{0, 2}}, {}}.apply(Op{Op::Pad, {}, {}, {{2, 0}}, {}}.apply(grid_contiguous({3})));
  EXPECT_TRUE(matches_grid(t, g));
  auto r = t.reshape({2, 1});
  EXPECT_TRUE(matches_grid(r, Grid{{2, 1}, g.v}));
  auto e = ShapeTracker::contiguous({1}).pad({{1, 0}}).shrink({{0, 1}}).expand({4});
  EXPECT_TRUE(matches_grid(e, Grid{{4}, {-1, -1, -1, -1}}));
}

TEST(ShapeTrackerViews, EmptyShapes) {
  auto t = ShapeTracker::contiguous({3, 0, 2});
  EXPECT_EQ(t.size(), 0);
  EXPECT_EQ(t.reshape({0, 5}).views(), std::vector<View>{View::contiguous({0, 5})});
  auto p = ShapeTracker::contiguous({3, 4}).permute({1, 0}).shrink({{1, 1}, {0, 3}});
  EXPECT_EQ(p.reshape({0}).views().size(), 1u);
}

TEST(ShapeTrackerViews, ComposeReplacesContiguousAndReshapesForContiguousOuter) {
  // A windowed (overlapping) view over a contiguous tracker replaces it.
  auto base = ShapeTracker::contiguous({6});
  ShapeTracker win(view({4, 3}, {1, 1}));
  auto c = base.compose(win);
  ASSERT_EQ(c.views().size(), 1u);
  EXPECT_EQ(c.views()[0], view({4, 3}, {1, 1}));
  // Over a transposed-then-flattened tracker it replaces the top (contiguous) view.
  auto t = ShapeTracker::contiguous({2, 3}).permute({1, 0}).reshape({6});
  auto c2 = t.compose(win);
  ASSERT_EQ(c2.views().size(), 2u) << c2.to_string();
  EXPECT_EQ(c2.views()[1], view({4, 3}, {1, 1}));
  Grid gt = Op{Op::Permute, {}, {1, 0}, {}, {}}.apply(grid_contiguous({2, 3}));
  Grid gw{{4, 3}, {}};
  for (int64_t i = 0; i < 4; i++)
    for (int64_t k = 0; k < 3; k++) gw.v.push_back(gt.v[size_t(i + k)]);
  EXPECT_TRUE(matches_grid(c2, gw));
  // A contiguous outer view is just a reshape.
  auto p = ShapeTracker::contiguous({2, 3}).permute({1, 0});
  auto c3 = p.compose(ShapeTracker::contiguous({3, 1, 2}));
  EXPECT_EQ(c3.views(), p.reshape({3, 1, 2}).views());
}

// ---- 2a. random chains against the brute-force model ---------------------------------------

struct RandomChains {
  std::mt19937 rng;
  explicit RandomChains(uint32_t seed) : rng(seed) {}
  int64_t uni(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  Dims factorize(int64_t n) {
    int k = int(uni(1, 4));
    Dims d(size_t(k), 1);
    if (n == 0) {
      for (auto& x : d) x = uni(1, 3);
      d[size_t(uni(0, k - 1))] = 0;
      return d;
    }
    for (int64_t p = 2, m = n; m > 1; p++)
      while (m % p == 0) {
        d[size_t(uni(0, k - 1))] *= p;
        m /= p;
      }
    if (uni(0, 3) == 0) d.insert(d.begin() + uni(0, int64_t(d.size())), 1);
    return d;
  }

  Op next(const Dims& s) {
    size_t nd = s.size();
    int64_t n = kiln::prod(s);
    while (true) {
      switch (uni(0, 9)) {
        case 0:
        case 1: return {Op::Reshape, factorize(n), {}, {}, {}};
        case 2: {  // merge two adjacent axes, split one, or add/remove unit axes
          Dims d = s;
          int64_t how = uni(0, 2);
          if (how == 0 && nd >= 2) {
            size_t i = size_t(uni(0, int64_t(nd) - 2));
            d[i] *= d[i + 1];
            d.erase(d.begin() + long(i) + 1);
          } else if (how == 1) {
            d.insert(d.begin() + uni(0, int64_t(nd)), 1);
          } else {
            bool done = false;
            for (size_t i = 0; i < nd && !done; i++)
              for (int64_t f : {2, 3})
                if (d[i] > f && d[i] % f == 0) {
                  d.insert(d.begin() + long(i), f);
                  d[i + 1] /= f;
                  done = true;
                  break;
                }
            if (!done) continue;
          }
          return {Op::Reshape, d, {}, {}, {}};
        }
        case 3: {
          if (nd < 2) continue;
          std::vector<int> perm(nd);
          for (size_t i = 0; i < nd; i++) perm[i] = int(i);
          std::shuffle(perm.begin(), perm.end(), rng);
          return {Op::Permute, {}, perm, {}, {}};
        }
        case 4: {
          Dims d = s;
          bool any = false;
          for (auto& x : d)
            if (x == 1 && uni(0, 2) != 0) x = uni(2, 4), any = true;
          if (!any || n * 4 > 2000) continue;
          return {Op::Expand, d, {}, {}, {}};
        }
        case 5: {
          Ranges r;
          for (size_t i = 0; i < nd; i++) r.push_back({uni(0, 2), uni(0, 2)});
          Op op{Op::Pad, {}, {}, r, {}};
          Dims out = s;
          for (size_t i = 0; i < nd; i++) out[i] += r[i].first + r[i].second;
          if (kiln::prod(out) > 2000) continue;
          return op;
        }
        case 6: {
          Ranges r;
          for (size_t i = 0; i < nd; i++) {
            int64_t b = uni(0, s[i]), e = uni(b, s[i]);
            if (uni(0, 2) == 0) b = 0, e = s[i];
            r.push_back({b, e});
          }
          return {Op::Shrink, {}, {}, r, {}};
        }
        case 7: {
          std::vector<bool> a(nd);
          for (size_t i = 0; i < nd; i++) a[i] = uni(0, 1) == 1;
          return {Op::Flip, {}, {}, {}, a};
        }
        case 8: {
          Dims st(nd);
          for (auto& x : st) x = uni(1, 3);
          return {Op::Stride, st, {}, {}, {}};
        }
        default: continue;
      }
    }
  }

  Dims base() {
    Dims s(size_t(uni(1, 4)));
    for (auto& x : s) x = uni(1, 5);
    return s;
  }
};

TEST(ShapeTrackerRandom, ChainsMatchTheBruteForceModel) {
  RandomChains gen(12345);
  std::map<size_t, int> by_views;
  int masked = 0;
  for (int c = 0; c < 1500; c++) {
    Dims s = gen.base();
    ShapeTracker t = ShapeTracker::contiguous(s);
    Grid g = grid_contiguous(s);
    std::string trail;
    int steps = int(gen.uni(1, 8));
    for (int k = 0; k < steps; k++) {
      Op op = gen.next(t.shape());
      trail += " " + op.str();
      t = op.apply(t);
      g = op.apply(g);
      ASSERT_TRUE(matches_grid(t, g)) << "chain " << c << " from " << kiln::shape_str(s) << ":" << trail
                                      << "\n  " << t.to_string();
    }
    by_views[std::min<size_t>(t.views().size(), 3)]++;
    for (auto& v : t.views()) masked += v.mask.has_value();
  }
  // The corpus must keep reaching multi-view and masked trackers.
  EXPECT_GT(by_views[2], 100);
  EXPECT_GT(by_views[3], 20);
  EXPECT_GT(masked, 200);
}

TEST(ShapeTrackerRandom, ComposeMatchesTheBruteForceModel) {
  RandomChains gen(777);
  for (int c = 0; c < 400; c++) {
    Dims s = gen.base();
    ShapeTracker t = ShapeTracker::contiguous(s);
    Grid g = grid_contiguous(s);
    for (int k = 0, n = int(gen.uni(0, 4)); k < n; k++) {
      Op op = gen.next(t.shape());
      t = op.apply(t);
      g = op.apply(g);
    }
    // The outer tracker indexes t's logical row-major space.
    ShapeTracker outer = ShapeTracker::contiguous(t.shape());
    Grid go = grid_contiguous(t.shape());
    std::string trail;
    for (int k = 0, n = int(gen.uni(1, 4)); k < n; k++) {
      Op op = gen.next(outer.shape());
      trail += " " + op.str();
      outer = op.apply(outer);
      go = op.apply(go);
    }
    Grid want{go.shape, {}};
    for (int64_t i : go.v) want.v.push_back(i < 0 ? -1 : g.v[size_t(i)]);
    ShapeTracker comp = t.compose(outer);
    ASSERT_TRUE(matches_grid(comp, want)) << "case " << c << ": " << t.to_string() << " compose"
                                          << trail << "\n  " << comp.to_string();
  }
}

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

kiln::Index index_term(const std::string& t) {
  if (t == "None") return kiln::newaxis;
  if (t == "...") return kiln::ellipsis;
  if (t.find(':') == std::string::npos) return int64_t(std::stoll(t));
  kiln::Slice s;
  std::optional<int64_t>* parts[3] = {&s.start, &s.stop, &s.step};
  size_t from = 0;
  for (int k = 0; k < 3; k++) {
    size_t to = t.find(':', from);
    std::string part = t.substr(from, to == std::string::npos ? std::string::npos : to - from);
    if (!part.empty()) *parts[k] = std::stoll(part);
    if (to == std::string::npos) break;
    from = to + 1;
  }
  return s;
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
    for (auto& t : a) terms.push_back(index_term(t));
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

// ---- 3. index expressions simplify ---------------------------------------------------------

TEST(ShapeTrackerIndex, FlatReshapeOfContiguousIsGidx) {
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({24})), "gidx");
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({2, 3, 4}).reshape({24})), "gidx");
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({4, 1}).reshape({4})), "gidx");
  EXPECT_EQ(flat_valid(ShapeTracker::contiguous({2, 3, 4}).reshape({24})), "true");
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({1})), "0");
}

// Row-major unravel followed by the contiguous strides folds back to gidx:
// (g // 4) * 4 + g % 4 == g (the simplifier's divmod recombination), so loads of
// contiguous n-d arrays carry no index arithmetic.
TEST(ShapeTrackerIndex, ContiguousMultiDimIsGidx) {
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({6, 4})), "gidx");
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({2, 3, 4})), "gidx");
  // Two views: the bottom view's unravel of the top's flat index should cancel too.
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({2, 3, 4}).permute({0, 2, 1}).reshape({8, 3})),
            "((((gidx // 12) * 12) + ((gidx // 3) % 4)) + ((gidx % 3) * 4))");
}

TEST(ShapeTrackerIndex, ContiguousMultiDimIndexIsCorrect) {
  // Today this is (((gidx // 4) * 4) + (gidx % 4)) for (6, 4): correct, only not minimal.
  for (Dims s : {Dims{6, 4}, Dims{2, 3, 4}, Dims{5, 1, 3}}) {
    auto t = ShapeTracker::contiguous(s);
    auto e = t.to_index_flat(gidx(t.size())).first;
    for (int64_t i = 0; i < t.size(); i++) EXPECT_EQ(eval_at(e, i), double(i)) << kiln::shape_str(s);
  }
}

TEST(ShapeTrackerIndex, ViewIndexExpressionsAreSmall) {
  // Transpose of (3, 4) flattened: one unravel into the bottom view, nothing else.
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({3, 4}).permute({1, 0}).reshape({12})),
            "((gidx // 3) + ((gidx % 3) * 4))");
  // Broadcast axes vanish from the index, in one view or two.
  auto e = ShapeTracker::contiguous({3, 1}).expand({3, 4});
  EXPECT_EQ(flat_index(e), "(gidx // 4)");
  EXPECT_EQ(flat_index(e.reshape({12})), "(gidx // 4)");
  EXPECT_EQ(flat_index(e.reshape({3, 1, 4, 1})), "(gidx // 4)");
  // Shrink, flip and stride fold into one affine expression.
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({10}).shrink({{2, 9}}).flip({true}).stride({3})),
            "((gidx * -3) + 8)");
  EXPECT_EQ(flat_index(ShapeTracker::contiguous({5}).flip({true})), "((gidx * -1) + 4)");
  // A padded 1-d view: an offset, and a validity range.
  auto p = ShapeTracker::contiguous({4}).pad({{1, 1}});
  EXPECT_EQ(flat_index(p), "(gidx + -1)");
  EXPECT_EQ(flat_valid(p), "(not((gidx < 1)) & (gidx < 5))");
  // A mask bound that the index range already implies is dropped.
  EXPECT_EQ(flat_valid(ShapeTracker::contiguous({4}).pad({{0, 2}})), "(gidx < 4)");
}

}  // namespace
