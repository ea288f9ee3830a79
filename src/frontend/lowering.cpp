// Eager lowering: the shared rules (lowering_rules.h) applied to concrete arrays. Pointwise
// ops extend lazy expressions, movement ops edit views, reductions run a kernel.
#include "frontend/lowering_rules.h"
#include "frontend/routine.h"

namespace kiln::frontend {

namespace {

using namespace lowering;

ImplRef pointwise(Prim p, const std::vector<ImplRef>& in, const Params& prm, const Aval& out) {
  auto build = [&](KernelInputs& ins) {
    std::vector<AluExp> idxs = unravel(gidx_var(out.size()), out.shape);
    std::vector<AluExp> e;
    for (auto& a : in) e.push_back(expr_at(*a, idxs, ins));
    return pointwise_exp(p, prm, e);
  };
  KernelInputs ins;
  AluExp e = build(ins);
  if (e.node_count() > kMaxFusedNodes || ins.buffers.size() > max_fused_inputs(in[0]->device)) {
    for (auto& a : in) a->realize();
    ins = KernelInputs();
    e = build(ins);
  }
  return make_from_exp(out, in[0]->device, e, ins.buffers);
}

ImplRef reduce(Prim p, const ArrayImpl& a, const Params& prm, const Aval& out) {
  AluOp op = prim_alu_op(p);
  ReduceIndex ri = reduce_index(a.shape(), prm.axes);
  // Reducing nothing gives the identity.
  if (ri.reduced_size == 0) return make_constant(out, a.device, Reduction::identity(op, a.dtype()));
  KernelInputs ins;
  Kernel k;
  k.size = ri.out_size;
  k.exp = expr_at(a, ri.idxs, ins);
  k.reduction = Reduction{op, ri.reduced_size, AluExp::accumulator(a.dtype())};
  k.inputs.assign(ins.buffers.size(), DType::Float32);
  k.exp.visit([&](const AluNode& node) {
    if (node.op == AluOp::Load) k.inputs[size_t(node.arg)] = node.dtype;
  });
  return make_from_buffer(out, a.device, run_kernel(a.device, k, ins.buffers));
}

ImplRef view(Prim p, const ImplRef& a, const Params& prm, const Aval& out) {
  // A growing broadcast or overlapping windows would recompute a non-trivial expression per
  // element or window: realize it first.
  bool repeats = p == Prim::Window || (p == Prim::Expand && out.size() > a->aval.size());
  if (repeats && !is_cheap(a->exp)) a->realize();
  return with_view(a, out, view_rule(p, a->st, a->shape(), prm, out.shape));
}

ImplRef gather(const ImplRef& x, const ImplRef& idx, const Params& prm, const Aval& out) {
  KernelInputs ins;
  auto index_at = [&](const std::vector<AluExp>& at) { return expr_at(*idx, at, ins); };
  AluExp e = expr_at(*x, gather_source_index(x->shape(), prm, idx->shape(), out, index_at), ins);
  return make_from_exp(out, x->device, e, ins.buffers);
}

}  // namespace

ImplRef lower(Prim p, const std::vector<ImplRef>& in, const Params& prm, const Aval& out) {
  if (is_pointwise(p)) {
    // A same-dtype cast changes only the weak flag; constants still go through
    // AluExp::cast so a full-precision weak scalar is rounded to its dtype.
    if (p == Prim::Cast && in[0]->dtype() == prm.dtype && !in[0]->exp.is_const())
      return with_view(in[0], out, in[0]->st);
    return pointwise(p, in, prm, out);
  }
  if (is_reduction(p)) return reduce(p, *in[0], prm, out);
  if (is_view_op(p)) return view(p, in[0], prm, out);
  if (p == Prim::Gather) return gather(in[0], in[1], prm, out);
  if (is_routine(p)) return lower_routine(p, in, prm, out);
  fail(prim_name(p), "has no lowering");
}

}  // namespace kiln::frontend
