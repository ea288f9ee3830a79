// The quantized_matmul definition (quantized_matmul.h): the activation rounding, the scalar
// matvec every SIMD kernel must equal bit for bit, and the driver that runs a kernel per row.
#include "backend/quantized_matmul.h"

#include <algorithm>
#include <cmath>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ir/error.h"

namespace kiln {

QuantMatmulArgs quantized_matmul_args(const QuantMatmulShape& s, uint8_t* const data[5], const int64_t bytes[5],
                                      const std::string& device) {
  const int64_t blocks = quant_groups(s.rows) * (s.k / kQuantBlock) * kQuantRowGroup;
  const int64_t need[5] = {s.m * s.k * 4, blocks * quant_block_words(s.layout) * 4, blocks * 4,
                           quant_has_mins(s.layout) ? blocks * 4 : 0, s.m * s.rows * 4};
  for (int i = 0; i < 5; ++i)
    if (s.k % kQuantBlock != 0 || bytes[i] < need[i])
      fail("quantized_matmul", "the ", device, " device got operand ", i, " of ", bytes[i], " bytes, expected ",
           need[i], " (k = ", s.k, ", a multiple of ", kQuantBlock, ")");
  return {reinterpret_cast<const float*>(data[0]), reinterpret_cast<const uint32_t*>(data[1]),
          reinterpret_cast<const float*>(data[2]), reinterpret_cast<const float*>(data[3]),
          reinterpret_cast<float*>(data[4])};
}

namespace {

#ifdef __SSE2__
// One block with SSE2 (every x86-64 build): the scalar form's values lane-wise. maxps(a, amax)
// keeps amax where a is NaN, as std::max(amax, a) does; cvtps2dq rounds to nearest even under
// the default rounding mode, as std::nearbyint does; the codes are in int16 range once clamped.
void quantize_block(const float* p, int16_t* q, float* dx, float* sx, float max_code) {
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
  __m128 amax = _mm_setzero_ps();
  for (int i = 0; i < kQuantBlock; i += 4) amax = _mm_max_ps(_mm_and_ps(_mm_loadu_ps(p + i), abs_mask), amax);
  amax = _mm_max_ps(amax, _mm_movehl_ps(amax, amax));
  amax = _mm_max_ss(amax, _mm_shuffle_ps(amax, amax, 1));
  const float d = _mm_cvtss_f32(amax) / max_code, id = d != 0 ? 1 / d : 0;
  const __m128 vid = _mm_set1_ps(id), lo = _mm_set1_ps(-max_code), hi = _mm_set1_ps(max_code);
  __m128i sum = _mm_setzero_si128();
  for (int i = 0; i < kQuantBlock; i += 8) {
    __m128i c[2];
    for (int h = 0; h < 2; ++h) {
      __m128 v = _mm_mul_ps(_mm_loadu_ps(p + i + 4 * h), vid);
      v = _mm_and_ps(v, _mm_cmpord_ps(v, v));  // NaN -> 0
      c[h] = _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(v, lo), hi));
      sum = _mm_add_epi32(sum, c[h]);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi32(c[0], c[1]));
  }
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4e));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xb1));
  *dx = d;
  *sx = d * float(_mm_cvtsi128_si32(sum));
}
#else
void quantize_block(const float* p, int16_t* q, float* dx, float* sx, float max_code) {
  float amax = 0;
  for (int i = 0; i < kQuantBlock; ++i) amax = std::max(amax, std::fabs(p[i]));
  const float d = amax / max_code, id = d != 0 ? 1 / d : 0;
  int32_t sum = 0;
  for (int i = 0; i < kQuantBlock; ++i) {
    // NaN and infinite inputs give NaN codes: read as 0 (the outputs are NaN through d).
    float v = std::nearbyint(p[i] * id);
    v = v == v ? std::clamp(v, -max_code, max_code) : 0.0f;
    q[i] = int16_t(v);
    sum += int32_t(v);
  }
  *dx = d;
  *sx = d * float(sum);
}
#endif

}  // namespace

// NaN and infinite inputs give NaN codes, read as 0 (the outputs are NaN through d). The SSE2
// form replaced a libm nearbyint call per value (5 % of a native prefill's samples).
void quantize_activation_row(const float* x, int64_t k, int16_t* q, float* dx, float* sx, int16_t max_code) {
  for (int64_t b = 0; b < k / kQuantBlock; ++b)
    quantize_block(x + b * kQuantBlock, q + b * kQuantBlock, dx + b, sx + b, float(max_code));
}

namespace {

// The code of value i of a row's block (its `words` uint32 at p).
int32_t code_at(QuantLayout l, const uint32_t* p, int i) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(p);
  if (l == QuantLayout::Nibble4) return i < 16 ? bytes[i] & 15 : bytes[i - 16] >> 4;
  return int8_t(bytes[i]);
}

}  // namespace

