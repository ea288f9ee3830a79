// SSE2 quantized_matvec (qmatmul_x86.h): baseline x86-64, for CPUs without AVX2. Each group
// of 8 rows runs as two halves of 4: per row and block pmaddwd partials, a transpose-add by
// unpacks (SSE2 has no phaddd) to the 4 rows' block sums, then the float part lane-wise, in
// block order per row: the reference's floats exactly. Also the run-time choice of kernels.
#include <cpuid.h>
#include <emmintrin.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <cstdlib>
#include <string>

#include "backend/native/qmatmul_x86.h"

namespace kiln::native {

namespace {

inline __m128i transpose_sum4(__m128i a0, __m128i a1, __m128i a2, __m128i a3) {
  const __m128i s01 = _mm_add_epi32(_mm_unpacklo_epi32(a0, a1), _mm_unpackhi_epi32(a0, a1));
  const __m128i s23 = _mm_add_epi32(_mm_unpacklo_epi32(a2, a3), _mm_unpackhi_epi32(a2, a3));
  return _mm_add_epi32(_mm_unpacklo_epi64(s01, s23), _mm_unpackhi_epi64(s01, s23));
}
inline __m128i dot_nibbles(const uint8_t* qs, const __m128i* y) {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)), low = _mm_set1_epi8(15), z = _mm_setzero_si128();
  const __m128i lo = _mm_and_si128(t, low), hi = _mm_and_si128(_mm_srli_epi16(t, 4), low);
  return _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(lo, z), y[0]), _mm_madd_epi16(_mm_unpackhi_epi8(lo, z), y[1])),
                       _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(hi, z), y[2]), _mm_madd_epi16(_mm_unpackhi_epi8(hi, z), y[3])));
}
inline __m128i sext_lo(__m128i a) { return _mm_srai_epi16(_mm_unpacklo_epi8(a, a), 8); }
inline __m128i sext_hi(__m128i a) { return _mm_srai_epi16(_mm_unpackhi_epi8(a, a), 8); }
inline __m128i dot_int8(const uint8_t* qs, const __m128i* y) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 16));
  return _mm_add_epi32(_mm_add_epi32(_mm_madd_epi16(sext_lo(a), y[0]), _mm_madd_epi16(sext_hi(a), y[1])),
                       _mm_add_epi32(_mm_madd_epi16(sext_lo(b), y[2]), _mm_madd_epi16(sext_hi(b), y[3])));
}

template <bool kNibbles>
void matvec(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx, const uint32_t* codes,
            const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  const int64_t nb = s.k / kQuantBlock;
  constexpr int kBytes = kNibbles ? 16 : 32;
  const auto* bytes = reinterpret_cast<const uint8_t*>(codes);
  for (int64_t g = g0; g < g1; ++g)
    for (int h = 0; h < 2; ++h) {
      const int64_t row0 = g * kQuantRowGroup + h * 4;
      if (row0 >= s.rows) break;
      __m128 acc = _mm_setzero_ps();
      for (int64_t b = 0; b < nb; ++b) {
        const __m128i* xp = reinterpret_cast<const __m128i*>(xq + b * 32);
        const __m128i y[4] = {_mm_loadu_si128(xp), _mm_loadu_si128(xp + 1), _mm_loadu_si128(xp + 2), _mm_loadu_si128(xp + 3)};
        const int64_t at = (g * nb + b) * kQuantRowGroup + h * 4;
        const uint8_t* c = bytes + at * kBytes;
        __m128i p[4];
        for (int j = 0; j < 4; ++j) p[j] = kNibbles ? dot_nibbles(c + j * kBytes, y) : dot_int8(c + j * kBytes, y);
        __m128 term = _mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(d + at), _mm_set1_ps(dx[b])),
                                 _mm_cvtepi32_ps(transpose_sum4(p[0], p[1], p[2], p[3])));
        if (kNibbles) term = _mm_add_ps(term, _mm_mul_ps(_mm_loadu_ps(mins + at), _mm_set1_ps(sx[b])));
        acc = _mm_add_ps(acc, term);
      }
      alignas(16) float tail[4];
      _mm_store_ps(tail, acc);
      for (int64_t r = 0; r < 4 && row0 + r < s.rows; ++r) out[row0 + r] = tail[r];
    }
}

}  // namespace

