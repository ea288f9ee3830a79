// C++ source for one Kernel: loop nests from the scheduler, the legalized AluExp DAG emitted
// once per distinct (structurally hash-consed) node, alu_eval's exact semantics for every op.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/index_split.h"
#include "ir/kernel.h"
#include "ir/schedule.h"

namespace kiln::native {

// The native register block: up to 4 rows x 16 columns of a contraction's output in
// accumulators (the scheduler's tile); the columns are what g++ vectorizes.
ScheduleParams native_params();

// A kernel lowered for code generation: the loop structure and the expressions it emits.
struct Plan {
  Kernel kernel;
  Schedule schedule;
  enum class Mode { Pointwise, Tiled } mode = Mode::Pointwise;
  int64_t tm = 1, tn = 1;  // register block (Tiled)
  int64_t rows = 1, cols = 1;  // output as rows x cols (cols == size when 1-d)
  AluExp body;             // Tiled with rows > 1: gidx replaced by m * cols + n
  int64_t items = 0;       // units of work the thread pool splits: elements or blocks
  int64_t work_per_item = 0;  // rough cost, for deciding whether to split
  // Pointwise: one loop per range of gidx (or of gidx % period, in a loop over rows) when a
  // select chain is decided by them (a concatenation, a packed kernel: ir/index_split.h);
  // empty: one loop over body. With rows, a piece's exp reads the row as Lane and its
  // position in the row as gidx.
  std::vector<IndexPiece> pieces;
  int64_t period = 0;
  // The Load nodes of the emitted expressions in emission order (body or pieces, then epilogue), found
  // once: load_guards runs at every dispatch.
  std::vector<const AluNode*> loads;
};

// Throws kiln::Error naming the op when a kernel uses something the generator cannot
// express (the backend then runs that kernel on the interpreter).
// The Plan's kernel is the legalized one (ir/legalize.h).
Plan plan_kernel(const Kernel& k);

// One bit per Load node (in emission order) saying whether its index needs a bounds
// check for these input element counts: out-of-range loads read 0, as in the interpreter.
// Buffers carry `slack_bytes` of zeros before and after their data, so a load whose index
// range stays within the slack reads that zero without a check (padded views' loads).
std::vector<bool> load_guards(const Plan& p, const std::vector<int64_t>& counts, int64_t slack_bytes);

// The translation unit: extern "C" void kiln_kernel(void* const* bufs, const int64_t* counts,
// int64_t begin, int64_t end) runs work items [begin, end).
std::string generate_source(const Plan& p, const std::vector<bool>& guards);

}  // namespace kiln::native
