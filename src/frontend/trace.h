// The trace stack: each active transformation (jvp, linearize, vmap) is one Trace at a
// level; frontend::bind() hands a primitive to the highest-level trace among its operands.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "frontend/primitive.h"

namespace kiln::frontend {

class Trace;
struct CallJaxpr;  // call.h
struct ControlOp;  // control.h

// What a traced Array carries besides its aval: the trace that owns it. Subclasses hold
// the transformation's per-value state (primal and tangent, value and batch axis, ...).
struct Tracer {
  explicit Tracer(std::shared_ptr<Trace> t) : trace(std::move(t)) {}
  virtual ~Tracer() = default;
  std::shared_ptr<Trace> trace;
};

using ArraysFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// A function with a user-supplied jvp: jvp(primals, tangents) -> (outs, out tangents).
// Zero tangents reach the rule instantiated as zeros.
struct CustomJvp {
  ArraysFn fun;
  std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>&,
                                                                  const std::vector<Array>&)>
      jvp;
};

// A function with a user-supplied vjp: fwd(args) -> (outs, residuals) and
// bwd(residuals, out cotangents) -> argument cotangents.
struct CustomVjp {
  ArraysFn fun;
  std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>&)> fwd;
  std::function<std::vector<Array>(const std::vector<Array>&, const std::vector<Array>&)> bwd;
};

class Trace : public std::enable_shared_from_this<Trace> {
 public:
  virtual ~Trace() = default;
  int level() const { return level_; }
  bool active() const { return active_; }
  // Wraps a plain array, or a tracer of a lower level, as a tracer of this trace.
  virtual Array lift(const Array& x) = 0;
  // Applies p to operands that are all tracers of this trace.
  virtual Array process(Prim p, const std::vector<Array>& args, const Params& params) = 0;
  // Higher-order calls. The default traces through the function itself.
  virtual std::vector<Array> process_custom_jvp(const CustomJvp& c, const std::vector<Array>& args);
  virtual std::vector<Array> process_custom_vjp(const CustomVjp& c, const std::vector<Array>& args);
  // The call primitive (call.h). The default inlines the call's jaxpr (evaluates it
  // through bind); jvp, vmap and linearize map it to a derived call instead.
  virtual std::vector<Array> process_call(const std::shared_ptr<const CallJaxpr>& c,
                                          const std::vector<Array>& args);
  // The control flow primitives (control.h: scan, while, cond); jvp, vmap and jaxpr
  // recording apply the rules of control_rules.cpp. The default throws.
  virtual std::vector<Array> process_control(const std::shared_ptr<const ControlOp>& op,
                                             const std::vector<Array>& args);
  // Records the linear map of a custom_vjp function applied to `tangents` (tracers of this
  // trace) whose transpose is bwd(residuals, cts). Only linearize's trace can; others throw.
  virtual std::vector<Array> process_custom_lin(const CustomVjp& c,
                                                const std::vector<Array>& residuals,
                                                const std::vector<Array>& tangents,
                                                const std::vector<Aval>& out_avals);

 private:
  friend class TraceScope;
  int level_ = 0;
  bool active_ = false;
};

// Pushes a trace on this thread's stack for its lifetime; the trace gets the next level
// (eager evaluation is level 0) and is marked inactive when the scope ends, so tracers
// that escape their transformation are caught instead of silently misused.
class TraceScope {
 public:
  explicit TraceScope(std::shared_ptr<Trace> t);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  std::shared_ptr<Trace> trace_;
};

// The tracer behind x if x is traced (else null).
Tracer* tracer_of(const Array& x);
// The tracer of trace t behind x, cast to T, or null when x belongs to another trace.
template <typename T>
T* tracer_in(const Array& x, const Trace& t) {
  Tracer* tr = tracer_of(x);
  return tr && tr->trace.get() == &t ? static_cast<T*>(tr) : nullptr;
}
// The highest-level active trace among the arrays, or null if none is traced.
Trace* top_trace(const std::vector<Array>& xs);
// x as a tracer of t: itself if it already is one, else lifted.
Array full_raise(Trace& t, const Array& x);
// A traced Array: aval and device as given, no data.
Array make_traced(std::shared_ptr<Tracer> tracer, const Aval& aval, const std::string& device);

// Calls a function with a custom rule through the trace stack.
std::vector<Array> bind_custom_jvp(const CustomJvp& c, const std::vector<Array>& args);
std::vector<Array> bind_custom_vjp(const CustomVjp& c, const std::vector<Array>& args);

}  // namespace kiln::frontend