void quantized_matvec_sse2(const QuantMatmulShape& s, const int16_t* xq, const float* dx, const float* sx,
                           const uint32_t* codes, const float* d, const float* mins, int64_t g0, int64_t g1, float* out) {
  if (s.layout == QuantLayout::Nibble4) matvec<true>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
  else matvec<false>(s, xq, dx, sx, codes, d, mins, g0, g1, out);
}

namespace {

// AMX tiles usable by this process: CPUID's amx_tile and amx_int8, the OS saving the tile
// state (XCR0 bits 17 and 18), and on Linux the permission to use it, which the kernel grants
// per process on request (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) before the
// first tile instruction; without it that instruction faults. Asked once.
bool amx_usable_once() {
#if defined(__linux__)
  static const bool ok = [] {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 25))) return false;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE: xgetbv runs
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & (3u << 17)) != (3u << 17)) return false;
    constexpr long kReqXcompPerm = 0x1023, kXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) == 0;
  }();
  return ok;
#else
  return false;  // no known way here to ask for the tile state's permission
#endif
}

}  // namespace

bool amx_usable() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && amx_usable_once();
}

QuantIsa cpu_quant_isa() {
  // __builtin_cpu_supports checks that the OS saves the registers (XCR0) as well.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni")) {
    if (amx_usable()) return QuantIsa::Amx;
    return QuantIsa::Avx512Vnni;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni")) return QuantIsa::AvxVnni;
  if (__builtin_cpu_supports("avx2")) return QuantIsa::Avx2;
  return QuantIsa::Sse2;
}

const char* quant_isa_name(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::Sse2: return "sse2";
    case QuantIsa::Avx2: return "avx2";
    case QuantIsa::AvxVnni: return "avxvnni";
    case QuantIsa::Avx512Vnni: return "avx512vnni";
    case QuantIsa::Amx: return "amx";
  }
  return "?";
}

QuantIsa quant_isa() {
  static const QuantIsa isa = [] {
    QuantIsa best = cpu_quant_isa();
    if (const char* env = std::getenv("KILN_NATIVE_QMATVEC"))
      for (QuantIsa cap : {QuantIsa::Sse2, QuantIsa::Avx2, QuantIsa::AvxVnni, QuantIsa::Avx512Vnni, QuantIsa::Amx})
        if (std::string(env) == quant_isa_name(cap) && cap < best) best = cap;
    return best;
  }();
  return isa;
}

QuantMatvecFn best_quantized_matvec() {
  return quant_isa() == QuantIsa::Sse2 ? &quantized_matvec_sse2 : &quantized_matvec_avx2;
}

QuantRowsKernel quantized_matmul_rows_for(QuantIsa isa, bool int8) {
  switch (isa) {
    case QuantIsa::Sse2: return {};
    case QuantIsa::Avx2: return {&quantized_matmul_rows_avx2, kActMaxInt16};
    case QuantIsa::AvxVnni:
      return int8 ? QuantRowsKernel{&quantized_matmul_rows_avxvnni_i8, kActMaxInt8}
                  : QuantRowsKernel{&quantized_matmul_rows_avxvnni, kActMaxInt16};
    case QuantIsa::Avx512Vnni:
      return int8 ? QuantRowsKernel{&quantized_matmul_rows_avx512vnni_i8, kActMaxInt8}
                  : QuantRowsKernel{&quantized_matmul_rows_avx512vnni, kActMaxInt16};
    case QuantIsa::Amx:
      return int8 ? QuantRowsKernel{&quantized_matmul_rows_amx_i8, kActMaxInt8}
                  : QuantRowsKernel{&quantized_matmul_rows_amx, kActMaxInt16};
  }
  return {};
}

QuantRowsKernel best_quantized_matmul_rows() {
  static const bool int8 = [] {
    const char* env = std::getenv("KILN_NATIVE_PREFILL_INT8");
    return env && std::string(env) == "1";
  }();
  return quantized_matmul_rows_for(quant_isa(), int8);
}

}  // namespace kiln::native
