// The call primitive (JAX's pjit / closed_call): a closed jaxpr applied to arguments. It is
// how grad/jvp/vmap/linearize of a jitted function stay compiled: each transformation maps
// the call's jaxpr to a new one (cached on the call), and eager evaluation runs it compiled.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "frontend/jaxpr.h"

namespace kiln::frontend {

struct Program;
struct CallJaxpr;
using CallRef = std::shared_ptr<const CallJaxpr>;

// A call's known/unknown split (partial evaluation) for one pattern of known inputs:
// `known` maps the known inputs to (the known outputs, then `num_res` residuals), and
// `unknown` maps (residuals, then the unknown inputs) to the unknown outputs.
struct CallSplit {
  CallRef known, unknown;
  std::vector<bool> out_known;  // per output of the original call
  size_t num_res = 0;
};

// A jaxpr whose constants are concrete arrays (never tracers), with the caches of what
// was derived from it: compiled programs per argument layout, and the jvp, batched,
// split and transposed jaxprs per pattern of their arguments. Derived calls are cached on
// their parent, so a training loop's grad(jit(f)) reuses the same objects every step.
struct CallJaxpr {
  std::shared_ptr<const Jaxpr> jaxpr;
  std::string device;  // where it runs when no argument names a device
  std::string name;    // for printing and errors: "jit", "jvp(jit)", "transpose(jvp(jit))"

  // Caches; keys are the argument patterns written out (see call_rules.cpp).
  mutable std::mutex mu;
  mutable std::shared_ptr<const Jaxpr> simplified;
  mutable std::map<std::string, std::shared_ptr<const Program>> programs;
  mutable std::map<std::string, CallRef> derived;
  mutable std::map<std::string, std::shared_ptr<const CallSplit>> splits;
};

CallRef make_call(std::shared_ptr<const Jaxpr> jaxpr, std::string device, std::string name);

// Applies the call through the trace stack: the top trace's process_call, or, with no
// traced argument, the compiled program (checked against the jaxpr's input types).
std::vector<Array> bind_call(const CallRef& c, const std::vector<Array>& args);

// The call's rules, one per transformation (each returns a cached derived call):
// jvp: (primals, tangents of the inputs in `has_tangent`) -> (outputs, tangents of the
// float outputs).
CallRef call_jvp(const CallJaxpr& c, const std::vector<bool>& has_tangent);
// batching: inputs in `batched` carry a leading axis of `size`; every output gets one.
CallRef call_vmap(const CallJaxpr& c, const std::vector<bool>& batched, int64_t size);
// partial evaluation: inputs in `known` are values, the others unknown (linear).
std::shared_ptr<const CallSplit> call_partial_eval(const CallJaxpr& c, const std::vector<bool>& known);
// transpose of a call linear in the inputs in `linear`: (the other inputs, the cotangents
// of the outputs in `has_ct`) -> cotangents of the linear inputs.
CallRef call_transpose(const CallJaxpr& c, const std::vector<bool>& linear, const std::vector<bool>& has_ct);

// Compiles and runs the call on concrete arrays (the eager evaluation rule).
std::vector<Array> run_call(const CallJaxpr& c, const std::vector<Array>& args);
// Appends n's decimal digits to a cache key without a temporary string: jit's signature and
// run_call's layout key append a few numbers per argument on every call (a decode step passes
// ~300 weights), and on the threaded Wasm core each temporary's destructor costs a JS trampoline.
void append_decimal(std::string& key, int64_t n);

// Programs compiled for calls so far (tests check that a training loop compiles once).
size_t call_compile_count();

}  // namespace kiln::frontend
