// QuantizedMatmul: the routine primitive lax::quantized_matmul against its definition written
// out here (int16 activation rounding per 32 values, exact integer block sums, the float part
// in block order), bit for bit on the test's device and for each SIMD kernel of this build;
// its shape errors, jit, jvp/grad (straight-through) and vmap rules.
#include "library/quantized_matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ir/error.h"
#include "kiln/jit.h"
#include "kiln/transforms.h"
#include "library/numpy.h"
#ifdef __EMSCRIPTEN__
#include "backend/wasm/qmatmul_wasm.h"
#elif defined(__x86_64__)
#include "backend/backend.h"
#include "backend/native/qmatmul_x86.h"
#endif

namespace quantized_matmul_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::QuantLayout;

uint32_t next(uint32_t& s) { return s = s * 1664525u + 1013904223u; }

// Random operands of one call, as host vectors and as arrays on the default device.
struct Operands {
  QuantLayout layout;
  int64_t m, k, rows;
  std::vector<float> x, d, mins;
  std::vector<uint32_t> codes;
  Array ax, ac, ad, an;
};

Operands make(QuantLayout layout, int64_t m, int64_t k, int64_t rows, uint32_t seed) {
  Operands o{layout, m, k, rows, {}, {}, {}, {}, {}, {}, {}, {}};
  const int64_t nb = k / 32, groups = (rows + 7) / 8, words = layout == QuantLayout::Nibble4 ? 4 : 8;
  o.codes.assign(size_t(groups * nb * 8 * words), 0);
  o.d.assign(size_t(groups * nb * 8), 0.0f);
  if (layout == QuantLayout::Nibble4) o.mins.assign(o.d.size(), 0.0f);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t r = 0; r < 8 && g * 8 + r < rows; ++r) {  // padded rows stay zero
        const size_t at = size_t((g * nb + b) * 8 + r);
        o.d[at] = float(int(next(seed) >> 20) - 2048) * 1e-5f;
        if (!o.mins.empty()) o.mins[at] = float(int(next(seed) >> 20) - 2048) * 3e-5f;
        for (int64_t w = 0; w < words; ++w) o.codes[at * size_t(words) + size_t(w)] = next(seed);
      }
  for (int64_t i = 0; i < m * k; ++i) {
    // Mixed magnitudes, exact zeros, and one all-zero block (d = 0 there).
    const float v = float(int(next(seed) >> 16) - 32768) / 4096.0f;
    o.x.push_back(i / 32 == 1 ? 0.0f : (i % 7 == 0 ? v * 100.0f : v));
  }
  o.ax = np::array(o.x, {m, k});
  o.ac = np::array(o.codes, {groups, nb, 8, words});
  o.ad = np::array(o.d, {groups, nb, 8});
  o.an = o.mins.empty() ? np::array(std::vector<float>{}, {0}) : np::array(o.mins, {groups, nb, 8});
  return o;
}

// The definition, from scratch: each x row rounded to int16 per 32 values (max_code 32767; 127
// for the int8 rounding of native's VNNI prefill kernels), then per output row the blocks in
// order, acc = acc + ((d_w * d_x) * float(isum) + m_w * s_x).
std::vector<float> definition(const Operands& o, int max_code = 32767) {
  const int64_t nb = o.k / 32, words = o.layout == QuantLayout::Nibble4 ? 4 : 8;
  std::vector<float> out;
  for (int64_t i = 0; i < o.m; ++i) {
    std::vector<int32_t> q(size_t(o.k));
    std::vector<float> dx(static_cast<size_t>(nb)), sx(static_cast<size_t>(nb));
    for (int64_t b = 0; b < nb; ++b) {
      float amax = 0;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(o.x[size_t(i * o.k + b * 32 + j)]));
      const float d = amax / float(max_code), id = d != 0 ? 1 / d : 0;
      int32_t sum = 0;
      for (int j = 0; j < 32; ++j) {
        // |x * id| <= max_code but for the last bit of 1 / d: the clamp the kernels apply.
        const float c = std::nearbyint(o.x[size_t(i * o.k + b * 32 + j)] * id);
        q[size_t(b * 32 + j)] = int32_t(std::clamp(c, -float(max_code), float(max_code)));
        sum += q[size_t(b * 32 + j)];
      }
      dx[size_t(b)] = d;
      sx[size_t(b)] = d * float(sum);
    }
    for (int64_t r = 0; r < o.rows; ++r) {
      float acc = 0;
      for (int64_t b = 0; b < nb; ++b) {
        const size_t at = size_t(((r / 8) * nb + b) * 8 + r % 8);
        uint8_t bytes[32];
        std::memcpy(bytes, &o.codes[at * size_t(words)], size_t(words * 4));
        int32_t isum = 0;
        for (int j = 0; j < 32; ++j) {
          const int32_t c = o.layout == QuantLayout::Nibble4 ? (j < 16 ? bytes[j] & 15 : bytes[j - 16] >> 4)
                                                             : int32_t(int8_t(bytes[j]));
          isum += c * q[size_t(b * 32 + j)];
        }
        float term = (o.d[at] * dx[size_t(b)]) * float(isum);
        if (o.layout == QuantLayout::Nibble4) term = term + o.mins[at] * sx[size_t(b)];
        acc = acc + term;
      }
      out.push_back(acc);
    }
  }
  return out;
}

