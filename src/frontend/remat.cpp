// Rematerialization (JAX's jax.checkpoint / jax.remat): a function bound as one remat op
// (control.h, ControlKind::Remat) whose partial evaluation saves only what its policy allows.
// Everything else the backward pass needs is recomputed there from the op's inputs: the
// unknown (linear) op's body is the whole jvp body with the saved values as inputs, and
// call_transpose evaluates its primal part before transposing the rest. The remat op stays
// opaque to jit (a program step of its own, never CSE'd or fused with the forward pass),
// which is the optimization barrier JAX inserts for the same reason.
// docs/ARCHITECTURE.md, "Rematerialization".
#include "frontend/control.h"
#include "frontend/control_util.h"
#include "frontend/transforms_internal.h"

namespace kiln::frontend {

using namespace control_detail;

ControlRef make_remat(CallRef body, RematPolicy policy) {
  if (int(policy) > int(RematPolicy::EverythingSaveable))
    fail("checkpoint", "got policy ", int(policy), ", expected nothing_saveable, dots_saveable or everything_saveable");
  auto op = std::make_shared<ControlOp>();
  op->kind = ControlKind::Remat;
  op->bodies = {std::move(body)};
  op->policy = policy;
  return op;
}

namespace {

// Whether equation `p` of j computes a contraction: a sum of a product (x @ W is
// reduce_sum(mul(expand(x), expand(W))) in kiln's primitives; the lowering makes it a
// matmul kernel). These are what dots_saveable keeps, as JAX keeps dot_general's results.
bool is_contraction(const Jaxpr& j, const std::vector<int>& producer, int p) {
  if (p < 0) return false;
  const Eqn& e = j.eqns[size_t(p)];
  if (e.custom || e.call || e.control || e.prim != Prim::ReduceSum || !e.in[0].is_var()) return false;
  int q = producer[size_t(e.in[0].var)];
  if (q < 0) return false;
  const Eqn& m = j.eqns[size_t(q)];
  return !m.custom && !m.call && !m.control && m.prim == Prim::Mul;
}

}  // namespace

RematSplit split_remat(const ControlOp& op, const std::vector<bool>& known) {
  const CallRef& body = op.bodies[0];
  auto s = call_partial_eval(*body, known);
  RematSplit r;
  r.out_known = s->out_known;
  if (op.policy == RematPolicy::EverythingSaveable) {
    // Every residual is saved: the split of a plain call.
    r.known = make_remat(s->known, op.policy);
    r.unknown = make_remat(s->unknown, op.policy);
    r.num_res = s->num_res;
    r.pass_known = false;
    return r;
  }
  const Jaxpr& j = *body->jaxpr;
  Jaxpr kj = *s->known->jaxpr;
  size_t nko = 0;
  for (bool b : s->out_known) nko += b;
  std::vector<int> producer(j.vars.size(), -1);
  for (size_t i = 0; i < j.eqns.size(); i++)
    for (int o : j.eqns[i].out) producer[size_t(o)] = int(i);
  // The residuals the policy saves (the known inputs are passed to the unknown op anyway).
  std::vector<int> saved;
  std::vector<char> is_saved(j.vars.size(), 0);
  for (size_t k = nko; k < kj.outs.size(); k++) {
    const Atom& a = kj.outs[k];
    if (!a.is_var() || size_t(a.var) >= j.vars.size() || is_saved[size_t(a.var)]) continue;
    if (op.policy == RematPolicy::DotsSaveable && is_contraction(j, producer, producer[size_t(a.var)])) {
      is_saved[size_t(a.var)] = 1;
      saved.push_back(a.var);
    }
  }
  kj.outs.resize(nko);
  for (int v : saved) kj.outs.push_back(Atom::of_var(v));
  // The unknown body: the whole body, reading the saved values instead of computing them.
  Jaxpr uj = j;
  uj.invars = saved;
  uj.invars.insert(uj.invars.end(), j.invars.begin(), j.invars.end());
  uj.eqns.clear();
  for (const Eqn& e : j.eqns)
    if (!(e.out.size() == 1 && is_saved[size_t(e.out[0])])) uj.eqns.push_back(e);
  uj.outs.clear();
  for (size_t i = 0; i < j.outs.size(); i++)
    if (!s->out_known[i]) uj.outs.push_back(j.outs[i]);
  r.known = make_remat(make_call(std::make_shared<Jaxpr>(std::move(kj)), body->device, "known(" + body->name + ")"),
                       op.policy);
  r.unknown = make_remat(
      make_call(std::make_shared<Jaxpr>(std::move(uj)), body->device, "remat(" + body->name + ")"), op.policy);
  r.num_res = saved.size();
  r.pass_known = true;
  return r;
}

std::vector<Array> remat_flat(const ArraysFn& f, const std::vector<Array>& args, RematPolicy policy) {
  std::vector<Aval> av;
  for (auto& a : args) av.push_back({a.shape(), a.dtype(), a.weak_type()});
  const std::string dev = args.empty() ? default_device() : args[0].device();
  ClosedFn c = trace_closed(f, av, dev, "checkpoint");
  return bind_control(make_remat(c.call, policy), join({c.captured, args}));
}

}  // namespace kiln::frontend

namespace kiln {

Fn checkpoint(const Fn& f, CheckpointPolicy policy) {
  if (!f) fail("checkpoint", "got an empty function");
  return [f, policy](const std::vector<Tree>& args) -> Tree {
    frontend::detail::Restricted r = frontend::detail::restrict_all("checkpoint", f, args);
    std::vector<Array> outs = frontend::remat_flat(r.fn, r.leaves, frontend::RematPolicy(int(policy)));
    return tree_unflatten(*r.out_def, outs);
  };
}

ArrayFn checkpoint(const ArrayFn& f, CheckpointPolicy policy) {
  if (!f) fail("checkpoint", "got an empty function");
  return [f, policy](const Array& x) {
    return frontend::remat_flat([f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; }, {x},
                                frontend::RematPolicy(int(policy)))[0];
  };
}

Fn remat(const Fn& f, CheckpointPolicy policy) { return checkpoint(f, policy); }
ArrayFn remat(const ArrayFn& f, CheckpointPolicy policy) { return checkpoint(f, policy); }

}  // namespace kiln
