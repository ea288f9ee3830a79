// The lowering rules shared by eager evaluation and jit: pointwise expressions, reduction
// index maps, movement views and gather indices (see lowering_rules.h).
#include "frontend/lowering_rules.h"

#include <algorithm>

#include "backend/backend.h"

namespace kiln::frontend::lowering {

size_t max_fused_inputs(const std::string& device) {
  return std::min(kMaxFusedInputs, get_backend(device).max_kernel_inputs());
}

bool is_pointwise(Prim p) {
  PrimKind k = prim_info(p).kind;
  return k == PrimKind::Elementwise || k == PrimKind::Convert;
}

bool is_view_op(Prim p) { return prim_info(p).kind == PrimKind::Movement; }

bool is_cheap(const AluExp& e) {
  AluOp op = e.op();
  if (op == AluOp::Const || (op == AluOp::Load && e.src(0).op() == AluOp::Var)) return true;
  // A little integer arithmetic of the index alone (iota * 4, a shift table): recomputing it
  // per element is cheaper than a buffer, and keeps its value range visible to codegen.
  if (is_float(e.dtype()) || e.node_count() > 8) return false;
  bool loads = false;
  e.visit([&](const AluNode& n) { loads |= n.op == AluOp::Load; });
  return !loads;
}

namespace {

// logaddexp(a, b) = max(a, b) + log1p(exp(-|a - b|)); where a - b is NaN (equal infinities,
// or a NaN operand) it is a + b, which is the right infinity or NaN (JAX's formula).
AluExp logaddexp_exp(const AluExp& a, const AluExp& b) {
  AluExp d = AluExp::binary(AluOp::Sub, a, b);
  AluExp abs_d = AluExp::binary(AluOp::Max, d, AluExp::unary(AluOp::Neg, d));
  AluExp tail = AluExp::unary(AluOp::Log1p, AluExp::unary(AluOp::Exp, AluExp::unary(AluOp::Neg, abs_d)));
  AluExp finite = AluExp::binary(AluOp::Add, AluExp::binary(AluOp::Max, a, b), tail);
  return AluExp::where(AluExp::unary(AluOp::IsNan, d), AluExp::binary(AluOp::Add, a, b), finite);
}

// Elementwise primitives without an AluOp of their own (alu = Const in kPrimTable).
AluExp composite_exp(Prim p, const std::vector<AluExp>& x) {
  switch (p) {
    case Prim::Logaddexp: return logaddexp_exp(x[0], x[1]);
    default: break;
  }
  fail(prim_name(p), "has neither an AluOp nor a composite expression");
}

}  // namespace

AluExp pointwise_exp(Prim p, const Params& prm, const std::vector<AluExp>& x) {
  if (p == Prim::Cast) return AluExp::cast(prm.dtype, x[0]);
  if (p == Prim::Bitcast) return AluExp::bitcast(prm.dtype, x[0]);
  if (prim_info(p).alu == AluOp::Const) return composite_exp(p, x);
  AluOp op = prim_alu_op(p);
  switch (alu_info(op).arity) {
    case 1: return AluExp::unary(op, x[0]);
    case 2: return AluExp::binary(op, x[0], x[1]);
    default: return AluExp::where(x[0], x[1], x[2]);
  }
}

ReduceIndex reduce_index(const Shape& in, const std::vector<int>& axes) {
  std::vector<int> kept, red;
  for (int i = 0; i < int(in.size()); i++)
    (std::find(axes.begin(), axes.end(), i) == axes.end() ? kept : red).push_back(i);
  Dims kept_shape, red_shape;
  for (int i : kept) kept_shape.push_back(in[size_t(i)]);
  for (int i : red) red_shape.push_back(in[size_t(i)]);
  ReduceIndex r;
  r.out_size = prod(kept_shape);
  r.reduced_size = prod(red_shape);
  // Per-axis logical index: kept axes from gidx, reduced axes from ridx.
  r.idxs.resize(in.size());
  auto gi = unravel(gidx_var(r.out_size), kept_shape);
  auto ri = unravel(ridx_var(r.reduced_size), red_shape);
  for (size_t i = 0; i < kept.size(); i++) r.idxs[size_t(kept[i])] = gi[i];
  for (size_t i = 0; i < red.size(); i++) r.idxs[size_t(red[i])] = ri[i];
  return r;
}

namespace {

// A sliding window as a view: [o0..on, k0..kn) reads x[o*strides + k*dilation].
ShapeTracker window_view(const ShapeTracker& st, const Shape& in, const Params& prm, const Shape& out) {
  size_t nd = in.size();
  Dims row_major(nd);
  int64_t acc = 1;  // size-1 axes included
  for (size_t i = nd; i-- > 0;) {
    row_major[i] = acc;
    acc *= in[i];
  }
  View v;
  v.shape = out;
  for (size_t i = 0; i < nd; i++) v.strides.push_back(prm.strides[i] * row_major[i]);
  for (size_t i = 0; i < nd; i++) v.strides.push_back(prm.dilation[i] * row_major[i]);
  return st.compose(ShapeTracker(v));
}

}  // namespace

ShapeTracker view_rule(Prim p, const ShapeTracker& st, const Shape& in, const Params& prm, const Shape& out) {
  switch (p) {
    case Prim::Reshape: return st.reshape(out);
    case Prim::Transpose: return st.permute(prm.axes);
    case Prim::Expand: return st.expand(out);
    case Prim::Pad: return st.pad(prm.ranges);
    case Prim::Shrink: return st.shrink(prm.ranges);
    case Prim::Flip: {
      std::vector<bool> axes(in.size(), false);
      for (int ax : prm.axes) axes[size_t(ax)] = true;
      return st.flip(axes);
    }
    case Prim::Stride: return st.stride(prm.strides);
    case Prim::Window: return window_view(st, in, prm, out);
    default: break;
  }
  fail(prim_name(p), "is not a movement primitive (no view rule)");
}

std::vector<AluExp> gather_source_index(const Shape& x, const Params& prm, const Shape& index_shape,
                                        const Aval& out,
                                        const std::function<AluExp(const std::vector<AluExp>&)>& index_at) {
  size_t ax = size_t(prm.axes[0]), ni = index_shape.size();
  int64_t n = x[ax];
  auto oidx = unravel(gidx_var(out.size()), out.shape);
  std::vector<AluExp> mid(oidx.begin() + long(ax), oidx.begin() + long(ax + ni));
  AluExp i = AluExp::cast(DType::Int32, index_at(mid));
  i = AluExp::where(i < AluExp::idx(0), i + n, i);
  i = AluExp::binary(AluOp::Max, AluExp::binary(AluOp::Min, i, AluExp::idx(n - 1)), AluExp::idx(0));
  std::vector<AluExp> xi(oidx.begin(), oidx.begin() + long(ax));
  xi.push_back(i);
  xi.insert(xi.end(), oidx.begin() + long(ax + ni), oidx.end());
  return xi;
}

}  // namespace kiln::frontend::lowering
