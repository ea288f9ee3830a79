// Forward mode: the JVP trace (values carry a primal and a tangent) and its rule table
// (jvp_rules.cpp). An invalid (empty) tangent Array is a symbolic zero.
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "frontend/trace.h"

namespace kiln::frontend {

// (primal out, tangent out) from primals and tangents (invalid = zero). Rules compute the
// primal with bind and the tangent linearly in the tangents, so linearize can transpose it.
using JvpRule = std::function<std::pair<Array, Array>(
    const std::vector<Array>& primals, const std::vector<Array>& tangents, const Params& params)>;

bool has_jvp_rule(Prim p);
const JvpRule& jvp_rule(Prim p);  // throws kiln::Error when missing

struct JvpTracer : Tracer {
  JvpTracer(std::shared_ptr<Trace> t, Array p, Array tan)
      : Tracer(std::move(t)), primal(std::move(p)), tangent(std::move(tan)) {}
  Array primal, tangent;  // tangent invalid: zero
};

class JvpTrace : public Trace {
 public:
  Array lift(const Array& x) override;
  Array process(Prim p, const std::vector<Array>& args, const Params& params) override;
  std::vector<Array> process_custom_jvp(const CustomJvp& c,
                                        const std::vector<Array>& args) override;
  std::vector<Array> process_custom_vjp(const CustomVjp& c,
                                        const std::vector<Array>& args) override;
  std::vector<Array> process_call(const std::shared_ptr<const CallJaxpr>& c,
                                  const std::vector<Array>& args) override;
  std::vector<Array> process_control(const std::shared_ptr<const ControlOp>& op,
                                     const std::vector<Array>& args) override;
  Array make(Array primal, Array tangent);
};

// Pushes f forward: returns (outputs, output tangents); tangents may be invalid (zero) on
// input and on output. Tangents of int/bool values are always zero.
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const ArraysFn& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

// Zeros for a tangent of x (x's aval); used wherever a symbolic zero must become an array.
Array instantiate(const Array& tangent, const Array& like);

}  // namespace kiln::frontend
