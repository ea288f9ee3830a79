// WGSL for AluExp nodes: one rule per op (tables of unary builtins and binary operators,
// then the ops whose semantics need a helper from wgsl_prelude.cpp).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "backend/webgpu/wgsl_expr.h"
#include "ir/error.h"

namespace kiln::webgpu {

const char* wgsl_type(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "i32";
    case DType::Uint32: return "u32";
    case DType::Float16:
    case DType::Float32: return "f32";
    case DType::Float64: break;
  }
  fail("webgpu", "float64 is not supported on WebGPU (WGSL has no 64-bit floats), expected float32 or float16");
}

std::string wgsl_const(DType d, double v) {
  char buf[64];
  switch (d) {
    case DType::Bool: return v != 0 ? "true" : "false";
    case DType::Int32: {
      int32_t x = int32_t(uint32_t(int64_t(v)));
      if (x == INT32_MIN) return "bitcast<i32>(0x80000000u)";
      std::snprintf(buf, sizeof buf, x < 0 ? "(%di)" : "%di", x);
      return buf;
    }
    case DType::Uint32: std::snprintf(buf, sizeof buf, "%uu", uint32_t(int64_t(v))); return buf;
    case DType::Float16:
    case DType::Float32: {
      float f = float(v);
      if (!std::isfinite(f)) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        std::snprintf(buf, sizeof buf, "k_f32bits(0x%08xu)", bits);
        return buf;
      }
      if (f == 0 && std::signbit(f)) return "(-0.0f)";
      std::snprintf(buf, sizeof buf, f < 0 ? "(%.9gf)" : "%.9gf", double(f));
      return buf;
    }
    case DType::Float64: break;
  }
  return wgsl_type(d);  // throws for float64
}

namespace {

// Unary float ops that map to one WGSL builtin or prelude helper.
const std::map<AluOp, const char*>& float_unary() {
  static const std::map<AluOp, const char*> t = {
      {AluOp::Sqrt, "k_sqrt"},   {AluOp::Exp, "k_exp"},     {AluOp::Exp2, "k_exp2"},
      {AluOp::Expm1, "k_expm1"}, {AluOp::Log, "k_log"},     {AluOp::Log2, "k_log2"},
      {AluOp::Log1p, "k_log1p"}, {AluOp::Sin, "sin"},       {AluOp::Cos, "cos"},
      {AluOp::Tan, "tan"},       {AluOp::Asin, "asin"},     {AluOp::Acos, "acos"},
      {AluOp::Atan, "atan"},     {AluOp::Sinh, "k_sinh"},   {AluOp::Cosh, "cosh"},
      {AluOp::Tanh, "k_tanh"},   {AluOp::Asinh, "asinh"},   {AluOp::Acosh, "acosh"},
      {AluOp::Atanh, "atanh"},   {AluOp::Erf, "k_erf"},     {AluOp::Floor, "floor"},
      {AluOp::Ceil, "ceil"},     {AluOp::Round, "round"},   {AluOp::Trunc, "trunc"},
  };
  return t;
}

// Binary ops that are one WGSL operator on numbers of the same type (ints wrap, as
// alu_eval's int32 arithmetic; f32 +, -, * are correctly rounded in WGSL).
const std::map<AluOp, const char*>& infix() {
  static const std::map<AluOp, const char*> t = {
      {AluOp::Add, "+"},    {AluOp::Sub, "-"},     {AluOp::Mul, "*"},     {AluOp::CmpLt, "<"},
      {AluOp::CmpLe, "<="}, {AluOp::CmpEq, "=="}, {AluOp::CmpNe, "!="},
  };
  return t;
}

std::string call(const char* f, const std::string& a) { return std::string(f) + "(" + a + ")"; }
std::string call(const char* f, const std::string& a, const std::string& b) {
  return std::string(f) + "(" + a + ", " + b + ")";
}

std::string cast(DType to, DType from, const std::string& a) {
  if (to == from) return a;
  if (to == DType::Bool) return is_float(from) ? "(" + a + " != 0.0 || k_isnan(" + a + "))" : "(" + a + " != " + wgsl_const(from, 0) + ")";
  if (from == DType::Bool) return "select(" + wgsl_const(to, 0) + ", " + wgsl_const(to, 1) + ", " + a + ")";
  if (to == DType::Float16) return call("k_r16", is_float(from) ? a : "f32(" + a + ")");
  if (to == DType::Float32) return from == DType::Float16 ? a : "f32(" + a + ")";
  if (is_float(from)) return call(to == DType::Int32 ? "k_f2i" : "k_f2u", a);
  return std::string("bitcast<") + wgsl_type(to) + ">(" + a + ")";  // int <-> int wraps
}

}  // namespace

