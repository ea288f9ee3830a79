// WGSL's spelling of the legalized ops (the hooks of the shared C-like renderer): unary
// builtins, and the ops whose semantics need a helper from wgsl_prelude.cpp.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "backend/webgpu/wgsl_expr.h"

#include "backend/webgpu/wgsl_uniform_offsets.h"
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
      // Non-finite values, and the largest floats: their shortest decimal (3.40282347e+38)
      // lies above FLT_MAX, which WGSL compilers reject ("cannot be represented as 'f32'").
      if (!std::isfinite(f) || std::fabs(f) > 3.4e38f) {
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
      {AluOp::Log1p, "k_log1p"}, {AluOp::Sin, "k_sin"},     {AluOp::Cos, "k_cos"},
      {AluOp::Tan, "k_tan"},       {AluOp::Asin, "asin"},     {AluOp::Acos, "k_acos"},
      {AluOp::Atan, "atan"},     {AluOp::Sinh, "k_sinh"},   {AluOp::Cosh, "cosh"},
      {AluOp::Tanh, "k_tanh"},   {AluOp::Asinh, "asinh"},   {AluOp::Acosh, "acosh"},
      {AluOp::Atanh, "atanh"},   {AluOp::Erf, "k_erf"},     {AluOp::Floor, "floor"},
      {AluOp::Ceil, "ceil"},     {AluOp::Round, "round"},   {AluOp::Trunc, "trunc"},
  };
  return t;
}

std::string call(const char* f, const std::string& a) { return std::string(f) + "(" + a + ")"; }
std::string call(const char* f, const std::string& a, const std::string& b) {
  return std::string(f) + "(" + a + ", " + b + ")";
}

// Float ops on f32 (WGSL's +, -, *, / are correctly rounded); float16 values are f32s
// rounded back to half after every op.
std::string f32_op(AluOp op, const std::vector<CValue>& a) {
  const std::string x = a[0].s, y = a.size() > 1 ? a[1].s : "";
  switch (op) {
    case AluOp::Neg: return "(-" + x + ")";
    case AluOp::Recip: return "(1.0 / " + x + ")";
    case AluOp::Idiv: return call("k_ffloordiv", x, y);
    case AluOp::Mod: return call("k_fmod", x, y);
    case AluOp::Pow: return call("k_pow", x, y);
    case AluOp::Atan2: return call("k_atan2", x, y);
    case AluOp::Max: return call("k_fmax", x, y);
    case AluOp::Min: return call("k_fmin", x, y);
    case AluOp::Sub:
      // 0 - x is +0 for x = +-0 (numpy.abs is built on it), but SwiftShader's compiler assumes
      // no signed zeros and folds it to -x (seen 2026-12-03): pick +0 through the bits.
      if (a[0].is_const && a[0].value == 0.0 && !std::signbit(a[0].value))
        return "bitcast<f32>(select(bitcast<u32>(-" + y + "), 0u, " + y + " == 0.0))";
      return infix(a[0], "-", a[1]);
    case AluOp::Add:
    case AluOp::Mul:
    case AluOp::Div: return infix(a[0], c_infix(op), a[1]);
    default: break;
  }
  if (auto it = float_unary().find(op); it != float_unary().end()) return call(it->second, x);
  return "";
}

