// The exporters' shared front: trace with make_jaxpr, inline call equations (a nested jit,
// or grad of a jitted function, records calls), and simplify as jit does.
#include "export/export_jaxpr.h"

#include <algorithm>

#include "frontend/call.h"
#include "frontend/control.h"
#include "frontend/jit.h"
#include "frontend/jit_program.h"
#include "library/numpy.h"

namespace kiln::exporter {

using frontend::Atom;
using frontend::Eqn;
using frontend::Jaxpr;

namespace {

frontend::ControlRef flatten_control(const char* op, const frontend::ControlOp& c);

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
    if (e.control) n.control = flatten_control(op, *e.control);
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

// `src` with its calls inlined and simplified (the form both targets write), same invars.
Jaxpr flatten(const char* op, const Jaxpr& src) {
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

// A control op whose bodies are flattened too (they are written as ONNX subgraphs and
// StableHLO regions, so a call inside a body is inlined there).
frontend::ControlRef flatten_control(const char* op, const frontend::ControlOp& c) {
  auto n = std::make_shared<frontend::ControlOp>();
  n->kind = c.kind, n->num_consts = c.num_consts, n->num_carry = c.num_carry, n->cond_consts = c.cond_consts;
  n->length = c.length, n->reverse = c.reverse, n->unroll = c.unroll;
  for (const frontend::CallRef& b : c.bodies) {
    n->bodies.push_back(frontend::make_call(std::make_shared<const Jaxpr>(flatten(op, *b->jaxpr)), b->device, b->name));
  }
  return n;
}

}  // namespace

Jaxpr trace_for_export(const char* op, const Fn& f, const std::vector<Tree>& args, const ExportOptions& options) {
  ClosedJaxpr traced = make_jaxpr(f, args, options.static_argnums);
  return flatten(op, *traced.jaxpr);
}

namespace {

// The example's arguments with axis 0 of every array (not static, rank >= 1) one larger;
// sets `batch` to that axis's size, which every such array must share.
std::vector<Tree> grown_args(const char* op, const std::vector<Tree>& args, const ExportOptions& options, int64_t& batch) {
  std::vector<Tree> out = args;
  batch = -1;
  for (size_t i = 0; i < args.size(); i++) {
    const auto& statics = options.static_argnums;
    const auto& batched = options.batch_argnums;
    if (std::find(statics.begin(), statics.end(), int(i)) != statics.end()) continue;
    if (!batched.empty() && std::find(batched.begin(), batched.end(), int(i)) == batched.end()) continue;
    auto [leaves, def] = tree_flatten(args[i]);
    for (Array& l : leaves) {
      if (l.ndim() == 0) continue;
      Shape s = l.shape();
      if (batch >= 0 && s[0] != batch)
        fail(op, "batch_dim: argument ", i, " has ", s[0], " rows, expected ", batch, " (axis 0 of every array is the batch)");
      batch = s[0];
      s[0] += 1;
      l = numpy::zeros(s, l.dtype());
    }
    out[i] = tree_unflatten(def, leaves);
  }
  if (batch < 0) fail(op, "batch_dim: no array argument has an axis 0");
  return out;
}

// (v at the example, v at one more) as a * batch + c.
Affine affine(int64_t batch, int64_t v, int64_t grown) { return {grown - v, v - (grown - v) * batch}; }

bool same_params(const frontend::Params& x, const frontend::Params& y) {
  return x.dtype == y.dtype && x.weak == y.weak && x.axes == y.axes && x.window == y.window && x.strides == y.strides &&
         x.dilation == y.dilation && x.shape.size() == y.shape.size() && x.ranges.size() == y.ranges.size();
}

}  // namespace

BatchDependence batch_dependence(const char* op, const Fn& f, const std::vector<Tree>& args, const ExportOptions& options,
                                 const Jaxpr& j) {
  for (const Eqn& e : j.eqns)
    if (e.control)
      fail(op, "batch_dim: a function with control flow (", e.control->name(),
           ") is exported at a fixed batch size (its bodies' sizes are not made symbolic)");
  int64_t batch = 0;
  const Jaxpr g = trace_for_export(op, f, grown_args(op, args, options, batch), options);
  auto differs = [&](const std::string& what) {
    fail(op, "batch_dim: the function's jaxpr changes with the batch size (", what,
         "); export it at a fixed batch size instead");
  };
  if (g.eqns.size() != j.eqns.size() || g.vars.size() != j.vars.size() || g.consts.size() != j.consts.size())
    differs("a different number of equations");
  BatchDependence d;
  for (size_t c = 0; c < j.consts.size(); c++) {
    const Shape &a = j.consts[c].shape(), &b = g.consts[c].shape();
    if (a.size() != b.size() || (a != b && !(is_splat(j.consts[c]) && is_splat(g.consts[c]))))
      differs("constant " + std::to_string(c) + " has the batch in its shape");
    d.const_dims.emplace_back();
    for (size_t k = 0; k < a.size(); k++) d.const_dims.back().push_back(affine(batch, a[k], b[k]));
  }
  for (size_t v = 0; v < j.vars.size(); v++) {
    const Shape &a = j.vars[v].shape, &b = g.vars[v].shape;
    if (a.size() != b.size()) differs("a rank");
    d.var_dims.emplace_back();
    for (size_t k = 0; k < a.size(); k++) d.var_dims.back().push_back(affine(batch, a[k], b[k]));
  }
  for (size_t e = 0; e < j.eqns.size(); e++) {
    const frontend::Params &p = j.eqns[e].params, &q = g.eqns[e].params;
    if (j.eqns[e].prim != g.eqns[e].prim || !same_params(p, q)) differs(std::string("equation ") + frontend::prim_name(j.eqns[e].prim));
    d.shapes.emplace_back();
    d.ranges.emplace_back();
    if (p.shape != q.shape)
      for (size_t k = 0; k < p.shape.size(); k++) d.shapes.back().push_back(affine(batch, p.shape[k], q.shape[k]));
    if (p.ranges != q.ranges)
      for (size_t k = 0; k < p.ranges.size(); k++)
        d.ranges.back().push_back({affine(batch, p.ranges[k].first, q.ranges[k].first), affine(batch, p.ranges[k].second, q.ranges[k].second)});
  }
  return d;
}

bool is_splat(const Array& a) {
  if (a.size() < 2) return false;
  const std::vector<uint8_t> b = a.bytes();
  const size_t n = itemsize(a.dtype());
  for (size_t i = n; i < b.size(); i += n)
    if (!std::equal(b.begin() + long(i), b.begin() + long(i + n), b.begin())) return false;
  return true;
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
