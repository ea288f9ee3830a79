// The C++ rules of the legalized ops: floats computed as alu_eval does (on doubles, then
// rounded) unless float32 code gives the same bits, ints with alu_eval's wrapping and
// division rules (helpers in native_prelude.h).
#include "backend/native/native_dialect.h"

#include <cmath>
#include <cstdio>

namespace kiln::native {

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

namespace {

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

std::string D(const CValue& a) { return "(double)" + a.s; }

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

// NaN if either is NaN, else a > b ? a : b (a < b for min): alu_eval's max/min, over the
// operand texts and the NaN literal of the evaluation type.
std::string nan_minmax(AluOp op, const std::string& x, const std::string& y, const std::string& x_nan,
                       const std::string& y_nan, const char* nan) {
  return "((" + x_nan + " || " + y_nan + ") ? " + nan + " : (" + x + (op == AluOp::Max ? " > " : " < ") + y +
         " ? " + x + " : " + y + "))";
}

// alu_eval's value before rounding, computed on doubles: the float rule of every op.
std::string float_formula(AluOp op, const std::vector<CValue>& a) {
  auto& lu = libm_unary();
  if (auto it = lu.find(op); it != lu.end()) return std::string(it->second) + "(" + D(a[0]) + ")";
  switch (op) {
    case AluOp::Neg: return "(-" + D(a[0]) + ")";
    case AluOp::Recip: return "(1.0 / " + D(a[0]) + ")";
    case AluOp::Add: case AluOp::Sub: case AluOp::Mul: case AluOp::Div:
      return "(" + D(a[0]) + " " + c_infix(op) + " " + D(a[1]) + ")";
    case AluOp::Idiv: return "k_fidiv(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Mod: return "k_fmod(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Pow: return "pow(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Atan2: return "atan2(" + D(a[0]) + ", " + D(a[1]) + ")";
    case AluOp::Max: case AluOp::Min:
      return nan_minmax(op, D(a[0]), D(a[1]), "k_isnan(" + D(a[0]) + ")", "k_isnan(" + D(a[1]) + ")",
                        "__builtin_nan(\"\")");
    default: return "";
  }
}

// Ops whose float32 result equals rounding the double result: plain float code, which g++
// vectorizes.
std::string float32_formula(AluOp op, const std::vector<CValue>& a) {
  auto& ex = f32_exact_unary();
  if (auto it = ex.find(op); it != ex.end()) return std::string(it->second) + "(" + a[0].s + ")";
  switch (op) {
    case AluOp::Neg: return "(-" + a[0].s + ")";
    case AluOp::Recip: return "(1.0f / " + a[0].s + ")";
    case AluOp::Add: case AluOp::Sub: case AluOp::Mul: case AluOp::Div: return infix(a[0], c_infix(op), a[1]);
    case AluOp::Max: case AluOp::Min:
      return nan_minmax(op, a[0].s, a[1].s, a[0].s + " != " + a[0].s, a[1].s + " != " + a[1].s,
                        "__builtin_nanf(\"\")");
    default: return "";
  }
}

bool full_range(const CValue& r, DType d) {
  return d == DType::Int32 ? (r.vmin <= INT32_MIN && r.vmax >= INT32_MAX) : (r.vmin <= 0 && r.vmax >= int64_t(UINT32_MAX));
}

// Add, Sub, Mul of ints: in range (the simplifier proved it), plain signed arithmetic, which
// g++ can analyze as affine indexing; otherwise wrapping through uint32.
std::string int_arith(AluOp op, bool s, const CValue& x, const CValue& y, const CValue& res) {
  if (s && !full_range(res, DType::Int32)) return infix(x, c_infix(op), y);
  return s ? "(i32)((u32)" + x.s + " " + c_infix(op) + " (u32)" + y.s + ")"
           : "(u32)(" + x.s + " " + c_infix(op) + " " + y.s + ")";
}

// A shift the simplifier proved in [0, 32) is C's own (vectorizable); others clamp.
std::string int_shift(AluOp op, DType d, const CValue& x, const CValue& y) {
  const bool s = d == DType::Int32;
  if (y.vmin >= 0 && y.vmax < 32)
    return op == AluOp::Shl ? "(" + std::string(ctype(d)) + ")((u32)" + x.s + " << " + y.s + ")"
                            : "(" + std::string(ctype(d)) + ")(" + x.s + " >> " + y.s + ")";
  return std::string(op == AluOp::Shl ? (s ? "k_ishl(" : "k_ushl(") : (s ? "k_ishr(" : "k_ushr(")) + x.s +
         ", (i64)" + y.s + ")";
}

}  // namespace

std::string NativeDialect::declare(DType d, const std::string& name, const std::string& expr) const {
  return "const " + std::string(ctype(d)) + " " + name + " = " + expr + ";";
}

std::string NativeDialect::load(const AluNode& n, const std::string& index) const {
  std::string v = "in" + std::to_string(n.arg) + "[" + index + "]";
  if (n.dtype == DType::Bool) v = "(" + v + " != 0)";
  if (n.dtype == DType::Float16) v = "k_h2f(" + v + ")";
  auto g = guards_.find(&n);
  if (g != guards_.end() && g->second)
    v = "((u32)" + index + " < (u32)cnt[" + std::to_string(n.arg) + "] ? " + v + " : " + native::literal(n.dtype, 0) +
        ")";
  return v;
}

std::string NativeDialect::select(const CValue& c, const CValue& a, const CValue& b) const {
  return "(" + c.s + " ? " + a.s + " : " + b.s + ")";
}

std::string NativeDialect::cast(DType to, const CValue& a) const {
  const DType from = a.dt;
  const std::string x = a.s;
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

std::string NativeDialect::bitcast(DType to, const CValue& a) const {
  if (a.dt == DType::Float32 && is_int(to)) return "(" + std::string(ctype(to)) + ")k_f_bits(" + a.s + ")";
  if (is_int(a.dt) && to == DType::Float32) return "k_bits_f((u32)" + a.s + ")";
  if (is_int(a.dt) && is_int(to)) return "(" + std::string(ctype(to)) + ")" + a.s;
  return "";
}

std::string NativeDialect::int_op(AluOp op, DType d, const std::vector<CValue>& a, const CValue& res) const {
  const bool s = d == DType::Int32;
  const std::string x = a[0].s, y = a.size() > 1 ? a[1].s : "";
  switch (op) {
    case AluOp::Neg: return s ? "(i32)(0u - (u32)" + x + ")" : "(u32)(0u - " + x + ")";
    case AluOp::Recip:
      return s ? "(" + x + " == 1 ? 1 : " + x + " == -1 ? -1 : 0)" : "(u32)(" + x + " == 1u ? 1u : 0u)";
    case AluOp::Add: case AluOp::Sub: case AluOp::Mul: return int_arith(op, s, a[0], a[1], res);
    case AluOp::Div: return s ? "k_idiv_t(" + x + ", " + y + ")" : "(" + y + " == 0u ? 0u : " + x + " / " + y + ")";
    case AluOp::Idiv: return s ? "k_idiv_f(" + x + ", " + y + ")" : "(" + y + " == 0u ? 0u : " + x + " / " + y + ")";
    case AluOp::Mod: return s ? "k_imod(" + x + ", " + y + ")" : "(" + y + " == 0u ? 0u : " + x + " % " + y + ")";
    case AluOp::Pow: return s ? "k_ipow(" + x + ", " + y + ")" : "k_uupow(" + x + ", " + y + ")";
    case AluOp::Max: return "(" + x + " > " + y + " ? " + x + " : " + y + ")";
    case AluOp::Min: return "(" + x + " < " + y + " ? " + x + " : " + y + ")";
    case AluOp::Shl: case AluOp::Shr: return int_shift(op, d, a[0], a[1]);
    default: {
      std::string f = float_formula(op, a);  // e.g. sqrt of an int: a double rounded back
      return f.empty() ? "" : round_double(d, f);
    }
  }
}

std::string NativeDialect::float_op(AluOp op, DType d, const std::vector<CValue>& a) const {
  if (d == DType::Float32) {
    std::string f = float32_formula(op, a);
    if (!f.empty()) return f;
  }
  std::string f = float_formula(op, a);
  return f.empty() ? "" : round_double(d, f);
}

}  // namespace kiln::native
