// A brute-force model of movement ops for the View/ShapeTracker tests: a Grid holds the
// buffer index of every logical element, and matches_grid checks a tracker element by element.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/view.h"
#include "kiln/kiln.h"

namespace view_model {

using kiln::AluExp;
using kiln::AluNode;
using kiln::AluOp;
using kiln::Dims;
using kiln::DType;
using kiln::Ranges;
using kiln::ShapeTracker;
using kiln::VarId;
using kiln::View;

// ---- index evaluation -------------------------------------------------------------------------------

inline AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, std::max<int64_t>(n - 1, 0)); }

// Evaluates an index expression (no loads) at gidx = g with the scalar semantics that
// every backend reproduces.
inline double eval_at(const AluExp& e, int64_t g, std::unordered_map<const AluNode*, double>& memo) {
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

inline double eval_at(const AluExp& e, int64_t g) {
  std::unordered_map<const AluNode*, double> memo;
  return eval_at(e, g, memo);
}

inline std::string flat_index(const ShapeTracker& st) { return st.to_index_flat(gidx(st.size())).first.to_string(); }
inline std::string flat_valid(const ShapeTracker& st) { return st.to_index_flat(gidx(st.size())).second.to_string(); }

// ---- a brute-force model of movement ops ---------------------------------------------------
// Grid: the buffer index of every logical element, row-major; -1 marks padding.
struct Grid {
  Dims shape;
  std::vector<int64_t> v;
};

inline Dims unravel_int(int64_t flat, const Dims& shape) {
  Dims idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

inline int64_t ravel_int(const Dims& idx, const Dims& shape) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); i++) f = f * shape[i] + idx[i];
  return f;
}

inline Grid grid_contiguous(const Dims& shape) {
  Grid g{shape, std::vector<int64_t>(size_t(kiln::prod(shape)))};
  for (size_t i = 0; i < g.v.size(); i++) g.v[i] = int64_t(i);
  return g;
}

// Builds a grid of `out_shape` whose element at `out` is g's element at `in` (set by `map`,
// which returns false for padding).
inline Grid grid_map(const Grid& g, const Dims& out_shape, const std::function<bool(const Dims&, Dims&)>& map) {
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
inline ::testing::AssertionResult matches_grid(const ShapeTracker& t, const Grid& g) {
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

}  // namespace view_model
