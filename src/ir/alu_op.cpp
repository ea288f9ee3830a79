// The AluOp table and the exact scalar semantics of each op (the cpu backend's oracle).
#include "ir/alu_op.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace kiln {

const AluOpInfo& alu_info(AluOp op) {
  static const AluOpInfo table[] = {
      {"const", 0}, {"var", 0},    {"load", 1},  {"neg", 1},   {"recip", 1},  {"sqrt", 1},
      {"exp", 1},   {"exp2", 1},   {"expm1", 1}, {"log", 1},   {"log2", 1},   {"log1p", 1},
      {"sin", 1},   {"cos", 1},    {"tan", 1},   {"asin", 1},  {"acos", 1},   {"atan", 1},
      {"sinh", 1},  {"cosh", 1},   {"tanh", 1},  {"asinh", 1}, {"acosh", 1},  {"atanh", 1},
      {"erf", 1},   {"floor", 1},  {"ceil", 1},  {"round", 1}, {"trunc", 1},  {"not", 1},
      {"isnan", 1}, {"cast", 1},   {"bitcast", 1}, {"add", 2}, {"sub", 2},    {"mul", 2},
      {"div", 2},   {"idiv", 2},   {"mod", 2},   {"pow", 2},   {"atan2", 2},  {"max", 2},
      {"min", 2},   {"cmplt", 2},  {"cmple", 2}, {"cmpeq", 2}, {"cmpne", 2},  {"and", 2},
      {"or", 2},    {"xor", 2},    {"shl", 2},   {"shr", 2},   {"where", 3},
  };
  static_assert(sizeof(table) / sizeof(table[0]) == size_t(AluOp::Where) + 1);
  return table[size_t(op)];
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf / nan
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // overflow to inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the full mantissa and round to nearest even.
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;  // may carry into exponent: ok
  return uint16_t(half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        mant <<= 1;
        e++;
      } while (!(mant & 0x400u));
      x = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double read_element(const uint8_t* p, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::Bool: return p[i] ? 1 : 0;
    case DType::Int32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::Uint32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::Float16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return half_to_float(v); }
    case DType::Float32: { float v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::Float64: { double v; std::memcpy(&v, p + 8 * i, 8); return v; }
  }
  return 0;
}

void write_element(uint8_t* p, DType dtype, int64_t i, double v) {
  switch (dtype) {
    case DType::Bool: p[i] = v != 0; break;
    case DType::Int32: { int32_t x = int32_t(int64_t(v)); std::memcpy(p + 4 * i, &x, 4); break; }
    case DType::Uint32: { uint32_t x = uint32_t(int64_t(v)); std::memcpy(p + 4 * i, &x, 4); break; }
    case DType::Float16: { uint16_t x = float_to_half(float(v)); std::memcpy(p + 2 * i, &x, 2); break; }
    case DType::Float32: { float x = float(v); std::memcpy(p + 4 * i, &x, 4); break; }
    case DType::Float64: std::memcpy(p + 8 * i, &v, 8); break;
  }
}

double round_to(DType dtype, double x) {
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

namespace {

double cast(DType to, DType from, double x) {
  if (to == DType::Bool) return (x != 0 || std::isnan(x)) ? 1 : 0;
  if (is_float(to)) return round_to(to, x);
  if (is_float(from)) {
    // Truncate toward zero and saturate; NaN becomes 0.
    if (std::isnan(x)) return 0;
    double t = std::trunc(x);
    double lo = to == DType::Int32 ? -2147483648.0 : 0.0;
    double hi = to == DType::Int32 ? 2147483647.0 : 4294967295.0;
    // + 0.0: trunc(-0.5) is -0.0, which no integer holds (NumPy's int(-0.5) is 0).
    return (t < lo ? lo : t > hi ? hi : t) + 0.0;
  }
  return round_to(to, x);  // int <-> int wraps, bool -> 0/1
}

double bitcast(DType to, DType from, double x) {
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
double float_divmod(double a, double b, double* mod_out) {
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

double int_pow(double base, double exponent, DType dtype) {
  int64_t e = int64_t(exponent);
  int64_t b = int64_t(base);
  if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
  uint64_t result = 1, sq = uint64_t(b);
  while (e > 0) {
    if (e & 1) result *= sq;
    sq *= sq;
    e >>= 1;
  }
  return round_to(dtype, double(uint32_t(result)));  // wraps like 32-bit integers
}

double shift(AluOp op, DType dtype, double a, double b) {
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

double bitwise(AluOp op, DType dtype, double a, double b) {
  uint32_t x = uint32_t(int64_t(a)), y = uint32_t(int64_t(b));
  uint32_t r = op == AluOp::And ? (x & y) : op == AluOp::Or ? (x | y) : (x ^ y);
  return round_to(dtype, double(r));
}

}  // namespace

double alu_eval(AluOp op, DType dt, DType sdt, double a, double b, double c) {
  const bool f = is_float(dt);
  double r = 0;
  switch (op) {
    case AluOp::Const:
    case AluOp::Var:
    case AluOp::Load: return a;
    case AluOp::Neg: r = -a; break;
    case AluOp::Recip: r = f ? 1.0 / a : (a == 0 ? 0 : std::trunc(1.0 / a)); break;
    case AluOp::Sqrt: r = std::sqrt(a); break;
    case AluOp::Exp: r = std::exp(a); break;
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
    case AluOp::Tanh: r = std::tanh(a); break;
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
      return round_to(dt, double(~uint32_t(int64_t(a))));
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
  return round_to(dt, r);
}

}  // namespace kiln
