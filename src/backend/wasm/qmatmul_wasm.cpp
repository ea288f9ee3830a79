// SIMD128 quantized_matvec (qmatmul_wasm.h), compiled with -msimd128 in the Emscripten builds.
// Per group of 8 rows and block: each row's codes widened to int16 and dotted with the
// activation's int16 codes (i32x4.dot_i16x8_s: 4 int32 partials per row), shuffles making
// one vector of 4 rows' block sums, then the float part lane-wise across the rows, in block
// order per row with separate mul and add: the reference's floats exactly.
#ifdef __wasm_simd128__
#include "backend/wasm/qmatmul_wasm.h"

#include <wasm_simd128.h>

namespace kiln::wasm {

namespace {

inline v128_t transpose_sum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t s01 = wasm_i32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 2, 6), wasm_i32x4_shuffle(a0, a1, 1, 5, 3, 7));
  const v128_t s23 = wasm_i32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 2, 6), wasm_i32x4_shuffle(a2, a3, 1, 5, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(s01, s23, 0, 1, 4, 5), wasm_i32x4_shuffle(s01, s23, 2, 3, 6, 7));
}
inline v128_t dot_nibbles(const uint8_t* qs, const v128_t* y) {
  const v128_t t = wasm_v128_load(qs), lo = wasm_v128_and(t, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(t, 4);
  return wasm_i32x4_add(
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(lo), y[0]),
                     wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(lo), y[1])),
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(hi), y[2]),
                     wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(hi), y[3])));
}
inline v128_t dot_int8(const uint8_t* qs, const v128_t* y) {
  const v128_t a = wasm_v128_load(qs), b = wasm_v128_load(qs + 16);
  return wasm_i32x4_add(
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(a), y[0]),
                     wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(a), y[1])),
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(b), y[2]),
                     wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(b), y[3])));
}

template <bool kNibbles>
void matvec(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx, const uint32_t* codes,
            const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  const int64_t nb = s.k / kQuantBlock;
  constexpr int kBytes = kNibbles ? 16 : 32;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  for (int64_t g = g0; g < g1; ++g) {
    v128_t acc[2] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0)};
    for (int64_t b = 0; b < nb; ++b) {
      const v128_t y[4] = {wasm_v128_load(xq + b * 32), wasm_v128_load(xq + b * 32 + 8),
                           wasm_v128_load(xq + b * 32 + 16), wasm_v128_load(xq + b * 32 + 24)};
      const int64_t at0 = (g * nb + b) * kQuantRowGroup;
      for (int h = 0; h < 2; ++h) {
        const int64_t at = at0 + h * 4;
        const uint8_t* c = bytes + at * kBytes;
        v128_t p[4];
        for (int j = 0; j < 4; ++j) p[j] = kNibbles ? dot_nibbles(c + j * kBytes, y) : dot_int8(c + j * kBytes, y);
        v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(d + at), wasm_f32x4_splat(dx[b])),
                                     wasm_f32x4_convert_i32x4(transpose_sum4(p[0], p[1], p[2], p[3])));
        if (kNibbles) term = wasm_f32x4_add(term, wasm_f32x4_mul(wasm_v128_load(mins + at), wasm_f32x4_splat(sx[b])));
        acc[h] = wasm_f32x4_add(acc[h], term);
      }
    }
    const int64_t live = s.rows - g * kQuantRowGroup;
    if (live >= kQuantRowGroup) {
      wasm_v128_store(out + g * kQuantRowGroup, acc[0]);
      wasm_v128_store(out + g * kQuantRowGroup + 4, acc[1]);
    } else {
      alignas(16) float tail[kQuantRowGroup];
      wasm_v128_store(tail, acc[0]);
      wasm_v128_store(tail + 4, acc[1]);
      for (int64_t r = 0; r < live; ++r) out[g * kQuantRowGroup + r] = tail[r];
    }
  }
}

}  // namespace

void quantized_matvec_simd128(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                              const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                              float* out) {
  if (s.layout == QuantLayout::Nibble4) matvec<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else matvec<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::wasm
#endif  // __wasm_simd128__
