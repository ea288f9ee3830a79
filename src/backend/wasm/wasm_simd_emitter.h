// SimdEmitter: the SIMD128 main loop of a kernel, 4 consecutive gidx per block; each node is
// uniform, affine in the lane, an f32x4/i32x4 vector, or 4 scalar lanes (bit-exact fallback).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/wasm/wasm_kernel_emitter.h"

namespace kiln::wasm {

// How a node's value varies over the 4 lanes gidx = g + l (g a multiple of 4) of a block.
enum class LaneKind : uint8_t {
  Uniform,  // one scalar for all lanes (index arithmetic: value(g), and m divides it)
  Affine,   // int32: value(g) + off[l] (constant offsets, off[0] = 0), value(g) a multiple of m
  Vector,   // one v128 (f32x4 or i32x4; bool lanes are 0/1)
  Lanes,    // 4 scalars computed with the scalar OpEmitter (exactly alu_eval)
};

// Lane offsets of an Affine value: g + l is {0, 1, 2, 3}; g / 2 is {0, 0, 1, 1}; g % 2 is
// {0, 1, 0, 1} (the lanes of an index into pairs: pooling windows, RoPE's halves).
using LaneOffsets = std::array<int64_t, 4>;

struct LaneInfo {
  LaneKind kind = LaneKind::Lanes;
  LaneOffsets off{};  // Affine
  int64_t m = 1;      // Uniform/Affine int32: value(g) is a multiple of m
  bool wide = false;  // holds a weak constant's double value (only Uniform/Lanes)
  // A run of consecutive elements (one v128.load when in bounds).
  bool contiguous() const { return kind == LaneKind::Affine && off == LaneOffsets{0, 1, 2, 3}; }
};

class SimdEmitter {
 public:
  explicit SimdEmitter(KernelEmitter& ke);

  // Whether the SIMD loop pays: the result (or the accumulator) is a vector and, for a
  // reduction, no load inside the reduction loop is gathered lane by lane.
  bool worthwhile() const { return worthwhile_; }
  // Copies of the reduction term per iteration of the reduction loop (1: not unrolled).
  int64_t reduction_unroll() const { return unrolled_ ? unrolled_->period : 1; }
  // Blocks of 4 outputs a reduction's loop advances together, each with its own accumulator
  // (1: one block per iteration). See wasm_simd_groups.cpp.
  int reduction_groups() const { return groups_; }
  // Blocks of 4 outputs (several per iteration for a long reduction: reduction_groups) for
  // gidx from `from` (a multiple of 4) while gidx + 4 <= `to`; leaves
  // gidx_local() at the first gidx not done.
  void emit_loop(uint32_t from, uint32_t to);

  // For the tiled contraction: computes the epilogue of the block at gidx_local() with the
  // accumulator vector in `acc_v128`, and stores it.
  void emit_epilogue_and_store(uint32_t acc_v128);
  const LaneInfo& info(const AluNode* n) const { return info_.at(n); }

  // For packing a factor of a tiled contraction into scratch: computes the nodes of `plan`
  // (a sub-DAG of the body) at `level` for the block at gidx_local() and ridx_local(), and
  // pushes a computed node's value as one v128.
  void compute_sub(const DagPlan& plan, int level) { compute_level(plan, level); }
  void push_value(const AluNode* n) { push_vector(rep(n), n->dtype); }
  // For packing: n, uniform over the lanes, takes the scalar that `push` leaves instead of
  // being computed (compute_sub must then be given a plan without n).
  void bind_uniform(const AluNode* n, std::function<void()> push);

 private:
  struct Rep {
    explicit Rep(LaneKind k = LaneKind::Lanes) : kind(k) {}
    LaneKind kind;
    bool wide = false;
    LaneOffsets off{};                    // Affine
    Val scalar{DType::Int32, false, {}};  // Uniform/Affine: the value of lane 0
    uint32_t v = 0;                      // Vector: the v128 local
    std::array<uint32_t, 4> lanes{};     // Lanes: one local per lane
    // Uniform: a 4-byte load known in bounds, emitted where it is used (see emit_load);
    // push_vector then loads it splatted (v128.load32_splat) instead of splatting a local.
    const AluNode* load_at_use = nullptr;
  };
  void analyze(const DagPlan& plan);
  LaneInfo classify(const AluNode& n) const;
  void compute_level(const DagPlan& plan, int level);
  void compute(const AluNode& n);
  void store_result(const AluNode* result);
  // The ridx loop, `trips` times around `body`.
  void emit_reduction_loop(int64_t trips, const std::function<void()>& body);
  void init_acc();
  void fold_acc(const AluNode* term);

