// Reverse mode as linearize + transpose (Autodidax): jvp with tangents that record a
// linear Jaxpr, then that Jaxpr run backwards through the transpose rules.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "frontend/jaxpr.h"

namespace kiln::frontend {

// Transpose rule of a linear primitive: cotangents of the operands given the output's.
// args[i] is the operand's value when it is a constant, and invalid when it is linear
// (its type is avals[i]). Entries for constant operands are ignored (may be invalid).
using TransposeRule =
    std::function<std::vector<Array>(const Array& ct, const std::vector<Array>& args,
                                     const std::vector<Aval>& avals, const Params& params)>;

bool has_transpose_rule(Prim p);  // true for the primitives that are linear in some operand
const TransposeRule& transpose_rule(Prim p);  // throws kiln::Error when missing

struct JaxprTracer : Tracer {
  JaxprTracer(std::shared_ptr<Trace> t, Atom a) : Tracer(std::move(t)), atom(a) {}
  Atom atom;
};

// Records every primitive applied to its tracers as an equation of `jaxpr`. Calls are
// inlined when tracing for jit (jit inside jit fuses as one program); linearize's trace
// (partial_eval_calls) splits them into a known call run now and an unknown one recorded.
class JaxprTrace : public Trace {
 public:
  explicit JaxprTrace(bool partial_eval_calls = false)
      : jaxpr(std::make_shared<Jaxpr>()), partial_eval_calls(partial_eval_calls) {}
  Array lift(const Array& x) override;
  Array process(Prim p, const std::vector<Array>& args, const Params& params) override;
  std::vector<Array> process_call(const std::shared_ptr<const CallJaxpr>& c,
                                  const std::vector<Array>& args) override;
  std::vector<Array> process_control(const std::shared_ptr<const ControlOp>& op,
                                     const std::vector<Array>& args) override;
  // Traced through like the base class, but noted: a call built from this jaxpr would lose
  // the custom rule, so jit inlines such functions under transformations instead.
  std::vector<Array> process_custom_jvp(const CustomJvp& c, const std::vector<Array>& args) override;
  std::vector<Array> process_custom_vjp(const CustomVjp& c, const std::vector<Array>& args) override;
  std::vector<Array> process_custom_lin(const CustomVjp& c, const std::vector<Array>& residuals,
                                        const std::vector<Array>& tangents,
                                        const std::vector<Aval>& out_avals) override;
  Array new_arg(const Aval& aval, const std::string& device);
  Atom atom_of(const Array& x);  // a tracer's atom, or x as a new constant
  std::shared_ptr<Jaxpr> jaxpr;
  const bool partial_eval_calls;
  bool saw_custom_rule = false;
  Array tracer_for(int var, const std::string& device);  // a tracer of a variable of jaxpr
};

struct Linearized {
  std::vector<Array> outs;
  std::shared_ptr<Jaxpr> jaxpr;  // tangents of the inputs -> tangents of the outputs
};
Linearized linearize_flat(const ArraysFn& f, const std::vector<Array>& primals);

// Cotangents of a linear jaxpr's inputs from those of its outputs (invalid = zero).
std::vector<Array> transpose_jaxpr(const Jaxpr& j, const std::vector<Array>& cts);

// (outputs, pullback): pullback maps output cotangents to input cotangents (zeros filled).
std::pair<std::vector<Array>, std::function<std::vector<Array>(const std::vector<Array>&)>>
vjp_flat(const ArraysFn& f, const std::vector<Array>& primals);

}  // namespace kiln::frontend
