// kiln::lax: N-d convolution, windowed reductions and pooling, dtype conversion.
// Windows come from Prim::Window over padded/dilated views; the reduction is one kernel.
#include "library/lax.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "frontend/primitive.h"
#include "library/array_args.h"
#include "library/conv_layout.h"
#include "ir/kernel.h"

namespace kiln::lax {
namespace {

using frontend::bind;
using frontend::Params;
using frontend::Prim;
using Pads = std::vector<std::pair<int64_t, int64_t>>;

// ---- primitive shorthands (no-ops when nothing changes) ----

using numpy::detail::cast;
using numpy::detail::expand_to;
using numpy::detail::permute;
using numpy::detail::reshape_to;

// A constant array: a scalar cast, reshaped to rank n and broadcast (no buffer).
Array filled(const Shape& shape, double value, DType dt) {
  Array s = dt == DType::Bool ? Array(value != 0) : Array(value);
  return expand_to(reshape_to(cast(s, dt, false), Shape(shape.size(), 1)), shape);
}

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); i++) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + (d.size() == 1 ? ",)" : ")");
}

// XLA's dilated size: d - 1 gaps of dilation - 1 inserted between d elements.
int64_t dilate_dim(int64_t d, int64_t dilation) { return d == 0 ? 0 : 1 + dilation * (d - 1); }

// An empty dilation means ones; otherwise one entry >= 1 per dimension.
std::vector<int64_t> check_factors(const char* op, const char* what,
                                   const std::vector<int64_t>& v, size_t n, bool allow_empty) {
  if (v.empty() && allow_empty) return std::vector<int64_t>(n, 1);
  if (v.size() != n)
    fail(op, "got ", what, " ", dims_str(v), " with ", v.size(), " entries, expected ", n);
  for (int64_t x : v)
    if (x < 1) fail(op, "got ", what, " ", dims_str(v), ", expected entries >= 1");
  return v;
}