class WgslDialect : public CDialect {
 public:
  const char* name() const override { return "webgpu"; }
  const char* type(DType d) const override { return wgsl_type(d); }
  std::string literal(DType d, double v) const override { return wgsl_const(d, v); }
  std::string declare(DType d, const std::string& name, const std::string& expr) const override {
    return "let " + name + ": " + wgsl_type(d) + " = " + expr + ";";
  }
  std::string load(const AluNode& n, const std::string& index) const override {
    std::string buf = "in" + std::to_string(n.arg), i = "u32(" + index + ")";
    switch (n.dtype) {
      case DType::Float32: return "bitcast<f32>(" + buf + "[" + i + "])";
      case DType::Int32: return "bitcast<i32>(" + buf + "[" + i + "])";
      case DType::Uint32: return buf + "[" + i + "]";
      case DType::Float16: return "unpack2x16float(" + buf + "[" + i + " >> 1u])[" + i + " & 1u]";
      case DType::Bool: return "(((" + buf + "[" + i + " >> 2u] >> ((" + i + " & 3u) * 8u)) & 0xffu) != 0u)";
      case DType::Float64: break;
    }
    return wgsl_type(n.dtype);  // throws for float64
  }
  std::string select(const CValue& c, const CValue& a, const CValue& b) const override {
    return "select(" + b.s + ", " + a.s + ", " + c.s + ")";
  }
  std::string is_nan(const CValue& x) const override { return call("k_isnan", x.s); }
  std::string cast(DType to, const CValue& x) const override {
    const DType from = x.dt;
    const std::string& a = x.s;
    if (to == from) return a;
    if (from == DType::Bool) return "select(" + wgsl_const(to, 0) + ", " + wgsl_const(to, 1) + ", " + a + ")";
    if (to == DType::Float16) return call("k_r16", is_float(from) ? a : "f32(" + a + ")");
    if (to == DType::Float32) return from == DType::Float16 ? a : "f32(" + a + ")";
    if (is_float(from)) return call(to == DType::Int32 ? "k_f2i" : "k_f2u", a);
    return std::string("bitcast<") + wgsl_type(to) + ">(" + a + ")";  // int <-> int wraps
  }
  std::string bitcast(DType to, const CValue& x) const override {
    return std::string("bitcast<") + wgsl_type(to) + ">(" + x.s + ")";
  }
  std::string retype(DType) const override { return ""; }
  std::string compare(AluOp op, const CValue& a, const CValue& b) const override {
    if (!is_float(a.dt) || (op != AluOp::CmpNe && op != AluOp::CmpEq)) return infix(a, c_infix(op), b);
    // SwiftShader's compiler assumes no NaNs: NaN != NaN came out false (2026-12-03), so NaN
    // operands are decided through their bits (k_isnan; a constant's is known).
    std::string nan;
    for (const CValue* v : {&a, &b})
      if (!v->is_const || std::isnan(v->value)) nan += (nan.empty() ? "" : " || ") + is_nan(*v);
    if (nan.empty()) return infix(a, c_infix(op), b);
    nan = "(" + nan + ")";
    if (op == AluOp::CmpNe) return "(" + infix(a, "!=", b) + " || " + nan + ")";
    return "(" + infix(a, "==", b) + " && !" + nan + ")";
  }
  std::string int_op(AluOp op, DType d, const std::vector<CValue>& a, const CValue&) const override {
    const bool i = d == DType::Int32;
    const std::string x = a[0].s, y = a.size() > 1 ? a[1].s : "";
    switch (op) {
      case AluOp::Neg: return i ? "(-" + x + ")" : "(0u - " + x + ")";
      case AluOp::Recip: return i ? call("k_div_i", "1", x) : call("k_div_u", "1u", x);
      case AluOp::Add:
      case AluOp::Sub:
      case AluOp::Mul: return infix(a[0], c_infix(op), a[1]);  // WGSL's ints wrap, as alu_eval's
      case AluOp::Div: return call(i ? "k_div_i" : "k_div_u", x, y);
      case AluOp::Idiv: return call(i ? "k_idiv_i" : "k_div_u", x, y);
      case AluOp::Mod: return call(i ? "k_imod_i" : "k_imod_u", x, y);
      case AluOp::Pow: return call(i ? "k_ipow_i" : "k_ipow_u", x, y);
      case AluOp::Max: return call("max", x, y);
      case AluOp::Min: return call("min", x, y);
      case AluOp::Shl: return call(i ? "k_shl_i" : "k_shl_u", x, y);
      case AluOp::Shr: return call(i ? "k_shr_i" : "k_shr_u", x, y);
      default: return "";
    }
  }
  std::string float_op(AluOp op, DType d, const std::vector<CValue>& a) const override {
    std::string r = f32_op(op, a);
    return d == DType::Float16 && !r.empty() ? call("k_r16", r) : r;
  }
};

const WgslDialect kWgsl;

}  // namespace

std::string wgsl_combine(AluOp op, DType d, const std::string& acc, const std::string& x) {
  if (op != AluOp::Add && op != AluOp::Mul && op != AluOp::Max && op != AluOp::Min && op != AluOp::Or &&
      op != AluOp::And)
    fail("webgpu", "reduction op ", alu_info(op).name, " is not supported");
  return render_op(kWgsl, op, d, {CValue{acc, d}, CValue{x, d}}, CValue{"", d});
}

std::string wgsl_store_bits(DType d, const std::string& v) {
  switch (d) {
    case DType::Bool: return "select(0u, 1u, " + v + ")";
    case DType::Int32:
    case DType::Float32: return "bitcast<u32>(" + v + ")";
    case DType::Uint32: return v;
    case DType::Float16: return "k_pack16(" + v + ")";
    case DType::Float64: break;
  }
  return wgsl_type(d);
}

ExprEmitter::ExprEmitter(std::string* body, std::string gidx, std::string ridx, std::string acc)
    : body_(body),
      scope_(kWgsl, os_, "  ", "t",
             {{VarId::Gidx, gidx}, {VarId::Ridx, ridx}, {VarId::Acc, acc}, {VarId::Pre, "pre"},
              {uniform_word(0), "i32(params.w1)"}, {uniform_word(1), "i32(params.w2)"},
              {uniform_word(2), "i32(params.w3)"}}) {}

std::string ExprEmitter::emit(const AluExp& e) {
  std::string v = scope_.emit(e);
  *body_ += os_.str();
  os_.str("");
  return v;
}

}  // namespace kiln::webgpu
