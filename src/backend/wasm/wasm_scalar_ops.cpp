// Each legalized AluOp (ir/legalize.h: no bool arithmetic, bool conditions, casts to bool
// already x != 0) in Wasm with alu_eval's exact semantics: int32 wraps, division by zero
// gives 0, NumPy floor division/mod, NaN-propagating max/min, saturating casts, float16 rounding.
#include "backend/wasm/wasm_scalar_ops.h"

#include <cmath>

#include "ir/alu_op.h"
#include "ir/error.h"

namespace kiln::wasm {

using V = ValType;

ValType storage(DType dt, bool wide) {
  if (dt == DType::Float64 || wide) return V::F64;
  if (dt == DType::Float32 || dt == DType::Float16) return V::F32;
  return V::I32;
}

bool const_is_wide(DType dt, double v) {
  if (dt != DType::Float32 && dt != DType::Float16) return false;
  return !std::isnan(v) && round_to(dt, v) != v;
}

namespace {
// Exp .. Erf in the enum: the ops imported from the core's libm.
bool is_transcendental(AluOp op) { return op >= AluOp::Exp && op <= AluOp::Erf; }

Builtin unary_builtin(AluOp op) {
  switch (op) {
    case AluOp::Exp: return Builtin::Exp;
    case AluOp::Exp2: return Builtin::Exp2;
    case AluOp::Expm1: return Builtin::Expm1;
    case AluOp::Log: return Builtin::Log;
    case AluOp::Log2: return Builtin::Log2;
    case AluOp::Log1p: return Builtin::Log1p;
    case AluOp::Sin: return Builtin::Sin;
    case AluOp::Cos: return Builtin::Cos;
    case AluOp::Tan: return Builtin::Tan;
    case AluOp::Asin: return Builtin::Asin;
    case AluOp::Acos: return Builtin::Acos;
    case AluOp::Atan: return Builtin::Atan;
    case AluOp::Sinh: return Builtin::Sinh;
    case AluOp::Cosh: return Builtin::Cosh;
    case AluOp::Tanh: return Builtin::Tanh;
    case AluOp::Asinh: return Builtin::Asinh;
    case AluOp::Acosh: return Builtin::Acosh;
    case AluOp::Atanh: return Builtin::Atanh;
    case AluOp::Erf: return Builtin::Erf;
    default: fail("wasm.codegen", "op ", alu_info(op).name, " has no builtin");
  }
}
}  // namespace

uint32_t OpEmitter::temp(ValType t, int slot) {
  auto key = std::make_pair(t, slot);
  auto it = temps_.find(key);
  if (it != temps_.end()) return it->second;
  uint32_t l = c_.add_local(t);
  temps_[key] = l;
  return l;
}

void OpEmitter::call_builtin(Builtin b) {
  auto it = import_index_.find(b);
  uint32_t idx;
  if (it == import_index_.end()) {
    idx = uint32_t(imports_.size());
    imports_.push_back(b);
    import_index_[b] = idx;
  } else {
    idx = it->second;
  }
  c_.call(idx);
}

void OpEmitter::emit_const(DType dt, double v) {
  switch (storage(dt, const_is_wide(dt, v))) {
    case V::F64: c_.f64_const(v); break;
    case V::F32: c_.f32_const(float(v)); break;
    default: c_.i32_const(int32_t(uint32_t(int64_t(v)))); break;
  }
}

void OpEmitter::push_as(const Val& v, ValType t) {
  v.push();
  ValType s = storage(v.dtype, v.wide);
  if (s == t) return;
  bool u = is_unsigned(v.dtype);
  if (s == V::F32 && t == V::F64) c_.op(op::F64PromoteF32);
  else if (s == V::F64 && t == V::F32) c_.op(op::F32DemoteF64);
  else if (s == V::I32 && t == V::F64) c_.op(u ? op::F64ConvertI32U : op::F64ConvertI32S);
  else if (s == V::I32 && t == V::F32) c_.op(u ? op::F32ConvertI32U : op::F32ConvertI32S);
  else fail("wasm.codegen", "cannot convert a ", dtype_name(v.dtype), " value to the requested type");
}

void OpEmitter::normalize_bool() {
  c_.i32_const(0);
  c_.op(op::I32Ne);
}

void OpEmitter::round_float(DType dt, ValType et, bool exact) {
  if (dt == DType::Float64) return;
  if (et == V::F64) {
    c_.op(op::F32DemoteF64);
    exact = false;
  }
  if (dt == DType::Float16 && !exact) call_builtin(Builtin::RoundHalf);
}

bool OpEmitter::emit(AluOp op, DType dt, const std::vector<Val>& s) {
  switch (op) {
    case AluOp::Cast: cast(dt, s[0]); return false;
    case AluOp::Bitcast: bitcast(dt, s[0]); return false;
    case AluOp::IsNan:  // of a float: the builders fold it to false on ints
      s[0].push();
      s[0].push();
      c_.op(storage(s[0].dtype, s[0].wide) == V::F64 ? op::F64Ne : op::F32Ne);
      return false;
    case AluOp::Where: {
      bool wide = s[1].wide || s[2].wide;
      ValType t = storage(dt, wide);
      push_as(s[1], t);
      push_as(s[2], t);
      s[0].push();  // a bool: legalize() turns other conditions into c != 0
      c_.op(op::Select);
      return wide;
    }
    default: break;
  }
  if (is_comparison(op)) {
    compare(op, s[0], s[1]);
    return false;
  }
  int arity = alu_info(op).arity;
  if (arity == 1) {
    if (is_float(dt)) unary_float(op, dt, s[0]);
    else unary_int(op, dt, s[0]);
  } else if (arity == 2) {
    if (is_float(dt)) binary_float(op, dt, s[0], s[1]);
    else binary_int(op, dt, s[0], s[1]);
  } else {
    fail("wasm.codegen", "unexpected op ", alu_info(op).name);
  }
  return false;
}

void OpEmitter::unary_float(AluOp op, DType dt, const Val& a) {
  ValType et = (dt == DType::Float64 || a.wide) ? V::F64 : V::F32;
  const bool f64 = et == V::F64;
  if (is_transcendental(op)) {
    push_as(a, V::F64);
    call_builtin(unary_builtin(op));
    round_float(dt, V::F64, false);
    return;
  }
  bool exact = true;
  if (op == AluOp::Recip) {
    if (f64) c_.f64_const(1.0);
    else c_.f32_const(1.0f);
  }
  push_as(a, et);
  switch (op) {
    case AluOp::Neg: c_.op(f64 ? op::F64Neg : op::F32Neg); break;
    case AluOp::Recip: c_.op(f64 ? op::F64Div : op::F32Div), exact = false; break;
    case AluOp::Sqrt: c_.op(f64 ? op::F64Sqrt : op::F32Sqrt), exact = false; break;
    case AluOp::Floor: c_.op(f64 ? op::F64Floor : op::F32Floor); break;
    case AluOp::Ceil: c_.op(f64 ? op::F64Ceil : op::F32Ceil); break;
    case AluOp::Round: c_.op(f64 ? op::F64Nearest : op::F32Nearest); break;  // ties to even
    case AluOp::Trunc: c_.op(f64 ? op::F64Trunc : op::F32Trunc); break;
    default: fail("wasm.codegen", "op ", alu_info(op).name, " is not defined on ", dtype_name(dt));
  }
  round_float(dt, et, exact);
}

void OpEmitter::round_f64_to_int(DType dt) {
  if (dt == DType::Bool) {  // r != 0
    c_.f64_const(0);
    c_.op(op::F64Ne);
  } else {  // truncate and wrap
    c_.fc(fc::I64TruncSatF64S);
    c_.op(op::I32WrapI64);
  }
}

void OpEmitter::unary_int(AluOp op, DType dt, const Val& a) {
  const bool b = dt == DType::Bool;
  if (op == AluOp::Sqrt || is_transcendental(op)) {
    // Evaluated in f64 and rounded as round_to does.
    push_as(a, V::F64);
    if (op == AluOp::Sqrt) c_.op(op::F64Sqrt);
    else call_builtin(unary_builtin(op));
    round_f64_to_int(dt);
    return;
  }
  switch (op) {
    case AluOp::Neg:
      c_.i32_const(0);
      a.push();
      c_.op(op::I32Sub);
      return;
    case AluOp::Recip:
      // trunc(1 / a) with 1/0 = 0: a for a in {-1, 0, 1} (signed), else 0.
      if (dt == DType::Int32) {
        a.push();
        c_.i32_const(0);
        a.push();
        c_.i32_const(1);
        c_.op(op::I32Add);
        c_.i32_const(2);
        c_.op(op::I32LeU);
        c_.op(op::Select);
      } else {
        a.push();
        c_.i32_const(1);
        c_.op(op::I32Eq);
      }
      return;
    case AluOp::Not:
      a.push();
      if (b) {
        c_.op(op::I32Eqz);
      } else {
        c_.i32_const(-1);
        c_.op(op::I32Xor);
      }
      return;
    default: fail("wasm.codegen", "op ", alu_info(op).name, " is not defined on ", dtype_name(dt));
  }
}

void OpEmitter::binary_float(AluOp op, DType dt, const Val& a, const Val& b) {
  ValType et = (dt == DType::Float64 || a.wide || b.wide) ? V::F64 : V::F32;
  const bool f64 = et == V::F64;
  auto pa = [&] { push_as(a, et); };
  auto pb = [&] { push_as(b, et); };
  switch (op) {
    case AluOp::Add: pa(), pb(), c_.op(f64 ? op::F64Add : op::F32Add); break;
    case AluOp::Sub: pa(), pb(), c_.op(f64 ? op::F64Sub : op::F32Sub); break;
    case AluOp::Mul: pa(), pb(), c_.op(f64 ? op::F64Mul : op::F32Mul); break;
    case AluOp::Div: pa(), pb(), c_.op(f64 ? op::F64Div : op::F32Div); break;
    case AluOp::Idiv:
    case AluOp::Mod:
    case AluOp::Pow:
    case AluOp::Atan2: {
      push_as(a, V::F64);
      push_as(b, V::F64);
      call_builtin(op == AluOp::Idiv  ? Builtin::FloorDiv
                   : op == AluOp::Mod ? Builtin::FloorMod
                   : op == AluOp::Pow ? Builtin::Pow
                                      : Builtin::Atan2);
      round_float(dt, V::F64, false);
      return;
    }
    case AluOp::Max:
    case AluOp::Min: {
      // alu_eval: NaN if either is NaN, else (a > b ? a : b); so max(+0, -0) is -0, which
      // f32.max would not give.
      pa();
      pa(), pb(), pa(), pb();
      if (op == AluOp::Max) c_.op(f64 ? op::F64Gt : op::F32Gt);
      else c_.op(f64 ? op::F64Lt : op::F32Lt);
      c_.op(op::Select);
      pa(), pa();
      c_.op(f64 ? op::F64Ne : op::F32Ne);
      c_.op(op::Select);
      round_float(dt, et, true);
      return;
    }
    default: fail("wasm.codegen", "op ", alu_info(op).name, " is not defined on ", dtype_name(dt));
  }
  round_float(dt, et, false);
}

void OpEmitter::int_div(AluOp op, DType dt, const Val& a, const Val& b) {
  const bool sgn = dt == DType::Int32;
  const uint32_t q = temp(V::I32, 0), r = temp(V::I32, 1);
  if (!sgn) {
    // Unsigned: x / 0 == x % 0 == 0; divide by (b | (b == 0)) to avoid the trap.
    a.push();
    b.push();
    b.push();
    c_.op(op::I32Eqz);
    c_.op(op::I32Or);
    c_.op(op == AluOp::Mod ? op::I32RemU : op::I32DivU);
    if (op != AluOp::Mod) {
      c_.i32_const(0);
      b.push();
      c_.op(op::Select);
    }
    return;
  }
  // Signed: b in {0, -1} would trap (x/0, INT_MIN/-1); there a / b is (-a) & (b >> 31):
  // -a for -1 (wrapping), 0 for 0. Other b divide normally.
  auto push_ok = [&] {  // b not in {-1, 0}
    b.push();
    c_.i32_const(1);
    c_.op(op::I32Add);
    c_.i32_const(1);
    c_.op(op::I32GtU);
  };
  if (op == AluOp::Mod) {
    // rem_s traps only for 0, and then the result is 0: a % 1.
    a.push();
    b.push();
    b.push();
    c_.op(op::I32Eqz);
    c_.op(op::I32Or);
    c_.op(op::I32RemS);
    c_.local_set(r);
    // NumPy: a nonzero remainder takes the divisor's sign.
    c_.local_get(r);
    b.push();
    c_.op(op::I32Add);
    c_.local_get(r);
    c_.local_get(r);
    c_.i32_const(0);
    c_.op(op::I32Ne);
    c_.local_get(r);
    b.push();
    c_.op(op::I32Xor);
    c_.i32_const(0);
    c_.op(op::I32LtS);
    c_.op(op::I32And);
    c_.op(op::Select);
    return;
  }
  // Truncating quotient.
  a.push();
  b.push();
  c_.i32_const(1);
  push_ok();
  c_.op(op::Select);
  c_.op(op::I32DivS);
  c_.i32_const(0);
  a.push();
  c_.op(op::I32Sub);
  b.push();
  c_.i32_const(31);
  c_.op(op::I32ShrS);
  c_.op(op::I32And);
  push_ok();
  c_.op(op::Select);
  if (op == AluOp::Div) return;
  // Floor: q - 1 when the remainder a - q*b is nonzero with the opposite sign of b;
  // and x // 0 == 0.
  c_.local_set(q);
  a.push();
  c_.local_get(q);
  b.push();
  c_.op(op::I32Mul);
  c_.op(op::I32Sub);
  c_.local_set(r);
  c_.local_get(q);
  c_.local_get(r);
  c_.i32_const(0);
  c_.op(op::I32Ne);
  c_.local_get(r);
  b.push();
  c_.op(op::I32Xor);
  c_.i32_const(0);
  c_.op(op::I32LtS);
  c_.op(op::I32And);
  c_.op(op::I32Sub);
  c_.i32_const(0);
  b.push();
  c_.op(op::Select);
}

void OpEmitter::binary_int(AluOp op, DType dt, const Val& a, const Val& b) {
  const bool u = dt != DType::Int32;
  switch (op) {
    case AluOp::Add:
    case AluOp::Sub:
    case AluOp::Mul:
      a.push();
      b.push();
      c_.op(op == AluOp::Add ? op::I32Add : op == AluOp::Sub ? op::I32Sub : op::I32Mul);
      return;
    case AluOp::Div:
    case AluOp::Idiv:
    case AluOp::Mod: int_div(op, dt, a, b); return;
    case AluOp::Pow:
      a.push();
      b.push();
      call_builtin(u ? Builtin::IPowU32 : Builtin::IPowI32);
      return;
    case AluOp::Atan2:
      push_as(a, V::F64);
      push_as(b, V::F64);
      call_builtin(Builtin::Atan2);
      round_f64_to_int(dt);
      return;
    case AluOp::Max:
    case AluOp::Min:
      a.push();
      b.push();
      a.push();
      b.push();
      if (op == AluOp::Max) c_.op(u ? op::I32GtU : op::I32GtS);
      else c_.op(u ? op::I32LtU : op::I32LtS);
      c_.op(op::Select);
      return;
    case AluOp::And: a.push(), b.push(), c_.op(op::I32And); return;
    case AluOp::Or: a.push(), b.push(), c_.op(op::I32Or); return;
    case AluOp::Xor: a.push(), b.push(), c_.op(op::I32Xor); return;
    case AluOp::Shl:
    case AluOp::Shr:
      // Shift counts outside [0, 32) give 0, or the sign for an int32 right shift. Bool
      // shifts follow alu_eval's int32 path (not renormalized).
      if (op == AluOp::Shr && dt != DType::Uint32) {
        a.push();
        b.push();
        c_.i32_const(31);
        b.push();
        c_.i32_const(32);
        c_.op(op::I32LtU);
        c_.op(op::Select);
        c_.op(op::I32ShrS);
        return;
      }
      a.push();
      b.push();
      c_.op(op == AluOp::Shl ? op::I32Shl : op::I32ShrU);
      c_.i32_const(0);
      b.push();
      c_.i32_const(32);
      c_.op(op::I32LtU);
      c_.op(op::Select);
      return;
    default: fail("wasm.codegen", "op ", alu_info(op).name, " is not defined on ", dtype_name(dt));
  }
}

void OpEmitter::compare(AluOp op, const Val& a, const Val& b) {
  if (is_float(a.dtype) || is_float(b.dtype)) {
    ValType et = (a.dtype == DType::Float64 || b.dtype == DType::Float64 || a.wide || b.wide) ? V::F64 : V::F32;
    push_as(a, et);
    push_as(b, et);
    const bool f64 = et == V::F64;
    switch (op) {
      case AluOp::CmpLt: c_.op(f64 ? op::F64Lt : op::F32Lt); break;
      case AluOp::CmpLe: c_.op(f64 ? op::F64Le : op::F32Le); break;
      case AluOp::CmpEq: c_.op(f64 ? op::F64Eq : op::F32Eq); break;
      default: c_.op(f64 ? op::F64Ne : op::F32Ne); break;
    }
    return;
  }
  const bool u = is_unsigned(a.dtype);
  a.push();
  b.push();
  switch (op) {
    case AluOp::CmpLt: c_.op(u ? op::I32LtU : op::I32LtS); break;
    case AluOp::CmpLe: c_.op(u ? op::I32LeU : op::I32LeS); break;
    case AluOp::CmpEq: c_.op(op::I32Eq); break;
    default: c_.op(op::I32Ne); break;
  }
}

void OpEmitter::cast(DType to, const Val& a) {
  const DType from = a.dtype;
  const ValType s = storage(from, a.wide);
  if (is_float(to)) {
    // round_to(to, x): push_as converts (demoting f64 rounds to f32 once), and a float16
    // result is rounded from that f32 (double rounding through float32, as round_to does).
    push_as(a, storage(to));
    if (to == DType::Float16 && !(from == DType::Float16 && !a.wide)) call_builtin(Builtin::RoundHalf);
    return;
  }
  // To int32/uint32: floats truncate toward zero and saturate (NaN -> 0); ints keep bits.
  a.push();
  const bool u = to == DType::Uint32;
  if (s == V::F64) c_.fc(u ? fc::I32TruncSatF64U : fc::I32TruncSatF64S);
  else if (s == V::F32) c_.fc(u ? fc::I32TruncSatF32U : fc::I32TruncSatF32S);
}

void OpEmitter::bitcast(DType to, const Val& a) {
  const DType from = a.dtype;
  if (itemsize(to) != 4 || itemsize(from) != 4)
    fail("wasm.codegen", "bitcast from ", dtype_name(from), " to ", dtype_name(to), " is not supported");
  if (from == DType::Float32) {
    push_as(a, V::F32);
    if (to != DType::Float32) c_.op(op::I32ReinterpretF32);
    return;
  }
  a.push();
  if (to == DType::Float32) c_.op(op::F32ReinterpretI32);
}

void OpEmitter::emit_load(DType dt, uint32_t ptr, uint32_t count, const Val& index) {
  // Out-of-range indices read 0: load from a clamped index, then select 0.
  const uint32_t inb = temp(V::I32, 2), idx = temp(V::I32, 3);
  index.push();
  c_.local_tee(idx);
  c_.local_get(count);
  c_.op(op::I32LtU);
  c_.local_set(inb);
  c_.local_get(ptr);
  c_.local_get(idx);
  c_.i32_const(0);
  c_.local_get(inb);
  c_.op(op::Select);
  int sz = itemsize(dt);
  if (sz > 1) {
    c_.i32_const(sz == 2 ? 1 : sz == 4 ? 2 : 3);
    c_.op(op::I32Shl);
  }
  c_.op(op::I32Add);
  switch (dt) {
    case DType::Bool:
      c_.mem(op::I32Load8U, 0);
      normalize_bool();
      break;
    case DType::Int32:
    case DType::Uint32: c_.mem(op::I32Load, 2); break;
    case DType::Float16:
      c_.mem(op::I32Load16U, 1);
      call_builtin(Builtin::HalfToFloat);
      break;
    case DType::Float32: c_.mem(op::F32Load, 2); break;
    case DType::Float64: c_.mem(op::F64Load, 3); break;
  }
  ValType st = storage(dt);
  if (st == V::F64) c_.f64_const(0);
  else if (st == V::F32) c_.f32_const(0);
  else c_.i32_const(0);
  c_.local_get(inb);
  c_.op(op::Select);
}

void OpEmitter::emit_store(DType dt, const std::function<void()>& push_addr, const Val& v) {
  push_addr();
  switch (dt) {
    case DType::Bool:
      v.push();
      normalize_bool();
      c_.mem(op::I32Store8, 0);
      break;
    case DType::Int32:
    case DType::Uint32:
      v.push();
      c_.mem(op::I32Store, 2);
      break;
    case DType::Float16:
      push_as(v, V::F32);
      call_builtin(Builtin::FloatToHalf);
      c_.mem(op::I32Store16, 1);
      break;
    case DType::Float32:
      push_as(v, V::F32);
      c_.mem(op::F32Store, 2);
      break;
    case DType::Float64:
      push_as(v, V::F64);
      c_.mem(op::F64Store, 3);
      break;
  }
}

}  // namespace kiln::wasm
