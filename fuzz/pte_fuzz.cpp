// Fuzz target `pte`: formats::parse_pte (and the FlatBuffer reader) on arbitrary bytes. A
// success must leave every index in range and every constant's bytes inside the file.
#include "formats/pte.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

KILN_FUZZ_TARGET(pte) {
  using namespace kiln::formats;
  using kiln::fuzz::check;
  const std::span<const uint8_t> file(data, size);
  Pte pte;
  try {
    pte = parse_pte(file);
  } catch (const kiln::Error&) {
    return 0;
  }
  for (const PteExecutionPlan& plan : pte.execution_plan) {
    const size_t n = plan.values.size();
    for (int32_t i : plan.inputs) check(i >= 0 && size_t(i) < n, "pte: input index");
    for (int32_t i : plan.outputs) check(i >= 0 && size_t(i) < n, "pte: output index");
    for (const PteValue& v : plan.values)
      if (const auto* t = std::get_if<PteTensor>(&v.value)) {
        check(t->dim_order.size() == t->sizes.size(), "pte: dim_order rank");
        if (t->is_constant())
          check(pte_tensor_data(file, *t).size() == t->data_size, "pte: constant bytes");
      }
    for (const PteChain& chain : plan.chains)
      for (const PteInstruction& in : chain.instructions)
        if (const auto* k = std::get_if<PteKernelCall>(&in)) {
          check(k->op_index >= 0 && size_t(k->op_index) < plan.operators.size(), "pte: op index");
          for (int32_t a : k->args) check(a >= 0 && size_t(a) < n, "pte: argument index");
        }
  }
  return 0;
}
