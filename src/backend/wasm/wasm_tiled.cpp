// The register-tiled contraction loop over batch x rows x columns (ir/contraction.h):
// MR rows x NR f32x4 accumulators per tile, summed in ridx order (bit-exact without FMA).
// Factors not read in place are evaluated into scratch per cache block. TiledLoopEmitter
// emits the loop in named phases (its class comment gives the loop nest).
#include "backend/wasm/wasm_tiled.h"

#include <algorithm>
#include <unordered_set>

namespace kiln::wasm {

namespace {
// A packed factor's nodes that read ridx but not gidx (a convolution window's channel and
// kernel offsets, a filter gradient's image and pixel) have one value per reduction step for
// every row or column. The int32 ones are computed once per cache block into a table, a row
// of `saved` per step, which each row's or column group's loop then reads instead of
// recomputing them.
struct StepTable {
  DagPlan fill;                       // the ridx-only nodes, computed per step to fill it
  std::vector<const AluNode*> saved;  // those the rest of the factor reads: the columns
  DagPlan rest;                       // level-2 nodes still computed per group and step
};

StepTable plan_step_table(const DagPlan& plan, const AluNode* root, const SimdEmitter& se) {
  std::unordered_set<const AluNode*> reads_gidx;
  for (const AluNode* n : plan.nodes) {
    bool g = n->op == AluOp::Var && n->arg != int(VarId::Ridx);
    for (auto& src : n->src) g = g || reads_gidx.count(src.get());
    if (g) reads_gidx.insert(n);
  }
  auto step_only = [&](const AluNode* n) { return plan.level.at(n) == 2 && !reads_gidx.count(n); };
  auto tabled = [&](const AluNode* n) {  // an int32 scalar (index arithmetic, bools)
    return step_only(n) && n->op != AluOp::Var && se.info(n).kind == LaneKind::Uniform &&
           storage(n->dtype) == ValType::I32;
  };
  std::unordered_set<const AluNode*> saved;
  for (const AluNode* n : plan.nodes)
    if (!step_only(n))
      for (auto& src : n->src)
        if (tabled(src.get())) saved.insert(src.get());
  if (tabled(root)) saved.insert(root);
  // What each part needs, walking uses before sources: the fill computes the saved nodes and
  // their sources, the rest what the root reads through nodes that are not saved.
  std::unordered_set<const AluNode*> fill(saved.begin(), saved.end()), rest{root};
  for (auto it = plan.nodes.rbegin(); it != plan.nodes.rend(); ++it)
    for (auto& src : (*it)->src) {
      if (fill.count(*it)) fill.insert(src.get());
      if (rest.count(*it) && !saved.count(*it)) rest.insert(src.get());
    }
  StepTable t;
  t.fill.level = t.rest.level = plan.level;
  for (const AluNode* n : plan.nodes) {  // plan order: sources first
    if (plan.level.at(n) != 2) continue;
    if (saved.count(n)) t.saved.push_back(n);
    if (fill.count(n)) t.fill.nodes.push_back(n);
    if (rest.count(n) && !saved.count(n)) t.rest.nodes.push_back(n);
  }
  return t;
}

// Whether B's columns are padded to a multiple of 4 (TiledLoopEmitter::ragged_).
bool ragged_columns(const ContractionShape& c) { return !b_in_place(c) && c.n % 4 != 0 && c.n >= 4; }

// The columns the tiles may cover: N, or N padded to a multiple of 4 when ragged.
int64_t tileable_columns(const ContractionShape& c) { return ragged_columns(c) ? (c.n + 3) / 4 * 4 : c.n; }

int32_t tiled_columns(const ContractionShape& c, const TileShape& t) {
  const int64_t n = tileable_columns(c);
  return int32_t(n - n % (4 * t.vecs));
}

// The wasm locals of one tiled loop. Their order is part of the emitted module (add_local
// numbers them), so allocate_tile_locals keeps the order in which they were first written.
struct TileLocals {
  uint32_t batch;         // the batch being run
  uint32_t batch_offset;  // gidx of its first element: batch * M * N
  // The part of [begin, end) in this batch, batch-local: [range_begin, range_end).
  uint32_t range_begin, range_end;
  // Its whole rows [whole_rows_begin, whole_rows_end), and of those the tiled ones
  // [tiled_rows_begin, tiled_rows_end): a multiple of MR rows, or none.
  uint32_t whole_rows_begin, whole_rows_end, tiled_rows_begin, tiled_rows_end;
  uint32_t tile_row, tile_column;  // the first row and column of a tile (or of a packed strip)
  uint32_t a_ptr, b_ptr;  // the factors' addresses at the current step (B's also while packing)
  uint32_t step;  // a step of the reduction block (counts down where nothing else reads it)
  // The pieces of the batch's range the tiles leave to the generic loops.
  uint32_t segment, segment_count, segment_begin, segment_end;
  uint32_t a_panel_row;  // the row of A's MR x KC panel being evaluated
  uint32_t a_step_table, b_step_table;  // where each factor's step table starts in scratch
  uint32_t step_table_row;              // the step table's row for the current step
  std::vector<uint32_t> accumulators;   // v128: the MR x NR tile's sums, row-major
  std::vector<uint32_t> b_vectors;      // v128: B's NR column vectors of the current step
  uint32_t a_splat;                     // v128: one row's value of A in all four lanes
  uint32_t panel_begin, panel_end;      // the column panel [panel_begin, panel_end)
  uint32_t kblock_begin, kblock_steps;  // the reduction block [kblock_begin, + kblock_steps)
  uint32_t dest;                        // where the next packed value or output row goes
  uint32_t scratch, a_panel;            // this thread's scratch and A's panel inside it
};

TileLocals allocate_tile_locals(CodeBuilder& c, int rows, int vecs) {
  auto i32 = [&] { return c.add_local(ValType::I32); };
  TileLocals l;
  l.batch = i32(), l.batch_offset = i32(), l.range_begin = i32(), l.range_end = i32();
  l.whole_rows_begin = i32(), l.whole_rows_end = i32();
  l.tiled_rows_begin = i32(), l.tiled_rows_end = i32();
  l.tile_row = i32(), l.tile_column = i32(), l.a_ptr = i32(), l.b_ptr = i32(), l.step = i32();
  l.segment = i32(), l.segment_count = i32(), l.segment_begin = i32(), l.segment_end = i32();
  l.a_panel_row = i32(), l.a_step_table = i32(), l.b_step_table = i32(), l.step_table_row = i32();
  for (int i = 0; i < rows * vecs; i++) l.accumulators.push_back(c.add_local(ValType::V128));
  for (int i = 0; i < vecs; i++) l.b_vectors.push_back(c.add_local(ValType::V128));
  l.a_splat = c.add_local(ValType::V128);
  l.panel_begin = i32(), l.panel_end = i32(), l.kblock_begin = i32(), l.kblock_steps = i32();
  l.dest = i32(), l.scratch = i32(), l.a_panel = i32();
  return l;
}

// Emits one tiled loop (emit_tiled), phase by phase. Loop nest, per batch that [begin, end)
// touches: column panels (NC) > reduction blocks (KC) > [B packed] > row tiles (MR rows) >
// [A packed] > column tiles (4 NR columns) > the K loop's steps; then what the tiles left.
class TiledLoopEmitter {
 public:
  using GenericLoop = std::function<void(uint32_t, uint32_t)>;
  TiledLoopEmitter(KernelEmitter& ke, SimdEmitter& se, const ContractionShape& ct,
                   const TileShape& t);
  void emit(const GenericLoop& generic);
  uint32_t scratch_bytes() const { return scratch_bytes_; }

