// SIMD128 quantized_matvec (qmatmul_wasm.h), compiled with -msimd128 in the Emscripten builds.
// Per group of 8 rows and block: each row's codes widened to int16 and dotted with the
// activation's int16 codes (i32x4.dot_i16x8_s: 4 int32 partials per row), shuffles making
// one vector of 4 rows' block sums, then the float part lane-wise across the rows, in block
// order per row with separate mul and add: the reference's floats exactly.
#ifdef __wasm_simd128__
#include "backend/wasm/qmatmul_wasm.h"

#include <wasm_simd128.h>

#include <vector>

namespace kiln::wasm {

namespace {

inline v128_t transpose_sum4(v128_t a0, v128_t a1, v128_t a2, v128_t a3) {
  const v128_t s01 = wasm_i32x4_add(wasm_i32x4_shuffle(a0, a1, 0, 4, 2, 6), wasm_i32x4_shuffle(a0, a1, 1, 5, 3, 7));
  const v128_t s23 = wasm_i32x4_add(wasm_i32x4_shuffle(a2, a3, 0, 4, 2, 6), wasm_i32x4_shuffle(a2, a3, 1, 5, 3, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(s01, s23, 0, 1, 4, 5), wasm_i32x4_shuffle(s01, s23, 2, 3, 6, 7));
}
// A row's block of 32 codes as int16 in 4 vectors, read as 8 16-bit lanes of byte pairs
// (u16 / i16 shifts and masks: no byte shifts or byte-to-word extends, which V8 lowers to
// several instructions each). Lane i of the vectors holds values 2i, 2i + 1, 16 + 2i and
// 17 + 2i, so the activation's codes are permuted to match once per call (permute_x);
// integer sums are exact in any order, so the floats stay the reference's.
inline void widen_nibbles(const uint8_t* qs, v128_t* w) {
  // Byte j holds value j (low nibble) and j + 16 (high).
  const v128_t t = wasm_v128_load(qs), m = wasm_i16x8_splat(15);
  w[0] = wasm_v128_and(t, m), w[1] = wasm_v128_and(wasm_u16x8_shr(t, 8), m);
  w[2] = wasm_v128_and(wasm_u16x8_shr(t, 4), m), w[3] = wasm_u16x8_shr(t, 12);
}
inline void widen_int8(const uint8_t* qs, v128_t* w) {
  const v128_t a = wasm_v128_load(qs), b = wasm_v128_load(qs + 16);
  w[0] = wasm_i16x8_shr(wasm_i16x8_shl(a, 8), 8), w[1] = wasm_i16x8_shr(a, 8);
  w[2] = wasm_i16x8_shr(wasm_i16x8_shl(b, 8), 8), w[3] = wasm_i16x8_shr(b, 8);
}
// 4 int32 partials of the block's integer dot product.
inline v128_t dot4(const v128_t* w, const v128_t* y) {
  return wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_dot_i16x8(w[0], y[0]), wasm_i32x4_dot_i16x8(w[1], y[1])),
                        wasm_i32x4_add(wasm_i32x4_dot_i16x8(w[2], y[2]), wasm_i32x4_dot_i16x8(w[3], y[3])));
}
// n values of activation codes (whole blocks) in the widen functions' order: per block the
// even values of 0-15, the odd ones, then the same of 16-31.
inline void permute_x(const int16_t* xq, int64_t n, int16_t* to) {
  for (int64_t i = 0; i < n; i += 32) {
    const v128_t v0 = wasm_v128_load(xq + i), v1 = wasm_v128_load(xq + i + 8);
    const v128_t v2 = wasm_v128_load(xq + i + 16), v3 = wasm_v128_load(xq + i + 24);
    wasm_v128_store(to + i, wasm_i16x8_shuffle(v0, v1, 0, 2, 4, 6, 8, 10, 12, 14));
    wasm_v128_store(to + i + 8, wasm_i16x8_shuffle(v0, v1, 1, 3, 5, 7, 9, 11, 13, 15));
    wasm_v128_store(to + i + 16, wasm_i16x8_shuffle(v2, v3, 0, 2, 4, 6, 8, 10, 12, 14));
    wasm_v128_store(to + i + 24, wasm_i16x8_shuffle(v2, v3, 1, 3, 5, 7, 9, 11, 13, 15));
  }
}
// n activation codes (whole rows) permuted, in a buffer reused per thread.
inline const int16_t* permuted_x(const int16_t* xq, int64_t n) {
  thread_local std::vector<int16_t> buf;
  if (buf.size() < size_t(n)) buf.resize(size_t(n));
  permute_x(xq, n, buf.data());
  return buf.data();
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
  const int16_t* xp = permuted_x(xq, s.k);
  if (s.layout == QuantLayout::Nibble4) matvec<true>(s, xp, dx, sx, codes, d, mins, g0, g1, out);
  else matvec<false>(s, xp, dx, sx, codes, d, mins, g0, g1, out);
}

void quantized_matvec2_simd128(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                               const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                               float* out) {
  const int16_t* xp = permuted_x(xq, 2 * s.k);  // the two rows lie k apart
  if (s.layout == QuantLayout::Nibble4) matvec2<true>(s, xp, dx, sx, codes, d, mins, g0, g1, out);
  else matvec2<false>(s, xp, dx, sx, codes, d, mins, g0, g1, out);
}

}  // namespace kiln::wasm
#endif  // __wasm_simd128__