// JAX's padtype_to_pads: SAME pads so that out = ceil(in / stride), the odd element at
// the end (SAME) or the start (SAME_LOWER). `window` is the dilated window size.
Pads resolve_padding(const char* op, const Padding& padding, const Shape& in,
                     const std::vector<int64_t>& window, const std::vector<int64_t>& strides) {
  const size_t n = in.size();
  if (auto* explicit_pads = std::get_if<Pads>(&padding)) {
    if (explicit_pads->size() != n)
      fail(op, "got ", explicit_pads->size(), " (low, high) padding pairs, expected ", n);
    return *explicit_pads;
  }
  std::string name = std::get<std::string>(padding);
  for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (name == "VALID") return Pads(n, {0, 0});
  if (name != "SAME" && name != "SAME_LOWER")
    fail(op, "got padding '", std::get<std::string>(padding),
         "', expected 'VALID', 'SAME', 'SAME_LOWER' or explicit (low, high) pairs");
  Pads pads;
  for (size_t i = 0; i < n; i++) {
    int64_t out = (in[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>((out - 1) * strides[i] + window[i] - in[i], 0);
    int64_t small = total / 2, big = total - small;
    pads.push_back(name == "SAME" ? std::pair{small, big} : std::pair{big, small});
  }
  return pads;
}

// The size of each dimension after base dilation and padding; throws if negative.
Shape padded_shape(const char* op, const Shape& in, const std::vector<int64_t>& dilation,
                   const Pads& pads) {
  Shape s;
  for (size_t i = 0; i < in.size(); i++) {
    s.push_back(dilate_dim(in[i], dilation[i]) + pads[i].first + pads[i].second);
    if (s.back() < 0)
      fail(op, "negative padding (", pads[i].first, ", ", pads[i].second, ") on dimension ", i,
           " is larger than its size ", dilate_dim(in[i], dilation[i]));
  }
  return s;
}

// Windows that fit: floor((padded - span) / stride) + 1, and none if the span is larger.
Shape window_counts(const Shape& padded, const std::vector<int64_t>& span,
                    const std::vector<int64_t>& strides) {
  Shape s;
  for (size_t i = 0; i < padded.size(); i++)
    s.push_back(padded[i] < span[i] ? 0 : (padded[i] - span[i]) / strides[i] + 1);
  return s;
}

// Inserts dilation - 1 zeros between elements, then pads (negative pads crop), all as
// views: each axis d gets a trailing axis of 1 padded to `dilation`, the two merge into
// d * dilation and the tail after the last element is cut off.
Array dilate_and_pad(const Array& x, const std::vector<int64_t>& dilation, const Pads& pads) {
  const size_t n = size_t(x.ndim());
  Array y = x;
  if (std::any_of(dilation.begin(), dilation.end(), [](int64_t d) { return d > 1; }) &&
      x.size() > 0) {
    Shape split, merged;
    Params pad, shrink;
    for (size_t i = 0; i < n; i++) {
      split.insert(split.end(), {x.shape()[i], 1});
      pad.ranges.push_back({0, 0});
      pad.ranges.push_back({0, dilation[i] - 1});
      merged.push_back(x.shape()[i] * dilation[i]);
      shrink.ranges.push_back({0, dilate_dim(x.shape()[i], dilation[i])});
    }
    y = reshape_to(frontend::bind(Prim::Pad, {reshape_to(y, split)}, pad), merged);
    y = frontend::bind(Prim::Shrink, {y}, shrink);
  } else if (x.size() == 0) {
    // An empty axis dilates to 0, and nothing else can be empty to be dilated.
    Shape s;
    for (size_t i = 0; i < n; i++) s.push_back(dilate_dim(x.shape()[i], dilation[i]));
    y = reshape_to(y, s);
  }
  Params pad, crop;
  bool any_pad = false, any_crop = false;
  for (size_t i = 0; i < n; i++) {
    auto [lo, hi] = pads[i];
    pad.ranges.push_back({std::max<int64_t>(lo, 0), std::max<int64_t>(hi, 0)});
    any_pad = any_pad || lo > 0 || hi > 0;
  }
  if (any_pad) y = frontend::bind(Prim::Pad, {y}, pad);
  for (size_t i = 0; i < n; i++) {
    auto [lo, hi] = pads[i];
    crop.ranges.push_back({std::max<int64_t>(-lo, 0), y.shape()[i] - std::max<int64_t>(-hi, 0)});
    any_crop = any_crop || lo < 0 || hi < 0;
  }
  if (any_crop) y = frontend::bind(Prim::Shrink, {y}, crop);
  return y;
}

Array window_(const Array& x, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dilation) {
  Params p;
  p.window = dims;
  p.strides = strides;
  p.dilation = dilation;
  return frontend::bind(Prim::Window, {x}, p);
}

const char* window_op_name(WindowOp op) {
  switch (op) {
    case WindowOp::Sum: return "sum";
    case WindowOp::Max: return "max";
    case WindowOp::Min: return "min";
    case WindowOp::Prod: return "prod";
  }
  return "?";
}

// reduce_window on validated arguments with explicit padding.
Array reduce_window_impl(const char* opname, const Array& x, WindowOp op,
                         const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
                         const Pads& pads, const std::vector<int64_t>& base,
                         const std::vector<int64_t>& wdil) {
  const size_t n = size_t(x.ndim());
  if ((op == WindowOp::Sum || op == WindowOp::Prod) && x.dtype() == DType::Bool)
    fail(opname, "got a bool operand for a ", window_op_name(op),
         " reduction, expected a numeric dtype");
  std::vector<int64_t> span;
  for (size_t i = 0; i < n; i++) span.push_back(dilate_dim(window[i], wdil[i]));
  const Shape padded = padded_shape(opname, x.shape(), base, pads);
  const Shape out = window_counts(padded, span, strides);
  const Prim prim = op == WindowOp::Sum    ? Prim::ReduceSum
                    : op == WindowOp::Max  ? Prim::ReduceMax
                    : op == WindowOp::Min  ? Prim::ReduceMin
                                           : Prim::ReduceProd;
  const double identity = Reduction::identity(frontend::prim_alu_op(prim), x.dtype());
  if (prod(out) == 0) return cast(filled(out, identity, x.dtype()), x.dtype(), x.weak_type());
  Array y = window_(dilate_and_pad(x, base, pads), window, strides, wdil);
  // Padding and dilation holes take the op's identity; the zeros of Pad already are the
  // identity of a sum. A padded all-true mask marks the real elements. Both are windowed
  // first (views of a buffer and of a constant), so the select fuses into the reduction
  // kernel instead of realizing a padded copy of the input.
  const bool holes =
      std::any_of(base.begin(), base.end(), [](int64_t d) { return d > 1; }) ||
      std::any_of(pads.begin(), pads.end(), [](auto p) { return p.first > 0 || p.second > 0; });
  if (op != WindowOp::Sum && holes) {
    Array mask = window_(dilate_and_pad(filled(x.shape(), 1, DType::Bool), base, pads), window,
                         strides, wdil);
    y = frontend::bind(Prim::Where, {mask, y, filled(y.shape(), identity, x.dtype())});
  }
  Params red;
  red.axes.resize(n);
  std::iota(red.axes.begin(), red.axes.end(), int(n));
  return frontend::bind(prim, {y}, red);
}

// The layout permutations of JAX's dimension numbers (library/conv_layout.h); none given
// means N, C, spatial... for every operand.
detail::ConvPerms conv_perms(const std::optional<ConvDimensionNumbers>& dn, int nd) {
  if (!dn) return detail::conv_layout_perms("", "", "", nd);
  return detail::conv_layout_perms(dn->lhs, dn->rhs, dn->out, nd);
}

Shape take(const Shape& s, const std::vector<int>& perm) {
  return with_name("take", [&]() -> Shape {
    Shape r;
    for (int i : perm) r.push_back(s[size_t(i)]);
    return r;
  });
}

}  // namespace

Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<int64_t>& window_strides, const Padding& padding,
                           const std::vector<int64_t>& lhs_dilation,
                           const std::vector<int64_t>& rhs_dilation,
                           const std::optional<ConvDimensionNumbers>& dimension_numbers,
                           int64_t feature_group_count, int64_t batch_group_count) {
  return with_name("conv_general_dilated", [&]() -> Array {
    const char* op = "conv_general_dilated";
    // ---- validate everything first ----
    const int nd = lhs.ndim();
    if (rhs.ndim() != nd)
      fail(op, "got lhs ", shape_str(lhs.shape()), " and rhs ", shape_str(rhs.shape()),
           ", expected the same rank");
    if (nd < 2)
      fail(op, "got lhs ", shape_str(lhs.shape()),
           ", expected rank >= 2 (batch, feature, spatial...)");
    if (lhs.dtype() != rhs.dtype())
      fail(op, "got lhs dtype ", dtype_name(lhs.dtype()), " and rhs dtype ", dtype_name(rhs.dtype()),
           ", expected equal dtypes");
    const detail::ConvPerms perms = conv_perms(dimension_numbers, nd);
    const size_t nsp = size_t(nd - 2);
    const Shape L = take(lhs.shape(), perms.lhs), R = take(rhs.shape(), perms.rhs);
    const int64_t N = L[0], C = L[1], O = R[0], I = R[1];
    const int64_t G = feature_group_count, B = batch_group_count;
    if (G < 1) fail(op, "got feature_group_count ", G, ", expected a positive integer");
    if (C % G != 0)
      fail(op, "feature_group_count ", G, " does not divide the lhs feature dimension ", C,
           " of lhs ", shape_str(lhs.shape()));
    if (C / G != I)
      fail(op, "lhs features divided by feature_group_count must equal the rhs input features: "
           "got lhs ", shape_str(lhs.shape()), " (C = ", C, "), rhs ", shape_str(rhs.shape()),
           " (I = ", I, ") and feature_group_count ", G, ", expected C == I * feature_group_count");
    if (O % G != 0)
      fail(op, "rhs output features ", O, " of rhs ", shape_str(rhs.shape()),
           " are not a multiple of feature_group_count ", G);
    if (B < 1) fail(op, "got batch_group_count ", B, ", expected a positive integer");
    if (N % B != 0)
      fail(op, "batch_group_count ", B, " does not divide the lhs batch dimension ", N, " of lhs ",
           shape_str(lhs.shape()));
    if (O % B != 0)
      fail(op, "rhs output features ", O, " of rhs ", shape_str(rhs.shape()),
           " are not a multiple of batch_group_count ", B);
    if (B > 1 && G > 1)
      fail(op, "got batch_group_count ", B, " and feature_group_count ", G,
           ", expected at most one of them > 1");
    if (window_strides.size() != nsp)
      fail(op, "got window_strides ", dims_str(window_strides), ", expected ", nsp,
           " entries (one per spatial dimension)");
    const auto strides = check_factors(op, "window_strides", window_strides, nsp, false);
    const auto ldil = check_factors(op, "lhs_dilation", lhs_dilation, nsp, true);
    const auto rdil = check_factors(op, "rhs_dilation", rhs_dilation, nsp, true);
    const bool lhs_dilated = std::any_of(ldil.begin(), ldil.end(), [](int64_t d) { return d > 1; });
    if (std::holds_alternative<std::string>(padding) && lhs_dilated)
      fail(op, "string padding '", std::get<std::string>(padding),
           "' is not supported with lhs_dilation ", dims_str(ldil),
           ", expected explicit (low, high) pairs (as JAX)");
    const Shape in_sp(L.begin() + 2, L.end()), k_sp(R.begin() + 2, R.end());
    std::vector<int64_t> span;
    for (size_t i = 0; i < nsp; i++) span.push_back(dilate_dim(k_sp[i], rdil[i]));
    const Pads pads = resolve_padding(op, padding, in_sp, span, strides);
    const Shape padded = padded_shape(op, in_sp, ldil, pads);
    const Shape out_sp = window_counts(padded, span, strides);
    Shape out_shape{N / B, O};  // N, C, spatial (rhs order)
    out_shape.insert(out_shape.end(), out_sp.begin(), out_sp.end());
    // The output's layout: canonical axis j goes to position perms.out[j].
    std::vector<int> to_out(static_cast<size_t>(nd));
    for (int j = 0; j < nd; j++) to_out[size_t(perms.out[size_t(j)])] = j;
    const TypeInfo t = promote({lhs.dtype(), lhs.weak_type()}, {rhs.dtype(), rhs.weak_type()});
    // Sums in int32 for bool (cast back: x != 0) and float32 for float16, as contractions do.
    const DType acc = t.dtype == DType::Bool      ? DType::Int32
                      : t.dtype == DType::Float16 ? DType::Float32
                                                  : t.dtype;

    // An empty output, or an empty sum (no input features or an empty window), is zeros.
    if (prod(out_shape) == 0 || I == 0 || prod(k_sp) == 0)
      return permute(cast(filled(out_shape, 0, t.dtype), t.dtype, t.weak), to_out);

    // ---- compute ----
    // x: [N, C, padded...] -> windows [N, C, out..., 1, 1, K...].
    Array x = permute(lhs, perms.lhs);
    Pads full_pads{{0, 0}, {0, 0}};
    full_pads.insert(full_pads.end(), pads.begin(), pads.end());
    std::vector<int64_t> full_ldil{1, 1};
    full_ldil.insert(full_ldil.end(), ldil.begin(), ldil.end());
    x = dilate_and_pad(x, full_ldil, full_pads);
    std::vector<int64_t> wdims{1, 1}, wstr{1, 1}, wdil{1, 1};
    wdims.insert(wdims.end(), k_sp.begin(), k_sp.end());
    wstr.insert(wstr.end(), strides.begin(), strides.end());
    wdil.insert(wdil.end(), rdil.begin(), rdil.end());
    x = window_(x, wdims, wstr, wdil);
    // Groups are outermost in the batch (batch groups) and feature (feature groups) axes,
    // and in the output features, as in XLA. Common layout:
    //   [Nb, B, G, Og, out..., Ig, K...], summed over the trailing Ig, K....
    const int64_t Nb = N / B, Ig = I, Og = O / (B * G);
    Shape xs{B, Nb, G, Ig};
    xs.insert(xs.end(), out_sp.begin(), out_sp.end());
    xs.insert(xs.end(), k_sp.begin(), k_sp.end());
    x = reshape_to(x, xs);
    const int s = int(nsp);
    std::vector<int> xperm{1, 0, 2};
    for (int i = 0; i < s; i++) xperm.push_back(4 + i);
    xperm.push_back(3);
    for (int i = 0; i < s; i++) xperm.push_back(4 + s + i);
    x = permute(x, xperm);
    Shape full{Nb, B, G, Og}, xa{Nb, B, G, 1}, wa{1, B, G, Og};
    for (size_t i = 0; i < nsp; i++) {
      full.push_back(out_sp[i]);
      xa.push_back(out_sp[i]);
      wa.push_back(1);
    }
    full.push_back(Ig);
    xa.push_back(Ig);
    wa.push_back(Ig);
    for (size_t i = 0; i < nsp; i++) {
      full.push_back(k_sp[i]);
      xa.push_back(k_sp[i]);
      wa.push_back(k_sp[i]);
    }
    Array w = reshape_to(permute(rhs, perms.rhs), wa);
    x = cast(expand_to(reshape_to(x, xa), full), acc, false);
    w = cast(expand_to(w, full), acc, false);
    Params red;
    red.axes.resize(1 + nsp);
    std::iota(red.axes.begin(), red.axes.end(), 4 + s);
    Array r = frontend::bind(Prim::ReduceSum, {frontend::bind(Prim::Mul, {x, w})}, red);
    r = cast(reshape_to(r, out_shape), t.dtype, t.weak);
    return permute(r, to_out);
  });
}

