// Folding constant permutes at load (constant_folding.h). Why: ExecuTorch exports a Linear
// layer as addmm(bias, x, permute_copy(W, [1, 0])) with W [N, K] a constant; traced as it is,
// the product reads W^T through a transposed view, so on wasm its 4 SIMD lanes load K floats
// apart on every call (ONNX's Gemm had the same, `pretranspose_gemm_weights`). Stored
// transposed once, the product reads contiguous lanes; the values are the same.
#include "models/executorch/constant_folding.h"

#include <algorithm>
#include <set>

#include "library/numpy.h"
#include "models/conv_folding.h"
#include "models/executorch/frame.h"

namespace kiln::executorch {

using namespace formats;

namespace {

constexpr const char* kPermute = "aten::permute_copy.out";
constexpr const char* kConv = "aten::convolution.out";
constexpr const char* kBatchNorm = "aten::_native_batch_norm_legit_no_training.out";

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

namespace {

// The kernel calls in plan order, and for each value the calls whose arguments name it.
struct Uses {
  std::vector<const PteKernelCall*> calls;
  std::vector<const PteInstruction*> instructions;
  std::vector<std::set<size_t>> readers;  // by value: indices into calls
  std::set<int32_t> written;              // values a call returns, a move writes, inputs
  std::set<int32_t> other_reads;          // values read by delegates, jumps, moves, outputs
};

Uses uses_of(const PteExecutionPlan& plan) {
  Uses u;
  u.readers.resize(plan.values.size());
  for (const PteChain& chain : plan.chains)
    for (const PteInstruction& in : chain.instructions) {
      if (const auto* k = std::get_if<PteKernelCall>(&in)) {
        for (int32_t a : k->args)
          if (a >= 0 && size_t(a) < u.readers.size()) u.readers[size_t(a)].insert(u.calls.size());
        if (!k->args.empty()) {  // the result: one tensor, or a TensorList of them (OpCall)
          const int32_t r = k->args.back();
          const auto* list = r >= 0 && size_t(r) < plan.values.size() ? std::get_if<PteTensorList>(&plan.values[size_t(r)].value) : nullptr;
          if (list) u.written.insert(list->items.begin(), list->items.end());
          else u.written.insert(r);
        }
        u.calls.push_back(k);
        u.instructions.push_back(&in);
      } else if (const auto* d = std::get_if<PteDelegateCall>(&in)) {
        u.other_reads.insert(d->args.begin(), d->args.end());
      } else if (const auto* mv = std::get_if<PteMoveCall>(&in)) {
        u.other_reads.insert(mv->move_from);
        u.written.insert(mv->move_to);
      } else if (const auto* j = std::get_if<PteJumpFalseCall>(&in)) {
        u.other_reads.insert(j->cond_value_index);
      }
    }
  u.other_reads.insert(plan.outputs.begin(), plan.outputs.end());
  u.written.insert(plan.inputs.begin(), plan.inputs.end());  // the caller's
  return u;
}

// Whether a planned view of v's size that nothing writes (no instruction, not the caller)
// and something reads shares value v's memory: Frame::read would give it v's contents, and
// its reader would see the folded output.
bool has_planned_alias(const PteExecutionPlan& plan, const Uses& u, int32_t v) {
  const auto* t = std::get_if<PteTensor>(&plan.values.at(size_t(v)).value);
  if (!t || !t->memory_planned) return false;
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const auto* o = std::get_if<PteTensor>(&plan.values[i].value);
    if (int32_t(i) != v && o && o->memory_planned && o->memory_id == t->memory_id &&
        o->memory_offset == t->memory_offset && o->numel() == t->numel() && !u.written.count(int32_t(i)) &&
        (!u.readers[i].empty() || u.other_reads.count(int32_t(i))))
      return true;
  }
  return false;
}

// Value v is a constant that only call `k` reads (and nothing else).
bool constant_only_for(const std::vector<Array>& constants, const Uses& u, int32_t v, size_t k) {
  return v >= 0 && size_t(v) < constants.size() && constants[size_t(v)].valid() &&
         u.readers[size_t(v)] == std::set<size_t>{k} && !u.other_reads.count(v);
}

}  // namespace

std::map<const PteInstruction*, Array> fold_conv_batch_norms(const PteExecutionPlan& plan,
                                                             std::vector<Array>& constants) {
  std::map<const PteInstruction*, Array> folded;
  const Uses u = uses_of(plan);
  Frame frame(plan, constants);
  auto name = [&](size_t k) { return plan.operators.at(size_t(u.calls[k]->op_index)).full_name(); };
  for (size_t k = 0; k < u.calls.size(); ++k) {
    const std::vector<int32_t>& conv = u.calls[k]->args;
    if (name(k) != kConv || conv.size() < 10) continue;
    const int32_t out = conv.back();
    if (out < 0 || size_t(out) >= u.readers.size() || u.other_reads.count(out)) continue;
    // Its one other reader: a batch norm taking it as input 0.
    std::set<size_t> readers = u.readers[size_t(out)];
    readers.erase(k);
    if (readers.size() != 1) continue;
    const size_t b = *readers.begin();
    const std::vector<int32_t>& bn = u.calls[b]->args;
    if (name(b) != kBatchNorm || bn.size() < 8 || bn[0] != out ||
        std::count(bn.begin(), bn.end(), out) != 1 || has_planned_alias(plan, u, out))
      continue;
    OpCall conv_call(frame, conv, kConv), bn_call(frame, bn, kBatchNorm);
    const bool bias = !conv_call.is_none(2);
    if (conv_call.boolean(6) || !constant_only_for(constants, u, conv[1], k) ||
        (bias && !constant_only_for(constants, u, conv[2], k)))
      continue;
    std::vector<std::optional<Array>> p;
    for (int32_t a : {bn[1], bn[2], bn[3], bn[4]}) {
      const bool given = a >= 0 && size_t(a) < constants.size() && constants[size_t(a)].valid();
      p.push_back(given ? std::optional<Array>(constants[size_t(a)]) : std::nullopt);
    }
    if (!p[2] || !p[3] || (!bn_call.is_none(1) && !p[0]) || (!bn_call.is_none(2) && !p[1])) continue;
    const Array& w = constants[size_t(conv[1])];
    if (w.dtype() != DType::Float32 || w.ndim() < 3 || p[2]->ndim() != 1 || p[2]->shape(0) != w.shape(0)) continue;
    const auto affine = models::batch_norm_affine(*p[2], *p[3], p[0], p[1], bn_call.real(6));
    if (!affine) continue;
    const models::FoldedConv f =
        models::fold_affine(w, bias ? std::optional<Array>(constants[size_t(conv[2])]) : std::nullopt, *affine);
    constants[size_t(conv[1])] = f.weight;
    if (bias) constants[size_t(conv[2])] = f.bias;
    folded[u.instructions[b]] = bias ? Array() : f.bias;
  }
  return folded;
}

void run_folded_batch_norm(OpCall& c, const Array& shift) {
  const Array x = c.tensor(0);
  if (!shift.valid()) return c.result(x);
  Shape along_c(size_t(std::max(x.ndim() - 1, 1)), 1);
  along_c[0] = shift.shape(0);
  c.result(numpy::add(x, numpy::reshape(shift, along_c)));
}

}  // namespace kiln::executorch
