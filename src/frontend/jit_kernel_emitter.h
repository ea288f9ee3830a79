// The jit fuser's values (expressions over buffer slots, pending reductions and preludes)
// and KernelEmitter, which computes them into a Program's buffers with packed kernels.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "frontend/jit_program.h"

namespace kiln::frontend::fusion {

// A reduction not yet emitted: its body over gidx/ridx, loading `srcs` (slots).
struct Pending {
  AluOp op;
  int64_t size;
  AluExp body;
  std::vector<int> srcs;
  std::shared_ptr<Pending> pre;  // the prelude the body reads (Var(Pre)), if any
  AluExp value;  // of a prelude: its value in terms of acc (loading srcs too); Var(Pre) reads it
};

// A value during fusion: the element at flat index i of st's bottom view is `exp` with
// gidx = i, loading slots `srcs` by position. With `red`, exp is the pending reduction's
// epilogue (in terms of acc) and st is row-major. With `pre`, exp reads a small full
// reduction as Var(Pre) that the kernel computing it recomputes (Kernel::prelude).
struct Val {
  Aval aval;
  AluExp exp;
  std::vector<int> srcs;
  ShapeTracker st;
  std::shared_ptr<Pending> red;
  std::shared_ptr<Pending> pre;
};

// The prelude a value's kernel would need: its own, or its pending reduction's.
const std::shared_ptr<Pending>& prelude_of(const Val& v);
using ValPtr = std::shared_ptr<Val>;

// The buffers a kernel being built loads: slot numbers by load argument.
struct Srcs {
  std::vector<int> slots;
  int add(int s) {
    for (size_t i = 0; i < slots.size(); i++)
      if (slots[i] == s) return int(i);
    slots.push_back(s);
    return int(slots.size() - 1);
  }
};

// v's element at index `idxs` of its shape, with its loads renumbered into `ins`.
AluExp val_at(const Val& v, const std::vector<AluExp>& idxs, Srcs& ins);
// A plain load of one slot through a view: nothing to compute.
bool is_view(const Val& v);

// Emits the kernels of a Program: values computed into buffers (slots), packing up to
// kMaxPackedValues (jit_kernel_emitter.cpp) values of one size, dtype and reduction into one
// kernel.
class KernelEmitter {
 public:
  explicit KernelEmitter(Program& p) : p_(p) {}

  int add_slot(Slot s);

  // Emits kernels computing every value in vs (packing those of one size, dtype and
  // reduction into one kernel) and turns each into a view of its output.
  void materialize(std::vector<ValPtr> vs, bool pack);

  // An elementwise expression's value over its whole flat domain (elementwise() notes each
  // new expression's size). Later views of a materialized expression read its buffer.
  void note_domain(const AluExp& e, int64_t size) { domains_[e.get()] = {e, size}; }

  // Values of one key may share a kernel: size, dtype, prelude and reduction.
  static std::string group_key(const Val& v);

  // A part of an elementwise expression (a slice, a transposed view) is computed as the
  // whole expression when the whole is at most kMaxWholeFactor times the part, and a later
  // part of the same expression then reads that buffer instead of costing a kernel of its
  // own: RoPE of a decode step's q and k heads rotated together, then read apart by the
  // scores (one kernel per layer instead of two). The bound keeps the work spent on parts
  // nobody reads below the part's own. Turns v into a view of the buffer; false if not done.
  // With only_reuse, only a part whose whole is already a buffer (an expression built on
  // the k heads, the step's keys output, reads the rotated buffer instead of rotating again).
  bool from_whole(Val& v, bool only_reuse = false);

 private:
  void emit_group(const std::vector<ValPtr>& g);
  // A prelude longer than kMaxPreludeLength, read by a kernel of several outputs, is computed
  // by a kernel of its own first (one value), and the group reads it from that buffer.
  void separate_long_prelude(const std::vector<ValPtr>& g);

  static constexpr int64_t kMaxWholeFactor = 2;
  Program& p_;
  std::map<const AluNode*, std::pair<AluExp, int64_t>> domains_;  // holds each node alive
  std::map<std::tuple<const AluNode*, std::vector<int>, const Pending*>, int> wholes_;
};

}  // namespace kiln::frontend::fusion