Array conv(const Array& lhs, const Array& rhs, const std::vector<int64_t>& window_strides,
           const Padding& padding) {
  return with_name("conv", [&]() -> Array { return conv_general_dilated(lhs, rhs, window_strides, padding); });
}

Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<int64_t>& strides,
                     const Padding& padding, const std::vector<int64_t>& rhs_dilation, bool transpose_kernel) {
  return with_name("conv_transpose", [&]() -> Array {
    if (rhs.ndim() < 3 || lhs.ndim() != rhs.ndim())
      fail("conv_transpose", "got lhs ", shape_str(lhs.shape()), " and rhs ", shape_str(rhs.shape()),
           ", expected arrays of one rank >= 3 (N, C, spatial... and O, I, spatial...)");
    size_t nsp = size_t(rhs.ndim() - 2);
    if (strides.size() != nsp)
      fail("conv_transpose", "got ", strides.size(), " strides, expected ", nsp);
    std::vector<int64_t> dil = rhs_dilation.empty() ? std::vector<int64_t>(nsp, 1) : rhs_dilation;
    if (dil.size() != nsp) fail("conv_transpose", "got ", dil.size(), " rhs dilations, expected ", nsp);
    const auto* named = std::get_if<std::string>(&padding);
    const auto* pairs = std::get_if<std::vector<std::pair<int64_t, int64_t>>>(&padding);
    if (named && *named != "SAME" && *named != "VALID")
      fail("conv_transpose", "got padding '", *named, "', expected 'SAME', 'VALID' or (low, high) pairs");
    if (pairs && pairs->size() != nsp) fail("conv_transpose", "got ", pairs->size(), " padding pairs, expected ", nsp);
    // JAX's _conv_transpose_padding, per spatial axis with the dilated kernel size k.
    std::vector<std::pair<int64_t, int64_t>> pads;
    for (size_t i = 0; i < nsp; i++) {
      int64_t k = (rhs.shape(int(i) + 2) - 1) * dil[i] + 1, s = strides[i], lo, total;
      if (pairs) {
        lo = (*pairs)[i].first;  // JAX uses explicit pairs as the dilated conv's padding
        total = lo + (*pairs)[i].second;
      } else if (*named == "SAME") {
        total = k + s - 2;
        lo = s > k - 1 ? k - 1 : (total + 1) / 2;
      } else {
        total = k + s - 2 + std::max<int64_t>(k - s, 0);
        lo = k - 1;
      }
      pads.push_back({lo, total - lo});
    }
    Array kernel = rhs;
    if (transpose_kernel) {
      std::vector<int> sp;
      for (size_t i = 0; i < nsp; i++) sp.push_back(int(i) + 2);
      kernel = numpy::swapaxes(numpy::flip(kernel, Axes(sp)), 0, 1);
    }
    return conv_general_dilated(lhs, kernel, std::vector<int64_t>(nsp, 1), pads, strides, dil);
  });
}