 private:
  // Phases, in the order their code runs.
  void emit_scratch();
  void bind_b_step_table();
  void emit_batch_rows();
  void emit_cache_blocks();
  void emit_pack_b();
  void emit_copy_b_strip();
  void emit_evaluate_b_strip();
  void emit_row_tiles();
  void emit_evaluate_a_panel();
  void emit_tile();
  void emit_start_accumulators(int columns);
  void emit_factor_pointers();
  void emit_k_loop();
  void emit_finish_tile(int columns);
  void emit_finish_ragged_vector(int row, int v, int lanes);
  void emit_uncovered(const GenericLoop& generic);

  // Small pieces of i32 arithmetic and loops.
  void get(uint32_t local) { c_.local_get(local); }
  void add() { c_.op(op::I32Add); }
  void mul_const(int64_t v) { c_.i32_const(int32_t(v)), c_.op(op::I32Mul); }
  void add_const(int64_t v) {
    if (v) c_.i32_const(int32_t(v)), c_.op(op::I32Add);
  }
  void to_bytes() { c_.i32_const(2), c_.op(op::I32Shl); }
  void set_min(uint32_t dst, uint32_t x, uint32_t y);
  void clamp_to(uint32_t local, int32_t bound);
  void clamp_to_last_column();
  void loop_while_less(uint32_t counter, int32_t step, const std::function<void()>& push_bound);
  void loop_while_counting_down(uint32_t counter);
  void push_strip_address();
  void push_output_gidx(int row);
  void set_dest_to_output_row(int row);
  void push_in_place_address(const ContractionOperand& f, uint32_t first, bool scale_first);
  uint32_t accumulator(int row, int vec) const {
    return l_.accumulators[size_t(row * vecs_ + vec)];
  }
  // Step tables: step_table_row walks one table's rows, from `base` for the block's first step.
  void table_start(const StepTable& t, uint32_t base);
  void table_next(const StepTable& t);
  void table_read(const StepTable& t);
  void table_fill(const StepTable& t, uint32_t base);

