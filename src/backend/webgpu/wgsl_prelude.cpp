// The WGSL helpers every generated kernel starts with: alu_eval's rules for what WGSL leaves
// undefined or defines differently (NaN in max/min, integer x // 0, float->int saturation,
// half rounding, atan2 of signed zeros), and the functions WGSL has no builtin for or whose
// accuracy it leaves to the driver (erf, expm1, log1p, sin, cos, tan, acos).
#include "backend/webgpu/wgsl_expr.h"

namespace kiln::webgpu {

const char* wgsl_prelude() {
  return R"(fn k_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn k_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
// Non-finite values through a var: WGSL rejects constant expressions that are not finite.
fn k_f32bits(b: u32) -> f32 { var v = b; return bitcast<f32>(v); }
// acos through atan2 of the half-angle sides: SwiftShader's builtin acos is 7e-5 off at 0.
fn k_acos(x: f32) -> f32 {
  let s = sqrt(max((1.0 - x) * (1.0 + x), 0.0));
  return select(atan2(s, x), k_f32bits(0x7fc00000u), !(abs(x) <= 1.0));
}
fn k_nan() -> f32 { return k_f32bits(0x7fc00000u); }
fn k_inf() -> f32 { return k_f32bits(0x7f800000u); }
fn k_fmax(a: f32, b: f32) -> f32 { return select(select(b, a, a > b), k_nan(), k_isnan(a) || k_isnan(b)); }
fn k_fmin(a: f32, b: f32) -> f32 { return select(select(b, a, a < b), k_nan(), k_isnan(a) || k_isnan(b)); }
fn k_r16(x: f32) -> f32 {
  if (k_isnan(x)) { return x; }
  if (abs(x) >= 65520.0) { return select(-k_inf(), k_inf(), x > 0.0); }
  return unpack2x16float(pack2x16float(vec2<f32>(x, 0.0))).x;
}
// sin/cos/tan with our own range reduction: WGSL leaves their accuracy to the driver, and
// SwiftShader's sin was off by ~2.4e-5 on [-4, 4] (2026-12-03). x = k*pi/2 + r, |r| <= pi/4,
// with pi/2 in three parts (Cody-Waite, Cephes sinf's constants doubled; k*1.5703125 is exact
// for |k| < 2^16), then Cephes' minimax polynomials. Past |x| = 65536, and for 0, inf and NaN,
// the builtin (which also keeps sin(-0) = -0).
fn k_trig_ok(x: f32) -> bool { return abs(x) < 65536.0 && x != 0.0; }
fn k_trig_r(x: f32, k: f32) -> f32 {
  var r = x - k * 1.5703125;
  r = r - k * 4.837512969970703125e-4;
  return r - k * 7.54978995489188216e-8;
}
fn k_sin_poly(r: f32) -> f32 {
  let z = r * r;
  return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}
fn k_cos_poly(r: f32) -> f32 {
  let z = r * r;
  return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
}
fn k_sin(x: f32) -> f32 {
  if (!k_trig_ok(x)) { return sin(x); }
  let k = round(x * 0.636619772367581343);
  let r = k_trig_r(x, k);
  let q = i32(k) & 3;
  let v = select(k_sin_poly(r), k_cos_poly(r), (q & 1) == 1);
  return select(v, -v, q >= 2);
}
fn k_cos(x: f32) -> f32 {
  if (!k_trig_ok(x)) { return cos(x); }
  let k = round(x * 0.636619772367581343);
  let r = k_trig_r(x, k);
  let q = i32(k) & 3;
  let v = select(k_cos_poly(r), k_sin_poly(r), (q & 1) == 1);
  return select(v, -v, q == 1 || q == 2);
}
fn k_tan(x: f32) -> f32 {
  if (!k_trig_ok(x)) { return tan(x); }
  let k = round(x * 0.636619772367581343);
  let r = k_trig_r(x, k);
  let s = k_sin_poly(r);
  let c = k_cos_poly(r);
  return select(s / c, -c / s, (i32(k) & 1) == 1);
}
// float16 bits of x (already rounded by k_r16): SwiftShader's pack2x16float turns infinities
// into NaN (2026-12-03), so they, and what overflows to them, are written as bits.
fn k_pack16(x: f32) -> u32 {
  if (k_isinf(x) || (!k_isnan(x) && abs(x) >= 65520.0)) { return ((bitcast<u32>(x) >> 16u) & 0x8000u) | 0x7c00u; }
  return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}
// atan2 with C's signed zeros, which WGSL leaves unspecified: y = +-0 gives +-0 for x > 0
// or x = +0, and +-pi for x < 0 or x = -0 (sign bits decide, not comparisons).
fn k_atan2(y: f32, x: f32) -> f32 {
  if (y == 0.0 && !k_isnan(x)) {
    let ys = bitcast<u32>(y) & 0x80000000u;
    let xneg = (bitcast<u32>(x) & 0x80000000u) != 0u;
    return bitcast<f32>(ys | bitcast<u32>(select(0.0, 3.14159265358979323846, xneg)));
  }
  return atan2(y, x);
}
fn k_div_i(a: i32, b: i32) -> i32 { if (b == 0) { return 0; } return a / b; }
fn k_div_u(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }
fn k_idiv_i(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) { return q - 1; }
  return q;
}
fn k_imod_i(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) { return r + b; }
  return r;
}
fn k_imod_u(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a % b; }
fn k_fmod(a: f32, b: f32) -> f32 {
  var m = a % b;
  if (b == 0.0) { return m; }
  if (m != 0.0) {
    if ((b < 0.0) != (m < 0.0)) { m = m + b; }
  } else {
    m = select(0.0, -0.0, b < 0.0);
  }
  return m;
}
fn k_ffloordiv(a: f32, b: f32) -> f32 {
  if (b == 0.0) { return a / b; }
  let m = a % b;
  var d = (a - m) / b;
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) { d = d - 1.0; }
  if (d != 0.0) {
    var f = floor(d);
    if (d - f > 0.5) { f = f + 1.0; }
    return f;
  }
  return select(0.0, -0.0, a / b < 0.0);
}
fn k_pow(a: f32, b: f32) -> f32 {
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (k_isnan(a) || k_isnan(b)) { return k_nan(); }
  if (b == 1.0) { return a; }
  if (b == 2.0) { return a * a; }
  if (b == -1.0) { return 1.0 / a; }
  if (b == 0.5 && a >= 0.0) { return sqrt(a); }
  let odd = trunc(b) == b && abs(b) < 16777216.0 && (i32(abs(b)) & 1) == 1;
  if (a == 0.0) {
    let z = select(0.0, k_inf(), b < 0.0);
    return select(z, -z, odd && bitcast<u32>(a) != 0u);
  }
  if (k_isinf(b)) {
    let big = abs(a) > 1.0;
    if (abs(a) == 1.0) { return 1.0; }
    return select(select(k_inf(), 0.0, big), select(0.0, k_inf(), big), b > 0.0);
  }
  if (a < 0.0) {
    if (trunc(b) != b) { return k_nan(); }
    let r = exp2(b * log2(-a));
    return select(r, -r, odd);
  }
  return exp2(b * log2(a));
}
fn k_ipow_i(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, (b & 1) != 0); }
    return 0;
  }
  var r = 1; var s = a; var e = b;
  loop { if (e == 0) { break; } if ((e & 1) != 0) { r = r * s; } s = s * s; e = e >> 1u; }
  return r;
}
fn k_ipow_u(a: u32, b: u32) -> u32 {
  var r = 1u; var s = a; var e = b;
  loop { if (e == 0u) { break; } if ((e & 1u) != 0u) { r = r * s; } s = s * s; e = e >> 1u; }
  return r;
}
fn k_f2i(x: f32) -> i32 {
  if (k_isnan(x)) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x <= -2147483648.0) { return bitcast<i32>(0x80000000u); }
  return i32(x);
}
fn k_f2u(x: f32) -> u32 {
  if (k_isnan(x) || x <= 0.0) { return 0u; }
  if (x >= 4294967296.0) { return 0xffffffffu; }
  return u32(x);
}
fn k_tanh(x: f32) -> f32 { return select(tanh(clamp(x, -15.0, 15.0)), x, k_isnan(x)); }
fn k_sinh(x: f32) -> f32 {
  if (abs(x) < 0.01) { let t = x * x; return x * (1.0 + t * (0.16666667 + t * 0.008333333)); }
  return sinh(x);
}
fn k_expm1(x: f32) -> f32 {
  let u = exp(x);
  if (u == 1.0) { return x; }
  let um1 = u - 1.0;
  if (um1 == -1.0) { return -1.0; }
  if (k_isinf(u)) { return u; }
  return um1 * x / log(u);
}
fn k_log1p(x: f32) -> f32 {
  let u = 1.0 + x;
  if (u == 1.0) { return x; }
  if (k_isinf(u)) { return u; }
  return log(u) * x / (u - 1.0);
}
fn k_log(x: f32) -> f32 {
  if (x == 0.0) { return -k_inf(); }
  if (x < 0.0 || k_isnan(x)) { return k_nan(); }
  if (k_isinf(x)) { return x; }
  return log(x);
}
fn k_log2(x: f32) -> f32 {
  if (x == 0.0) { return -k_inf(); }
  if (x < 0.0 || k_isnan(x)) { return k_nan(); }
  if (k_isinf(x)) { return x; }
  return log2(x);
}
fn k_sqrt(x: f32) -> f32 { if (x < 0.0) { return k_nan(); } return sqrt(x); }
fn k_exp(x: f32) -> f32 { if (x > 88.72284) { return k_inf(); } if (x < -104.0) { return 0.0; } return exp(x); }
fn k_exp2(x: f32) -> f32 { if (x >= 128.0) { return k_inf(); } if (x < -150.0) { return 0.0; } return exp2(x); }
fn k_erf(x: f32) -> f32 {
  let ax = abs(x);
  if (ax < 0.5) {
    let t = x * x;
    return x * (1.1283791671 + t * (-0.3761263890 + t * (0.1128379167 + t * (-0.02686617065 + t * (0.005223977625 + t * -0.0008548327023)))));
  }
  if (ax >= 4.0) { return select(-1.0, 1.0, x > 0.0); }
  let t = 1.0 / (1.0 + 0.3275911 * ax);
  let p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  let r = 1.0 - p * exp(-ax * ax);
  return select(-r, r, x > 0.0);
}
fn k_shl_i(a: i32, b: i32) -> i32 { return select(a << (u32(b) & 31u), 0, u32(b) >= 32u); }
fn k_shr_i(a: i32, b: i32) -> i32 { return select(a >> (u32(b) & 31u), select(0, -1, a < 0), u32(b) >= 32u); }
fn k_shl_u(a: u32, b: u32) -> u32 { return select(a << (b & 31u), 0u, b >= 32u); }
fn k_shr_u(a: u32, b: u32) -> u32 { return select(a >> (b & 31u), 0u, b >= 32u); }
)";
}

}  // namespace kiln::webgpu