Array reduce_window(const Array& operand, WindowOp op,
                    const std::vector<int64_t>& window_dimensions,
                    const std::vector<int64_t>& window_strides, const Padding& padding,
                    const std::vector<int64_t>& base_dilation,
                    const std::vector<int64_t>& window_dilation) {
  return with_name("reduce_window", [&]() -> Array {
    const char* name = "reduce_window";
    const size_t n = size_t(operand.ndim());
    if (window_dimensions.size() != n)
      fail(name, "got window_dimensions ", dims_str(window_dimensions), " for an operand of shape ",
           shape_str(operand.shape()), ", expected one entry per dimension (", n, ")");
    const auto window = check_factors(name, "window_dimensions", window_dimensions, n, false);
    const auto strides = check_factors(name, "window_strides", window_strides, n, false);
    const auto base = check_factors(name, "base_dilation", base_dilation, n, true);
    const auto wdil = check_factors(name, "window_dilation", window_dilation, n, true);
    std::vector<int64_t> span;
    for (size_t i = 0; i < n; i++) span.push_back(dilate_dim(window[i], wdil[i]));
    // As JAX: string padding sees the operand's undilated shape and the dilated window.
    const Pads pads = resolve_padding(name, padding, operand.shape(), span, strides);
    return reduce_window_impl(name, operand, op, window, strides, pads, base, wdil);
  });
}

