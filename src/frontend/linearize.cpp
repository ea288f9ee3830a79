// linearize (jvp whose tangents are Jaxpr tracers), the backward pass over the linear
// Jaxpr, and vjp built from the two.
#include "frontend/linearize.h"

#include "frontend/call.h"
#include "frontend/control.h"
#include "frontend/jvp.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

Array JaxprTrace::tracer_for(int var, const std::string& device) {
  return make_traced(std::make_shared<JaxprTracer>(shared_from_this(), Atom::of_var(var)),
                     jaxpr->vars[size_t(var)], device);
}

Array JaxprTrace::new_arg(const Aval& aval, const std::string& device) {
  int v = jaxpr->add_var(aval);
  jaxpr->invars.push_back(v);
  return tracer_for(v, device);
}

Atom JaxprTrace::atom_of(const Array& x) {
  if (auto* t = tracer_in<JaxprTracer>(x, *this)) return t->atom;
  return jaxpr->add_const(x);
}

Array JaxprTrace::lift(const Array& x) {
  Atom a = jaxpr->add_const(x);
  return make_traced(std::make_shared<JaxprTracer>(shared_from_this(), a), x.impl()->aval,
                     x.device());
}

Array JaxprTrace::process(Prim p, const std::vector<Array>& args, const Params& params) {
  Eqn e;
  e.prim = p;
  e.params = params;
  std::vector<Aval> avals;
  bool any_var = false;
  for (auto& a : args) {
    Atom at = tracer_in<JaxprTracer>(a, *this)->atom;
    any_var = any_var || at.is_var();
    e.in.push_back(at);
    avals.push_back(jaxpr->aval(at));
  }
  if (!any_var) {
    // Only constants: nothing linear to record, so evaluate one level down.
    std::vector<Array> vals;
    for (auto& at : e.in) vals.push_back(jaxpr->consts[size_t(at.cst)]);
    return frontend::bind(p, vals, params);
  }
  int v = jaxpr->add_var(shape_rule(p, avals, params));
  e.out = {v};
  jaxpr->eqns.push_back(std::move(e));
  return tracer_for(v, args[0].device());
}

std::vector<Array> JaxprTrace::process_custom_lin(const CustomVjp& c,
                                                  const std::vector<Array>& residuals,
                                                  const std::vector<Array>& tangents,
                                                  const std::vector<Aval>& out_avals) {
  Eqn e;
  // Only bwd is kept: fun and fwd may capture traced arguments, which would form a cycle
  // through this Jaxpr (and leak it).
  auto rule = std::make_shared<CustomVjp>();
  rule->bwd = c.bwd;
  e.custom = rule;
  e.residuals = residuals;
  for (auto& t : tangents) e.in.push_back(tracer_in<JaxprTracer>(t, *this)->atom);
  std::vector<Array> outs;
  for (auto& av : out_avals) {
    int v = jaxpr->add_var(av);
    e.out.push_back(v);
    outs.push_back(tracer_for(v, tangents.empty() ? default_device() : tangents[0].device()));
  }
  jaxpr->eqns.push_back(std::move(e));
  return outs;
}

std::vector<Array> JaxprTrace::process_custom_jvp(const CustomJvp& c, const std::vector<Array>& args) {
  saw_custom_rule = true;
  return Trace::process_custom_jvp(c, args);
}

std::vector<Array> JaxprTrace::process_custom_vjp(const CustomVjp& c, const std::vector<Array>& args) {
  saw_custom_rule = true;
  return Trace::process_custom_vjp(c, args);
}

std::vector<Array> JaxprTrace::process_call(const CallRef& c, const std::vector<Array>& args) {
  if (!partial_eval_calls) return Trace::process_call(c, args);
  // Partial evaluation: constants of this trace are known values, variables are the
  // linear unknowns. The known part runs now, one level down (compiled when eager); the
  // unknown part, a call linear in the unknowns, is recorded with the residuals as
  // constants, so its transpose is one call too.
  std::vector<bool> known;
  std::vector<Array> known_vals;
  std::vector<Atom> unknown_atoms;
  for (auto& a : args) {
    Atom at = tracer_in<JaxprTracer>(a, *this)->atom;
    known.push_back(!at.is_var());
    if (at.is_var()) unknown_atoms.push_back(at);
    else known_vals.push_back(jaxpr->consts[size_t(at.cst)]);
  }
  if (unknown_atoms.empty()) return bind_call(c, known_vals);
  auto split = call_partial_eval(*c, known);
  std::vector<Array> kout;
  if (!split->known->jaxpr->outs.empty()) kout = bind_call(split->known, known_vals);
  Eqn e;
  e.call = split->unknown;
  const size_t nk = kout.size() - split->num_res;
  for (size_t r = nk; r < kout.size(); r++) e.in.push_back(jaxpr->add_const(kout[r]));
  e.in.insert(e.in.end(), unknown_atoms.begin(), unknown_atoms.end());
  std::string dev = args.empty() ? c->device : args[0].device();
  std::vector<Array> outs;
  size_t ki = 0;
  const auto& couts = c->jaxpr->outs;
  for (size_t i = 0; i < couts.size(); i++) {
    if (split->out_known[i]) {
      outs.push_back(kout[ki++]);
      continue;
    }
    int v = jaxpr->add_var(c->jaxpr->aval(couts[i]));
    e.out.push_back(v);
    outs.push_back(tracer_for(v, dev));
  }
  jaxpr->eqns.push_back(std::move(e));
  return outs;
}

