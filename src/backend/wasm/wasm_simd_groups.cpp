// The SIMD loop's blocks, and register blocking of reductions: `groups` blocks of 4 outputs
// advanced in the same reduction step, each with its own accumulator. One f32x4 accumulator
// makes a long reduction a chain of dependent adds (latency bound: a [128 x 3264] matvec spent
// about 3 ns a step); independent chains overlap. Each output's terms are still folded in
// ridx order into its own accumulator, so the results are the same bits as the plain loop.
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/wasm/wasm_simd_emitter.h"

namespace kiln::wasm {

namespace {

// Blocks per iteration at most (16 outputs): 4 accumulators and their operands stay well
// inside x64's 16 vector registers.
constexpr int kMaxGroups = 4;
// The reduction step's work over all groups (nodes; a lane-by-lane node or gathered load
// counts 4) beyond which no more groups are added: a heavy step (the unrolled q4 matvec's
// dequantization) is bound by its own instructions, not by the chain of additions, and
// interleaving two of its blocks measured no faster (wasm_simd_unrolled.cpp).
constexpr int64_t kStepBudget = 48;
// Reduction loops shorter than this leave the out-of-order core enough room to overlap
// consecutive blocks' chains by itself.
constexpr int64_t kMinTrips = 16;

// Whether n's value depends on gidx (or on the accumulator): such nodes are computed per group.
bool per_output(const AluNode* n, std::unordered_map<const AluNode*, bool>& memo) {
  auto it = memo.find(n);
  if (it != memo.end()) return it->second;
  bool dep = n->op == AluOp::Var && n->arg != int(VarId::Ridx);
  for (const AluExp& s : n->src) dep = per_output(s.get(), memo) || dep;
  return memo[n] = dep;
}

}  // namespace

void SimdEmitter::plan_groups() {
  const Kernel& k = ke_.kernel();
  const DagPlan& plan = unrolled_ ? unrolled_->plan : ke_.body();
  const int64_t trips = k.reduction->size / reduction_unroll();
  std::unordered_map<const AluNode*, bool> memo;
  int64_t own = 0, shared = 0;  // per-group and once-per-step work of the reduction step
  for (const AluNode* n : plan.nodes) {
    if (plan.level.at(n) != 2) continue;
    const LaneInfo& li = info_.at(n);
    const bool gathered = n->op == AluOp::Load && li.kind == LaneKind::Vector && !info_.at(n->src[0].get()).contiguous();
    const int64_t cost = li.kind == LaneKind::Lanes || gathered ? 4 : 1;
    if (per_output(n, memo)) own += cost;
    else shared += cost, shared_.insert(n);
  }
  if (unrolled_) {
    own += int64_t(unrolled_->terms.size());  // the folds
    for (const AluNode* n : unrolled_->outer)
      if (!per_output(n, memo)) shared_.insert(n);
  } else {
    own += 1;
  }
  if (trips < kMinTrips) return;
  while (groups_ * 2 <= kMaxGroups && k.size >= 4 * groups_ * 2 && shared + own * groups_ * 2 <= kStepBudget)
    groups_ *= 2;
}

void SimdEmitter::enter(std::vector<Group>& gs, size_t j) {
  std::swap(reps_, gs[j].reps);
  std::swap(acc_, gs[j].acc);
  gidx_ = gs[j].gidx;
}

void SimdEmitter::leave(std::vector<Group>& gs, size_t j) {
  std::swap(reps_, gs[j].reps);
  std::swap(acc_, gs[j].acc);
  gidx_ = ke_.gidx_local();
}

void SimdEmitter::compute_or_share(const AluNode* n, std::vector<Group>& gs, size_t j) {
  if (j > 0 && shared_.count(n)) reps_[n] = gs[0].reps.at(n);
  else compute(*n);
}

void SimdEmitter::compute_group_level(const DagPlan& plan, int level, std::vector<Group>& gs, size_t j) {
  level_ = level;
  for (const AluNode* n : plan.nodes)
    if (plan.level.at(n) == level) compute_or_share(n, gs, j);
}

// Blocks of 4 * groups outputs from gidx `from` while they fit below `to`; with several
// groups, the blocks of 4 left over then go one per iteration. Leaves gidx_local() at the
// first gidx not done.
void SimdEmitter::emit_blocks(uint32_t from, uint32_t to, int groups) {
  const uint32_t g = ke_.gidx_local();
  const int32_t width = 4 * groups;
  c_.local_get(from);
  c_.local_set(g);
  c_.block();
  c_.loop();
  c_.local_get(g);
  c_.i32_const(width);
  c_.op(op::I32Add);
  c_.local_get(to);
  c_.op(op::I32GtS);
  c_.br_if(1);
  reps_.clear();
  std::vector<Group> gs(static_cast<size_t>(groups));
  for (size_t j = 0; j < gs.size(); j++) {
    gs[j].acc = acc_;  // the accumulator's locals are made once per group by init_acc
    if (j == 0) {
      gs[j].gidx = g;
      continue;
    }
    gs[j].gidx = c_.add_local(ValType::I32);
    c_.local_get(g);
    c_.i32_const(int32_t(4 * j));
    c_.op(op::I32Add);
    c_.local_set(gs[j].gidx);
  }
  for (size_t j = 0; j < gs.size(); j++) {
    enter(gs, j);
    compute_level(ke_.body(), 1);
    if (red_) {
      if (j > 0) acc_ = Rep{acc_info_.kind};  // its own accumulator locals (made by init_acc)
      init_acc();
    }
    leave(gs, j);
  }
  if (red_) emit_reduction(gs);
  const AluNode* result = red_ ? ke_.kernel().reduction->epilogue.get() : ke_.kernel().exp.get();
  for (size_t j = 0; j < gs.size(); j++) {
    enter(gs, j);
    if (red_) compute_level(*ke_.epilogue(), 1);
    store_result(result);
    leave(gs, j);
  }
  std::swap(reps_, gs[0].reps);
  acc_ = gs[0].acc;
  c_.local_get(g);
  c_.i32_const(width);
  c_.op(op::I32Add);
  c_.local_set(g);
  c_.br(0);
  c_.end();
  c_.end();
  if (groups > 1) emit_blocks(g, to, 1);
}

// The reduction loop over all groups: per step, each group's terms (in ridx order, the
// unrolled copies in order) folded into its own accumulator.
void SimdEmitter::emit_reduction(std::vector<Group>& gs) {
  const DagPlan& plan = unrolled_ ? unrolled_->plan : ke_.body();
  if (unrolled_) {
    for (size_t j = 0; j < gs.size(); j++) {
      enter(gs, j);
      level_ = 1;
      for (const AluNode* n : unrolled_->outer) compute_or_share(n, gs, j);
      leave(gs, j);
    }
  }
  const int64_t trips = ke_.kernel().reduction->size / reduction_unroll();
  emit_reduction_loop(trips, [&] {
    for (size_t j = 0; j < gs.size(); j++) {
      enter(gs, j);
      compute_group_level(plan, 2, gs, j);
      if (unrolled_)
        for (const AluExp& term : unrolled_->terms) fold_acc(term.get());
      else
        fold_acc(ke_.kernel().exp.get());
      leave(gs, j);
    }
  });
}

}  // namespace kiln::wasm