void quantized_matvec_reference(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                                const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1,
                                float* out) {
  const int64_t nb = s.k / kQuantBlock, words = quant_block_words(s.layout);
  const bool has_mins = quant_has_mins(s.layout);
  for (int64_t g = g0; g < g1; ++g)
    for (int r = 0; r < kQuantRowGroup && g * kQuantRowGroup + r < s.rows; ++r) {
      float acc = 0;
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t at = (g * nb + b) * kQuantRowGroup + r;  // this row's entry of the block
        const uint32_t* c = codes + at * words;
        int32_t isum = 0;
        for (int i = 0; i < kQuantBlock; ++i) isum += code_at(s.layout, c, i) * int32_t(xq[b * kQuantBlock + i]);
        float term = (d[at] * dx[b]) * float(isum);
        if (has_mins) term = term + mins[at] * sx[b];
        acc = acc + term;
      }
      out[g * kQuantRowGroup + r] = acc;
    }
}

namespace {

struct RowJob {
  const QuantMatmulShape* s;
  const QuantMatmulArgs* a;
  QuantMatvecFn kernel;
  QuantMatvec2Fn pair;
  QuantMatmulRowsFn rows;  // used when m > 1
  const int16_t* xq;
  const float *dx, *sx;
};

// Several activation rows (prefill) run tile by tile of weight groups, each tile about
// kTileBytes, so every row after the first reads the tile from L2 rather than memory.
constexpr int64_t kTileBytes = 64 << 10;
// A rows kernel (QuantMatmulRowsFn) reads every activation row of its chunk once per weight
// group: chunks of about this many bytes of int16 codes keep them in L2. Where that is 16 rows
// or more, a multiple of 16 (native's AMX kernel takes activation rows 16 to a tile and pads a
// partial one).
constexpr int64_t kRowChunkBytes = 96 << 10;

void run_row_chunks(const RowJob& j, int64_t g0, int64_t g1) {
  const int64_t nb = j.s->k / kQuantBlock;
  int64_t chunk = std::max<int64_t>(1, kRowChunkBytes / (j.s->k * int64_t(sizeof(int16_t))));
  if (chunk >= 16) chunk -= chunk % 16;
  for (int64_t i = 0; i < j.s->m; i += chunk) {
    const QuantMatmulShape part{j.s->layout, std::min(chunk, j.s->m - i), j.s->k, j.s->rows};
    j.rows(part, j.xq + i * j.s->k, j.dx + i * nb, j.sx + i * nb, j.a->codes, j.a->d, j.a->mins, g0, g1,
           j.a->out + i * j.s->rows);
  }
}

void run_groups(void* ctx, int64_t g0, int64_t g1) {
  const RowJob& j = *static_cast<const RowJob*>(ctx);
  if (j.rows) return run_row_chunks(j, g0, g1);
  const int64_t nb = j.s->k / kQuantBlock;
  const int64_t group_bytes = nb * kQuantRowGroup * (quant_block_words(j.s->layout) + 2) * 4;
  const int64_t tile = j.s->m == 1 ? g1 - g0 : std::max<int64_t>(1, kTileBytes / std::max<int64_t>(group_bytes, 1));
  for (int64_t t0 = g0; t0 < g1; t0 += tile)
    for (int64_t i = 0; i < j.s->m;) {
      const int64_t step = j.pair && i + 1 < j.s->m ? 2 : 1;
      (step == 2 ? j.pair : j.kernel)(*j.s, j.xq + i * j.s->k, j.dx + i * nb, j.sx + i * nb, j.a->codes, j.a->d,
                                      j.a->mins, t0, std::min(g1, t0 + tile), j.a->out + i * j.s->rows);
      i += step;
    }
}

}  // namespace

void run_quantized_matmul(const QuantMatmulShape& s, const QuantMatmulArgs& a, QuantMatvecFn kernel,
                          GroupSplitter split, void* split_ctx, QuantMatvec2Fn pair, QuantRowsKernel rows) {
  if (s.m == 0 || s.rows == 0) return;
  const int64_t nb = s.k / kQuantBlock;
  const bool by_rows = rows.fn && s.m > 1;
  const int16_t max_code = by_rows ? rows.max_code : kActMaxInt16;
  std::vector<int16_t> xq(size_t(s.m * s.k));
  std::vector<float> dx(size_t(s.m * nb)), sx(size_t(s.m * nb));
  for (int64_t i = 0; i < s.m; ++i)
    quantize_activation_row(a.x + i * s.k, s.k, &xq[size_t(i * s.k)], &dx[size_t(i * nb)], &sx[size_t(i * nb)],
                            max_code);
  RowJob job{&s, &a, kernel, pair, by_rows ? rows.fn : nullptr, xq.data(), dx.data(), sx.data()};
  const int64_t groups = quant_groups(s.rows);
  if (split) split(split_ctx, groups, run_groups, &job);
  else run_groups(&job, 0, groups);
}

}  // namespace kiln
