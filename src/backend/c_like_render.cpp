// The shared part of the C++ and WGSL renderers: the operator table, the rules both languages
// spell alike, and the one-local-per-node emission.
#include "backend/c_like_render.h"

#include "ir/error.h"
#include "ir/legalize.h"

namespace kiln {

CValue CValue::of(std::string s, const AluExp& e) {
  return {std::move(s), e.dtype(), e.vmin(), e.vmax(), e.is_const(), e.is_const() ? e.value() : 0};
}

const char* c_infix(AluOp op) {
  switch (op) {
    case AluOp::Add: return "+";
    case AluOp::Sub: return "-";
    case AluOp::Mul: return "*";
    case AluOp::Div: return "/";
    case AluOp::CmpLt: return "<";
    case AluOp::CmpLe: return "<=";
    case AluOp::CmpEq: return "==";
    case AluOp::CmpNe: return "!=";
    case AluOp::And: return "&";
    case AluOp::Or: return "|";
    case AluOp::Xor: return "^";
    default: return nullptr;
  }
}

std::string infix(const CValue& a, const char* sym, const CValue& b) { return "(" + a.s + " " + sym + " " + b.s + ")"; }

namespace {

// Not, And, Or, Xor of ints and bools. Both operands of & and | are computed locals, so the
// non-short-circuit form is the same value; it also keeps g++'s mask loops branch-free. Bool
// ^ is != (WGSL has no ^ on bool; C's would give an int).
std::string logic(const CDialect& l, AluOp op, DType d, const std::vector<CValue>& a) {
  if (op == AluOp::Not) return d == DType::Bool ? "(!" + a[0].s + ")" : l.retype(d) + "(~" + a[0].s + ")";
  if (op == AluOp::Xor && d == DType::Bool) return infix(a[0], "!=", a[1]);
  return l.retype(d) + infix(a[0], c_infix(op), a[1]);
}

// The rules both languages spell alike; "" for the ops each spells its own way.
std::string shared_rule(const CDialect& l, AluOp op, DType d, const std::vector<CValue>& a) {
  if (is_comparison(op)) return l.compare(op, a[0], a[1]);
  switch (op) {
    case AluOp::Where: return l.select(a[0], a[1], a[2]);
    case AluOp::IsNan: return l.is_nan(a[0]);
    case AluOp::Cast: return l.cast(d, a[0]);
    case AluOp::Bitcast: return l.bitcast(d, a[0]);
    case AluOp::Not:
    case AluOp::And:
    case AluOp::Or:
    case AluOp::Xor: return is_float(d) ? "" : logic(l, op, d, a);
    case AluOp::Idiv:
    case AluOp::Mod: {
      // Index arithmetic: truncation is the floor here, so the languages' own / and %.
      const bool index = is_index_divmod(op, a[0].dt, a[0].vmin, a[1].is_const, a[1].value);
      return index ? infix(a[0], op == AluOp::Idiv ? "/" : "%", a[1]) : "";
    }
    default: return "";
  }
}

}  // namespace

std::string render_op(const CDialect& l, AluOp op, DType d, const std::vector<CValue>& a, const CValue& res) {
  std::string r = shared_rule(l, op, d, a);
  if (r.empty()) r = is_float(d) ? l.float_op(op, d, a) : l.int_op(op, d, a, res);
  if (r.empty())
    fail(l.name(), "no rule for ", alu_info(op).name, " on ", dtype_name(d), " (from ",
         a.empty() ? "-" : dtype_name(a[0].dt), ")");
  return r;
}

const std::string& CScope::emit_node(const AluNode& n) {
  auto it = names_.find(&n);
  if (it != names_.end()) return it->second;
  for (auto& c : n.src) emit_node(c.node());
  std::string name = node(n);
  return names_[&n] = std::move(name);
}

std::string CScope::node(const AluNode& n) {
  if (n.op == AluOp::Const) return l_.literal(n.dtype, n.value);
  if (n.op == AluOp::Var) {
    auto it = vars_.find(VarId(n.arg));
    if (it == vars_.end()) fail(l_.name(), "kernel uses variable ", n.arg, " outside its scope");
    return it->second;
  }
  std::vector<CValue> ops;
  for (auto& s : n.src) ops.push_back(CValue::of(names_.at(s.get()), s));
  const CValue res{"", n.dtype, n.vmin, n.vmax};
  const std::string expr = n.op == AluOp::Load ? l_.load(n, ops[0].s) : render_op(l_, n.op, n.dtype, ops, res);
  // Structurally equal nodes (equal op, dtype and operands) have equal text: one local.
  const std::string key = std::string(l_.type(n.dtype)) + "|" + expr;
  auto it = cse_.find(key);
  if (it != cse_.end()) return it->second;
  std::string name = prefix_ + std::to_string(count_++);
  os_ << indent_ << l_.declare(n.dtype, name, expr) << "\n";
  cse_[key] = name;
  return name;
}

}  // namespace kiln
