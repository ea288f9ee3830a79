// The SIMD main loop's loads (wasm_simd_emitter.h): how each load is read by lane kind, the
// address arithmetic shared by an unrolled loop's copies, and which loads need no per-block
// bounds check.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/wasm/wasm_simd_emitter.h"

namespace kiln::wasm {

using V = ValType;

// v128.load32_lane (memarg, then a lane byte): not among wasm_module_builder.h's opcodes.
constexpr uint32_t kV128Load32Lane = 0x56;

void SimdEmitter::emit_load(const AluNode& n) {
  const Rep& ix = rep(n.src[0].get());
  const LaneInfo& li = info_.at(&n);
  const uint32_t ptr = ke_.ptr_local(n.arg), count = ke_.count_local(n.arg);
  Rep r{li.kind};
  const bool known_in_bounds = std::find(in_bounds_.begin(), in_bounds_.end(), &n) != in_bounds_.end();
  if (li.kind == LaneKind::Uniform) {
    if (known_in_bounds && level_ == (red_ ? 2 : 1)) {
      // Loaded where it is used, not into a local here: an unrolled matvec's 32 activation
      // values per iteration were all loaded at the top of the loop body and V8 spilled most
      // of them to the stack, then reloaded and broadcast each (~6 instructions per term,
      // the dequantization itself is 7). At the use, a float operand of a vector op is one
      // v128.load32_splat (vbroadcastss from memory). No store comes between: a block's
      // values are used before its result is stored. Only at the innermost loop's level, so
      // that no load moves into a loop it was outside of.
      r.load_at_use = &n;
      r.scalar = {n.dtype, false, [this, &n] { push_load_at_use(n, false); }};
      reps_[&n] = r;
      return;
    }
    if (known_in_bounds) {
      const uint32_t offset = push_address(ptr, *n.src[0].get(), 4);
      c_.mem(n.dtype == DType::Float32 ? op::F32Load : op::I32Load, 2, offset);
    } else {
      e_.emit_load(n.dtype, ptr, count, lane_val(ix, DType::Int32, 0));
    }
    r.scalar = {n.dtype, false, {}};
    uint32_t l = c_.add_local(storage(n.dtype));
    c_.local_set(l);
    CodeBuilder* c = &c_;
    r.scalar.push = [c, l] { c->local_get(l); };
    reps_[&n] = r;
    return;
  }
  if (li.kind == LaneKind::Lanes) {
    for (int l = 0; l < 4; l++) {
      e_.emit_load(n.dtype, ptr, count, lane_val(ix, DType::Int32, l));
      r.lanes[size_t(l)] = c_.add_local(storage(n.dtype));
      c_.local_set(r.lanes[size_t(l)]);
    }
    reps_[&n] = r;
    return;
  }
  const bool fl = n.dtype == DType::Float32;
  auto gather = [&] {
    for (int l = 0; l < 4; l++) {
      e_.emit_load(n.dtype, ptr, count, lane_val(ix, DType::Int32, l));
      if (l == 0) c_.simd(fl ? simd::F32x4Splat : simd::I32x4Splat);
      else c_.simd_lane(fl ? simd::F32x4ReplaceLane : simd::I32x4ReplaceLane, uint8_t(l));
    }
  };
  if (known_in_bounds && ix.kind == LaneKind::Affine && ix.off != LaneOffsets{0, 1, 2, 3}) {
    // Lanes a constant distance apart (a transposed weight's column: 3264 floats), all in
    // bounds: lane 0 at its address, the others at constant offsets from it in the memarg,
    // instead of four bounds-checked scalar loads and lane inserts.
    r.v = c_.add_local(V::V128);
    const uint32_t a = e_.temp(V::I32, 13);
    const uint32_t offset = push_address(ptr, *n.src[0].get(), 4);
    c_.local_tee(a);
    c_.simd_mem(simd::V128Load32Zero, 2, offset);
    for (int l = 1; l < 4; l++) {
      c_.local_set(r.v);
      c_.local_get(a);
      c_.local_get(r.v);
      c_.simd_mem(kV128Load32Lane, 2, offset + uint32_t(ix.off[size_t(l)] * 4));
      c_.op(uint8_t(l));  // the lane index follows the memarg
    }
    c_.local_set(r.v);
    reps_[&n] = r;
    return;
  }
  if (known_in_bounds) {
    const uint32_t offset = push_address(ptr, *n.src[0].get(), 4);
    c_.simd_mem(simd::V128Load, 2, offset);
  } else if (ix.kind == LaneKind::Affine && ix.off == LaneOffsets{0, 1, 2, 3}) {
    // A contiguous run: one v128.load when all 4 are in bounds, else the lane-by-lane loads
    // (which read 0 outside [0, count)).
    const uint32_t b = e_.temp(V::I32, 12);
    ix.scalar.push();
    c_.local_tee(b);
    c_.local_get(count);
    c_.op(op::I32LtU);
    c_.local_get(b);
    c_.i32_const(3);
    c_.op(op::I32Add);
    c_.local_get(count);
    c_.op(op::I32LtU);
    c_.op(op::I32And);
    c_.if_result(V::V128);
    c_.local_get(ptr);
    c_.local_get(b);
    c_.i32_const(2);
    c_.op(op::I32Shl);
    c_.op(op::I32Add);
    c_.simd_mem(simd::V128Load, 2);
    c_.else_();
    gather();
    c_.end();
  } else {
    gather();
  }
  r.v = c_.add_local(V::V128);
  c_.local_set(r.v);
  reps_[&n] = r;
}

namespace {

// Splits an index that is a tree of Adds into its non-constant terms and the sum of its
// constants, when every term is >= 0 over the whole kernel (so that their sum is too).
// Returns false (terms unusable) otherwise.
bool split_constant_terms(const AluNode* n, std::vector<const AluNode*>& terms, int64_t& c) {
  if (n->op == AluOp::Add && n->dtype == DType::Int32) {
    for (const AluExp& s : n->src) {
      if (s.is_const()) c += int64_t(s.value());
      else if (!split_constant_terms(s.get(), terms, c)) return false;
    }
    return true;
  }
  if (n->vmin < 0) return false;
  terms.push_back(n);
  return true;
}

}  // namespace

// Pushes the address of element `index` (lane 0's, for an affine index) of the buffer at
// `ptr` and returns a constant byte offset for the load's memarg: the constants of an index
// `a + (b + c)` whose other terms are >= 0 over the whole kernel go there, so the copies of
// an unrolled loop share the address arithmetic of `a + b` (V8 computes it once for all of
// them; an unrolled matvec's activation loads were two LEAs each before).
uint32_t SimdEmitter::push_address(uint32_t ptr, const AluNode& index, int item_bytes) {
  std::vector<const AluNode*> terms;
  int64_t c = 0;
  bool split = split_constant_terms(&index, terms, c) && !terms.empty() && c >= 0 && c <= (int64_t(1) << 24);
  for (const AluNode* t : terms) {
    const LaneKind k = info_.at(t).kind;
    split = split && (k == LaneKind::Uniform || k == LaneKind::Affine);
  }
  if (!split) {
    terms = {&index};
    c = 0;
  }
  c_.local_get(ptr);
  for (size_t i = 0; i < terms.size(); i++) {
    lane_val(rep(terms[i]), DType::Int32, 0).push();
    if (i > 0) c_.op(op::I32Add);
  }
  c_.i32_const(item_bytes == 4 ? 2 : 3);
  c_.op(op::I32Shl);
  c_.op(op::I32Add);
  return uint32_t(c * item_bytes);
}

void SimdEmitter::push_load_at_use(const AluNode& n, bool splat) {
  const uint32_t offset = push_address(ke_.ptr_local(n.arg), *n.src[0].get(), 4);
  if (splat) c_.simd_mem(simd::V128Load32Splat, 2, offset);
  else c_.mem(n.dtype == DType::Float32 ? op::F32Load : op::I32Load, 2, offset);
}

std::vector<const AluNode*> SimdEmitter::bounded_loads() const {
  std::vector<const AluNode*> out;
  auto scan = [&](const DagPlan& plan) {
    for (const AluNode* n : plan.nodes) {
      if (n->op != AluOp::Load || itemsize(n->dtype) != 4) continue;
      const AluNode* ix = n->src[0].get();
      const LaneInfo& li = info_.at(ix);
      const LaneKind kind = info_.at(n).kind;
      const bool contiguous = kind == LaneKind::Vector && li.contiguous();
      // Lanes at constant non-negative offsets from lane 0 (read with load32_lane), within
      // a memarg offset's reach.
      const auto [lo, hi] = std::minmax_element(li.off.begin(), li.off.end());
      const bool strided = kind == LaneKind::Vector && li.kind == LaneKind::Affine && !contiguous && *lo >= 0 &&
                           *hi < (int64_t(1) << 24);
      // A uniform load in the loops (the kernel emitter computes the invariant ones).
      const bool uniform = kind == LaneKind::Uniform && plan.level.at(n) >= 1 && !info_.at(n).wide;
      if ((contiguous || strided || uniform) && ix->vmin >= 0 && ix->vmax < INT32_MAX) out.push_back(n);
    }
  };
  scan(ke_.body());
  if (unrolled_) scan(unrolled_->plan);
  if (ke_.epilogue()) scan(*ke_.epilogue());
  return out;
}

}  // namespace kiln::wasm
