// The SIMD loop of a reduction unrolled by the period of its index arithmetic (packed
// weights: ridx // 8, ridx % 8, ridx // 32). The copies are folded in ridx order, as the
// plain loop does, so the results are the same bits.
#include "backend/wasm/wasm_simd_emitter.h"
#include "ir/reduction_unroll.h"

namespace kiln::wasm {

namespace {

// The q4 word period (8) and scale period (32): SmolLM2's q4_1 decode matvec [1536 x 576]
// went from 1.12 to 0.27 ms (Node 20, 1 thread, Zen 4). Interleaving two 4-lane blocks per
// iteration as well, to overlap their chains of additions, measured no faster (0.31-0.32 ms):
// the step's budget in wasm_simd_groups.cpp keeps this loop to one block.
constexpr int64_t kMaxPeriod = 32;
constexpr int64_t kMaxNodes = 2048;  // plan size beyond which the loop is not unrolled

}  // namespace

void SimdEmitter::plan_unrolled_reduction() {
  const Kernel& k = ke_.kernel();
  const int64_t size = k.reduction->size;
  const int64_t period = reduction_period(k.exp, size, kMaxPeriod);
  if (period == 1) return;
  Unrolled u;
  u.period = period;
  u.terms = unroll_reduction(k.exp, size, period);
  u.plan = DagPlan::of(u.terms);
  if (int64_t(u.plan.nodes.size()) > kMaxNodes) return;
  analyze(u.plan);
  // Simplification can make nodes outside the ridx loop that the body's plan lacks.
  for (const AluNode* n : u.plan.nodes) {
    const int level = u.plan.level.at(n);
    if ((level == 0 || level == 1) && !ke_.body().level.count(n)) u.outer.push_back(n);
  }
  unrolled_ = std::move(u);
}

}  // namespace kiln::wasm
