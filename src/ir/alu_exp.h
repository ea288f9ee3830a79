// AluExp: an immutable expression tree over scalars (the body of a Kernel). Constructors
// simplify as they build: constants fold, identities vanish, and index arithmetic is
// reduced using the value range each integer node carries.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/alu_op.h"
#include "ir/dtype.h"

namespace kiln {

struct AluNode;

class AluExp {
 public:
  AluExp() = default;
  explicit AluExp(std::shared_ptr<const AluNode> n) : n_(std::move(n)) {}

  // Leaves.
  static AluExp constant(DType dtype, double value);
  // A weakly typed scalar keeps its full double value, so that promoting it to a wider
  // float loses nothing (0.1 + float64 array is exact); casts round it.
  static AluExp weak_constant(DType dtype, double value);
  static AluExp idx(int64_t value) { return constant(DType::Int32, double(value)); }
  // An index variable with the inclusive range [0, max].
  static AluExp var(VarId id, DType dtype, int64_t max);
  // An index variable with the inclusive range [min, max] (a code generator's loop over part
  // of the output: ir/index_split.h).
  static AluExp var(VarId id, DType dtype, int64_t min, int64_t max);
  // A reduction's accumulator in its epilogue: any value of its dtype (an index range of
  // [0, 0] there let the simplifier fold max(acc, -5) to acc for int32 sums).
  static AluExp accumulator(DType dtype);
  // The value of a kernel's prelude (Kernel::prelude): likewise any value of its dtype.
  static AluExp prelude_value(DType dtype);
  static AluExp load(DType dtype, int arg, const AluExp& index);

  // Generic builders (simplifying).
  static AluExp unary(AluOp op, const AluExp& a);
  static AluExp binary(AluOp op, const AluExp& a, const AluExp& b);
  static AluExp where(const AluExp& cond, const AluExp& a, const AluExp& b);
  static AluExp cast(DType dtype, const AluExp& a);
  static AluExp bitcast(DType dtype, const AluExp& a);

  const AluNode& node() const { return *n_; }
  const AluNode* get() const { return n_.get(); }
  explicit operator bool() const { return n_ != nullptr; }
  AluOp op() const;
  DType dtype() const;
  const AluExp& src(int i) const;
  bool is_const() const { return n_ && op() == AluOp::Const; }
  bool is_const(double v) const;
  double value() const;  // of a Const
  int64_t vmin() const;  // inclusive integer range; floats get [-inf, inf] as int64 limits
  int64_t vmax() const;

  // Replaces every Var `id` (any range) by `with`, re-simplifying.
  AluExp substitute(VarId id, const AluExp& with) const;
  // The same op (dtype, arg) over new sources, simplified as the builders do.
  AluExp with_src(const std::vector<AluExp>& src) const;
  // Renumbers Load args through `map` (old arg -> new arg).
  AluExp remap_loads(const std::function<int(int)>& map) const;
  // Applies `fn` to every distinct node once, children first.
  void visit(const std::function<void(const AluNode&)>& fn) const;
  int node_count() const;  // distinct nodes
  std::string to_string() const;

 private:
  std::shared_ptr<const AluNode> n_;
};

struct AluNode {
  AluOp op;
  DType dtype;
  std::vector<AluExp> src;
  double value = 0;  // Const value
  int arg = 0;       // Load: input number; Var: VarId
  int64_t vmin = 0, vmax = 0;
};

// Index arithmetic on int32 expressions.
AluExp operator+(const AluExp& a, const AluExp& b);
AluExp operator-(const AluExp& a, const AluExp& b);
AluExp operator*(const AluExp& a, const AluExp& b);
AluExp operator/(const AluExp& a, const AluExp& b);  // floor division
AluExp operator%(const AluExp& a, const AluExp& b);
AluExp operator<(const AluExp& a, const AluExp& b);
AluExp operator>=(const AluExp& a, const AluExp& b);
AluExp operator&&(const AluExp& a, const AluExp& b);
AluExp operator+(const AluExp& a, int64_t b);
AluExp operator*(const AluExp& a, int64_t b);
AluExp operator/(const AluExp& a, int64_t b);
AluExp operator%(const AluExp& a, int64_t b);

}  // namespace kiln
