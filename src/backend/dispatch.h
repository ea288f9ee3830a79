// The one way the frontend runs a prepared kernel: be.dispatch, plus the debug log's
// level-5 line and, while the profiler traces, a timed event (ir/debug.h).
#pragma once
#include "backend/backend.h"

namespace kiln {

void dispatch_kernel(Backend& be, const Executable& exe, const Kernel& k, const std::vector<int64_t>& inputs,
                     int64_t output);

}  // namespace kiln
