// The C-like renderer shared by the native C++ and the WGSL code generators: a legalized
// expression (ir/legalize.h) becomes one local per distinct node, and each op becomes source
// text by one shared dispatch (the operator table, comparisons, logic, Where, casts, index
// division) that asks a per-language CDialect for what the languages spell differently.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/alu_exp.h"

namespace kiln {

// An operand as text, with what rules read of its node: dtype, value range, constness.
struct CValue {
  std::string s;
  DType dt;
  int64_t vmin = 0, vmax = 0;
  bool is_const = false;
  double value = 0;
  static CValue of(std::string s, const AluExp& e);
};

// The operator of op when C and WGSL both spell it as one infix operator on equal types
// (+ - * / < <= == != & | ^), else null.
const char* c_infix(AluOp op);
std::string infix(const CValue& a, const char* sym, const CValue& b);

// What a language spells its own way. Every hook gets legalized ops only.
class CDialect {
 public:
  virtual ~CDialect() = default;
  virtual const char* name() const = 0;  // for errors: "native", "webgpu"
  virtual const char* type(DType d) const = 0;
  virtual std::string literal(DType d, double v) const = 0;
  virtual std::string declare(DType d, const std::string& name, const std::string& expr) const = 0;
  virtual std::string load(const AluNode& n, const std::string& index) const = 0;
  virtual std::string select(const CValue& c, const CValue& a, const CValue& b) const = 0;
  virtual std::string is_nan(const CValue& x) const = 0;
  virtual std::string cast(DType to, const CValue& x) const = 0;
  virtual std::string bitcast(DType to, const CValue& x) const = 0;
  // The prefix that gives an int or bool expression back its type: C promotes bool and
  // narrow operands of ~ & | to int; WGSL keeps the type ("").
  virtual std::string retype(DType d) const = 0;
  virtual std::string compare(AluOp op, const CValue& a, const CValue& b) const { return infix(a, c_infix(op), b); }
  // Every other op on ints (Neg, Recip, Add/Sub/Mul, Div, Idiv/Mod outside the index form,
  // Pow, Max/Min, Shl/Shr) and on floats; "" when the language has no rule.
  virtual std::string int_op(AluOp op, DType d, const std::vector<CValue>& a, const CValue& res) const = 0;
  virtual std::string float_op(AluOp op, DType d, const std::vector<CValue>& a) const = 0;
};

// The text of op (result dtype d, result range in res) over rendered operands; throws naming
// the op when the dialect has no rule.
std::string render_op(const CDialect& l, AluOp op, DType d, const std::vector<CValue>& a, const CValue& res);

// Emits the statements of one scope, one declaration per distinct node (children first;
// structurally equal nodes, equal text, share one), and returns the name holding a node.
class CScope {
 public:
  CScope(const CDialect& l, std::ostream& os, std::string indent, std::string prefix, std::map<VarId, std::string> vars)
      : l_(l), os_(os), indent_(std::move(indent)), prefix_(std::move(prefix)), vars_(std::move(vars)) {}

  std::string emit(const AluExp& e) { return emit_node(*e.get()); }
  // Names a node computed elsewhere (a hoisted value): emit() reads it, not its subtree.
  void preset(const AluNode* n, std::string name) { names_[n] = std::move(name); }

 private:
  const std::string& emit_node(const AluNode& n);
  std::string node(const AluNode& n);

  const CDialect& l_;
  std::ostream& os_;
  std::string indent_, prefix_;
  std::map<VarId, std::string> vars_;
  std::unordered_map<const AluNode*, std::string> names_;
  std::unordered_map<std::string, std::string> cse_;
  int count_ = 0;
};

}  // namespace kiln
