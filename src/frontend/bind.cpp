// frontend::bind(): the one entry point for applying a primitive. With traced operands it hands the
// primitive to the highest-level trace (Autodidax's find_top_trace); otherwise it lowers.
#include "frontend/array_impl.h"
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
  if (impls.size() > 1) {
    // An array without buffers (a constant expression such as the scalar a library function
    // adds) has no data on any device, so it follows the arrays that do; arrays with buffers
    // on different devices are an error (devicePut one of them first).
    const ImplRef* home = nullptr;
    for (auto& im : impls)
      if (!im->inputs.empty() && !home) home = &im;
    const std::string& dev = home ? (*home)->device : impls[0]->device;
    for (auto& im : impls) {
      if (im->device == dev) continue;
      if (!im->inputs.empty())
        fail(prim_name(p), "got arrays on devices " + dev + " and " + im->device + ", expected one device");
      auto moved = std::make_shared<ArrayImpl>(*im);
      moved->device = dev;
      im = moved;
    }
  }
  Aval out = shape_rule(p, avals, params);
  check_array_size(prim_name(p), out.shape, out.dtype, kMaxLazyArrayBytes);
  return Array(lower(p, impls, params, out));
}

}  // namespace kiln::frontend
