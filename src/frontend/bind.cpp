// frontend::bind(): the one entry point for applying a primitive. With traced operands it hands the
// primitive to the highest-level trace (Autodidax's find_top_trace); otherwise it lowers.
#include "frontend/primitive.h"
#include "frontend/trace.h"

namespace kiln::frontend {

Array bind(Prim p, const std::vector<Array>& args, const Params& params) {
  if (Trace* t = top_trace(args)) {
    std::vector<Array> raised;
    raised.reserve(args.size());
    for (auto& a : args) raised.push_back(full_raise(*t, a));
    return t->process(p, raised, params);
  }
  std::vector<Aval> avals;
  std::vector<ImplRef> impls;
  for (auto& a : args) {
    impls.push_back(a.impl());
    avals.push_back(impls.back()->aval);
  }
  if (impls.size() > 1)
    for (auto& im : impls)
      if (im->device != impls[0]->device)
        fail(prim_name(p), "got arrays on devices " + impls[0]->device + " and " + im->device +
                               ", expected one device");
  Aval out = shape_rule(p, avals, params);
  return Array(lower(p, impls, params, out));
}

}  // namespace kiln::frontend
