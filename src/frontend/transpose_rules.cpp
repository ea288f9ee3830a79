// Transpose rules of the linear primitives, in one table keyed by Prim. Gather and Window
// transpose to fused expressions of existing primitives (one-hot sums, shifted views).
#include <numeric>

#include "frontend/linearize.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

namespace {

using namespace ops;
using Arrays = std::vector<Array>;
using Avals = std::vector<Aval>;

[[noreturn]] void nonlinear(Prim p, const char* what) {
  fail("transpose", "primitive ", prim_name(p), " is not linear in ", what,
       " (a transformation rule applied it to tangents non-linearly)");
}

// A one-operand structural primitive: f(ct) for the operand.
TransposeRule unary(std::function<Array(const Array&, const Aval&, const Params&)> f) {
  return [f](const Array& ct, const Arrays&, const Avals& av, const Params& prm) -> Arrays {
    return {f(ct, av[0], prm)};
  };
}

// Inverse of Stride: each element moves to position i * step, zeros in between.
Array unstride(const Array& ct, const Aval& in, const Dims& steps) {
  const size_t n = steps.size();
  Shape split, merged;
  Ranges widths, keep;
  for (size_t i = 0; i < n; i++) {
    split.insert(split.end(), {ct.shape()[i], 1});
    widths.push_back({0, 0});
    widths.push_back({0, steps[i] - 1});
    merged.push_back(ct.shape()[i] * steps[i]);
    keep.push_back({0, in.shape[i]});
  }
  // ceil(n / s) * s >= n, so the merged axis covers the input and is cut back to it.
  Array y = reshape(pad(reshape(ct, split), widths), merged);
  Ranges grow;
  for (size_t i = 0; i < n; i++) grow.push_back({0, std::max<int64_t>(in.shape[i] - merged[i], 0)});
  y = pad(y, grow);
  return shrink(y, keep);
}

// Windows that do not overlap (stride >= window, undilated: max pooling's usual case) own
// each input element at most once: x[o * stride + k] = ct[o, k]. That is one view, the offsets
// padded to the stride and interleaved with the window positions, so the gradient reads one
// element per input instead of summing a masked term per window offset.
Array disjoint_window_transpose(const Array& ct, const Aval& in, const Params& prm) {
  const size_t n = in.shape.size();
  Ranges to_stride;
  Shape merged;
  std::vector<int> interleave;
  for (size_t i = 0; i < n; i++) to_stride.push_back({0, 0});
  for (size_t i = 0; i < n; i++) {
    to_stride.push_back({0, prm.strides[i] - prm.window[i]});
    interleave.insert(interleave.end(), {int(i), int(n + i)});
    merged.push_back(ct.shape()[i] * prm.strides[i]);
  }
  Array y = reshape(transpose(pad(ct, to_stride), interleave), merged);
  // The windows may stop short of the input's end (zeros there) or, with a gap after the
  // last window, reach past it (cut off).
  Ranges grow, keep;
  for (size_t i = 0; i < n; i++) {
    grow.push_back({0, std::max<int64_t>(in.shape[i] - merged[i], 0)});
    keep.push_back({0, in.shape[i]});
  }
  return shrink(pad(y, grow), keep);
}

// Window: out[o, k] = x[o * stride + k * dilation]. Each window offset k contributes the
// slice ct[..., k] spread by the stride and shifted by k * dilation; the sum over offsets
// is one lazy expression of views (the fusion limits realize it in chunks if large).
Array window_transpose(const Array& ct, const Aval& in, const Params& prm) {
  const size_t n = in.shape.size();
  Shape out_sp(ct.shape().begin(), ct.shape().begin() + long(n));
  if (prod(out_sp) == 0) return zeros(in, ct.device());
  bool disjoint = true;
  for (size_t i = 0; i < n; i++)
    disjoint = disjoint && prm.strides[i] >= prm.window[i] &&
               (prm.dilation[i] == 1 || prm.window[i] == 1);
  if (disjoint) return disjoint_window_transpose(ct, in, prm);
  Array total;
  std::vector<int64_t> off(n, 0);
  const int64_t count = prod(prm.window);
  for (int64_t flat = 0; flat < count; flat++) {
    int64_t r = flat;
    for (size_t i = n; i-- > 0;) {
      off[i] = r % prm.window[i];
      r /= prm.window[i];
    }
    Ranges sel;
    for (size_t i = 0; i < n; i++) sel.push_back({0, out_sp[i]});
    for (size_t i = 0; i < n; i++) sel.push_back({off[i], off[i] + 1});
    Array slice = reshape(shrink(ct, sel), out_sp);
    // Spread: positions o * stride within a span of (o - 1) * stride + 1.
    Aval spread{{}, in.dtype, in.weak};
    for (size_t i = 0; i < n; i++) spread.shape.push_back((out_sp[i] - 1) * prm.strides[i] + 1);
    Array s = unstride(slice, spread, prm.strides);
    Ranges place;
    for (size_t i = 0; i < n; i++) {
      int64_t lo = off[i] * prm.dilation[i];
      place.push_back({lo, in.shape[i] - lo - spread.shape[i]});
    }
    total = add_any(total, pad(s, place));
  }
  return total;
}

// Gather along axis: ct[pre, P..., post] scatters into x[pre, n, post] as a sum over the
// index positions P of a one-hot select; one fused reduction kernel.
Array gather_transpose(const Array& ct, const Array& idx, const Aval& in, const Params& prm) {
  const int ax = prm.axes[0];
  const int64_t n = in.shape[size_t(ax)];
  const Shape& P = idx.shape();
  const int np = int(P.size());
  const std::string& dev = ct.device();
  Shape full(in.shape.begin(), in.shape.begin() + ax);
  full.insert(full.end(), P.begin(), P.end());
  full.push_back(n);
  full.insert(full.end(), in.shape.begin() + ax + 1, in.shape.end());
  // Indices as the gather resolves them: negative wraps once, then clamped.
  Array i = cast(idx, DType::Int32, false);
  Array nn = filled(P, DType::Int32, double(n), dev);
  i = where(binary(Prim::CmpLt, i, filled(P, DType::Int32, 0, dev)), add(i, nn), i);
  i = binary(Prim::Max, binary(Prim::Min, i, filled(P, DType::Int32, double(n - 1), dev)),
             filled(P, DType::Int32, 0, dev));
  Shape ishape(size_t(ax), 1);
  ishape.insert(ishape.end(), P.begin(), P.end());
  ishape.push_back(1);
  ishape.resize(full.size(), 1);
  Array hit = binary(Prim::CmpEq, expand(reshape(i, ishape), full), iota(full, ax + np, dev));
  Shape cshape = ct.shape();
  cshape.insert(cshape.begin() + ax + np, 1);
  Array spread = where(hit, expand(reshape(ct, cshape), full),
                       filled(full, ct.dtype(), 0, dev, ct.weak_type()));
  std::vector<int> red(static_cast<size_t>(np));
  std::iota(red.begin(), red.end(), ax);
  return reshape(reduce_sum(spread, red), in.shape);
}

std::vector<TransposeRule> build_table() {
  std::vector<TransposeRule> r(kNumPrims);
  auto set = [&](Prim p, TransposeRule f) { r[size_t(p)] = std::move(f); };
  set(Prim::Neg, unary([](const Array& ct, const Aval&, const Params&) { return neg(ct); }));
  set(Prim::Add, [](const Array& ct, const Arrays&, const Avals&, const Params&) -> Arrays {
    return {ct, ct};
  });
  set(Prim::Sub, [](const Array& ct, const Arrays& a, const Avals&, const Params&) -> Arrays {
    return {ct, a[1].valid() ? Array() : neg(ct)};
  });
  set(Prim::Mul, [](const Array& ct, const Arrays& a, const Avals&, const Params&) -> Arrays {
    if (!a[0].valid() && !a[1].valid()) nonlinear(Prim::Mul, "both operands");
    if (!a[0].valid()) return {mul(ct, a[1]), Array()};
    return {Array(), mul(a[0], ct)};
  });
  set(Prim::Div, [](const Array& ct, const Arrays& a, const Avals&, const Params&) -> Arrays {
    if (!a[1].valid()) nonlinear(Prim::Div, "its divisor");
    return {div(ct, a[1]), Array()};
  });
  set(Prim::Where, [](const Array& ct, const Arrays& a, const Avals&, const Params&) -> Arrays {
    if (!a[0].valid()) nonlinear(Prim::Where, "its condition");
    Array z = full_like(ct, 0);
    return {Array(), a[1].valid() ? Array() : where(a[0], ct, z),
            a[2].valid() ? Array() : where(a[0], z, ct)};
  });
  set(Prim::Cast, unary([](const Array& ct, const Aval& in, const Params&) {
        return cast(ct, in.dtype, in.weak);
      }));
  set(Prim::ReduceSum, unary([](const Array& ct, const Aval& in, const Params& p) {
        return unreduce(ct, in.shape, p.axes);
      }));
  set(Prim::Reshape,
      unary([](const Array& ct, const Aval& in, const Params&) { return reshape(ct, in.shape); }));
  set(Prim::Transpose, unary([](const Array& ct, const Aval&, const Params& p) {
        std::vector<int> inv(p.axes.size());
        for (size_t i = 0; i < p.axes.size(); i++) inv[size_t(p.axes[i])] = int(i);
        return transpose(ct, inv);
      }));
  set(Prim::Expand,
      unary([](const Array& ct, const Aval& in, const Params&) { return sum_to(ct, in.shape); }));
  set(Prim::Pad, unary([](const Array& ct, const Aval& in, const Params& p) {
        Ranges keep;
        for (size_t i = 0; i < in.shape.size(); i++)
          keep.push_back({p.ranges[i].first, p.ranges[i].first + in.shape[i]});
        return shrink(ct, keep);
      }));
  set(Prim::Shrink, unary([](const Array& ct, const Aval& in, const Params& p) {
        Ranges w;
        for (size_t i = 0; i < in.shape.size(); i++)
          w.push_back({p.ranges[i].first, in.shape[i] - p.ranges[i].second});
        return pad(ct, w);
      }));
  set(Prim::Flip,
      unary([](const Array& ct, const Aval&, const Params& p) { return flip(ct, p.axes); }));
  set(Prim::Stride, unary([](const Array& ct, const Aval& in, const Params& p) {
        return unstride(ct, in, p.strides);
      }));
  set(Prim::Window, unary(window_transpose));
  set(Prim::Gather,
      [](const Array& ct, const Arrays& a, const Avals& av, const Params& p) -> Arrays {
        if (!a[1].valid()) nonlinear(Prim::Gather, "its indices");
        return {gather_transpose(ct, a[1], av[0], p), Array()};
      });
  return r;
}

const std::vector<TransposeRule>& table() {
  static const std::vector<TransposeRule> t = [] {
    auto r = build_table();
    check_rule_table("transpose", r, [](Prim p) { return prim_info(p).linear; });
    return r;
  }();
  return t;
}

}  // namespace

bool has_transpose_rule(Prim p) { return bool(table()[size_t(p)]); }

const TransposeRule& transpose_rule(Prim p) {
  const TransposeRule& r = table()[size_t(p)];
  if (!r)
    fail("transpose", "primitive ", prim_name(p), " is not linear, so it has no transpose rule");
  return r;
}

}  // namespace kiln::frontend
