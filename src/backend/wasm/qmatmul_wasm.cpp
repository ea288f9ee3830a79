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
// A row's block of 32 codes widened to int16 (4 vectors, values 0-7, 8-15, 16-23, 24-31).
inline void widen_nibbles(const uint8_t* qs, v128_t* w) {
  const v128_t t = wasm_v128_load(qs), lo = wasm_v128_and(t, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(t, 4);
  w[0] = wasm_u16x8_extend_low_u8x16(lo), w[1] = wasm_u16x8_extend_high_u8x16(lo);
  w[2] = wasm_u16x8_extend_low_u8x16(hi), w[3] = wasm_u16x8_extend_high_u8x16(hi);
}
inline void widen_int8(const uint8_t* qs, v128_t* w) {
  const v128_t a = wasm_v128_load(qs), b = wasm_v128_load(qs + 16);
  w[0] = wasm_i16x8_extend_low_i8x16(a), w[1] = wasm_i16x8_extend_high_i8x16(a);
  w[2] = wasm_i16x8_extend_low_i8x16(b), w[3] = wasm_i16x8_extend_high_i8x16(b);
}
// 4 int32 partials of the block's integer dot product.
inline v128_t dot4(const v128_t* w, const v128_t* y) {
  return wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_dot_i16x8(w[0], y[0]), wasm_i32x4_dot_i16x8(w[1], y[1])),
                        wasm_i32x4_add(wasm_i32x4_dot_i16x8(w[2], y[2]), wasm_i32x4_dot_i16x8(w[3], y[3])));
}
inline void load_x(const int16_t* xq, v128_t* y) {
  for (int i = 0; i < 4; ++i) y[i] = wasm_v128_load(xq + 8 * i);
}
// acc + ((d_w * d_x) * float(isum) + m_w * s_x), lane-wise over 4 rows.
template <bool kNibbles>
inline v128_t add_term(v128_t acc, v128_t isum, const float* d, const float* mins, float dx, float sx) {
  v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(d), wasm_f32x4_splat(dx)), wasm_f32x4_convert_i32x4(isum));
  if (kNibbles) term = wasm_f32x4_add(term, wasm_f32x4_mul(wasm_v128_load(mins), wasm_f32x4_splat(sx)));
  return wasm_f32x4_add(acc, term);
}
inline void store_group(const QuantMatmulShape& s, int64_t g, const v128_t* acc, float* out) {
  const int64_t live = s.rows - g * kQuantRowGroup;
  if (live >= kQuantRowGroup) {
    wasm_v128_store(out + g * kQuantRowGroup, acc[0]);
    wasm_v128_store(out + g * kQuantRowGroup + 4, acc[1]);
    return;
  }
  alignas(16) float tail[kQuantRowGroup];
  wasm_v128_store(tail, acc[0]);
  wasm_v128_store(tail + 4, acc[1]);
  for (int64_t r = 0; r < live; ++r) out[g * kQuantRowGroup + r] = tail[r];
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
      v128_t y[4];
      load_x(xq + b * 32, y);
      for (int h = 0; h < 2; ++h) {
        const int64_t at = (g * nb + b) * kQuantRowGroup + h * 4;
        v128_t p[4], w[4];
        for (int j = 0; j < 4; ++j) {
          kNibbles ? widen_nibbles(bytes + (at + j) * kBytes, w) : widen_int8(bytes + (at + j) * kBytes, w);
          p[j] = dot4(w, y);
        }
        acc[h] = add_term<kNibbles>(acc[h], transpose_sum4(p[0], p[1], p[2], p[3]), d + at, mins + at, dx[b], sx[b]);
      }
    }
    store_group(s, g, acc, out);
  }
}

// Two activation rows (prefill): each row's codes widened once and dotted with both; each
// output's float part in the same order as matvec's, so the same bits.
template <bool kNibbles>
void matvec2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx, const uint32_t* codes,
             const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  const int64_t nb = s.k / kQuantBlock;
  constexpr int kBytes = kNibbles ? 16 : 32;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  const int16_t* xq1 = xq + s.k;
  const float *dx1 = dx + nb, *sx1 = sx + nb;
  for (int64_t g = g0; g < g1; ++g) {
    v128_t acc0[2] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0)}, acc1[2] = {acc0[0], acc0[1]};
    for (int64_t b = 0; b < nb; ++b) {
      v128_t y0[4], y1[4];
      load_x(xq + b * 32, y0);
      load_x(xq1 + b * 32, y1);
      for (int h = 0; h < 2; ++h) {
        const int64_t at = (g * nb + b) * kQuantRowGroup + h * 4;
        v128_t p0[4], p1[4], w[4];
        for (int j = 0; j < 4; ++j) {
          kNibbles ? widen_nibbles(bytes + (at + j) * kBytes, w) : widen_int8(bytes + (at + j) * kBytes, w);
          p0[j] = dot4(w, y0);
          p1[j] = dot4(w, y1);
        }
        acc0[h] = add_term<kNibbles>(acc0[h], transpose_sum4(p0[0], p0[1], p0[2], p0[3]), d + at, mins + at, dx[b], sx[b]);
        acc1[h] = add_term<kNibbles>(acc1[h], transpose_sum4(p1[0], p1[1], p1[2], p1[3]), d + at, mins + at, dx1[b], sx1[b]);
      }
    }
    store_group(s, g, acc0, out);
    store_group(s, g, acc1, out + s.rows);
  }
}

}  // namespace

void quantized_matvec_simd128(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                              const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                              float* out) {
  if (s.layout == QuantLayout::Nibble4) matvec<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else matvec<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

void quantized_matvec2_simd128(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                               const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                               float* out) {
  if (s.layout == QuantLayout::Nibble4) matvec2<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else matvec2<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::wasm
#endif  // __wasm_simd128__
