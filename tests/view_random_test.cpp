// Random chains of movement ops and compositions of trackers, checked element by element
// against the brute-force model of view_model.h.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "view_model.h"

namespace view_random_test {

namespace {

using namespace view_model;
namespace np = kiln::numpy;

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

}  // namespace

}  // namespace view_random_test