namespace {

// Pooling arguments over the trailing spatial dims, widened to every dimension.
struct PoolArgs {
  std::vector<int64_t> window, strides, ones;
  Pads pads;
};

PoolArgs pool_args(const char* op, const Array& x, const std::vector<int64_t>& window,
                   const std::vector<int64_t>& strides, const Padding& padding) {
  const size_t k = window.size(), n = size_t(x.ndim());
  if (n != k + 2)
    fail(op, "got an input of shape ", shape_str(x.shape()), " and a window ", dims_str(window),
         ", expected an input of rank ", k + 2, " (N, C, then one dimension per window entry)");
  auto w = check_factors(op, "window", window, k, false);
  // Empty strides mean ones (flax's default).
  auto s = check_factors(op, "strides", strides, k, true);
  const Shape sp(x.shape().begin() + 2, x.shape().end());
  Pads sp_pads = resolve_padding(op, padding, sp, w, s);
  PoolArgs a;
  a.window = {1, 1};
  a.strides = {1, 1};
  a.window.insert(a.window.end(), w.begin(), w.end());
  a.strides.insert(a.strides.end(), s.begin(), s.end());
  a.ones.assign(n, 1);
  a.pads = {{0, 0}, {0, 0}};
  a.pads.insert(a.pads.end(), sp_pads.begin(), sp_pads.end());
  padded_shape(op, x.shape(), a.ones, a.pads);  // validates negative padding
  return a;
}

}  // namespace

