// The exact scalar semantics of each AluOp as inline definitions: alu_eval and round_to
// (ir/alu_op.h) are these, and the cpu interpreter instantiates one lane loop per op from
// them, so an op's meaning is written once and its loop still compiles to straight code.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/alu_op.h"
#include "ir/float32_math.h"

namespace kiln {

// always_inline: with the op and dtype constant at a call, the switches fold to one case.
[[gnu::always_inline]] inline double round_to_inline(DType dtype, double x) {
  switch (dtype) {
    case DType::Float64: return x;
    case DType::Float32: return double(float(x));
    case DType::Float16: return double(half_to_float(float_to_half(float(x))));
    case DType::Int32: return double(int32_t(uint32_t(int64_t(x))));
    case DType::Uint32: return double(uint32_t(int64_t(x)));
    case DType::Bool: return x != 0 ? 1.0 : 0.0;
  }
  return x;
}

namespace alu_detail {

inline double cast(DType to, DType from, double x) {
  if (to == DType::Bool) return (x != 0 || std::isnan(x)) ? 1 : 0;
  if (is_float(to)) return round_to_inline(to, x);
  if (is_float(from)) {
    // Truncate toward zero and saturate; NaN becomes 0.
    if (std::isnan(x)) return 0;
    double t = std::trunc(x);
    double lo = to == DType::Int32 ? -2147483648.0 : 0.0;
    double hi = to == DType::Int32 ? 2147483647.0 : 4294967295.0;
    // + 0.0: trunc(-0.5) is -0.0, which no integer holds (NumPy's int(-0.5) is 0).
    return (t < lo ? lo : t > hi ? hi : t) + 0.0;
  }
  return round_to_inline(to, x);  // int <-> int wraps, bool -> 0/1
}

inline double bitcast(DType to, DType from, double x) {
  uint32_t bits = 0;
  if (from == DType::Float32) {
    float f = float(x);
    std::memcpy(&bits, &f, 4);
  } else {
    bits = uint32_t(int64_t(x));
  }
  if (to == DType::Float32) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  return to == DType::Int32 ? double(int32_t(bits)) : double(bits);
}

// NumPy's divmod for floats (npy_divmod): returns the floor quotient, sets *mod.
inline double float_divmod(double a, double b, double* mod_out) {
  double mod = std::fmod(a, b);
  if (b == 0) {
    *mod_out = mod;
    return a / b;
  }
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  double floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, a / b);
  }
  *mod_out = mod;
  return floordiv;
}

inline double int_pow(double base, double exponent, DType dtype) {
  int64_t e = int64_t(exponent);
  int64_t b = int64_t(base);
  if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
  uint64_t result = 1, sq = uint64_t(b);
  while (e > 0) {
    if (e & 1) result *= sq;
    sq *= sq;
    e >>= 1;
  }
  return round_to_inline(dtype, double(uint32_t(result)));  // wraps like 32-bit integers
}

inline double shift(AluOp op, DType dtype, double a, double b) {
  int64_t s = int64_t(b);
  if (dtype == DType::Uint32) {
    uint32_t x = uint32_t(int64_t(a));
    if (s < 0 || s >= 32) return 0;
    return op == AluOp::Shl ? double(uint32_t(x << s)) : double(x >> s);
  }
  int32_t x = int32_t(int64_t(a));
  if (op == AluOp::Shl) return (s < 0 || s >= 32) ? 0 : double(int32_t(uint32_t(x) << s));
  if (s < 0 || s >= 32) return x < 0 ? -1 : 0;
  return double(x >> s);
}

inline double bitwise(AluOp op, DType dtype, double a, double b) {
  uint32_t x = uint32_t(int64_t(a)), y = uint32_t(int64_t(b));
  uint32_t r = op == AluOp::And ? (x & y) : op == AluOp::Or ? (x | y) : (x ^ y);
  return round_to_inline(dtype, double(r));
}

}  // namespace alu_detail

