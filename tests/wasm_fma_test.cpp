// Relaxed-SIMD FMA in tiled contractions: the probe decides the default, modules with
// f32x4.relaxed_madd validate exactly where the probe says so, and fused results stay within
// the float32 error bound of a K-term dot product of the cpu's unfused sums.
// `make test-wasm` runs this binary under --experimental-wasm-relaxed-simd (Node 20 has
// Relaxed SIMD only behind that flag), so the fused path is exercised there.
#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>

#include "backend/wasm/wasm_codegen.h"
#include "wasm_test_util.h"

namespace wasm_fma_test {

namespace {

using namespace kiln;
using namespace kiln::wasm_test;

EM_JS(int, kiln_test_validates, (const uint8_t* bytes, int len), {
  return WebAssembly.validate(new Uint8Array(wasmMemory.buffer, bytes, len).slice()) ? 1 : 0;
});
EM_JS(int, kiln_test_env_fma_off, (), {
  return typeof process == 'object' && process.env['KILN_WASM_FMA'] === '0' ? 1 : 0;
});

bool has_relaxed_madd(const std::vector<uint8_t>& b) {
  const uint8_t op[] = {0xfd, 0x85, 0x02};  // SIMD prefix, LEB128 0x105
  return std::search(b.begin(), b.end(), std::begin(op), std::end(op)) != b.end();
}

std::vector<float> floats(const Bytes& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

Bytes uniform(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  Bytes b(4 * n);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(WasmFma, ProbeDecidesTheDefault) {
  WasmBackend& be = wasm_be();
  KeepOptions keep;
  EXPECT_EQ(be.options().fma, be.relaxed_simd() && !kiln_test_env_fma_off());
  // The probe agrees with the engine on a real kernel module that uses relaxed_madd.
  wasm::CodegenOptions o = be.options();
  o.fma = true;
  wasm::CompiledKernel ck = wasm::compile_kernel(matmul(16, 8, 16, 0), o);
  ASSERT_TRUE(ck.tiled);
  ASSERT_TRUE(has_relaxed_madd(ck.bytes));
  EXPECT_EQ(kiln_test_validates(ck.bytes.data(), int(ck.bytes.size())) != 0, be.relaxed_simd());
  // Asking for fma where the engine lacks it keeps kernels that compile.
  be.set_options(o);
  EXPECT_EQ(be.options().fma, be.relaxed_simd());
  o.fma = false;
  EXPECT_FALSE(has_relaxed_madd(wasm::compile_kernel(matmul(16, 8, 16, 0), o).bytes));
}

// |fused - cpu| <= (2K + 2) u (sum_r |a b| + |bias|): each of the two results is within
// K u of the exact dot product (plus one rounding for the bias), and relu does not widen it.
TEST(WasmFma, TiledMatmulsStayWithinTheDotProductBound) {
  WasmBackend& be = wasm_be();
  if (!be.relaxed_simd()) GTEST_SKIP() << "this engine has no Relaxed SIMD";
  KeepOptions keep;
  std::mt19937 rng(61);
  const double u = std::ldexp(1.0, -24);
  int64_t differing = 0, total = 0;
  // Register tiles of the sweep, cache blocks with B packed, and the default (packed by size).
  for (auto [rows, vecs, pack] : {std::tuple{4, 4, -1}, std::tuple{2, 4, 1}, std::tuple{4, 2, 0}}) {
    wasm::CodegenOptions o = keep.saved;
    o.fma = true, o.tile_rows = rows, o.tile_vecs = vecs, o.tile_pack = pack;
    be.set_options(o);
    for (auto [m, kk, n] : {std::tuple{33, 65, 40}, std::tuple{64, 512, 64}, std::tuple{37, 300, 532}}) {
      for (int epi : {0, 2}) {
        Kernel k = matmul(m, kk, n, epi);
        wasm::CompiledKernel ck = wasm::compile_kernel(k, be.options());
        ASSERT_TRUE(ck.tiled && has_relaxed_madd(ck.bytes)) << m << "x" << kk << "x" << n;
        std::vector<Bytes> ins = {uniform(size_t(m * kk), rng), uniform(size_t(kk * n), rng), uniform(size_t(n), rng)};
        std::vector<float> a = floats(ins[0]), b = floats(ins[1]), bias = floats(ins[2]);
        std::vector<float> want = floats(run_on(get_backend("cpu"), k, ins)), got = floats(run_on(be, k, ins));
        for (int64_t i = 0; i < m; i++)
          for (int64_t j = 0; j < n; j++) {
            double mag = epi ? std::fabs(bias[size_t(j)]) : 0;
            for (int64_t r = 0; r < kk; r++) mag += std::fabs(double(a[size_t(i * kk + r)]) * b[size_t(r * n + j)]);
            const size_t x = size_t(i * n + j);
            ASSERT_LE(std::fabs(double(got[x]) - want[x]), (2 * kk + 2) * u * mag)
                << "element (" << i << ", " << j << ") of " << m << "x" << kk << "x" << n << ", tile " << rows << "x"
                << vecs << ", epilogue " << epi;
            differing += got[x] != want[x];
            total++;
          }
      }
    }
  }
  // Informational: how often fusing changed the last bits (0 where the engine does not fuse).
  std::printf("[ fma      ] %lld of %lld outputs differ from the unfused cpu sums\n", (long long)differing,
              (long long)total);
}

// The same code runs every element however a dispatch is split, so fused results do not
// depend on the thread count either.
TEST(WasmFma, SplitDispatchesGiveOneThreadsBits) {
  WasmBackend& be = wasm_be();
  if (!be.relaxed_simd()) GTEST_SKIP() << "this engine has no Relaxed SIMD";
  if (be.max_threads() < 2) GTEST_SKIP() << "single-threaded core";
  KeepOptions keep;
  const int all = be.threads();
  wasm::CodegenOptions o = keep.saved;
  o.fma = true;
  be.set_options(o);
  std::mt19937 rng(62);
  Kernel k = matmul(192, 96, 160, 2);
  std::vector<Bytes> ins = {uniform(192 * 96, rng), uniform(96 * 160, rng), uniform(160, rng)};
  be.set_threads(1);
  Bytes one = run_on(be, k, ins);
  be.set_threads(all);
  const int64_t before = be.split_dispatches();
  Bytes many = run_on(be, k, ins);
  EXPECT_EQ(be.split_dispatches(), before + 1);
  EXPECT_TRUE(same_bits(k, one, many));
}

}  // namespace
}  // namespace wasm_fma_test
#endif  // __EMSCRIPTEN__