Array call(const Operands& o, const Array& x) {
  return kiln::lax::quantized_matmul(x, o.ac, o.ad, o.an, o.layout, o.rows);
}

void expect_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], 4), 0) << what << " [" << i << "] " << got[i] << " vs " << want[i];
}

struct Case {
  QuantLayout layout;
  int64_t m, k, rows;
};
const Case kCases[] = {
    {QuantLayout::Nibble4, 1, 64, 8},  {QuantLayout::Nibble4, 1, 96, 13}, {QuantLayout::Nibble4, 3, 576, 40},
    {QuantLayout::Nibble4, 2, 64, 1},  {QuantLayout::Int8, 1, 64, 8},     {QuantLayout::Int8, 1, 96, 5},
    {QuantLayout::Int8, 3, 576, 29},   {QuantLayout::Int8, 2, 32, 64},
    // Several x rows over more weight groups than one 64 KiB tile holds (the prefill order).
    {QuantLayout::Nibble4, 3, 576, 203}, {QuantLayout::Int8, 2, 1024, 300},
    // The rows kernel (native AVX2 prefill): odd row counts, more rows than one chunk of
    // activation codes (96 KiB: 32 rows at k = 1536) with a ragged last chunk, and rows
    // longer than its widened group holds (k > 4096: the matvec per row).
    {QuantLayout::Nibble4, 5, 96, 13}, {QuantLayout::Nibble4, 37, 1536, 19}, {QuantLayout::Int8, 33, 1536, 11},
    {QuantLayout::Nibble4, 3, 4128, 9}, {QuantLayout::Int8, 2, 4128, 8},
    // AMX (16 activation rows per tile): a whole tile and a partial one, over an odd number
    // of groups; several tiles and a partial one in the chunk, one group; chunks of 48 rows
    // and a last one under a tile (the AVX512-VNNI kernel).
    {QuantLayout::Nibble4, 21, 576, 203}, {QuantLayout::Int8, 50, 96, 13}, {QuantLayout::Nibble4, 16, 64, 8},
    {QuantLayout::Int8, 150, 1024, 9},
};

std::string name(const Case& c) {
  return std::string(c.layout == QuantLayout::Nibble4 ? "nibble4" : "int8") + " m=" + std::to_string(c.m) +
         " k=" + std::to_string(c.k) + " rows=" + std::to_string(c.rows);
}

// The activation rounding of the test's device for calls of several x rows: int8 on native
// with $KILN_NATIVE_PREFILL_INT8=1 on a VNNI CPU, int16 everywhere else.
int prefill_max_code() {
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
  if (kiln::default_device() == "native") return kiln::native::best_quantized_matmul_rows().max_code;
#endif
  return 32767;
}

// On the test's device (cpu: the reference; native, wasm: their SIMD kernels), ragged row
// counts included: every output equals the definition bit for bit.
TEST(QuantizedMatmul, EqualsTheDefinitionBitForBit) {
  uint32_t seed = 5;
  for (const Case& c : kCases) {
    const Operands o = make(c.layout, c.m, c.k, c.rows, seed += 17);
    const Array y = call(o, o.ax);
    EXPECT_EQ(y.shape(), (kiln::Shape{c.m, c.rows})) << name(c);
    expect_bits(y.to_vector<float>(), definition(o, c.m > 1 ? prefill_max_code() : 32767), name(c));
  }
}