  KernelEmitter& ke_;
  SimdEmitter& se_;
  CodeBuilder& c_;
  OpEmitter& e_;
  const ContractionOperand &a_, &b_;
  const TileShape& t_;
  const int rows_, vecs_;  // MR, NR
  const int32_t columns_, batch_elements_, steps_;  // N, M * N, K
  // A B evaluated per column whose columns are not a multiple of 4 is evaluated at the last
  // column past it, so that its last tile is whole; only that tile's real columns are
  // loaded and stored, lane by lane (the others hold sums of a repeated column).
  const bool ragged_;
  const int32_t tiled_columns_;  // columns in tiles of 4 NR (past N in the ragged last tile)
  // A evaluated into scratch; B not read in place (so evaluated); B packed (copied or evaluated).
  const bool a_packed_, b_evaluated_, b_packed_;
  // A factor evaluated into scratch: its own DAG (nodes shared with the body), computed at
  // gidx of the element's row (A) or column (B) and row or column 0 of the other.
  const DagPlan plan_a_, plan_b_;
  const bool b_by_vector_;  // 4 consecutive columns are 4 consecutive gidx from a multiple of 4
  const StepTable table_a_, table_b_;
  // Cache blocks: column panels of NC (the B panel stays in cache across all rows) and
  // reduction blocks of KC; partial sums go through the output (float32, so exact) and the
  // epilogue runs after the last block.
  const int32_t panel_columns_, kblock_;
  const TileLocals l_;
  uint32_t scratch_bytes_ = 0;  // what emit_scratch asks each thread for
};

TiledLoopEmitter::TiledLoopEmitter(KernelEmitter& ke, SimdEmitter& se, const ContractionShape& ct,
                                   const TileShape& t)
    : ke_(ke), se_(se), c_(ke.code()), e_(ke.ops()), a_(ct.a), b_(ct.b), t_(t), rows_(t.rows),
      vecs_(t.vecs), columns_(int32_t(ct.n)), batch_elements_(int32_t(ct.m * ct.n)),
      steps_(int32_t(ct.k)),
      ragged_(ragged_columns(ct)),
      tiled_columns_(tiled_columns(ct, t)),
      a_packed_(!a_in_place(ct)), b_evaluated_(!b_in_place(ct)), b_packed_(t.pack || b_evaluated_),
      plan_a_(a_packed_ ? DagPlan::of(a_.factor) : DagPlan{}),
      plan_b_(b_evaluated_ ? DagPlan::of(b_.factor) : DagPlan{}),
      b_by_vector_(columns_ % 4 == 0),
      table_a_(a_packed_ ? plan_step_table(plan_a_, a_.factor.get(), se) : StepTable{}),
      table_b_(b_evaluated_ ? plan_step_table(plan_b_, b_.factor.get(), se) : StepTable{}),
      panel_columns_(int32_t(std::max<int64_t>(4 * vecs_, t.panel / (4 * vecs_) * (4 * vecs_)))),
      kblock_(int32_t(std::max(1, t.kblock))),
      l_(allocate_tile_locals(c_, rows_, vecs_)) {}

void TiledLoopEmitter::set_min(uint32_t dst, uint32_t x, uint32_t y) {
  get(x), get(y), get(x), get(y), c_.op(op::I32LtS), c_.op(op::Select), c_.local_set(dst);
}

// The column on the stack, at most the last one (N - 1); uses gidx's local.
void TiledLoopEmitter::clamp_to_last_column() {
  const uint32_t column = ke_.gidx_local();
  c_.local_tee(column), c_.i32_const(columns_ - 1), get(column), c_.i32_const(columns_ - 1);
  c_.op(op::I32LtS), c_.op(op::Select);
}

void TiledLoopEmitter::clamp_to(uint32_t local, int32_t bound) {  // local = min(local, bound)
  get(local), c_.i32_const(bound), get(local), c_.i32_const(bound);
  c_.op(op::I32LtS), c_.op(op::Select), c_.local_set(local);
}

// The end of a loop body: counter += step, and again while counter < the bound pushed.
void TiledLoopEmitter::loop_while_less(uint32_t counter, int32_t step,
                                       const std::function<void()>& push_bound) {
  get(counter), c_.i32_const(step), add(), c_.local_tee(counter);
  push_bound();
  c_.op(op::I32LtS), c_.br_if(0);
}

// The end of a loop body run `counter` times: counter -= 1, and again while it is not 0.
void TiledLoopEmitter::loop_while_counting_down(uint32_t counter) {
  get(counter), c_.i32_const(1), c_.op(op::I32Sub), c_.local_tee(counter), c_.br_if(0);
}

// Pushes scratch + 4 (tile_column - panel_begin) kblock_steps: B's packed strip at tile_column.
void TiledLoopEmitter::push_strip_address() {
  get(l_.scratch), get(l_.tile_column), get(l_.panel_begin), c_.op(op::I32Sub);
  get(l_.kblock_steps), c_.op(op::I32Mul), to_bytes(), add();
}

// Pushes gidx of the tile's row `row` at its first column:
// batch_offset + (tile_row + row) N + tile_column.
void TiledLoopEmitter::push_output_gidx(int row) {
  get(l_.tile_row), add_const(row), mul_const(columns_), get(l_.tile_column), add();
  get(l_.batch_offset), add();
}

// dest = out + 4 gidx of the tile's row `row`, first column.
void TiledLoopEmitter::set_dest_to_output_row(int row) {
  get(ke_.out_ptr_local());
  push_output_gidx(row), to_bytes(), add();
  c_.local_set(l_.dest);
}

// Pushes ptr + 4 (c0 + cb batch + c first + cr kblock_begin) of an in-place factor, with
// c = ci for A's row and 1 for B's column (b_in_place: cj == 1, so no multiply).
void TiledLoopEmitter::push_in_place_address(const ContractionOperand& f, uint32_t first,
                                             bool scale_first) {
  get(ke_.ptr_local(f.arg));
  get(first);
  if (scale_first) mul_const(f.ci);
  get(l_.kblock_begin), mul_const(f.cr), add(), get(l_.batch), mul_const(f.cb), add();
  add_const(f.c0), to_bytes(), add();
}

void TiledLoopEmitter::table_start(const StepTable& t, uint32_t base) {
  if (!t.saved.empty()) get(base), c_.local_set(l_.step_table_row);
}

void TiledLoopEmitter::table_next(const StepTable& t) {
  if (t.saved.empty()) return;
  get(l_.step_table_row), add_const(4 * int64_t(t.saved.size())), c_.local_set(l_.step_table_row);
}

void TiledLoopEmitter::table_read(const StepTable& t) {  // into the scalar emitter's locals
  for (size_t i = 0; i < t.saved.size(); i++)
    get(l_.step_table_row), c_.mem(op::I32Load, 2, uint32_t(4 * i)), ke_.assign(t.saved[i]);
}

// The table's rows for steps kblock_begin .. + kblock_steps.
void TiledLoopEmitter::table_fill(const StepTable& t, uint32_t base) {
  if (t.saved.empty()) return;
  table_start(t, base);
  c_.i32_const(0), c_.local_set(l_.step);
  c_.loop();
  get(l_.kblock_begin), get(l_.step), add(), c_.local_set(ke_.ridx_local());
  ke_.compute_level(t.fill, 2);
  for (size_t i = 0; i < t.saved.size(); i++)
    get(l_.step_table_row), ke_.val(t.saved[i]).push(), c_.mem(op::I32Store, 2, uint32_t(4 * i));
  table_next(t);
  loop_while_less(l_.step, 1, [&] { get(l_.kblock_steps); });
  c_.end();
}

// This thread's scratch: B's block, then A's MR x KC panel, then B's and A's step tables.
void TiledLoopEmitter::emit_scratch() {
  const int32_t block_steps = std::min(kblock_, steps_);
  const int32_t b_block = b_packed_ ? std::min(panel_columns_, tiled_columns_) * block_steps : 0;
  const int32_t a_block = a_packed_ ? rows_ * block_steps : 0;
  const int32_t table_a = int32_t(table_a_.saved.size()), table_b = int32_t(table_b_.saved.size());
  scratch_bytes_ = uint32_t(4 * (b_block + a_block + (table_b + table_a) * block_steps));
  c_.i32_const(int32_t(scratch_bytes_));
  e_.call_builtin(Builtin::Scratch);
  c_.local_tee(l_.scratch);
  add_const(4 * b_block);
  c_.local_tee(l_.a_panel);
  add_const(4 * a_block);
  c_.local_tee(l_.b_step_table);
  add_const(4 * table_b * block_steps);
  c_.local_set(l_.a_step_table);
}

// In the SIMD evaluation of B, each saved node reads its column of the step table's row.
void TiledLoopEmitter::bind_b_step_table() {
  CodeBuilder* c = &c_;  // by pointer: the SIMD emitter calls these after this returns
  const uint32_t row = l_.step_table_row;
  for (size_t i = 0; i < table_b_.saved.size(); i++)
    se_.bind_uniform(table_b_.saved[i],
                     [c, row, i] { c->local_get(row), c->mem(op::I32Load, 2, uint32_t(4 * i)); });
}

// The batch's part of [begin, end), its whole rows and the tiled rows among them.
void TiledLoopEmitter::emit_batch_rows() {
  const TileLocals& l = l_;
  const int32_t n = columns_, mn = batch_elements_;
  get(l.batch), mul_const(mn), c_.local_set(l.batch_offset);
  // range_begin = max(begin - batch_offset, 0), range_end = min(end - batch_offset, M N)
  get(KernelEmitter::kBegin), get(l.batch_offset), c_.op(op::I32Sub), c_.local_set(l.range_begin);
  c_.i32_const(0), get(l.range_begin), get(l.range_begin), c_.i32_const(0);
  c_.op(op::I32LtS), c_.op(op::Select), c_.local_set(l.range_begin);
  get(KernelEmitter::kEnd), get(l.batch_offset), c_.op(op::I32Sub), c_.local_set(l.range_end);
  c_.i32_const(mn), get(l.range_end), get(l.range_end), c_.i32_const(mn);
  c_.op(op::I32GtS), c_.op(op::Select), c_.local_set(l.range_end);
  // whole_rows_begin = ceil(range_begin / N), whole_rows_end = floor(range_end / N)
  get(l.range_begin), add_const(n - 1), c_.i32_const(n), c_.op(op::I32DivU);
  c_.local_set(l.whole_rows_begin);
  get(l.range_end), c_.i32_const(n), c_.op(op::I32DivU), c_.local_set(l.whole_rows_end);
  get(l.whole_rows_begin), c_.local_set(l.tiled_rows_begin);
  // tiled_rows_end = begin + MR * ((end - begin) / MR) for whole rows [begin, end) when
  // end > begin and every in-place load is in bounds, else begin (no row is tiled).
  get(l.whole_rows_begin);
  get(l.whole_rows_end), get(l.whole_rows_begin), c_.op(op::I32Sub);
  c_.i32_const(rows_), c_.op(op::I32DivS), mul_const(rows_), add();
  get(l.whole_rows_begin);
  get(l.whole_rows_end), get(l.whole_rows_begin), c_.op(op::I32GtS);
  for (const ContractionOperand* f : {&a_, &b_}) {
    if (f == &a_ ? a_packed_ : b_evaluated_) continue;  // its loads are bounds-checked
    c_.i32_const(int32_t(f->hi)), get(ke_.count_local(f->arg));
    c_.op(op::I32LtS), c_.op(op::I32And);
  }
  c_.op(op::Select);
  c_.local_set(l.tiled_rows_end);
}

// Column panels, and reduction blocks in each: B's block packed, then the row tiles.
void TiledLoopEmitter::emit_cache_blocks() {
  const TileLocals& l = l_;
  c_.i32_const(0), c_.local_set(l.panel_begin);
  c_.loop();  // column panels
  get(l.panel_begin), add_const(panel_columns_), c_.local_set(l.panel_end);
  clamp_to(l.panel_end, tiled_columns_);
  c_.i32_const(0), c_.local_set(l.kblock_begin);
  c_.loop();  // reduction blocks
  c_.i32_const(steps_), get(l.kblock_begin), c_.op(op::I32Sub), c_.local_set(l.kblock_steps);
  clamp_to(l.kblock_steps, kblock_);
  if (b_packed_) emit_pack_b();
  emit_row_tiles();
  loop_while_less(l.kblock_begin, kblock_, [&] { c_.i32_const(steps_); });
  c_.end();  // reduction blocks
  loop_while_less(l.panel_begin, panel_columns_, [&] { c_.i32_const(tiled_columns_); });
  c_.end();  // column panels
}

// Strip s of the block (columns panel_begin + 4 NR s ..) goes to scratch + 4 (4 NR s)
// kblock_steps, step r at 16 NR r: the tile then reads B sequentially. Skipped when no row is
// tiled (tiled_rows_end == tiled_rows_begin: short operands, or a range with no whole rows),
// so in-place loads stay in bounds.
void TiledLoopEmitter::emit_pack_b() {
  const TileLocals& l = l_;
  get(l.tiled_rows_end), get(l.tiled_rows_begin), c_.op(op::I32GtS);
  c_.if_();
  table_fill(table_b_, l.b_step_table);
  get(l.panel_begin), c_.local_set(l.tile_column);
  c_.loop();  // strips
  if (!b_evaluated_) emit_copy_b_strip();
  else emit_evaluate_b_strip();
  loop_while_less(l.tile_column, 4 * vecs_, [&] { get(l.panel_end); });
  c_.end();  // strips
  c_.end();  // if
}

// An in-place B's strip, copied NR vectors per step.
void TiledLoopEmitter::emit_copy_b_strip() {
  const TileLocals& l = l_;
  push_in_place_address(b_, l.tile_column, false), c_.local_set(l.b_ptr);
  push_strip_address(), c_.local_set(l.dest);
  get(l.kblock_steps), c_.local_set(l.step);
  c_.loop();  // steps of the strip
  for (int v = 0; v < vecs_; v++) {
    get(l.dest), get(l.b_ptr), c_.simd_mem(simd::V128Load, 2, uint32_t(16 * v));
    c_.simd_mem(simd::V128Store, 2, uint32_t(16 * v));
  }
  get(l.b_ptr), add_const(4 * b_.cr), c_.local_set(l.b_ptr);
  get(l.dest), add_const(16 * vecs_), c_.local_set(l.dest);
  loop_while_counting_down(l.step);
  c_.end();
}

// B evaluated at row 0 of the batch (it does not read the row): per column group (a vector
// of 4 columns, or one column), the column-only part once, then each reduction step.
void TiledLoopEmitter::emit_evaluate_b_strip() {
  const TileLocals& l = l_;
  const int groups = b_by_vector_ ? vecs_ : 4 * vecs_;
  for (int v = 0; v < groups; v++) {
    get(l.tile_column), add_const(b_by_vector_ ? 4 * v : v);
    if (ragged_) clamp_to_last_column();
    get(l.batch_offset), add();
    c_.local_set(ke_.gidx_local());
    if (b_by_vector_) se_.compute_sub(plan_b_, 1);
    else ke_.compute_level(plan_b_, 1);
    push_strip_address(), add_const(b_by_vector_ ? 16 * v : 4 * v), c_.local_set(l.dest);
    table_start(table_b_, l.b_step_table);
    c_.i32_const(0), c_.local_set(l.step);
    c_.loop();  // reduction steps of the block
    get(l.kblock_begin), get(l.step), add(), c_.local_set(ke_.ridx_local());
    if (b_by_vector_) {
      se_.compute_sub(table_b_.rest, 2);
      get(l.dest), se_.push_value(b_.factor.get()), c_.simd_mem(simd::V128Store, 2);
    } else {
      table_read(table_b_);
      ke_.compute_level(table_b_.rest, 2);
      e_.emit_store(DType::Float32, [&] { get(l.dest); }, ke_.val(b_.factor.get()));
    }
    table_next(table_b_);
    get(l.dest), add_const(16 * vecs_), c_.local_set(l.dest);
    loop_while_less(l.step, 1, [&] { get(l.kblock_steps); });
    c_.end();
  }
}

// The tiled rows, MR at a time; per row tile A's panel (when packed), then its column tiles.
void TiledLoopEmitter::emit_row_tiles() {
  const TileLocals& l = l_;
  get(l.tiled_rows_begin), c_.local_set(l.tile_row);
  c_.block();
  get(l.tile_row), get(l.tiled_rows_end), c_.op(op::I32GeS), c_.br_if(0);
  table_fill(table_a_, l.a_step_table);
  c_.loop();  // row tiles
  if (a_packed_) emit_evaluate_a_panel();
  get(l.panel_begin), c_.local_set(l.tile_column);
  c_.loop();  // column tiles
  emit_tile();
  loop_while_less(l.tile_column, 4 * vecs_, [&] { get(l.panel_end); });
  c_.end();  // column tiles
  loop_while_less(l.tile_row, rows_, [&] { get(l.tiled_rows_end); });
  c_.end();  // row tiles
  c_.end();  // block
}

// A's rows tile_row .. + MR - 1 of this reduction block, MR values per step.
void TiledLoopEmitter::emit_evaluate_a_panel() {
  const TileLocals& l = l_;
  c_.i32_const(0), c_.local_set(l.a_panel_row);
  c_.loop();  // rows of the panel
  get(l.batch_offset), get(l.tile_row), get(l.a_panel_row), add(), mul_const(columns_), add();
  c_.local_set(ke_.gidx_local());
  ke_.compute_level(plan_a_, 1);
  get(l.a_panel), get(l.a_panel_row), to_bytes(), add(), c_.local_set(l.dest);
  table_start(table_a_, l.a_step_table);
  c_.i32_const(0), c_.local_set(l.step);
  c_.loop();  // reduction steps of the block
  get(l.kblock_begin), get(l.step), add(), c_.local_set(ke_.ridx_local());
  table_read(table_a_);
  ke_.compute_level(table_a_.rest, 2);
  e_.emit_store(DType::Float32, [&] { get(l.dest); }, ke_.val(a_.factor.get()));
  table_next(table_a_);
  get(l.dest), add_const(4 * rows_), c_.local_set(l.dest);
  loop_while_less(l.step, 1, [&] { get(l.kblock_steps); });
  c_.end();
  loop_while_less(l.a_panel_row, 1, [&] { c_.i32_const(rows_); });
  c_.end();
}

// One MR x 4 NR tile over one reduction block.
void TiledLoopEmitter::emit_tile() {
  const int whole = 4 * vecs_;
  if (!ragged_) {
    emit_start_accumulators(whole);
    emit_factor_pointers();
    emit_k_loop();
    emit_finish_tile(whole);
    return;
  }
  // The ragged tile is the last: its real columns are N - its first column.
  const int last = tiled_columns_ - whole, real = columns_ - last;
  auto if_last_tile = [&](const std::function<void(int)>& f) {
    get(l_.tile_column), c_.i32_const(last), c_.op(op::I32Eq);
    c_.if_();
    f(real);
    c_.else_();
    f(whole);
    c_.end();
  };
  if_last_tile([&](int columns) { emit_start_accumulators(columns); });
  emit_factor_pointers();
  emit_k_loop();
  if_last_tile([&](int columns) { emit_finish_tile(columns); });
}

// The first reduction block starts the sums at 0; later ones reload the partial sums of
// the tile's first `columns` columns (the rest of a ragged tile start at 0).
void TiledLoopEmitter::emit_start_accumulators(int columns) {
  const TileLocals& l = l_;
  auto zero = [&](uint32_t acc) {
    e_.emit_const(DType::Float32, Reduction::identity(AluOp::Add, DType::Float32));
    c_.simd(simd::F32x4Splat), c_.local_set(acc);
  };
  get(l.kblock_begin), c_.op(op::I32Eqz);
  c_.if_();
  for (uint32_t acc : l.accumulators) zero(acc);
  c_.else_();
  for (int row = 0; row < rows_; row++) {
    set_dest_to_output_row(row);
    for (int v = 0; v < vecs_; v++) {
      const uint32_t acc = accumulator(row, v);
      const int lanes = std::clamp(columns - 4 * v, 0, 4);
      if (lanes == 4) {
        get(l.dest), c_.simd_mem(simd::V128Load, 2, uint32_t(16 * v)), c_.local_set(acc);
        continue;
      }
      zero(acc);
      for (int lane = 0; lane < lanes; lane++) {
        get(acc), get(l.dest), c_.mem(op::F32Load, 2, uint32_t(16 * v + 4 * lane));
        c_.simd_lane(simd::F32x4ReplaceLane, uint8_t(lane)), c_.local_set(acc);
      }
    }
  }
  c_.end();
}

// a_ptr and b_ptr at the block's first step: in scratch when packed, else in the operand.
void TiledLoopEmitter::emit_factor_pointers() {
  const TileLocals& l = l_;
  if (a_packed_) {
    get(l.a_panel), c_.local_set(l.a_ptr);
  } else {
    push_in_place_address(a_, l.tile_row, true), c_.local_set(l.a_ptr);
  }
  if (b_packed_) {
    push_strip_address(), c_.local_set(l.b_ptr);
  } else {
    push_in_place_address(b_, l.tile_column, false), c_.local_set(l.b_ptr);
  }
}

// The hot loop, one step per iteration: NR vector loads of B, MR splats of A, MR x NR
// multiply-adds (relaxed_madd with FMA).
void TiledLoopEmitter::emit_k_loop() {
  const TileLocals& l = l_;
  const int64_t a_row = a_packed_ ? 1 : a_.ci;  // elements between A's rows, and per step
  const int64_t a_step = a_packed_ ? rows_ : a_.cr, b_step = b_packed_ ? 4 * vecs_ : b_.cr;
  get(l.kblock_steps), c_.local_set(l.step);
  c_.loop();  // steps
  for (int v = 0; v < vecs_; v++) {
    get(l.b_ptr), c_.simd_mem(simd::V128Load, 2, uint32_t(16 * v));
    c_.local_set(l.b_vectors[size_t(v)]);
  }
  for (int row = 0; row < rows_; row++) {
    get(l.a_ptr), c_.simd_mem(simd::V128Load32Splat, 2, uint32_t(4 * row * a_row));
    c_.local_set(l.a_splat);
    for (int v = 0; v < vecs_; v++) {
      const uint32_t acc = accumulator(row, v);
      if (t_.fma) {
        get(l.a_splat), get(l.b_vectors[size_t(v)]), get(acc), c_.simd(simd::F32x4RelaxedMadd);
      } else {
        get(acc), get(l.a_splat), get(l.b_vectors[size_t(v)]), c_.simd(simd::F32x4Mul);
        c_.simd(simd::F32x4Add);
      }
      c_.local_set(acc);
    }
  }
  get(l.a_ptr), add_const(4 * a_step), c_.local_set(l.a_ptr);
  get(l.b_ptr), add_const(4 * b_step), c_.local_set(l.b_ptr);
  loop_while_counting_down(l.step);
  c_.end();
}

// After the last reduction block: the fused epilogue per vector, at
// gidx = batch_offset + (tile_row + row) N + tile_column + 4 v; before it, the partial sums
// go to the output.
void TiledLoopEmitter::emit_finish_tile(int columns) {
  const TileLocals& l = l_;
  get(l.kblock_begin), get(l.kblock_steps), add(), c_.i32_const(steps_), c_.op(op::I32GeS);
  c_.if_();
  for (int row = 0; row < rows_; row++)
    for (int v = 0; v < vecs_; v++) {
      const int lanes = std::clamp(columns - 4 * v, 0, 4);
      if (lanes < 4) {
        emit_finish_ragged_vector(row, v, lanes);
        continue;
      }
      push_output_gidx(row), add_const(4 * v), c_.local_set(ke_.gidx_local());
      se_.emit_epilogue_and_store(accumulator(row, v));
    }
  c_.else_();
  for (int row = 0; row < rows_; row++) {
    set_dest_to_output_row(row);
    for (int v = 0; v < vecs_; v++) {
      const int lanes = std::clamp(columns - 4 * v, 0, 4);
      if (lanes == 4) {
        get(l.dest), get(accumulator(row, v)), c_.simd_mem(simd::V128Store, 2, uint32_t(16 * v));
        continue;
      }
      for (int lane = 0; lane < lanes; lane++) {
        get(l.dest), get(accumulator(row, v)), c_.simd_lane(simd::F32x4ExtractLane, uint8_t(lane));
        c_.mem(op::F32Store, 2, uint32_t(16 * v + 4 * lane));
      }
    }
  }
  c_.end();
}

// The first `lanes` sums of a ragged tile's vector, each through the scalar epilogue.
void TiledLoopEmitter::emit_finish_ragged_vector(int row, int v, int lanes) {
  for (int lane = 0; lane < lanes; lane++) {
    push_output_gidx(row), add_const(4 * v + lane), c_.local_set(ke_.gidx_local());
    get(accumulator(row, v)), c_.simd_lane(simd::F32x4ExtractLane, uint8_t(lane));
    c_.local_set(ke_.acc_local());
    ke_.emit_epilogue_and_store();
  }
}

// What the tiles did not cover in this batch: [range_begin, tiled_rows_begin N), the column
// tail of each tiled row, and [tiled_rows_end N, range_end), as segments 0, 1 .. tiled rows,
// and the last; each goes through `generic`.
void TiledLoopEmitter::emit_uncovered(const GenericLoop& generic) {
  const TileLocals& l = l_;
  const int32_t n = columns_;
  c_.i32_const(2);
  if (tiled_columns_ < n) get(l.tiled_rows_end), get(l.tiled_rows_begin), c_.op(op::I32Sub), add();
  c_.local_set(l.segment_count);
  c_.i32_const(0), c_.local_set(l.segment);
  c_.loop();
  get(l.segment), c_.op(op::I32Eqz);
  c_.if_();
  {  // [range_begin, min(tiled_rows_begin N, range_end))
    get(l.range_begin), c_.local_set(l.segment_begin);
    get(l.tiled_rows_begin), mul_const(n), c_.local_set(l.segment_end);
    set_min(l.segment_end, l.segment_end, l.range_end);
  }
  c_.else_();
  get(l.segment), add_const(1), get(l.segment_count), c_.op(op::I32Eq);
  c_.if_();
  {  // [tiled_rows_end N, range_end)
    get(l.tiled_rows_end), mul_const(n), c_.local_set(l.segment_begin);
    get(l.range_end), c_.local_set(l.segment_end);
  }
  c_.else_();
  {  // row tiled_rows_begin + segment - 1: [row N + tiled columns, row N + N)
    get(l.tiled_rows_begin), get(l.segment), add(), add_const(-1), mul_const(n);
    c_.local_tee(l.segment_begin);
    add_const(n), c_.local_set(l.segment_end);
    get(l.segment_begin), add_const(tiled_columns_), c_.local_set(l.segment_begin);
  }
  c_.end();
  c_.end();
  get(l.segment_begin), get(l.batch_offset), add(), c_.local_set(l.segment_begin);
  get(l.segment_end), get(l.batch_offset), add(), c_.local_set(l.segment_end);
  generic(l.segment_begin, l.segment_end);
  loop_while_less(l.segment, 1, [&] { get(l.segment_count); });
  c_.end();
}

// One pass per batch that [begin, end) touches, on batch-local gidx [range_begin, range_end).
void TiledLoopEmitter::emit(const GenericLoop& generic) {
  if (tiled_columns_ > 0 && (b_packed_ || a_packed_)) emit_scratch();
  bind_b_step_table();
  get(KernelEmitter::kBegin), c_.i32_const(batch_elements_), c_.op(op::I32DivU);
  c_.local_set(l_.batch);
  c_.loop();  // batches
  emit_batch_rows();
  if (tiled_columns_ > 0) emit_cache_blocks();
  emit_uncovered(generic);
  get(l_.batch), add_const(1), c_.local_tee(l_.batch);
  mul_const(batch_elements_), get(KernelEmitter::kEnd), c_.op(op::I32LtS), c_.br_if(0);
  c_.end();  // batches
}

}  // namespace

std::optional<ContractionShape> find_contraction(const Kernel& k) {
  if (k.exp.dtype() != DType::Float32 || k.out_dtype() != DType::Float32) return std::nullopt;
  if (k.size >= INT32_MAX / 4) return std::nullopt;
  auto c = analyze_contraction(k);
  if (!c || c->n < 4) return std::nullopt;
  // In place means unchecked loads at pointer + 4 * index with row offsets as immediates.
  for (ContractionOperand* op : {&c->a, &c->b})
    if (op->linear && (op->lo < 0 || op->hi >= INT32_MAX / 4 || op->ci < 0)) op->linear = false;
  return c;
}

bool pack_pays(const ContractionShape& c) {
  return !b_in_place(c) || (c.m >= 16 && c.k * c.n > 256 * 256);
}

TileShape fit_tile_to_columns(const ContractionShape& c, TileShape t) {
  const int64_t n = tileable_columns(c);
  if (n % 4 != 0 || n % (4 * t.vecs) == 0) return t;
  for (int v = t.vecs - 1; v >= 1; v--) {
    if (n % (4 * v) != 0) continue;
    // As many accumulators as before; of the row counts up to that, the largest that
    // divides the rows (left-over rows would go to the generic loop too).
    const int most = t.rows * t.vecs / v;
    int rows = most;
    while (rows > t.rows && c.m % rows != 0) rows--;
    t.rows = c.m % rows == 0 ? rows : most;
    t.vecs = v;
    return t;
  }
  return t;
}

TileShape fit_tile_to_rows(const ContractionShape& c, TileShape t) {
  if (c.m < 2 || c.m >= t.rows) return t;
  // As many accumulators as before at most, in whole tiles of 4 NR columns where the columns
  // allow (the remainder would go to the generic loop).
  const int most = t.rows * t.vecs / int(c.m);
  int vecs = std::max(1, most);
  while (vecs > 1 && tileable_columns(c) % (4 * vecs) != 0) vecs--;
  t.rows = int(c.m);
  t.vecs = vecs;
  return t;
}

bool tiling_pays(const ContractionShape& c, const TileShape& t) {
  if (c.n < 4 * t.vecs) return false;
  return c.batch * c.m >= t.rows || b_in_place(c);
}

uint32_t emit_tiled(KernelEmitter& ke, SimdEmitter& se, const ContractionShape& ct, const TileShape& t,
                    const std::function<void(uint32_t, uint32_t)>& generic) {
  TiledLoopEmitter tiled(ke, se, ct, t);
  tiled.emit(generic);
  return tiled.scratch_bytes();
}

}  // namespace kiln::wasm
