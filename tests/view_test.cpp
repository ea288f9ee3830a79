// Tests of View/ShapeTracker: which movement chains stay one view (checked against the
// brute-force model of view_model.h), and that index expressions simplify.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "view_model.h"

namespace view_test {

namespace {

using namespace view_model;
namespace np = kiln::numpy;

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

}  // namespace view_test