[[gnu::always_inline]] inline double alu_eval_inline(AluOp op, DType dt, DType sdt, double a, double b, double c) {
  using namespace alu_detail;
  const bool f = is_float(dt);
  double r = 0;
  switch (op) {
    case AluOp::Const:
    case AluOp::Var:
    case AluOp::Load: return a;
    case AluOp::Neg: r = -a; break;
    case AluOp::Recip: r = f ? 1.0 / a : (a == 0 ? 0 : std::trunc(1.0 / a)); break;
    case AluOp::Sqrt: r = std::sqrt(a); break;
    // float32 exp and tanh are kiln's own (float32_math.h), the same bits on every CPU device.
    case AluOp::Exp: r = dt == DType::Float32 ? exp_f32(float(a)) : std::exp(a); break;
    case AluOp::Exp2: r = std::exp2(a); break;
    case AluOp::Expm1: r = std::expm1(a); break;
    case AluOp::Log: r = std::log(a); break;
    case AluOp::Log2: r = std::log2(a); break;
    case AluOp::Log1p: r = std::log1p(a); break;
    case AluOp::Sin: r = std::sin(a); break;
    case AluOp::Cos: r = std::cos(a); break;
    case AluOp::Tan: r = std::tan(a); break;
    case AluOp::Asin: r = std::asin(a); break;
    case AluOp::Acos: r = std::acos(a); break;
    case AluOp::Atan: r = std::atan(a); break;
    case AluOp::Sinh: r = std::sinh(a); break;
    case AluOp::Cosh: r = std::cosh(a); break;
    case AluOp::Tanh: r = dt == DType::Float32 ? tanh_f32(float(a)) : std::tanh(a); break;
    case AluOp::Asinh: r = std::asinh(a); break;
    case AluOp::Acosh: r = std::acosh(a); break;
    case AluOp::Atanh: r = std::atanh(a); break;
    case AluOp::Erf: r = std::erf(a); break;
    case AluOp::Floor: r = std::floor(a); break;
    case AluOp::Ceil: r = std::ceil(a); break;
    case AluOp::Round: r = std::nearbyint(a); break;  // default rounding: half to even
    case AluOp::Trunc: r = std::trunc(a); break;
    case AluOp::Not:
      if (dt == DType::Bool) return a != 0 ? 0 : 1;
      return round_to_inline(dt, double(~uint32_t(int64_t(a))));
    case AluOp::IsNan: return std::isnan(a) ? 1 : 0;
    case AluOp::Cast: return cast(dt, sdt, a);
    case AluOp::Bitcast: return bitcast(dt, sdt, a);
    case AluOp::Add: r = a + b; break;
    case AluOp::Sub: r = a - b; break;
    case AluOp::Mul:
      // ints: the exact product may exceed 2^53; wrap through 64-bit integers.
      r = f ? a * b : double(int64_t(uint64_t(int64_t(a)) * uint64_t(int64_t(b)) & 0xffffffffu));
      break;
    case AluOp::Div:
      if (f) {
        r = a / b;
      } else {
        r = b == 0 ? 0 : std::trunc(a / b);
      }
      break;
    case AluOp::Idiv:
      if (f) {
        double m;
        r = float_divmod(a, b, &m);
      } else {
        r = b == 0 ? 0 : std::floor(a / b);
      }
      break;
    case AluOp::Mod:
      if (f) {
        float_divmod(a, b, &r);
      } else {
        r = b == 0 ? 0 : a - b * std::floor(a / b);
      }
      break;
    case AluOp::Pow:
      if (!f) return int_pow(a, b, dt);
      r = std::pow(a, b);
      break;
    case AluOp::Atan2: r = std::atan2(a, b); break;
    case AluOp::Max:
      r = (std::isnan(a) || std::isnan(b)) ? std::nan("") : (a > b ? a : b);
      break;
    case AluOp::Min:
      r = (std::isnan(a) || std::isnan(b)) ? std::nan("") : (a < b ? a : b);
      break;
    case AluOp::CmpLt: return a < b ? 1 : 0;
    case AluOp::CmpLe: return a <= b ? 1 : 0;
    case AluOp::CmpEq: return a == b ? 1 : 0;
    case AluOp::CmpNe: return a != b ? 1 : 0;
    case AluOp::And:
    case AluOp::Or:
    case AluOp::Xor:
      if (dt == DType::Bool) {
        bool x = a != 0, y = b != 0;
        return (op == AluOp::And ? (x && y) : op == AluOp::Or ? (x || y) : (x != y)) ? 1 : 0;
      }
      return bitwise(op, dt, a, b);
    case AluOp::Shl:
    case AluOp::Shr: return shift(op, dt, a, b);
    case AluOp::Where: return a != 0 ? b : c;
  }
  (void)sdt;
  return round_to_inline(dt, r);
}

}  // namespace kiln
