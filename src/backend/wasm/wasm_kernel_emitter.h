// KernelEmitter: the loops of one kernel function (scalar gidx loop, reduction loop,
// epilogue, store), shared by the scalar codegen and the SIMD128 main loop.
#pragma once
#include <unordered_map>
#include <vector>

#include "backend/wasm/wasm_scalar_ops.h"

namespace kiln::wasm {

// The nodes of one expression DAG in evaluation order, each with the loop level at which
// its value changes: 0 = invariant over the dispatch, 1 = per gidx, 2 = per ridx.
// Constants are emitted inline and have level -1.
struct DagPlan {
  std::vector<const AluNode*> nodes;
  std::unordered_map<const AluNode*, int> level;
  static DagPlan of(const AluExp& e) { return of(std::vector<AluExp>{e}); }
  // Several roots (an unrolled reduction's copies): each shared node once, in an order that
  // computes every node after its sources.
  static DagPlan of(const std::vector<AluExp>& roots);
};

class KernelEmitter {
 public:
  // Parameters of k(args, begin, end).
  static constexpr uint32_t kArgs = 0, kBegin = 1, kEnd = 2;

  explicit KernelEmitter(const Kernel& k);
  CodeBuilder& code() { return c_; }
  OpEmitter& ops() { return e_; }
  const Kernel& kernel() const { return k_; }
  const DagPlan& body() const { return body_; }
  const DagPlan* epilogue() const { return red_ ? &epi_ : nullptr; }

  // Reads out_ptr and each input's (ptr, count) from the args table into locals.
  void emit_prologue();
  // Computes (into locals) every node of `plan` at `level`.
  void compute_level(const DagPlan& plan, int level);
  // Pops n's (non-wide) value from the stack into its local instead of computing it.
  void assign(const AluNode* n);
  // The scalar loop over gidx in [from_local, to_local): computes and stores each element.
  void emit_scalar_loop(uint32_t from_local, uint32_t to_local = kEnd);
  // A reduction's epilogue at gidx with the sum in acc_local(), and its store.
  void emit_epilogue_and_store();

  Val val(const AluNode* n) const;  // a computed node, a variable or a constant
  uint32_t ptr_local(int arg) const { return ptr_[size_t(arg)]; }
  uint32_t count_local(int arg) const { return count_[size_t(arg)]; }
  uint32_t out_ptr_local() const { return out_ptr_; }
  uint32_t gidx_local() const { return gidx_; }
  uint32_t ridx_local() const { return ridx_; }
  uint32_t acc_local() const { return acc_; }

 private:
  struct Slot {
    uint32_t local;
    bool wide;
  };
  void compute(const AluNode& n);
  void store(const AluNode* result);  // out[gidx] = result
  void set_slot(const AluNode& n, bool wide);  // pops the stack into n's local

  const Kernel& k_;
  const bool red_;
  DagPlan body_, epi_;
  CodeBuilder c_{3};
  OpEmitter e_{c_};
  uint32_t out_ptr_ = 0, gidx_ = 0, ridx_ = 0, acc_ = 0;
  std::vector<uint32_t> ptr_, count_;
  std::unordered_map<const AluNode*, Slot> slots_;
};


}  // namespace kiln::wasm