// Each SIMD kernel of this build against the C++ reference directly, on every group range.
TEST(QuantizedMatmul, SimdKernelsEqualTheReference) {
  std::vector<std::pair<std::string, kiln::QuantMatvecFn>> kernels;
  kiln::QuantMatvec2Fn pair = nullptr;
  kiln::QuantRowsKernel rows;
#ifdef __EMSCRIPTEN__
  kernels.push_back({"simd128", &kiln::wasm::quantized_matvec_simd128});
  pair = &kiln::wasm::quantized_matvec2_simd128;
#elif defined(__x86_64__)
  kernels.push_back({"sse2", &kiln::native::quantized_matvec_sse2});
  if (__builtin_cpu_supports("avx2")) {
    kernels.push_back({"avx2", &kiln::native::quantized_matvec_avx2});
    rows = {&kiln::native::quantized_matmul_rows_avx2, kiln::kActMaxInt16};
  }
#endif
  uint32_t seed = 99;
  for (const Case& c : kCases) {
    const Operands o = make(c.layout, c.m, c.k, c.rows, seed += 31);
    const kiln::QuantMatmulShape s{c.layout, c.m, c.k, c.rows};
    std::vector<float> out(size_t(c.m * c.rows), -1.0f);
    std::vector<float> want = definition(o);
    kiln::QuantMatmulArgs a{o.x.data(), o.codes.data(), o.d.data(), o.mins.data(), out.data()};
    kiln::run_quantized_matmul(s, a, &kiln::quantized_matvec_reference);
    expect_bits(out, want, "reference " + name(c));
    for (auto& [kname, fn] : kernels) {
      std::fill(out.begin(), out.end(), -1.0f);
      kiln::run_quantized_matmul(s, a, fn);
      expect_bits(out, want, kname + " " + name(c));
      if (rows.fn) {
        std::fill(out.begin(), out.end(), -1.0f);
        kiln::run_quantized_matmul(s, a, fn, nullptr, nullptr, nullptr, rows);  // all rows per weight group
        expect_bits(out, c.m > 1 ? definition(o, rows.max_code) : want, kname + " rows kernel " + name(c));
      }
      if (!pair) continue;
      std::fill(out.begin(), out.end(), -1.0f);
      kiln::run_quantized_matmul(s, a, fn, nullptr, nullptr, pair);  // rows in pairs, an odd one alone
      expect_bits(out, want, kname + " in pairs " + name(c));
    }
  }
}

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
// Every native prefill rows kernel this CPU runs (AVX2, AVX-VNNI, AVX512-VNNI and AMX at int16
// and int8), whatever $KILN_NATIVE_QMATVEC says, against the definition at its activation
// rounding on every case of several x rows, on whole and split group ranges (a thread's
// share); levels the CPU lacks are named and skipped.
TEST(QuantizedMatmul, EachNativeRowsKernelEqualsItsDefinition) {
  using kiln::native::QuantIsa;
  for (QuantIsa isa : {QuantIsa::Avx2, QuantIsa::AvxVnni, QuantIsa::Avx512Vnni, QuantIsa::Amx})
    for (bool int8 : {false, true}) {
      if (isa == QuantIsa::Avx2 && int8) continue;
      const std::string level = std::string(kiln::native::quant_isa_name(isa)) + (int8 ? " int8" : "");
      if (isa > kiln::native::cpu_quant_isa()) {
        std::printf("[  SKIPPED ] rows kernel %s: this CPU lacks it\n", level.c_str());
        continue;
      }
      const kiln::QuantRowsKernel rows = kiln::native::quantized_matmul_rows_for(isa, int8);
      ASSERT_EQ(rows.max_code, int8 ? 127 : 32767) << level;
      ASSERT_NE(rows.fn, nullptr) << level;
      uint32_t seed = 123;
      for (const Case& c : kCases) {
        if (c.m < 2) continue;
        const Operands o = make(c.layout, c.m, c.k, c.rows, seed += 13);
        const kiln::QuantMatmulShape s{c.layout, c.m, c.k, c.rows};
        const std::vector<float> want = definition(o, rows.max_code);
        std::vector<float> out(size_t(c.m * c.rows), -1.0f);
        const kiln::QuantMatmulArgs a{o.x.data(), o.codes.data(), o.d.data(), o.mins.data(), out.data()};
        kiln::run_quantized_matmul(s, a, &kiln::quantized_matvec_reference, nullptr, nullptr, nullptr, rows);
        expect_bits(out, want, level + " " + name(c));
        // Odd group ranges, as a thread pool splits them (the 16-row kernel's lone last group).
        std::fill(out.begin(), out.end(), -1.0f);
        auto split = [](void*, int64_t groups, void (*fn)(void*, int64_t, int64_t), void* ctx) {
          for (int64_t g = 0; g < groups; g += 3) fn(ctx, g, std::min(groups, g + 3));
        };
        kiln::run_quantized_matmul(s, a, &kiln::quantized_matvec_reference, split, nullptr, nullptr, rows);
        expect_bits(out, want, level + " split " + name(c));
      }
    }
}
#endif

