// The JVP trace: each traced value is a (primal, tangent) pair, and each primitive goes
// through its rule in jvp_rules.cpp. Symbolic zero tangents skip the rules entirely.
#include "frontend/jvp.h"

#include "frontend/call.h"
#include "frontend/control.h"
#include "frontend/rule_ops.h"

namespace kiln::frontend {

Array instantiate(const Array& tangent, const Array& like) {
  if (tangent.valid()) return tangent;
  return ops::zeros({like.shape(), like.dtype(), like.weak_type()}, like.device());
}

Array JvpTrace::make(Array primal, Array tangent) {
  // A value with a zero tangent leaves this trace (JAX's full_lower): cheaper downstream.
  if (!tangent.valid() || !is_float(primal.dtype())) return primal;
  Aval av{primal.shape(), primal.dtype(), primal.weak_type()};
  std::string dev = primal.device();
  return make_traced(
      std::make_shared<JvpTracer>(shared_from_this(), std::move(primal), std::move(tangent)), av,
      dev);
}

Array JvpTrace::lift(const Array& x) {
  Aval av{x.shape(), x.dtype(), x.weak_type()};
  return make_traced(std::make_shared<JvpTracer>(shared_from_this(), x, Array()), av, x.device());
}

namespace {
void unpack(const Trace& t, const std::vector<Array>& args, std::vector<Array>& primals,
            std::vector<Array>& tangents) {
  for (auto& a : args) {
    auto* tr = tracer_in<JvpTracer>(a, t);
    primals.push_back(tr->primal);
    tangents.push_back(tr->tangent);
  }
}
bool any_valid(const std::vector<Array>& xs) {
  for (auto& x : xs)
    if (x.valid()) return true;
  return false;
}
}  // namespace

Array JvpTrace::process(Prim p, const std::vector<Array>& args, const Params& params) {
  std::vector<Array> primals, tangents;
  unpack(*this, args, primals, tangents);
  if (!any_valid(tangents)) return frontend::bind(p, primals, params);
  std::vector<Aval> avals;
  for (auto& x : primals) avals.push_back({x.shape(), x.dtype(), x.weak_type()});
  // Integer and bool results have zero tangents (JAX's float0); no rule runs for them.
  if (!is_float(shape_rule(p, avals, params).dtype)) return frontend::bind(p, primals, params);
  auto [y, dy] = jvp_rule(p)(primals, tangents, params);
  return make(std::move(y), std::move(dy));
}

std::vector<Array> JvpTrace::process_custom_jvp(const CustomJvp& c,
                                                const std::vector<Array>& args) {
  std::vector<Array> primals, tangents;
  unpack(*this, args, primals, tangents);
  if (!any_valid(tangents)) return bind_custom_jvp(c, primals);
  for (size_t i = 0; i < tangents.size(); i++) tangents[i] = instantiate(tangents[i], primals[i]);
  auto [outs, touts] = c.jvp(primals, tangents);
  if (outs.size() != touts.size())
    fail("custom_jvp", "the rule returned ", outs.size(), " outputs and ", touts.size(),
         " tangents, expected equal numbers");
  std::vector<Array> r;
  for (size_t i = 0; i < outs.size(); i++) {
    if (touts[i].valid() && touts[i].shape() != outs[i].shape())
      fail("custom_jvp", "the rule returned a tangent of shape ", shape_str(touts[i].shape()),
           " for an output of shape ", shape_str(outs[i].shape()), ", expected equal shapes");
    Array t = touts[i].valid() && touts[i].dtype() != outs[i].dtype()
                  ? ops::cast(touts[i], outs[i].dtype(), outs[i].weak_type())
                  : touts[i];
    r.push_back(make(outs[i], t));
  }
  return r;
}

std::vector<Array> JvpTrace::process_custom_vjp(const CustomVjp& c,
                                                const std::vector<Array>& args) {
  std::vector<Array> primals, tangents;
  unpack(*this, args, primals, tangents);
  if (!any_valid(tangents)) return bind_custom_vjp(c, primals);
  auto [outs, res] = c.fwd(primals);
  std::vector<Array> live;
  for (auto& t : tangents)
    if (t.valid()) live.push_back(t);
  Trace* lin = top_trace(live);
  for (size_t i = 0; i < tangents.size(); i++) tangents[i] = instantiate(tangents[i], primals[i]);
  std::vector<Aval> out_avals;
  for (auto& o : outs) out_avals.push_back({o.shape(), o.dtype(), o.weak_type()});
  if (!lin) lin = this;  // concrete tangents: plain jvp, which the base class refuses
  std::vector<Array> raised;
  for (auto& t : tangents) raised.push_back(full_raise(*lin, t));
  std::vector<Array> touts = lin->process_custom_lin(c, res, raised, out_avals);
  std::vector<Array> r;
  for (size_t i = 0; i < outs.size(); i++) r.push_back(make(outs[i], touts[i]));
  return r;
}

std::vector<Array> JvpTrace::process_call(const CallRef& c, const std::vector<Array>& args) {
  std::vector<Array> primals, tangents;
  unpack(*this, args, primals, tangents);
  if (!any_valid(tangents)) return bind_call(c, primals);
  // The jvp call takes the primals and the defined tangents, and returns the outputs and
  // the tangents of the float outputs.
  std::vector<bool> has;
  std::vector<Array> in = primals;
  for (auto& t : tangents) {
    has.push_back(t.valid());
    if (t.valid()) in.push_back(t);
  }
  std::vector<Array> r = bind_call(call_jvp(*c, has), in);
  const size_t n = c->jaxpr->outs.size();
  std::vector<Array> outs;
  for (size_t i = 0, k = n; i < n; i++)
    outs.push_back(make(r[i], is_float(r[i].dtype()) ? r[k++] : Array()));
  return outs;
}

std::vector<Array> JvpTrace::process_control(const ControlRef& op, const std::vector<Array>& args) {
  return control_jvp(*this, op, args);
}

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const ArraysFn& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
  auto trace = std::make_shared<JvpTrace>();
  TraceScope scope(trace);
  std::vector<Array> in;
  for (size_t i = 0; i < primals.size(); i++) {
    Array t = is_float(primals[i].dtype()) ? tangents[i] : Array();
    Aval av{primals[i].shape(), primals[i].dtype(), primals[i].weak_type()};
    in.push_back(
        make_traced(std::make_shared<JvpTracer>(trace, primals[i], t), av, primals[i].device()));
  }
  std::vector<Array> out = f(in), po, to;
  for (auto& o : out) {
    if (auto* tr = tracer_in<JvpTracer>(o, *trace)) {
      po.push_back(tr->primal);
      to.push_back(tr->tangent);
    } else {
      top_trace({o});  // throws if o escaped an inner transformation
      po.push_back(o);
      to.push_back(Array());
    }
  }
  return {po, to};
}

}  // namespace kiln::frontend
