// The native code generator: AluExp ops to C++ expressions by rule tables, hash-consed
// into one local per distinct node, inside the loop nest the Plan chose.
#include "backend/native/native_codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <unordered_map>

#include "backend/native/native_prelude.h"
#include "ir/error.h"

namespace kiln::native {

ScheduleParams native_params() {
  return {
      .upcast = 16,  // columns per block: 4 SSE / 2 AVX vectors of float32
      // Rows per block; 4 x 16 accumulators fit the 16 xmm registers. Measured on a 256^3
      // float32 matmul, one core, 2026-12-03 (docs/ARCHITECTURE.md, "Native backend"): at -O3
      // 4 x 16 40.6 GFLOP/s, 8 x 16 38.5. KILN_NATIVE_TM overrides it.
      .tile_out = 4,
  };
}

namespace {

int64_t native_tm() {
  static const int64_t v = [] {
    const char* e = std::getenv("KILN_NATIVE_TM");
    return e && *e ? std::atoll(e) : native_params().tile_out;
  }();
  return v;
}

const char* ctype(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "i32";
    case DType::Uint32: return "u32";
    case DType::Float16: return "float";  // a float holding a float16 value exactly
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "?";
}

// How elements sit in memory (float16 as its bits, bool as one byte).
const char* storage_type(DType d) {
  switch (d) {
    case DType::Bool: return "u8";
    case DType::Float16: return "u16";
    default: return ctype(d);
  }
}

std::string literal(DType d, double v) {
  char buf[64];
  const bool single = d == DType::Float32 || d == DType::Float16;
  switch (d) {
    case DType::Bool: return v != 0 ? "true" : "false";
    case DType::Int32: std::snprintf(buf, sizeof buf, "((i32)%lldLL)", (long long)v); return buf;
    case DType::Uint32: std::snprintf(buf, sizeof buf, "((u32)%lluULL)", (unsigned long long)v); return buf;
    default:
      if (std::isnan(v)) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
      if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (single ? "__builtin_inff())" : "__builtin_inf())");
      // Hex floats are exact; the value is already rounded to d.
      std::snprintf(buf, sizeof buf, single ? "%af" : "%a", v);
      return std::string("(") + buf + ")";
  }
}

// The expression that rounds a double-valued expression to d, as round_to does.
std::string round_double(DType d, const std::string& x) {
  switch (d) {
    case DType::Float64: return x;
    case DType::Float32: return "(float)(" + x + ")";
    case DType::Float16: return "k_rh(" + x + ")";
    case DType::Int32: return "k_ri(" + x + ")";
    case DType::Uint32: return "k_ru(" + x + ")";
    case DType::Bool: return "((" + x + ") != 0)";
  }
  return x;
}

struct Operand {
  std::string s;
  DType dt;
  int64_t vmin = 0, vmax = 0;
  bool is_const = false;
  double value = 0;
};
std::string D(const Operand& a) { return "(double)" + a.s; }

// Unary ops that alu_eval computes with a libm function on doubles, then rounds.
const std::map<AluOp, const char*>& libm_unary() {
  static const std::map<AluOp, const char*> t = {
      {AluOp::Exp, "exp"},     {AluOp::Exp2, "exp2"},   {AluOp::Expm1, "expm1"}, {AluOp::Log, "log"},
      {AluOp::Log2, "log2"},   {AluOp::Log1p, "log1p"}, {AluOp::Sin, "sin"},     {AluOp::Cos, "cos"},
      {AluOp::Tan, "tan"},     {AluOp::Asin, "asin"},   {AluOp::Acos, "acos"},   {AluOp::Atan, "atan"},
      {AluOp::Sinh, "sinh"},   {AluOp::Cosh, "cosh"},   {AluOp::Tanh, "tanh"},   {AluOp::Asinh, "asinh"},
      {AluOp::Acosh, "acosh"}, {AluOp::Atanh, "atanh"}, {AluOp::Erf, "erf"},
      // Correctly rounded in every precision, so g++ may inline them.
      {AluOp::Sqrt, "__builtin_sqrt"}, {AluOp::Floor, "__builtin_floor"}, {AluOp::Ceil, "__builtin_ceil"},
      {AluOp::Round, "__builtin_nearbyint"}, {AluOp::Trunc, "__builtin_trunc"},
  };
  return t;
}
// Correctly rounded float32 versions: float(f(double(x))) == f_float(x) for these (a
// double-width intermediate rounds innocuously: 53 >= 2 * 24 + 2).
const std::map<AluOp, const char*>& f32_exact_unary() {
  static const std::map<AluOp, const char*> t = {
      {AluOp::Sqrt, "__builtin_sqrtf"}, {AluOp::Floor, "__builtin_floorf"}, {AluOp::Ceil, "__builtin_ceilf"},
      {AluOp::Round, "__builtin_nearbyintf"}, {AluOp::Trunc, "__builtin_truncf"},
  };
  return t;
}
const std::map<AluOp, const char*>& infix() {
  static const std::map<AluOp, const char*> t = {
      {AluOp::Add, "+"},   {AluOp::Sub, "-"},   {AluOp::Mul, "*"},   {AluOp::Div, "/"},
      {AluOp::CmpLt, "<"}, {AluOp::CmpLe, "<="}, {AluOp::CmpEq, "=="}, {AluOp::CmpNe, "!="},
  };
  return t;
}

// alu_eval's value before rounding, computed on doubles: the float rule of every op.
std::string float_formula(AluOp op, const std::vector<Operand>& a) {
  auto& lu = libm_unary();
  if (auto it = lu.find(op); it != lu.end()) return std::string(it->second) + "(" + D(a[0]) + ")";
  switch (op) {
    case AluOp::Neg: return "(-" + D(a[0]) + ")";
    case AluOp::Recip: return "(1.0 / " + D(a[0]) + ")";
    case AluOp::Add: case AluOp::Sub: case AluOp::Mul: case AluOp::Div:
      return "(" + D(a[0]) + " " + infix().at(op) + " " + D(a[1]) + ")";
    case AluOp::Idiv: return "k_fidiv(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Mod: return "k_fmod(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Pow: return "pow(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Atan2: return "atan2(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Max: case AluOp::Min:
      return "((k_isnan(" + D(a[0]) + ") || k_isnan(" + D(a[1]) + ")) ? __builtin_nan(\"\") : (" + D(a[0]) +
             (op == AluOp::Max ? " > " : " < ") + D(a[1]) + " ? " + D(a[0]) + " : " + D(a[1]) + "))";
    default: return "";
  }
}

bool full_range(const Operand& r, DType d) {
  return d == DType::Int32 ? (r.vmin <= INT32_MIN && r.vmax >= INT32_MAX) : (r.vmin <= 0 && r.vmax >= int64_t(UINT32_MAX));
}

// Integer (int32 / uint32) rules; the result range tells when arithmetic cannot wrap.
std::string int_formula(AluOp op, DType d, const std::vector<Operand>& a, const Operand& res) {
  const bool s = d == DType::Int32;
  const std::string x = a[0].s, y = a.size() > 1 ? a[1].s : "";
  const bool positive_divisor = a.size() > 1 && a[1].is_const && a[1].value > 0 && a[0].vmin >= 0;
  switch (op) {
    case AluOp::Neg: return s ? "(i32)(0u - (u32)" + x + ")" : "(u32)(0u - " + x + ")";
    case AluOp::Recip:
      return s ? "(" + x + " == 1 ? 1 : " + x + " == -1 ? -1 : 0)" : "(u32)(" + x + " == 1u ? 1u : 0u)";
    case AluOp::Not: return "(" + std::string(ctype(d)) + ")(~" + x + ")";
    case AluOp::Add: case AluOp::Sub: case AluOp::Mul:
      // In range (the simplifier proved it): plain signed arithmetic, which g++ can
      // analyze as affine indexing; otherwise wrap through uint32.
      if (s && !full_range(res, d)) return "(" + x + " " + infix().at(op) + " " + y + ")";
      return s ? "(i32)((u32)" + x + " " + infix().at(op) + " (u32)" + y + ")"
               : "(u32)(" + x + " " + infix().at(op) + " " + y + ")";
    case AluOp::Div: return s ? "k_idiv_t(" + x + ", " + y + ")" : "(" + y + " == 0u ? 0u : " + x + " / " + y + ")";
    case AluOp::Idiv:
      if (positive_divisor || !s) return s ? "(" + x + " / " + y + ")" : "(" + y + " == 0u ? 0u : " + x + " / " + y + ")";
      return "k_idiv_f(" + x + ", " + y + ")";
    case AluOp::Mod:
      if (positive_divisor || !s) return s ? "(" + x + " % " + y + ")" : "(" + y + " == 0u ? 0u : " + x + " % " + y + ")";
      return "k_imod(" + x + ", " + y + ")";
    case AluOp::Pow: return s ? "k_ipow(" + x + ", " + y + ")" : "k_uupow(" + x + ", " + y + ")";
    case AluOp::Max: return "(" + x + " > " + y + " ? " + x + " : " + y + ")";
    case AluOp::Min: return "(" + x + " < " + y + " ? " + x + " : " + y + ")";
    case AluOp::And: return "(" + std::string(ctype(d)) + ")(" + x + " & " + y + ")";
    case AluOp::Or: return "(" + std::string(ctype(d)) + ")(" + x + " | " + y + ")";
    case AluOp::Xor: return "(" + std::string(ctype(d)) + ")(" + x + " ^ " + y + ")";
    case AluOp::Shl: case AluOp::Shr:
      // A shift the simplifier proved in [0, 32) is C's own (vectorizable); others clamp.
      if (a[1].vmin >= 0 && a[1].vmax < 32)
        return op == AluOp::Shl ? "(" + std::string(ctype(d)) + ")((u32)" + x + " << " + y + ")"
                                : "(" + std::string(ctype(d)) + ")(" + x + " >> " + y + ")";
      return std::string(op == AluOp::Shl ? (s ? "k_ishl(" : "k_ushl(") : (s ? "k_ishr(" : "k_ushr(")) + x +
             ", (i64)" + y + ")";
    default: {
      std::string f = float_formula(op, a);  // e.g. sqrt of an int: a double rounded back
      return f.empty() ? "" : round_double(d, f);
    }
  }
}

// Bool results of arithmetic (values 0/1): alu_eval's rule, then x != 0. Bitwise & and |
// rather than && and ||: both sides are computed locals anyway, and short-circuit
// branches would stop g++ from vectorizing masks (padded views' where conditions).
std::string bool_formula(AluOp op, const std::vector<Operand>& a) {
  const std::string x = a[0].s, y = a.size() > 1 ? a[1].s : "";
  switch (op) {
    case AluOp::Not: return "(!" + x + ")";
    case AluOp::And: case AluOp::Mul: case AluOp::Min: case AluOp::Div: case AluOp::Idiv:
      return "(bool)(" + x + " & " + y + ")";
    case AluOp::Or: case AluOp::Add: case AluOp::Max: return "(bool)(" + x + " | " + y + ")";
    case AluOp::Xor: case AluOp::Sub: return "(" + x + " != " + y + ")";
    case AluOp::Mod: return "false";
    case AluOp::Pow: return "(bool)(!" + y + " | " + x + ")";  // x ** 0 == 1
    case AluOp::Neg: case AluOp::Recip: return x;
    default: return "";
  }
}

std::string cast_formula(DType to, const Operand& a) {
  const DType from = a.dt;
  const std::string x = a.s;
  if (to == DType::Bool) return "(" + x + " != 0)";
  if (to == DType::Float64) return "(double)" + x;
  // An int32/uint32 is exact in a double, so C's direct conversion rounds the same way as
  // going through one; the direct form is what g++ vectorizes (cvtdq2ps when non-negative).
  if (to == DType::Float32 && from == DType::Uint32 && a.vmax <= INT32_MAX) return "(float)(i32)" + x;
  if (to == DType::Float32 && is_int(from)) return "(float)" + x;
  if (to == DType::Float32) return from == DType::Float16 ? x : "(float)(double)" + x;
  if (to == DType::Float16) return from == DType::Float16 ? x : "k_rh((double)" + x + ")";
  if (is_float(from)) return std::string(to == DType::Int32 ? "k_f2i(" : "k_f2u(") + "(double)" + x + ")";
  return "(" + std::string(ctype(to)) + ")" + x;  // int <-> int wraps, bool -> 0/1
}

std::string bitcast_formula(DType to, const Operand& a) {
  if (a.dt == DType::Float32 && is_int(to)) return "(" + std::string(ctype(to)) + ")k_f_bits(" + a.s + ")";
  if (is_int(a.dt) && to == DType::Float32) return "k_bits_f((u32)" + a.s + ")";
  if (is_int(a.dt) && is_int(to)) return "(" + std::string(ctype(to)) + ")" + a.s;
  return "";
}

// The C++ expression for `op` with result dtype d; empty when there is no rule.
std::string op_formula(AluOp op, DType d, const std::vector<Operand>& a, const Operand& res) {
  if (is_comparison(op)) return "(" + a[0].s + " " + infix().at(op) + " " + a[1].s + ")";
  switch (op) {
    case AluOp::Where: return "(" + a[0].s + " ? " + a[1].s + " : " + a[2].s + ")";
    case AluOp::IsNan: return is_float(a[0].dt) ? "(" + a[0].s + " != " + a[0].s + ")" : "false";
    case AluOp::Cast: return cast_formula(d, a[0]);
    case AluOp::Bitcast: return bitcast_formula(d, a[0]);
    default: break;
  }
  if (d == DType::Bool) return bool_formula(op, a);
  if (is_int(d)) return int_formula(op, d, a, res);
  if (d == DType::Float32) {
    // Ops whose float32 result equals rounding the double result: plain float code, which
    // g++ vectorizes.
    auto& ex = f32_exact_unary();
    if (auto it = ex.find(op); it != ex.end()) return std::string(it->second) + "(" + a[0].s + ")";
    switch (op) {
      case AluOp::Neg: return "(-" + a[0].s + ")";
      case AluOp::Recip: return "(1.0f / " + a[0].s + ")";
      case AluOp::Add: case AluOp::Sub: case AluOp::Mul: case AluOp::Div:
        return "(" + a[0].s + " " + infix().at(op) + " " + a[1].s + ")";
      case AluOp::Max: case AluOp::Min:
        return "((" + a[0].s + " != " + a[0].s + " || " + a[1].s + " != " + a[1].s + ") ? __builtin_nanf(\"\") : (" +
               a[0].s + (op == AluOp::Max ? " > " : " < ") + a[1].s + " ? " + a[0].s + " : " + a[1].s + "))";
      default: break;
    }
  }
  if (op == AluOp::Not) return "";
  std::string f = float_formula(op, a);
  return f.empty() ? "" : round_double(d, f);
}

// Emits the statements of one expression scope, one `const T vN = ...;` per distinct node.
class ScopeEmitter {
 public:
  ScopeEmitter(std::ostringstream& os, std::string indent, std::string prefix,
               std::map<VarId, std::string> vars, const std::map<const AluNode*, bool>& guards)
      : os_(os), indent_(std::move(indent)), prefix_(std::move(prefix)), vars_(std::move(vars)),
        guards_(guards) {}

  // Children first; a preset node's subtree is not emitted (computed elsewhere).
  std::string emit(const AluExp& e) { return emit_node(*e.get()); }
  // Names a node computed elsewhere (a hoisted value), so emit() reads it instead.
  void preset(const AluNode* n, std::string name) { names_[n] = std::move(name); }

 private:
  const std::string& emit_node(const AluNode& n) {
    auto it = names_.find(&n);
    if (it != names_.end()) return it->second;
    for (auto& c : n.src) emit_node(c.node());
    return names_[&n] = node(n);
  }

  std::string node(const AluNode& n) {
    if (n.op == AluOp::Const) return literal(n.dtype, n.value);
    if (n.op == AluOp::Var) {
      auto it = vars_.find(VarId(n.arg));
      if (it == vars_.end()) fail("native", "kernel uses variable ", n.arg, " outside its scope");
      return it->second;
    }
    std::vector<Operand> ops;
    for (auto& s : n.src) {
      Operand o{names_.at(s.get()), s.dtype(), s.vmin(), s.vmax(), s.is_const(), s.is_const() ? s.value() : 0};
      ops.push_back(o);
    }
    Operand res{"", n.dtype, n.vmin, n.vmax};
    std::string expr;
    if (n.op == AluOp::Load) {
      std::string p = "in" + std::to_string(n.arg);
      std::string v = p + "[" + ops[0].s + "]";
      if (n.dtype == DType::Bool) v = "(" + v + " != 0)";
      if (n.dtype == DType::Float16) v = "k_h2f(" + v + ")";
      auto g = guards_.find(&n);
      if (g != guards_.end() && g->second)
        v = "((u32)" + ops[0].s + " < (u32)cnt[" + std::to_string(n.arg) + "] ? " + v + " : " +
            literal(n.dtype, 0) + ")";
      expr = v;
    } else {
      expr = op_formula(n.op, n.dtype, ops, res);
      if (expr.empty())
        fail("native", "no C++ rule for ", alu_info(n.op).name, " on ", dtype_name(n.dtype), " (from ",
             ops.empty() ? "-" : dtype_name(ops[0].dt), ")");
    }
    // Hash-consing: structurally equal nodes (equal op, dtype and operands) share a local.
    std::string key = std::string(ctype(n.dtype)) + "|" + expr;
    auto it = cse_.find(key);
    if (it != cse_.end()) return it->second;
    std::string name = prefix_ + std::to_string(count_++);
    os_ << indent_ << "const " << ctype(n.dtype) << " " << name << " = " << expr << ";\n";
    cse_[key] = name;
    return name;
  }

  std::ostringstream& os_;
  std::string indent_, prefix_;
  std::map<VarId, std::string> vars_;
  const std::map<const AluNode*, bool>& guards_;
  std::unordered_map<const AluNode*, std::string> names_;
  std::unordered_map<std::string, std::string> cse_;
  int count_ = 0;
};

std::string store(DType d, const std::string& v) {
  if (d == DType::Bool) return "(u8)(" + v + " ? 1 : 0)";
  if (d == DType::Float16) return "k_f2h(" + v + ")";
  return v;
}

bool uses_var(const AluExp& e, VarId id) {
  bool used = false;
  e.visit([&](const AluNode& n) { used |= n.op == AluOp::Var && n.arg == int(id); });
  return used;
}

// The Load nodes of the emitted expressions in emission order (body, then epilogue).
std::vector<const AluNode*> loads(const Plan& p) {
  std::vector<const AluNode*> out;
  auto add = [&](const AluExp& e) {
    e.visit([&](const AluNode& n) {
      if (n.op == AluOp::Load) out.push_back(&n);
    });
  };
  add(p.body);
  if (p.kernel.reduction) add(p.kernel.reduction->epilogue);
  return out;
}

// The body in block coordinates: gidx = m * cols + blk * tn + lane, with m in gidx's place,
// the column block in acc's (a reduction body never reads acc) and the SIMD column in lane's.
// The simplifier then turns gidx // cols into m and (gidx % cols) // tn into blk, so loads
// become affine in lane and g++ vectorizes them.
AluExp block_body(const AluExp& exp, int64_t rows, int64_t cols, int64_t tn) {
  AluExp m = AluExp::var(VarId::Gidx, DType::Int32, rows - 1);
  AluExp blk = AluExp::var(VarId::Acc, DType::Int32, cols / tn - 1);
  AluExp lane = AluExp::var(VarId::Lane, DType::Int32, tn - 1);
  return exp.substitute(VarId::Gidx, m * AluExp::idx(cols) + blk * AluExp::idx(tn) + lane);
}

bool uses_row(const AluNode& n, std::unordered_map<const AluNode*, bool>& memo) {
  auto it = memo.find(&n);
  if (it != memo.end()) return it->second;
  bool r = n.op == AluOp::Var && n.arg == int(VarId::Gidx);
  for (auto& c : n.src) r = r || uses_row(c.node(), memo);
  return memo[&n] = r;
}

// Work a block's rows can share: float nodes that do not depend on the row, beyond a bare
// load (a dequantized weight: shift, mask, convert, scale). Hoisted per column (below).
bool shareable(const AluNode& n, std::unordered_map<const AluNode*, bool>& memo) {
  return is_float(n.dtype) && n.op != AluOp::Load && n.op != AluOp::Const && !uses_row(n, memo);
}

int shared_nodes(const AluExp& body) {
  std::unordered_map<const AluNode*, bool> memo;
  int count = 0;
  body.visit([&](const AluNode& n) { count += shareable(n, memo); });
  return count;
}

// The output split (rows x cols) for a contraction: the scheduler's innermost axis, unless a
// wider one (another gidx // c or gidx % c of the body) leaves more of the body shared by
// the rows of a block. With weights stored row-interleaved, the scheduler sees the 16-wide
// interleave as the innermost axis and each row of a block reads other weights; splitting at
// the true output width instead lets a prefill's tokens share each dequantized weight.
int64_t shared_columns(const Kernel& k, int64_t inner) {
  std::vector<int64_t> candidates{inner};
  k.exp.visit([&](const AluNode& n) {
    if ((n.op != AluOp::Idiv && n.op != AluOp::Mod) || !n.src[1].is_const()) return;
    if (n.src[0].op() != AluOp::Var || n.src[0].node().arg != int(VarId::Gidx)) return;
    const int64_t c = int64_t(n.src[1].value());
    if (c > inner && c < k.size && k.size % c == 0 && c % inner == 0) candidates.push_back(c);
  });
  int64_t best = inner;
  int best_shared = -1;
  for (int64_t c : candidates) {
    const int64_t tn = largest_divisor(c, native_params().upcast);
    const int shared = shared_nodes(block_body(k.exp, k.size / c, c, tn));
    if (shared > best_shared) best = c, best_shared = shared;
  }
  return best;
}

}  // namespace

Plan plan_kernel(const Kernel& k) {
  Plan p;
  p.kernel = k;
  p.schedule = schedule_kernel(k, native_params());
  p.body = k.exp;
  const int64_t nodes = k.exp.node_count() + (k.reduction ? k.reduction->epilogue.node_count() : 0);
  if (k.size >= (int64_t(1) << 31) || (k.reduction && k.reduction->size >= (int64_t(1) << 31)))
    fail("native", "kernel of ", k.size, " elements exceeds the int32 index range");
  if (!k.reduction) {
    p.items = k.size;
    p.work_per_item = nodes;
    p.loads = loads(p);
    return p;
  }
  if (uses_var(k.exp, VarId::Acc)) fail("native", "reduction body reads acc, expected only the epilogue to");
  const Schedule& s = p.schedule;
  p.mode = Plan::Mode::Tiled;
  if (s.out_shape.size() == 2) {
    p.cols = shared_columns(k, s.out_shape[1]);
    p.rows = k.size / p.cols;
    // The scheduler tiles both axes up to max(tile_out, upcast); registers hold only
    // tile_out rows (measured below), so the row block is capped again here.
    p.tm = largest_divisor(p.rows, native_tm());
    p.tn = p.cols == s.out_shape[1] ? s.tile[1] : largest_divisor(p.cols, native_params().upcast);
    p.body = block_body(k.exp, p.rows, p.cols, p.tn);
  } else {
    // A row reduction: blocks of consecutive outputs, each with its own accumulator, so
    // the reduction keeps alu order per output while the block gives independent chains.
    p.rows = 1;
    p.cols = k.size;
    p.tn = s.tile[0];
  }
  p.items = (p.rows / p.tm) * (p.cols / p.tn);
  p.work_per_item = p.tm * p.tn * k.reduction->size * nodes;
  p.loads = loads(p);
  return p;
}

std::vector<bool> load_guards(const Plan& p, const std::vector<int64_t>& counts, int64_t slack_bytes) {
  std::vector<bool> g;
  for (const AluNode* n : p.loads) {
    const AluExp& idx = n->src[0];
    int64_t count = size_t(n->arg) < counts.size() ? counts[size_t(n->arg)] : 0;
    int64_t slack = slack_bytes / itemsize(p.kernel.inputs[size_t(n->arg)]);
    g.push_back(idx.vmin() < -slack || idx.vmax() >= count + slack);
  }
  return g;
}

namespace {

// The shareable nodes (see shareable) that a row-dependent node or the root reads: computed
// once per column of a block, before its rows, into arrays h0[tn], h1[tn], ...
std::vector<const AluNode*> hoisted_nodes(const Plan& p) {
  std::vector<const AluNode*> out;
  if (p.rows <= 1 || p.tm <= 1) return out;
  std::unordered_map<const AluNode*, bool> memo;
  auto add = [&](const AluNode& n) {
    if (shareable(n, memo) && std::find(out.begin(), out.end(), &n) == out.end()) out.push_back(&n);
  };
  p.body.visit([&](const AluNode& n) {
    if (!shareable(n, memo))
      for (auto& c : n.src) add(c.node());
  });
  add(p.body.node());
  return out;
}

// The reduction loop nest of a Tiled plan: accumulators for tm x tn outputs, the reduction
// steps, then the epilogue per output.
void emit_tiled(std::ostringstream& os, const Plan& p, const std::map<const AluNode*, bool>& guards) {
  const Kernel& k = p.kernel;
  const Reduction& red = *k.reduction;
  const DType adt = k.exp.dtype(), odt = k.out_dtype();
  const char* at = ctype(adt);
  const int64_t nb = p.cols / p.tn;
  os << "  for (i64 it = begin; it < end; ++it) {\n"
     << "    const i32 blk = (i32)(it % " << nb << "), m0 = (i32)(it / " << nb << ") * " << p.tm
     << ", n0 = blk * " << p.tn << ";\n    (void)blk;\n"
     << "    " << at << " accs[" << p.tm << "][" << p.tn << "];\n"
     << "    for (int i = 0; i < " << p.tm << "; ++i)\n      for (int j = 0; j < " << p.tn
     << "; ++j) accs[i][j] = " << literal(adt, round_to(adt, Reduction::identity(red.op, adt))) << ";\n"
     << "    for (i32 ridx = 0; ridx < " << red.size << "; ++ridx) {\n";
  std::map<VarId, std::string> vars;
  if (p.rows > 1) vars = {{VarId::Gidx, "m"}, {VarId::Acc, "blk"}, {VarId::Lane, "j"}, {VarId::Ridx, "ridx"}};
  else vars = {{VarId::Gidx, "n"}, {VarId::Ridx, "ridx"}};
  ScopeEmitter body(os, "          ", "v", vars, guards);
  const std::vector<const AluNode*> hoisted = hoisted_nodes(p);
  if (!hoisted.empty()) {
    ScopeEmitter per_column(os, "        ", "w", vars, guards);
    for (size_t h = 0; h < hoisted.size(); h++)
      os << "      " << ctype(hoisted[h]->dtype) << " h" << h << "[" << p.tn << "];\n";
    os << "      for (int j = 0; j < " << p.tn << "; ++j) {\n";
    for (size_t h = 0; h < hoisted.size(); h++) {
      const std::string v = per_column.emit(AluExp(std::shared_ptr<const AluNode>(std::shared_ptr<const AluNode>{}, hoisted[h])));
      os << "        h" << h << "[j] = " << v << ";\n";
      body.preset(hoisted[h], "h" + std::to_string(h) + "[j]");
    }
    os << "      }\n";
  }
  os << "      for (int i = 0; i < " << p.tm << "; ++i) {\n"
     << "        const i32 m = m0 + i;\n        (void)m;\n"
     << "        for (int j = 0; j < " << p.tn << "; ++j) {\n"
     << "          const i32 n = n0 + j;\n          (void)n;\n";
  const std::string v = body.emit(p.body);
  Operand a{"accs[i][j]", adt}, b{v, adt};
  Operand res{"", adt, INT32_MIN, INT32_MAX};
  if (is_int(adt)) res.vmin = adt == DType::Int32 ? INT32_MIN : 0, res.vmax = adt == DType::Int32 ? INT32_MAX : UINT32_MAX;
  std::string fold = op_formula(red.op, adt, {a, b}, res);
  if (fold.empty()) fail("native", "no C++ rule for reduce ", alu_info(red.op).name, " on ", dtype_name(adt));
  os << "          accs[i][j] = " << fold << ";\n";
  os << "        }\n      }\n    }\n"
     << "    for (int i = 0; i < " << p.tm << "; ++i)\n      for (int j = 0; j < " << p.tn << "; ++j) {\n"
     << "        const i32 gidx = (m0 + i) * " << p.cols << " + n0 + j;\n"
     << "        const " << at << " acc = accs[i][j];\n        (void)acc;\n";
  ScopeEmitter epi(os, "        ", "e", {{VarId::Gidx, "gidx"}, {VarId::Acc, "acc"}}, guards);
  std::string r = epi.emit(red.epilogue);
  os << "        out[gidx] = " << store(odt, r) << ";\n      }\n  }\n";
}

}  // namespace

std::string generate_source(const Plan& p, const std::vector<bool>& guard_bits) {
  const Kernel& k = p.kernel;
  std::map<const AluNode*, bool> guards;
  const std::vector<const AluNode*>& load_nodes = p.loads;
  for (size_t i = 0; i < load_nodes.size() && i < guard_bits.size(); i++) guards[load_nodes[i]] = guard_bits[i];
  std::ostringstream os;
  os << kPrelude << "\n// " << p.schedule.str() << " rows=" << p.rows << " cols=" << p.cols << "\n";
  os << "extern \"C\" void kiln_kernel(void* const* bufs, const i64* cnt, i64 begin, i64 end) {\n";
  for (size_t i = 0; i < k.inputs.size(); i++)
    os << "  const " << storage_type(k.inputs[i]) << "* __restrict in" << i << " = (const "
       << storage_type(k.inputs[i]) << "*)bufs[" << i << "];\n";
  const DType odt = k.out_dtype();
  os << "  " << storage_type(odt) << "* __restrict out = (" << storage_type(odt) << "*)bufs["
     << k.inputs.size() << "];\n  (void)cnt;\n";
  if (!k.reduction) {
    os << "  for (i32 gidx = (i32)begin; gidx < (i32)end; ++gidx) {\n";
    ScopeEmitter body(os, "    ", "v", {{VarId::Gidx, "gidx"}}, guards);
    std::string r = body.emit(k.exp);
    os << "    out[gidx] = " << store(odt, r) << ";\n  }\n}\n";
    return os.str();
  }
  emit_tiled(os, p, guards);
  os << "}\n";
  return os.str();
}

}  // namespace kiln::native