// got against the float matmul of x and the dequantized weight (the straight-through float
// formulation the jvp uses), within what rounding x at max_code allows: each code is off by at
// most half a step, d_b / 2 = amax_b / (2 max_code) of its block, so an output by at most
// sum over blocks of d_b / 2 * sum |w| there (and 1e-5 of the largest output for the floats'
// own rounding). Returns the largest ratio of error to that bound (<= 1: within it).
double rounding_excess(const Operands& o, const std::vector<float>& got, int max_code) {
  const Array w = kiln::lax::dequantize_packed(o.ac, o.ad, o.an, o.layout, o.rows, o.k);
  const auto want = np::matmul(o.ax, w.T()).to_vector<float>();
  const auto wv = w.to_vector<float>();
  float big = 0;
  for (float v : want) big = std::max(big, std::fabs(v));
  EXPECT_GT(big, 0.0f);
  double worst = 0;
  for (int64_t i = 0; i < o.m; ++i)
    for (int64_t r = 0; r < o.rows; ++r) {
      double bound = 1e-5 * big;
      for (int64_t b = 0; b < o.k / 32; ++b) {
        float amax = 0, wsum = 0;
        for (int j = 0; j < 32; ++j) {
          amax = std::max(amax, std::fabs(o.x[size_t(i * o.k + b * 32 + j)]));
          wsum += std::fabs(wv[size_t(r * o.k + b * 32 + j)]);
        }
        bound += double(amax) / (2.0 * max_code) * wsum;
      }
      const size_t at = size_t(i * o.rows + r);
      worst = std::max(worst, std::fabs(double(got[at]) - double(want[at])) / bound);
    }
  return worst;
}

// The device's result (two x rows: int16-rounded activations, or int8 where native's VNNI
// prefill is told to) against the float matmul, within its rounding's bound.
TEST(QuantizedMatmul, IsCloseToTheFloatMatmul) {
  for (QuantLayout layout : {QuantLayout::Nibble4, QuantLayout::Int8}) {
    const Operands o = make(layout, 2, 256, 21, 7);
    EXPECT_LE(rounding_excess(o, call(o, o.ax).to_vector<float>(), prefill_max_code()), 1.0);
  }
}

// Both roundings within their bounds; the int8 one's error is larger than the int16 bound
// allows (so the bound is what the test checks, not a loose tolerance).
TEST(QuantizedMatmul, Int8AndInt16RoundingsWithinTheirBounds) {
  for (QuantLayout layout : {QuantLayout::Nibble4, QuantLayout::Int8}) {
    const Operands o = make(layout, 2, 256, 21, 7);
    EXPECT_LE(rounding_excess(o, definition(o, 32767), 32767), 1.0);
    EXPECT_LE(rounding_excess(o, definition(o, 127), 127), 1.0);
    EXPECT_GT(rounding_excess(o, definition(o, 127), 32767), 1.0);
  }
}