std::string wgsl_combine(AluOp op, DType d, const std::string& acc, const std::string& x) {
  const bool f = is_float(d);
  std::string r;
  switch (op) {
    case AluOp::Add: r = d == DType::Bool ? "(" + acc + " || " + x + ")" : "(" + acc + " + " + x + ")"; break;
    case AluOp::Mul: r = d == DType::Bool ? "(" + acc + " && " + x + ")" : "(" + acc + " * " + x + ")"; break;
    case AluOp::Max:
      r = f ? call("k_fmax", acc, x) : d == DType::Bool ? "(" + acc + " || " + x + ")" : call("max", acc, x);
      break;
    case AluOp::Min:
      r = f ? call("k_fmin", acc, x) : d == DType::Bool ? "(" + acc + " && " + x + ")" : call("min", acc, x);
      break;
    default: fail("webgpu", "reduction op ", alu_info(op).name, " is not supported");
  }
  return d == DType::Float16 ? call("k_r16", r) : r;
}

std::string wgsl_store_bits(DType d, const std::string& v) {
  switch (d) {
    case DType::Bool: return "select(0u, 1u, " + v + ")";
    case DType::Int32:
    case DType::Float32: return "bitcast<u32>(" + v + ")";
    case DType::Uint32: return v;
    case DType::Float16: return "(pack2x16float(vec2<f32>(" + v + ", 0.0)) & 0xffffu)";
    case DType::Float64: break;
  }
  return wgsl_type(d);
}

std::string ExprEmitter::emit(const AluExp& e) {
  // Children first, iteratively over the DAG (deep chains would overflow a recursion).
  e.visit([&](const AluNode& n) {
    if (names_.count(&n)) return;
    std::string rhs = node(n);
    if (n.op == AluOp::Var || n.op == AluOp::Const) {
      names_[&n] = rhs;
      return;
    }
    std::string name = "t" + std::to_string(next_++);
    *body_ += "  let " + name + ": " + wgsl_type(n.dtype) + " = " + rhs + ";\n";
    names_[&n] = name;
  });
  return names_.at(e.get());
}

