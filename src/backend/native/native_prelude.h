// The helper functions every generated native kernel starts with: alu_eval's semantics
// (integer wraparound, float16 rounding, saturating casts, NumPy divmod) as inline C++.
#pragma once

namespace kiln::native {

// No #include: parsing <cmath> costs more than compiling a small kernel. Transcendentals
// are declared as glibc's own functions and the kernels are compiled with -fno-builtin, so
// they call exactly the libm the interpreter calls (g++ would otherwise constant-fold some
// of them with MPFR, which can differ from glibc in the last bit).
inline constexpr const char* kPrelude = R"PRELUDE(
typedef __INT32_TYPE__ i32;
typedef __UINT32_TYPE__ u32;
typedef __INT64_TYPE__ i64;
typedef __UINT64_TYPE__ u64;
typedef __UINT16_TYPE__ u16;
typedef __UINT8_TYPE__ u8;
extern "C" {
double exp(double); double exp2(double); double expm1(double); double log(double);
double log2(double); double log1p(double); double sin(double); double cos(double);
double tan(double); double asin(double); double acos(double); double atan(double);
double sinh(double); double cosh(double); double tanh(double); double asinh(double);
double acosh(double); double atanh(double); double erf(double); double pow(double, double);
double atan2(double, double); double fmod(double, double);
}
static inline u16 k_f2h(float f) {
  u32 x; __builtin_memcpy(&x, &f, 4);
  u32 sign = (x >> 16) & 0x8000u, ex = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (ex == 0xff) return (u16)(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = (int)ex - 127 + 15;
  if (e >= 31) return (u16)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (u16)sign;
    mant |= 0x800000u;
    int shift = 14 - e;
    u32 half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (u16)(sign | half);
  }
  u32 half = sign | ((u32)e << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) half++;
  return (u16)half;
}
static inline float k_h2f(u16 h) {
  u32 sign = (u32)(h & 0x8000u) << 16, ex = (h >> 10) & 0x1fu, mant = h & 0x3ffu, x;
  if (ex == 0) {
    if (mant == 0) { x = sign; } else {
      int e = -1;
      do { mant <<= 1; e++; } while (!(mant & 0x400u));
      x = sign | ((u32)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (ex == 31) { x = sign | 0x7f800000u | (mant << 13); }
  else { x = sign | ((ex - 15 + 127) << 23) | (mant << 13); }
  float f; __builtin_memcpy(&f, &x, 4); return f;
}
// round_to for each dtype, from a double.
static inline float k_rh(double x) { return k_h2f(k_f2h((float)x)); }
static inline i32 k_ri(double x) { return (i32)(u32)(i64)x; }
static inline u32 k_ru(double x) { return (u32)(i64)x; }
static inline bool k_isnan(double x) { return x != x; }
// Cast from a float: truncate toward zero, saturate, NaN -> 0.
static inline i32 k_f2i(double x) {
  if (x != x) return 0;
  double t = __builtin_trunc(x);
  return t < -2147483648.0 ? (i32)(-2147483647 - 1) : t > 2147483647.0 ? 2147483647 : (i32)t;
}
static inline u32 k_f2u(double x) {
  if (x != x) return 0;
  double t = __builtin_trunc(x);
  return t < 0.0 ? 0u : t > 4294967295.0 ? 4294967295u : (u32)t;
}
// NumPy's float divmod: the floor quotient, and the remainder with the divisor's sign.
static inline double k_fdivmod(double a, double b, double* mod_out) {
  double mod = fmod(a, b);
  if (b == 0) { *mod_out = mod; return a / b; }
  double div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) { mod += b; div -= 1.0; }
  } else {
    mod = __builtin_copysign(0.0, b);
  }
  double fl;
  if (div != 0) { fl = __builtin_floor(div); if (div - fl > 0.5) fl += 1.0; }
  else { fl = __builtin_copysign(0.0, a / b); }
  *mod_out = mod;
  return fl;
}
static inline double k_fidiv(double a, double b) { double m; return k_fdivmod(a, b, &m); }
static inline double k_fmod(double a, double b) { double m; k_fdivmod(a, b, &m); return m; }
// int32 division rules: x / 0 == 0, and INT_MIN / -1 wraps to INT_MIN.
static inline i32 k_idiv_t(i32 a, i32 b) { return b == 0 ? 0 : b == -1 ? (i32)(0u - (u32)a) : a / b; }
static inline i32 k_idiv_f(i32 a, i32 b) {
  if (b == 0) return 0;
  if (b == -1) return (i32)(0u - (u32)a);
  i32 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline i32 k_imod(i32 a, i32 b) {
  if (b == 0 || b == -1) return 0;
  i32 r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline u32 k_upow(u64 b, i64 e) {
  u64 r = 1;
  while (e > 0) { if (e & 1) r *= b; b *= b; e >>= 1; }
  return (u32)r;
}
static inline i32 k_ipow(i32 b, i32 e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e % 2) ? -1 : 1) : 0;
  return (i32)k_upow((u64)(i64)b, e);
}
static inline u32 k_uupow(u32 b, u32 e) { return k_upow(b, (i64)e); }
static inline i32 k_ishl(i32 x, i64 s) { return (s < 0 || s >= 32) ? 0 : (i32)((u32)x << s); }
static inline i32 k_ishr(i32 x, i64 s) { return (s < 0 || s >= 32) ? (x < 0 ? -1 : 0) : (x >> s); }
static inline u32 k_ushl(u32 x, i64 s) { return (s < 0 || s >= 32) ? 0u : (u32)(x << s); }
static inline u32 k_ushr(u32 x, i64 s) { return (s < 0 || s >= 32) ? 0u : (x >> s); }
static inline float k_bits_f(u32 b) { float f; __builtin_memcpy(&f, &b, 4); return f; }
static inline u32 k_f_bits(float f) { u32 b; __builtin_memcpy(&b, &f, 4); return b; }
)PRELUDE";

}  // namespace kiln::native