std::vector<Array> JaxprTrace::process_control(const ControlRef& op, const std::vector<Array>& args) {
  return partial_eval_calls ? control_partial_eval(*this, op, args) : control_record(*this, op, args);
}

Linearized linearize_flat(const ArraysFn& f, const std::vector<Array>& primals) {
  auto trace = std::make_shared<JaxprTrace>(/*partial_eval_calls=*/true);
  std::vector<Array> outs, touts;
  {
    TraceScope scope(trace);
    std::vector<Array> tangents;
    for (auto& p : primals) {
      Array t = trace->new_arg({p.shape(), p.dtype(), p.weak_type()}, p.device());
      tangents.push_back(is_float(p.dtype()) ? t : Array());
    }
    std::tie(outs, touts) = jvp_flat(f, primals, tangents);
  }
  for (size_t i = 0; i < outs.size(); i++)
    trace->jaxpr->outs.push_back(trace->atom_of(instantiate(touts[i], outs[i])));
  return {outs, trace->jaxpr};
}

std::vector<Array> transpose_jaxpr(const Jaxpr& j, const std::vector<Array>& cts) {
  if (cts.size() != j.outs.size())
    fail("vjp", "got ", cts.size(), " cotangents, expected one per output (", j.outs.size(), ")");
  std::vector<Array> ct(j.vars.size());
  auto accumulate = [&](const Atom& a, const Array& g) {
    if (!a.is_var() || !g.valid()) return;
    const Aval& av = j.vars[size_t(a.var)];
    if (g.shape() != av.shape)
      throw Error("internal: transpose produced a cotangent of shape " + shape_str(g.shape()) +
                  " for a value of type " + av.str());
    Array gg = g.dtype() == av.dtype ? g : ops::cast(g, av.dtype, av.weak);
    ct[size_t(a.var)] = ops::add_any(ct[size_t(a.var)], gg);
  };
  for (size_t i = 0; i < cts.size(); i++) accumulate(j.outs[i], cts[i]);
  for (auto it = j.eqns.rbegin(); it != j.eqns.rend(); ++it) {
    const Eqn& e = *it;
    std::vector<Array> outs_ct;
    bool any = false;
    for (int o : e.out) {
      outs_ct.push_back(ct[size_t(o)]);
      any = any || ct[size_t(o)].valid();
      ct[size_t(o)] = Array();  // consumed: free it early
    }
    if (!any) continue;
    std::vector<Array> in_ct;
    if (e.custom) {
      for (size_t i = 0; i < outs_ct.size(); i++)
        if (!outs_ct[i].valid())
          outs_ct[i] = ops::zeros(j.vars[size_t(e.out[i])], default_device());
      in_ct = e.custom->bwd(e.residuals, outs_ct);
      if (in_ct.size() != e.in.size())
        fail("custom_vjp", "bwd returned ", in_ct.size(),
             " cotangents, expected one per argument (", e.in.size(), ")");
      for (size_t i = 0; i < in_ct.size(); i++)
        if (in_ct[i].valid() && in_ct[i].shape() != j.aval(e.in[i]).shape)
          fail("custom_vjp", "bwd returned a cotangent of shape ", shape_str(in_ct[i].shape()),
               " for argument ", i, " of type ", j.aval(e.in[i]).str(), ", expected equal shapes");
    } else if (e.call) {
      // One transposed call: (constant inputs, defined cotangents) -> linear inputs' cts.
      std::vector<bool> linear, has_ct;
      std::vector<Array> args;
      for (auto& a : e.in) {
        linear.push_back(a.is_var());
        if (!a.is_var()) args.push_back(j.consts[size_t(a.cst)]);
      }
      for (auto& g : outs_ct) {
        has_ct.push_back(g.valid());
        if (g.valid()) args.push_back(g);
      }
      std::vector<Array> lin_ct = bind_call(call_transpose(*e.call, linear, has_ct), args);
      in_ct.resize(e.in.size());
      for (size_t i = 0, k = 0; i < e.in.size(); i++)
        if (linear[i]) in_ct[i] = lin_ct[k++];
    } else {
      std::vector<Array> args;
      std::vector<Aval> avals;
      for (auto& a : e.in) {
        args.push_back(a.is_var() ? Array() : j.consts[size_t(a.cst)]);
        avals.push_back(j.aval(a));
      }
      in_ct = e.control ? control_transpose(*e.control, args, avals, outs_ct)
                        : transpose_rule(e.prim)(outs_ct[0], args, avals, e.params);
    }
    for (size_t i = 0; i < e.in.size() && i < in_ct.size(); i++) accumulate(e.in[i], in_ct[i]);
  }
  std::vector<Array> r;
  for (int v : j.invars) r.push_back(ct[size_t(v)]);
  return r;
}

std::pair<std::vector<Array>, std::function<std::vector<Array>(const std::vector<Array>&)>>
vjp_flat(const ArraysFn& f, const std::vector<Array>& primals) {
  Linearized lin = linearize_flat(f, primals);
  std::vector<Aval> in_avals;
  std::vector<std::string> devs;
  for (auto& p : primals) {
    in_avals.push_back({p.shape(), p.dtype(), p.weak_type()});
    devs.push_back(p.device());
  }
  auto jaxpr = lin.jaxpr;
  auto pullback = [jaxpr, in_avals, devs](const std::vector<Array>& cts) {
    std::vector<Array> g = transpose_jaxpr(*jaxpr, cts);
    for (size_t i = 0; i < g.size(); i++)
      if (!g[i].valid()) g[i] = ops::zeros(in_avals[i], devs[i]);
    return g;
  };
  return {lin.outs, pullback};
}

}  // namespace kiln::frontend
