// Bucketed traces of ExecuTorch methods with dynamic shapes (docs/ARCHITECTURE.md, "Dynamic
// shapes: size-parameterized kernels"): a method is traced once per bucket of its dynamic
// input dims at the bucket's extent, the valid extents enter as 0-d int32 arguments, and the
// operator rules here keep track of which axes are dynamic, masking what would read padding.
#pragma once
#include <stdexcept>
#include <string>

#include "models/executorch/frame.h"
#include "models/executorch/operator_rules.h"

namespace kiln::executorch {

// Thrown while a method is traced at a bucket's extents when an operator has no rule for a
// dynamic axis (or would read a dynamic size as data where it cannot): the method is then
// traced at the exact shape of the call instead (Program::run).
struct NeedsExactShape : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs one kernel call of a bucketed trace: the operator's symbolic rule if it has one (it
// may mask inputs, then runs `plain`, and marks the results' dynamic axes); `plain` alone
// when no argument has a dynamic axis or size (the results are then static); else throws
// NeedsExactShape.
void run_symbolic(OpCall& c, OpRule plain);

}  // namespace kiln::executorch
