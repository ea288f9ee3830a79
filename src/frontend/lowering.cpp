// Eager lowering of every primitive, in one table: elementwise ops extend lazy
// expressions, movement ops edit views, reductions run a kernel.
#include <algorithm>

#include "frontend/primitive.h"

namespace kiln::frontend {

namespace {

// Fusion limits: past these, operands are realized first so kernels stay small.
constexpr int kMaxFusedNodes = 400;
constexpr size_t kMaxFusedInputs = 12;

// A cheap expression: recomputing it per use costs no more than loading it.
bool is_cheap(const ArrayImpl& a) {
  AluOp op = a.exp.op();
  return op == AluOp::Const || (op == AluOp::Load && a.exp.src(0).op() == AluOp::Var);
}

ImplRef elementwise(Prim p, const std::vector<ImplRef>& in, const Params& prm, const Aval& out) {
  auto build = [&](KernelInputs& ins) {
    std::vector<AluExp> idxs = unravel(gidx_var(out.size()), out.shape);
    std::vector<AluExp> e;
    for (auto& a : in) e.push_back(expr_at(*a, idxs, ins));
    if (p == Prim::Cast) return AluExp::cast(prm.dtype, e[0]);
    if (p == Prim::Bitcast) return AluExp::bitcast(prm.dtype, e[0]);
    AluOp op = prim_alu_op(p);
    switch (alu_info(op).arity) {
      case 1: return AluExp::unary(op, e[0]);
      case 2: return AluExp::binary(op, e[0], e[1]);
      default: return AluExp::where(e[0], e[1], e[2]);
    }
  };
  KernelInputs ins;
  AluExp e = build(ins);
  if (e.node_count() > kMaxFusedNodes || ins.buffers.size() > kMaxFusedInputs) {
    for (auto& a : in) a->realize();
    ins = KernelInputs();
    e = build(ins);
  }
  return make_from_exp(out, in[0]->device, e, ins.buffers);
}

ImplRef reduce(Prim p, const ArrayImpl& a, const Params& prm, const Aval& out) {
  std::vector<int> kept, red;
  for (int i = 0; i < int(a.shape().size()); i++)
    (std::find(prm.axes.begin(), prm.axes.end(), i) == prm.axes.end() ? kept : red).push_back(i);
  Dims kept_shape, red_shape;
  for (int i : kept) kept_shape.push_back(a.shape()[size_t(i)]);
  for (int i : red) red_shape.push_back(a.shape()[size_t(i)]);
  int64_t n = prod(kept_shape), r = prod(red_shape);
  // Per-axis logical index: kept axes from gidx, reduced axes from ridx.
  std::vector<AluExp> idxs(a.shape().size());
  auto gi = unravel(gidx_var(n), kept_shape);
  auto ri = unravel(ridx_var(r), red_shape);
  for (size_t i = 0; i < kept.size(); i++) idxs[size_t(kept[i])] = gi[i];
  for (size_t i = 0; i < red.size(); i++) idxs[size_t(red[i])] = ri[i];
  KernelInputs ins;
  Kernel k;
  k.size = n;
  AluOp op = prim_alu_op(p);
  if (r == 0) {
    // Reducing nothing gives the identity.
    return make_constant(out, a.device, Reduction::identity(op, a.dtype()));
  }
  k.exp = expr_at(a, idxs, ins);
  k.reduction = Reduction{op, r, AluExp::var(VarId::Acc, a.dtype(), 0)};
  k.inputs.assign(ins.buffers.size(), DType::Float32);
  k.exp.visit([&](const AluNode& node) {
    if (node.op == AluOp::Load) k.inputs[size_t(node.arg)] = node.dtype;
  });
  return make_from_buffer(out, a.device, run_kernel(a.device, k, ins.buffers));
}

// Row-major strides of a shape, including size-1 axes.
Dims row_major(const Shape& s) {
  Dims st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

ImplRef window(const ImplRef& a, const Params& prm, const Aval& out) {
  size_t nd = a->shape().size();
  Dims rm = row_major(a->shape());
  View v;
  v.shape = out.shape;
  for (size_t i = 0; i < nd; i++) v.strides.push_back(prm.strides[i] * rm[i]);
  for (size_t i = 0; i < nd; i++) v.strides.push_back(prm.dilation[i] * rm[i]);
  // Windows overlap, so a non-trivial expression would be recomputed per window.
  if (!is_cheap(*a)) a->realize();
  return with_view(a, out, a->st.compose(ShapeTracker(v)));
}

ImplRef gather(const ImplRef& x, const ImplRef& idx, const Params& prm, const Aval& out) {
  size_t ax = size_t(prm.axes[0]);
  size_t ni = idx->shape().size();
  int64_t n = x->shape()[ax];
  auto oidx = unravel(gidx_var(out.size()), out.shape);
  KernelInputs ins;
  std::vector<AluExp> mid(oidx.begin() + long(ax), oidx.begin() + long(ax + ni));
  AluExp i = AluExp::cast(DType::Int32, expr_at(*idx, mid, ins));
  i = AluExp::where(i < AluExp::idx(0), i + n, i);
  i = AluExp::binary(AluOp::Max, AluExp::binary(AluOp::Min, i, AluExp::idx(n - 1)), AluExp::idx(0));
  std::vector<AluExp> xi(oidx.begin(), oidx.begin() + long(ax));
  xi.push_back(i);
  xi.insert(xi.end(), oidx.begin() + long(ax + ni), oidx.end());
  AluExp e = expr_at(*x, xi, ins);
  return make_from_exp(out, x->device, e, ins.buffers);
}

}  // namespace

ImplRef lower(Prim p, const std::vector<ImplRef>& in, const Params& prm, const Aval& out) {
  if (is_elementwise(p) || p == Prim::Cast || p == Prim::Bitcast) {
    // A same-dtype cast changes only the weak flag; constants still go through
    // AluExp::cast so a full-precision weak scalar is rounded to its dtype.
    if (p == Prim::Cast && in[0]->dtype() == prm.dtype && !in[0]->exp.is_const())
      return with_view(in[0], out, in[0]->st);
    return elementwise(p, in, prm, out);
  }
  if (is_reduction(p)) return reduce(p, *in[0], prm, out);
  const ImplRef& a = in[0];
  const ShapeTracker& st = a->st;
  switch (p) {
    case Prim::Reshape: return with_view(a, out, st.reshape(out.shape));
    case Prim::Transpose: return with_view(a, out, st.permute(prm.axes));
    case Prim::Expand:
      if (out.size() > a->aval.size() && !is_cheap(*a)) a->realize();
      return with_view(a, out, a->st.expand(out.shape));
    case Prim::Pad: return with_view(a, out, st.pad(prm.ranges));
    case Prim::Shrink: return with_view(a, out, st.shrink(prm.ranges));
    case Prim::Flip: {
      std::vector<bool> axes(a->shape().size(), false);
      for (int ax : prm.axes) axes[size_t(ax)] = true;
      return with_view(a, out, st.flip(axes));
    }
    case Prim::Stride: return with_view(a, out, st.stride(prm.dims));
    case Prim::Window: return window(a, prm, out);
    case Prim::Gather: return gather(in[0], in[1], prm, out);
    default: break;
  }
  fail(prim_name(p), "has no lowering");
}

}  // namespace kiln::frontend
