// Shape and dtype rules of every primitive, in one table. Each rule validates its
// inputs and names the primitive, what it got and what it expected.
#include <algorithm>
#include <functional>
#include <map>

#include "frontend/primitive.h"
#include "frontend/routine.h"

namespace kiln::frontend {

namespace {

[[noreturn]] void bad(Prim p, const std::string& msg) { fail(prim_name(p), msg); }
// An operand of a dtype the primitive does not take: a TypeError in JS, as in jax-js.
[[noreturn]] void bad_dtype(Prim p, const std::string& msg) { fail_as(ErrorKind::Type, prim_name(p), msg); }

std::string avals_str(const std::vector<Aval>& in) {
  std::string s;
  for (auto& a : in) s += (s.empty() ? "" : ", ") + a.str();
  return s;
}

void check_axes(Prim p, const std::vector<int>& axes, size_t ndim, bool permutation) {
  std::vector<bool> seen(ndim, false);
  for (int ax : axes) {
    if (ax < 0 || size_t(ax) >= ndim)
      bad(p, detail::cat("axis ", ax, " is out of range for an array of rank ", ndim));
    if (seen[size_t(ax)]) bad(p, detail::cat("axis ", ax, " appears twice"));
    seen[size_t(ax)] = true;
  }
  if (permutation && axes.size() != ndim)
    bad(p, detail::cat("got ", axes.size(), " axes, expected a permutation of ", ndim));
}

void check_ranges(Prim p, const Ranges& r, size_t ndim) {
  if (r.size() != ndim)
    bad(p, detail::cat("got ", r.size(), " (lo, hi) pairs, expected one per axis (", ndim, ")"));
}

Aval elementwise(Prim p, const std::vector<Aval>& in) {
  const Aval& a = in[0];
  size_t first_value = p == Prim::Where ? 1 : 0;
  bool weak = true;
  for (size_t i = 0; i < in.size(); i++) {
    if (in[i].shape != a.shape)
      bad(p, "got shapes " + avals_str(in) + ", expected equal shapes");
    if (i >= first_value && in[i].dtype != in[first_value].dtype && p != Prim::Shl && p != Prim::Shr)
      bad(p, "got dtypes " + avals_str(in) + ", expected equal dtypes");
    if (i >= first_value) weak = weak && in[i].weak;
  }
  if (p == Prim::Where && in[0].dtype != DType::Bool)
    bad(p, "got a condition of dtype " + std::string(dtype_name(in[0].dtype)) + ", expected bool");
  DType dt = in[first_value].dtype;
  auto got = [&] { return "got dtype " + std::string(dtype_name(dt)); };
  switch (prim_info(p).operands) {
    case Operands::Any: break;
    case Operands::Numeric:
      if (dt == DType::Bool) bad_dtype(p, "got dtype bool, expected a numeric dtype");
      break;
    case Operands::Float:
      if (!is_float(dt)) bad_dtype(p, got() + ", expected a floating-point dtype");
      break;
    case Operands::Int:
      if (!is_int(dt)) bad_dtype(p, got() + ", expected an integer dtype");
      break;
    case Operands::IntOrBool:
      if (is_float(dt)) bad_dtype(p, got() + ", expected bool or an integer dtype");
      break;
  }
  AluOp op = prim_info(p).alu;
  if (is_comparison(op) || op == AluOp::IsNan) return {a.shape, DType::Bool, false};
  return {a.shape, dt, weak};
}

Aval reduce(Prim p, const Aval& a, const Params& prm) {
  check_axes(p, prm.axes, a.shape.size(), false);
  Shape out;
  for (size_t i = 0; i < a.shape.size(); i++)
    if (std::find(prm.axes.begin(), prm.axes.end(), int(i)) == prm.axes.end()) out.push_back(a.shape[i]);
  if ((p == Prim::ReduceSum || p == Prim::ReduceProd) && a.dtype == DType::Bool)
    bad_dtype(p, "got dtype bool, expected a numeric dtype");
  return {out, a.dtype, a.weak};
}

}  // namespace

AluOp prim_alu_op(Prim p) {
  const PrimInfo& info = prim_info(p);
  if ((info.kind != PrimKind::Elementwise && info.kind != PrimKind::Reduction) || info.alu == AluOp::Const)
    fail(info.name, "has no AluOp of its own");
  return info.alu;
}

Aval shape_rule(Prim p, const std::vector<Aval>& in, const Params& prm) {
  int arity = prim_arity(p);
  if (arity >= 0 && int(in.size()) != arity)
    bad(p, detail::cat("got ", in.size(), " operands, expected ", arity));
  if (is_elementwise(p)) return elementwise(p, in);
  if (is_reduction(p)) return reduce(p, in[0], prm);
  if (p == Prim::QuantizedMatmul) return quantized_matmul_shape(in, prm);
  if (p == Prim::DecodeAttention) return decode_attention_shape(in, prm);
  const Aval& a = in[0];
  const size_t nd = a.shape.size();
  switch (p) {
    case Prim::Cast: return {a.shape, prm.dtype, prm.weak};
    case Prim::Bitcast:
      if (itemsize(prm.dtype) != itemsize(a.dtype) || a.dtype == DType::Bool || prm.dtype == DType::Bool)
        bad_dtype(p, detail::cat("cannot reinterpret ", dtype_name(a.dtype), " as ", dtype_name(prm.dtype),
                           ", expected non-bool dtypes of equal size"));
      return {a.shape, prm.dtype, false};
    case Prim::Reshape:
      for (int64_t d : prm.shape)
        if (d < 0) bad(p, "got shape " + shape_str(prm.shape) + ", expected non-negative sizes");
      if (prod(prm.shape) != a.size())
        bad(p, "cannot reshape " + a.str() + " to " + shape_str(prm.shape) + ": sizes differ");
      return {prm.shape, a.dtype, a.weak};
    case Prim::Transpose: {
      check_axes(p, prm.axes, nd, true);
      Shape s;
      for (int ax : prm.axes) s.push_back(a.shape[size_t(ax)]);
      return {s, a.dtype, a.weak};
    }
    case Prim::Expand:
      if (prm.shape.size() != nd)
        bad(p, "cannot broadcast " + a.str() + " to " + shape_str(prm.shape) + ": ranks differ");
      for (size_t i = 0; i < nd; i++)
        if (a.shape[i] != prm.shape[i] && a.shape[i] != 1)
          bad(p, "cannot broadcast " + a.str() + " to " + shape_str(prm.shape));
      return {prm.shape, a.dtype, a.weak};
    case Prim::Pad: {
      check_ranges(p, prm.ranges, nd);
      Shape s = a.shape;
      for (size_t i = 0; i < nd; i++) {
        if (prm.ranges[i].first < 0 || prm.ranges[i].second < 0)
          bad(p, "got negative padding, expected widths >= 0");
        s[i] += prm.ranges[i].first + prm.ranges[i].second;
      }
      return {s, a.dtype, a.weak};
    }
    case Prim::Shrink: {
      check_ranges(p, prm.ranges, nd);
      Shape s = a.shape;
      for (size_t i = 0; i < nd; i++) {
        auto [b, e] = prm.ranges[i];
        if (b < 0 || e < b || e > a.shape[i])
          bad(p, detail::cat("range [", b, ", ", e, ") on axis ", i, " is outside [0, ", a.shape[i], "]"));
        s[i] = e - b;
      }
      return {s, a.dtype, a.weak};
    }
    case Prim::Flip:
      check_axes(p, prm.axes, nd, false);
      return a;
    case Prim::Stride: {
      if (prm.strides.size() != nd) bad(p, "expected one step per axis");
      Shape s = a.shape;
      for (size_t i = 0; i < nd; i++) {
        if (prm.strides[i] < 1) bad(p, detail::cat("got step ", prm.strides[i], ", expected >= 1"));
        s[i] = (s[i] + prm.strides[i] - 1) / prm.strides[i];
      }
      return {s, a.dtype, a.weak};
    }
    case Prim::Window: {
      if (prm.window.size() != nd || prm.strides.size() != nd || prm.dilation.size() != nd)
        bad(p, "expected window, strides and dilation for each axis of " + a.str());
      Shape s(nd), k(nd);
      for (size_t i = 0; i < nd; i++) {
        if (prm.window[i] < 1 || prm.strides[i] < 1 || prm.dilation[i] < 1)
          bad(p, "window sizes, strides and dilations must be >= 1");
        int64_t span = (prm.window[i] - 1) * prm.dilation[i] + 1;
        // An empty axis has no windows (vmap over a zero-size batch adds a window of 1 there).
        if (span > a.shape[i] && a.shape[i] != 0)
          bad(p, detail::cat("window spans ", span, " elements on axis ", i, " of ", a.str(),
                             ", expected at most ", a.shape[i]));
        s[i] = a.shape[i] == 0 ? 0 : (a.shape[i] - span) / prm.strides[i] + 1;
        k[i] = prm.window[i];
      }
      s.insert(s.end(), k.begin(), k.end());
      return {s, a.dtype, a.weak};
    }
    case Prim::Gather: {
      const Aval& idx = in[1];
      if (prm.axes.size() != 1) bad(p, "expected one axis");
      check_axes(p, prm.axes, nd, false);
      if (!is_int(idx.dtype))
        bad(p, "got indices of dtype " + std::string(dtype_name(idx.dtype)) + ", expected an integer dtype");
      size_t ax = size_t(prm.axes[0]);
      if (a.shape[ax] == 0 && idx.size() > 0) bad(p, "cannot take from an empty axis");
      Shape s(a.shape.begin(), a.shape.begin() + long(ax));
      s.insert(s.end(), idx.shape.begin(), idx.shape.end());
      s.insert(s.end(), a.shape.begin() + long(ax) + 1, a.shape.end());
      return {s, a.dtype, a.weak};
    }
    default: break;
  }
  bad(p, "has no shape rule");
}

}  // namespace kiln::frontend