Array max_pool(const Array& x, const std::vector<int64_t>& window,
               const std::vector<int64_t>& strides,
               const Padding& padding) {
  return with_name("max_pool", [&]() -> Array {
    PoolArgs a = pool_args("max_pool", x, window, strides, padding);
    return reduce_window_impl("max_pool", x, WindowOp::Max, a.window, a.strides, a.pads, a.ones,
                              a.ones);
  });
}

Array avg_pool(const Array& x, const std::vector<int64_t>& window,
               const std::vector<int64_t>& strides,
               const Padding& padding, bool count_include_pad) {
  return with_name("avg_pool", [&]() -> Array {
    PoolArgs a = pool_args("avg_pool", x, window, strides, padding);
    // Averages are floats: integer and bool inputs average in float32.
    const DType dt = is_float(x.dtype()) ? x.dtype() : DType::Float32;
    Array xf = cast(x, dt, is_float(x.dtype()) && x.weak_type());
    Array sum = reduce_window_impl("avg_pool", xf, WindowOp::Sum, a.window, a.strides, a.pads,
                                   a.ones, a.ones);
    Array count;
    if (count_include_pad) {
      double n = 1;
      for (int64_t w : a.window) n *= double(w);
      count = filled(sum.shape(), n, dt);
    } else {
      // Real elements per window: the same windowed sum over ones.
      count = reduce_window_impl("avg_pool", filled(x.shape(), 1, dt), WindowOp::Sum, a.window,
                                 a.strides, a.pads, a.ones, a.ones);
    }
    return frontend::bind(Prim::Div, {sum, cast(count, dt, sum.weak_type())});
  });
}

Array convert_element_type(const Array& x, DType dtype) {
  return with_name("convert_element_type", [&]() -> Array { return cast(x, dtype, false); });
}

Array bitcast_convert_type(const Array& x, DType dtype) {
  return with_name("bitcast_convert_type", [&]() -> Array {
    if (itemsize(dtype) != itemsize(x.dtype()) || dtype == DType::Bool || x.dtype() == DType::Bool)
      fail_as(ErrorKind::Type, "bitcast_convert_type", "cannot reinterpret ", dtype_name(x.dtype()), " as ",
           dtype_name(dtype), ", expected non-bool dtypes of equal size");
    Params p;
    p.dtype = dtype;
    return frontend::bind(Prim::Bitcast, {x}, p);
  });
}

}  // namespace kiln::lax
