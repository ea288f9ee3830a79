// Folding constant permutes at load (constant_folding.h). Why: ExecuTorch exports a Linear
// layer as addmm(bias, x, permute_copy(W, [1, 0])) with W [N, K] a constant; traced as it is,
// the product reads W^T through a transposed view, so on wasm its 4 SIMD lanes load K floats
// apart on every call (ONNX's Gemm had the same, `pretranspose_gemm_weights`). Stored
// transposed once, the product reads contiguous lanes; the values are the same.
#include "models/executorch/constant_folding.h"

#include "models/executorch/frame.h"

namespace kiln::executorch {

using namespace formats;

namespace {

constexpr const char* kPermute = "aten::permute_copy.out";

// How often each value is read by an instruction or as a method output.
std::vector<int> count_reads(const PteExecutionPlan& plan) {
  std::vector<int> reads(plan.values.size(), 0);
  auto read = [&](int32_t v) {
    if (v >= 0 && size_t(v) < reads.size()) ++reads[size_t(v)];
  };
  for (const PteChain& chain : plan.chains)
    for (const PteInstruction& in : chain.instructions) {
      if (const auto* k = std::get_if<PteKernelCall>(&in)) for (int32_t a : k->args) read(a);
      else if (const auto* d = std::get_if<PteDelegateCall>(&in)) for (int32_t a : d->args) read(a);
      else if (const auto* mv = std::get_if<PteMoveCall>(&in)) read(mv->move_from);
      else if (const auto* j = std::get_if<PteJumpFalseCall>(&in)) read(j->cond_value_index);
    }
  for (int32_t v : plan.outputs) read(v);
  return reads;
}

}  // namespace

std::map<const PteInstruction*, Array> fold_constant_permutes(const PteExecutionPlan& plan,
                                                              std::vector<Array>& constants,
                                                              const std::vector<OpRule>& rules) {
  std::map<const PteInstruction*, Array> folded;
  std::vector<int> reads = count_reads(plan);
  Frame frame(plan, constants);  // reads the dims list as the rule does
  for (const PteChain& chain : plan.chains)
    for (const PteInstruction& in : chain.instructions) {
      const auto* k = std::get_if<PteKernelCall>(&in);
      if (!k || k->args.empty() || plan.operators.at(size_t(k->op_index)).full_name() != kPermute) continue;
      const int32_t src = k->args[0];
      if (src < 0 || size_t(src) >= constants.size() || !constants[size_t(src)].valid()) continue;
      OpCall call(frame, k->args, kPermute);
      rules.at(size_t(k->op_index))(call);  // the rule's checks and its transposed view
      // Realized on the constant's device into a buffer of its own, in its own order (a copy
      // kernel: no host read, which webgpu does not have synchronously).
      const Array view = frame.read(call.result_slots().at(0));
      view.eval();
      folded[&in] = view;
      --reads[size_t(src)];
    }
  for (size_t v = 0; v < constants.size(); ++v)
    if (constants[v].valid() && reads[v] == 0 && v < plan.values.size()) {
      // Read only by folded permutes: the transposed copy replaces it.
      bool input_of_folded = false;
      for (const auto& [in, _] : folded) input_of_folded |= std::get<PteKernelCall>(*in).args[0] == int32_t(v);
      if (input_of_folded) constants[v] = Array();
    }
  return folded;
}

}  // namespace kiln::executorch
