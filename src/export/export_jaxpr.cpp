// The exporters' shared front: trace with make_jaxpr, inline call equations (a nested jit,
// or grad of a jitted function, records calls), and simplify as jit does.
#include "export/export_jaxpr.h"

#include <algorithm>

#include "frontend/call.h"
#include "frontend/jit.h"
#include "frontend/jit_program.h"

namespace kiln::exporter {

using frontend::Atom;
using frontend::Eqn;
using frontend::Jaxpr;

namespace {

// Appends src's equations to dst with src's inputs bound to `args`; returns src's outputs
// as atoms of dst. Calls inside are inlined the same way.
std::vector<Atom> inline_into(const char* op, Jaxpr& dst, const Jaxpr& src, const std::vector<Atom>& args) {
  std::vector<Atom> env(src.vars.size());
  for (size_t i = 0; i < src.invars.size(); i++) env[size_t(src.invars[i])] = args[i];
  std::vector<Atom> consts;
  for (const Array& c : src.consts) consts.push_back(dst.add_const(c));
  auto map = [&](const Atom& a) { return a.is_var() ? env[size_t(a.var)] : consts[size_t(a.cst)]; };
  for (const Eqn& e : src.eqns) {
    if (e.custom) fail(op, "cannot export a custom_vjp's linear map (export the function, not its linearization)");
    std::vector<Atom> in;
    for (const Atom& a : e.in) in.push_back(map(a));
    if (e.call) {
      std::vector<Atom> outs = inline_into(op, dst, *e.call->jaxpr, in);
      for (size_t k = 0; k < e.out.size(); k++) env[size_t(e.out[k])] = outs[k];
      continue;
    }
    Eqn n = e;
    n.in = in;
    n.out.clear();
    for (int o : e.out) {
      int v = dst.add_var(src.vars[size_t(o)]);
      env[size_t(o)] = Atom::of_var(v);
      n.out.push_back(v);
    }
    dst.eqns.push_back(std::move(n));
  }
  std::vector<Atom> outs;
  for (const Atom& a : src.outs) outs.push_back(map(a));
  return outs;
}

}  // namespace

Jaxpr trace_for_export(const char* op, const Fn& f, const std::vector<Tree>& args, const ExportOptions& options) {
  ClosedJaxpr traced = make_jaxpr(f, args, options.static_argnums);
  const Jaxpr& src = *traced.jaxpr;
  Jaxpr flat;
  std::vector<Atom> in;
  for (int v : src.invars) {
    int nv = flat.add_var(src.vars[size_t(v)]);
    flat.invars.push_back(nv);
    in.push_back(Atom::of_var(nv));
  }
  flat.outs = inline_into(op, flat, src, in);
  return frontend::simplify_jaxpr(flat);
}

WindowPlan plan_window(const Shape& in, const Shape& out, const frontend::Params& params) {
  const size_t n = in.size();
  WindowPlan plan;
  std::vector<int64_t> label;  // per current axis: i for o_i, n + i for k_i
  for (size_t i = 0; i < n; i++) {
    const int64_t o = out[i], k = params.window[i];
    if (k == 1 && params.strides[i] == 1 && o == in[i]) {
      label.push_back(int64_t(i));
      continue;
    }
    WindowGather g{label.size(), o, k, {}};
    for (int64_t a = 0; a < o; a++)
      for (int64_t b = 0; b < k; b++) g.indices.push_back(a * params.strides[i] + b * params.dilation[i]);
    plan.gathers.push_back(std::move(g));
    label.push_back(int64_t(i));
    label.push_back(int64_t(n + i));
  }
  for (size_t i = 0; i < n; i++)
    if (std::find(label.begin(), label.end(), int64_t(n + i)) == label.end()) {
      plan.unit_axes.push_back(int64_t(label.size()));
      label.push_back(int64_t(n + i));
    }
  for (size_t p = 0; p < 2 * n; p++) plan.perm.push_back(std::find(label.begin(), label.end(), int64_t(p)) - label.begin());
  return plan;
}

}  // namespace kiln::exporter
