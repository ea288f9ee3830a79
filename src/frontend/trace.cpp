// The trace stack's bookkeeping: levels, raising operands into a trace, and the entry
// points for functions with custom derivative rules.
#include "frontend/trace.h"

#include "frontend/call.h"

namespace kiln::frontend {

namespace {
thread_local int current_level = 0;

void check_active(const Tracer* t) {
  if (!t->trace->active())
    throw Error(
        "a traced array escaped the transformation (jvp/vjp/grad/vmap) that created it: it was "
        "stored or returned outside the transformed function, expected it to be used only inside");
}
}  // namespace

TraceScope::TraceScope(std::shared_ptr<Trace> t) : trace_(std::move(t)) {
  trace_->level_ = ++current_level;
  trace_->active_ = true;
}

TraceScope::~TraceScope() {
  trace_->active_ = false;
  current_level--;
}

Tracer* tracer_of(const Array& x) { return x.impl()->tracer.get(); }

Trace* top_trace(const std::vector<Array>& xs) {
  Trace* top = nullptr;
  for (auto& x : xs) {
    Tracer* t = tracer_of(x);
    if (!t) continue;
    check_active(t);
    if (!top || t->trace->level() > top->level()) top = t->trace.get();
  }
  return top;
}

Array full_raise(Trace& t, const Array& x) {
  Tracer* tr = tracer_of(x);
  if (tr) {
    check_active(tr);
    if (tr->trace.get() == &t) return x;
    if (tr->trace->level() > t.level())
      throw Error("internal: an array of trace level " + std::to_string(tr->trace->level()) +
                  " reached a trace of lower level " + std::to_string(t.level()));
  }
  return t.lift(x);
}

Array make_traced(std::shared_ptr<Tracer> tracer, const Aval& aval, const std::string& device) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->aval = aval;
  impl->device = device;
  impl->tracer = std::move(tracer);
  return Array(impl);
}

std::vector<Array> Trace::process_custom_jvp(const CustomJvp& c, const std::vector<Array>& args) {
  return c.fun(args);
}
std::vector<Array> Trace::process_custom_vjp(const CustomVjp& c, const std::vector<Array>& args) {
  return c.fun(args);
}

std::vector<Array> Trace::process_call(const CallRef& c, const std::vector<Array>& args) {
  return eval_jaxpr(*c->jaxpr, args);
}

std::vector<Array> Trace::process_control(const std::shared_ptr<const ControlOp>&, const std::vector<Array>&) {
  throw Error("internal: this transformation has no rule for control flow (scan, while_loop, cond)");
}

std::vector<Array> Trace::process_custom_lin(const CustomVjp&, const std::vector<Array>&,
                                             const std::vector<Array>&, const std::vector<Aval>&) {
  throw Error(
      "jvp: cannot apply forward-mode differentiation (jvp, jacfwd, linearize's pushforward) to a "
      "custom_vjp function, expected reverse mode (vjp, grad, jacrev), as in JAX");
}

std::vector<Array> bind_custom_jvp(const CustomJvp& c, const std::vector<Array>& args) {
  Trace* t = top_trace(args);
  if (!t) return c.fun(args);
  std::vector<Array> raised;
  for (auto& a : args) raised.push_back(full_raise(*t, a));
  return t->process_custom_jvp(c, raised);
}

std::vector<Array> bind_custom_vjp(const CustomVjp& c, const std::vector<Array>& args) {
  Trace* t = top_trace(args);
  if (!t) return c.fun(args);
  std::vector<Array> raised;
  for (auto& a : args) raised.push_back(full_raise(*t, a));
  return t->process_custom_vjp(c, raised);
}

}  // namespace kiln::frontend