  Val lane_val(const Rep& r, DType dt, int lane);
  void push_vector(const Rep& r, DType dt);  // any rep as a v128 (not wide)
  Rep make_vector_local(DType dt);           // pops a v128 into a new Vector rep
  Rep make_lanes(DType dt, bool wide, const std::function<bool(int)>& emit_lane);
  // `source`: the node's first operand, whose value range picks cheaper exact forms.
  void emit_vector_op(AluOp op, DType dt, const std::vector<const Rep*>& srcs,
                      const std::vector<DType>& sdt, const AluNode* source = nullptr);
  bool uniform_shift(const AluNode& n) const;
  void emit_load(const AluNode& n);
  uint32_t push_address(uint32_t ptr, const AluNode& index, int item_bytes);
  // Pushes the element of the in-bounds 4-byte load n: a scalar, or splatted to a v128.
  void push_load_at_use(const AluNode& n, bool splat);
  const Rep& rep(const AluNode* n);
  // Loads whose index range over the whole kernel is known and non-negative: contiguous vector
  // loads, and uniform scalar loads inside the loops.
  std::vector<const AluNode*> bounded_loads() const;

  // wasm_simd_groups.cpp: the block loop, `groups` blocks of 4 outputs per iteration.
  struct Group {
    std::unordered_map<const AluNode*, Rep> reps;
    Rep acc;
    uint32_t gidx = 0;
  };
  void plan_groups();
  void emit_blocks(uint32_t from, uint32_t to, int groups);
  void emit_reduction(std::vector<Group>& gs);
  void enter(std::vector<Group>& gs, size_t j);  // makes group j's values current
  void leave(std::vector<Group>& gs, size_t j);
  // Node n for group j: computed, or group 0's value where it does not depend on gidx.
  void compute_or_share(const AluNode* n, std::vector<Group>& gs, size_t j);
  // compute_level for group j: nodes without gidx take group 0's values.
  void compute_group_level(const DagPlan& plan, int level, std::vector<Group>& gs, size_t j);

  // wasm_simd_unrolled.cpp: the reduction loop unrolled by its index period.
  void plan_unrolled_reduction();

  KernelEmitter& ke_;
  CodeBuilder& c_;
  OpEmitter& e_;
  const bool red_;
  std::unordered_map<const AluNode*, LaneInfo> info_;
  std::unordered_map<const AluNode*, Rep> reps_;
  Rep acc_;
  LaneInfo acc_info_;
  bool worthwhile_ = false;
  // While emitting the loop version for dispatches where these loads are all in bounds:
  // they are plain v128.loads, without the per-block check.
  std::vector<const AluNode*> in_bounds_;
  // A reduction unrolled by its index period (ir/reduction_unroll.h): the copies of the term,
  // folded in order per iteration, their plan, and its nodes outside the reduction loop that
  // the body's plan lacks (made by simplification). Empty: the plain loop.
  struct Unrolled {
    int64_t period = 1;
    std::vector<AluExp> terms;
    DagPlan plan;
    std::vector<const AluNode*> outer;
  };
  std::optional<Unrolled> unrolled_;
  // Register blocking (wasm_simd_groups.cpp): blocks per iteration of the block loop, and the
  // reduction-loop nodes that do not depend on gidx (computed once for all blocks).
  int groups_ = 1;
  std::unordered_set<const AluNode*> shared_;
  // The gidx local of the block being emitted (a group's own, or the KernelEmitter's).
  uint32_t gidx_ = 0;
  // The loop level whose nodes compute_level is emitting (2: inside the reduction loop).
  int level_ = 0;
};

// Whether a vector form of op on dt (with source dtypes sdt) exists that equals alu_eval.
bool simd_op_exists(AluOp op, DType dt, const std::vector<DType>& sdt);

}  // namespace kiln::wasm
