// Load-time folding of ExecuTorch instructions whose only tensor input is a constant: a
// Linear layer's permute_copy of its weight becomes a contiguous transposed constant; and a
// convolution's batch norm folded into the convolution's constant weights and bias.
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

// Each `aten::_native_batch_norm_legit_no_training.out` whose input is the output of an
// `aten::convolution.out` (not transposed) that nothing else reads, with constant statistics
// and a constant weight (and bias) that only that convolution reads: the weight and bias in
// `constants` are replaced by the folded ones (models::fold_affine), and the batch norm
// instruction maps to what is left of it, the folded bias to add per channel when the
// convolution has none (an empty Array: the batch norm passes its input through).
std::map<const formats::PteInstruction*, Array> fold_conv_batch_norms(
    const formats::PteExecutionPlan& plan, std::vector<Array>& constants);

// Runs a batch norm instruction that fold_conv_batch_norms folded away: its input plus the
// per-channel shift (if any).
void run_folded_batch_norm(OpCall& c, const Array& shift);

}  // namespace kiln::executorch