TEST(QuantizedMatmul, ShapeErrorsNameTheOperand) {
  const Operands o = make(QuantLayout::Nibble4, 1, 64, 8, 3);
  auto message = [](const auto& f) {
    try {
      f();
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { call(o, np::ones({1, 48})); }).find("expected a multiple of 32"), std::string::npos);
  EXPECT_NE(message([&] { call(o, np::ones({1, 96})); }).find("codes is uint32[1,2,8,4], expected uint32[1,3,8,4]"),
            std::string::npos);
  EXPECT_NE(message([&] { kiln::lax::quantized_matmul(o.ax, o.ac, o.ad, o.an, QuantLayout::Int8, 8); })
                .find("codes is uint32[1,2,8,4], expected uint32[1,2,8,8]"),
            std::string::npos);
  EXPECT_NE(message([&] { kiln::lax::quantized_matmul(o.ax, o.ac, o.ad, o.an, QuantLayout::Nibble4, 9); })
                .find("expected uint32[2,2,8,4]"),
            std::string::npos);
  EXPECT_NE(message([&] { call(o, o.ax.astype(kiln::DType::Int32)); }).find("x is int32[1,64]"), std::string::npos);
}

// Under jit the routine is a step of its own between fused kernels: a producer (sin) and a
// consumer (+ 1) around it give the eager values bit for bit.
TEST(QuantizedMatmul, JitEqualsEager) {
  const Operands o = make(QuantLayout::Nibble4, 3, 96, 13, 11);
  auto f = [&](const std::vector<kiln::Tree>& a) {
    return kiln::Tree(call(o, np::sin(a[0].array()) * 2.0f) + 1.0f);
  };
  const auto eager = f({kiln::Tree(o.ax)}).array().to_vector<float>();
  const auto jitted = kiln::jit(f)({kiln::Tree(o.ax)}).array().to_vector<float>();
  expect_bits(jitted, eager, "jit");
  const auto again = kiln::jit(f)({kiln::Tree(o.ax * 0.5f)}).array().to_vector<float>();
  expect_bits(again, f({kiln::Tree(o.ax * 0.5f)}).array().to_vector<float>(), "jit, second input");
}

// Straight-through: d/dx sum(c * quantized_matmul(x)) is c @ W with W the float weight.
TEST(QuantizedMatmul, GradIsTheFloatWeightsTransposeProduct) {
  for (QuantLayout layout : {QuantLayout::Nibble4, QuantLayout::Int8}) {
    const Operands o = make(layout, 2, 64, 11, 23);
    const Array c = np::cos(np::arange(2 * 11, kiln::DType::Float32)).reshape({2, 11});
    auto loss = [&](const Array& x) { return np::sum(call(o, x) * c); };
    const auto g = kiln::grad(kiln::ArrayFn(loss))(o.ax).to_vector<float>();
    const Array w = kiln::lax::dequantize_packed(o.ac, o.ad, o.an, layout, o.rows, o.k);
    const auto want = np::matmul(c, w).to_vector<float>();
    ASSERT_EQ(g.size(), want.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
  }
}

// vmap over x's rows: each row is its own matvec, so the batch equals the loop bit for bit.
TEST(QuantizedMatmul, VmapEqualsALoop) {
  const Operands o = make(QuantLayout::Int8, 4, 64, 10, 31);
  auto f = [&](const Array& x) { return call(o, x); };
  const Array xs = o.ax.reshape({2, 2, 64});
  const auto batched = kiln::vmap(kiln::ArrayFn(f), 1)(xs).to_vector<float>();
  std::vector<float> looped;
  for (int64_t j = 0; j < 2; ++j) {
    const auto one = f(np::take(xs, np::array(std::vector<int32_t>{int32_t(j)}, {}), 1)).to_vector<float>();
    looped.insert(looped.end(), one.begin(), one.end());
  }
  expect_bits(batched, looped, "vmap over axis 1");
  // Batched weights are an error, not a silent loop.
  auto g = [&](const Array& d) { return kiln::lax::quantized_matmul(o.ax, o.ac, d, o.an, o.layout, o.rows); };
  EXPECT_THROW(kiln::vmap(kiln::ArrayFn(g))(np::stack({o.ad, o.ad})), kiln::Error);
}

}  // namespace

}  // namespace quantized_matmul_test