std::string ExprEmitter::node(const AluNode& n) {
  auto src = [&](int i) { return names_.at(n.src[size_t(i)].get()); };
  const DType d = n.dtype;
  const bool f = is_float(d);
  const bool h = d == DType::Float16;
  auto r16 = [&](std::string s) { return h ? call("k_r16", s) : s; };
  switch (n.op) {
    case AluOp::Const: return wgsl_const(d, n.value);
    case AluOp::Var:
      return n.arg == int(VarId::Gidx) ? gidx_ : n.arg == int(VarId::Ridx) ? ridx_ : acc_;
    case AluOp::Load: {
      std::string buf = "in" + std::to_string(n.arg), i = "u32(" + src(0) + ")";
      switch (d) {
        case DType::Float32: return "bitcast<f32>(" + buf + "[" + i + "])";
        case DType::Int32: return "bitcast<i32>(" + buf + "[" + i + "])";
        case DType::Uint32: return buf + "[" + i + "]";
        case DType::Float16: return "unpack2x16float(" + buf + "[" + i + " >> 1u])[" + i + " & 1u]";
        case DType::Bool: return "(((" + buf + "[" + i + " >> 2u] >> ((" + i + " & 3u) * 8u)) & 0xffu) != 0u)";
        case DType::Float64: return wgsl_type(d);
      }
      break;
    }
    case AluOp::Cast: return cast(d, n.src[0].dtype(), src(0));
    case AluOp::Bitcast: return std::string("bitcast<") + wgsl_type(d) + ">(" + src(0) + ")";
    case AluOp::Neg: return r16(d == DType::Uint32 ? "(0u - " + src(0) + ")" : "(-" + src(0) + ")");
    case AluOp::Recip:
      if (f) return r16("(1.0 / " + src(0) + ")");
      return d == DType::Int32 ? "k_div_i(1, " + src(0) + ")" : "k_div_u(1u, " + src(0) + ")";
    case AluOp::Not: return d == DType::Bool ? "(!" + src(0) + ")" : "(~" + src(0) + ")";
    case AluOp::IsNan: return is_float(n.src[0].dtype()) ? call("k_isnan", src(0)) : "false";
    case AluOp::Div:
      if (f) return r16("(" + src(0) + " / " + src(1) + ")");
      return call(d == DType::Int32 ? "k_div_i" : "k_div_u", src(0), src(1));
    case AluOp::Idiv:
    case AluOp::Mod: {
      const bool div = n.op == AluOp::Idiv;
      if (f) return r16(call(div ? "k_ffloordiv" : "k_fmod", src(0), src(1)));
      // Index arithmetic: a non-negative value by a positive constant is WGSL's own / and %.
      const AluExp &a = n.src[0], &b = n.src[1];
      if (b.is_const() && b.value() > 0 && (d == DType::Uint32 || a.vmin() >= 0))
        return "(" + src(0) + (div ? " / " : " % ") + src(1) + ")";
      if (d == DType::Int32) return call(div ? "k_idiv_i" : "k_imod_i", src(0), src(1));
      return call(div ? "k_div_u" : "k_imod_u", src(0), src(1));
    }
    case AluOp::Pow:
      if (f) return r16(call("k_pow", src(0), src(1)));
      return call(d == DType::Int32 ? "k_ipow_i" : "k_ipow_u", src(0), src(1));
    case AluOp::Atan2: return r16(call("atan2", src(0), src(1)));
    case AluOp::Max:
    case AluOp::Min: return wgsl_combine(n.op, d, src(0), src(1));
    case AluOp::And: return d == DType::Bool ? "(" + src(0) + " && " + src(1) + ")" : "(" + src(0) + " & " + src(1) + ")";
    case AluOp::Or: return d == DType::Bool ? "(" + src(0) + " || " + src(1) + ")" : "(" + src(0) + " | " + src(1) + ")";
    case AluOp::Xor: return d == DType::Bool ? "(" + src(0) + " != " + src(1) + ")" : "(" + src(0) + " ^ " + src(1) + ")";
    case AluOp::Shl: return call(d == DType::Int32 ? "k_shl_i" : "k_shl_u", src(0), src(1));
    case AluOp::Shr: return call(d == DType::Int32 ? "k_shr_i" : "k_shr_u", src(0), src(1));
    case AluOp::Where: return "select(" + src(2) + ", " + src(1) + ", " + src(0) + ")";
    default: break;
  }
  if (auto it = infix().find(n.op); it != infix().end()) {
    DType sd = n.src[0].dtype();
    std::string a = src(0), b = src(1);
    if (sd == DType::Bool && n.op != AluOp::CmpEq && n.op != AluOp::CmpNe) {
      // WGSL orders no bools and has no bool arithmetic: compute on 0/1.
      a = cast(DType::Uint32, DType::Bool, a), b = cast(DType::Uint32, DType::Bool, b);
      if (!is_comparison(n.op)) return "(" + a + " " + it->second + " " + b + " != 0u)";
    }
    return r16("(" + a + " " + it->second + " " + b + ")");
  }
  if (auto it = float_unary().find(n.op); it != float_unary().end()) {
    if (!f) {
      // floor/ceil/round/trunc of integers are the identity (alu_eval's rule).
      if (n.op == AluOp::Floor || n.op == AluOp::Ceil || n.op == AluOp::Round || n.op == AluOp::Trunc) return src(0);
      fail("webgpu", "op ", alu_info(n.op).name, " on ", dtype_name(d), " has no WGSL rule");
    }
    return r16(call(it->second, src(0)));
  }
  fail("webgpu", "op ", alu_info(n.op).name, " has no WGSL rule");
}

}  // namespace kiln::webgpu
