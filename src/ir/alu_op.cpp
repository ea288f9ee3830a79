// The AluOp table and the exact scalar semantics of each op (the cpu backend's oracle).
#include "ir/alu_op.h"

#include "ir/alu_semantics.h"

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

double round_to(DType dtype, double x) { return round_to_inline(dtype, x); }

double alu_eval(AluOp op, DType dt, DType sdt, double a, double b, double c) {
  return alu_eval_inline(op, dt, sdt, a, b, c);
}

}  // namespace kiln
