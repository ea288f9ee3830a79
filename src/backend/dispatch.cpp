#include "backend/dispatch.h"

#include "ir/debug.h"

namespace kiln {

void dispatch_kernel(Backend& be, const Executable& exe, const Kernel& k, const std::vector<int64_t>& inputs,
                     int64_t output) {
  if (debug_level() >= 5)
    debug_print(be.name() + ": dispatch of " + std::to_string(k.size) + " outputs" +
                (k.reduction ? ", reducing " + std::to_string(k.reduction->size) : ""));
  if (!tracing()) return be.dispatch(exe, inputs, output);
  const double t0 = trace_clock_ms();
  be.dispatch(exe, inputs, output);
  add_trace_event({"kiln " + be.name() + " kernel [" + std::to_string(k.size) +
                       (k.reduction ? " x " + std::to_string(k.reduction->size) : "") + "]",
                   t0, trace_clock_ms() - t0});
}

}  // namespace kiln
