// Load-time folding of ExecuTorch instructions whose only tensor input is a constant: a
// Linear layer's permute_copy of its weight becomes a contiguous transposed constant.
#pragma once
#include <map>
#include <vector>

#include "formats/pte.h"
#include "frontend/array.h"
#include "models/executorch/operator_rules.h"

namespace kiln::executorch {

// The results of the plan's foldable instructions, keyed by instruction: each
// `aten::permute_copy.out` of a constant, computed once here into a contiguous Array.
// `constants` (by value index) loses the inputs that nothing else reads.
std::map<const formats::PteInstruction*, Array> fold_constant_permutes(
    const formats::PteExecutionPlan& plan, std::vector<Array>& constants, const std::vector<OpRule>& rules);

}  // namespace kiln::executorch
