// kiln_qmatmul_bench: the library's quantized_matmul kernels (src/backend/quantized_matmul.h,
// native/qmatmul_*.cpp, wasm/qmatmul_wasm.cpp) timed on one thread on SmolLM2-135M's matrix
// shapes (issue 19): decode (one activation row) per kernel of this build, and prefill (m rows)
// with each group's codes widened once for every row (native AVX2 rows kernel; wasm: two rows
// per pass) against the matvec once per row. The operands are random codes in the packed
// layout; every kernel's output is checked bit for bit against the C++ reference first.
// Built natively and with em++ (run under Node): `make bench-qdot`. The float lowering these
// kernels replaced was measured by an earlier bench (bench/results/llm.md, 2026-12-06/07).
//
//   kiln_qmatmul_bench [--m 64] [--reps 20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backend/quantized_matmul.h"
#ifdef __EMSCRIPTEN__
#include "backend/wasm/qmatmul_wasm.h"
#else
#include "backend/native/qmatmul_x86.h"
#endif

namespace {

using kiln::QuantLayout;

struct Operands {
  kiln::QuantMatmulShape s;
  std::vector<float> x, d, mins, out;
  std::vector<uint32_t> codes;
  kiln::QuantMatmulArgs args() { return {x.data(), codes.data(), d.data(), mins.data(), out.data()}; }
};

Operands make(QuantLayout layout, int64_t m, int64_t k, int64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  Operands o;
  o.s = {layout, m, k, rows};
  const int64_t blocks = kiln::quant_groups(rows) * (k / kiln::kQuantBlock) * kiln::kQuantRowGroup;
  o.x.resize(size_t(m * k));
  for (float& v : o.x) v = u(rng);
  o.codes.resize(size_t(blocks * kiln::quant_block_words(layout)));
  for (uint32_t& w : o.codes) w = rng();
  o.d.resize(size_t(blocks));
  o.mins.resize(size_t(blocks));
  for (float& v : o.d) v = 0.01f * u(rng);
  for (float& v : o.mins) v = 0.1f * u(rng);
  o.out.assign(size_t(m * rows), 0);
  return o;
}

// Microseconds per call: the best of `reps` rounds of a few calls each (a shared machine).
double best_us(const std::function<void()>& f, int reps) {
  f();  // warm the caches and the code
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i) f();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 3);
  }
  return best;
}

struct Kernel {
  std::string name;
  kiln::QuantMatvecFn matvec;
  kiln::QuantMatvec2Fn pair = nullptr;
  kiln::QuantMatmulRowsFn rows = nullptr;
};

std::vector<Kernel> kernels() {
#ifdef __EMSCRIPTEN__
  return {{"simd128", &kiln::wasm::quantized_matvec_simd128, &kiln::wasm::quantized_matvec2_simd128}};
#else
  std::vector<Kernel> v = {{"sse2", &kiln::native::quantized_matvec_sse2}};
  if (__builtin_cpu_supports("avx2"))
    v.push_back({"avx2", &kiln::native::quantized_matvec_avx2, nullptr, &kiln::native::quantized_matmul_rows_avx2});
  return v;
#endif
}

// Runs every way this kernel has on o, each checked against the reference; false on a mismatch.
bool check(Operands& o, const Kernel& kn) {
  std::vector<float> want(o.out.size());
  kiln::QuantMatmulArgs a = o.args();
  a.out = want.data();
  kiln::run_quantized_matmul(o.s, a, &kiln::quantized_matvec_reference);
  for (int way = 0; way < 3; ++way) {
    if ((way == 1 && !kn.pair) || (way == 2 && !kn.rows)) continue;
    std::fill(o.out.begin(), o.out.end(), -1.0f);
    kiln::run_quantized_matmul(o.s, o.args(), kn.matvec, nullptr, nullptr, way == 1 ? kn.pair : nullptr,
                               way == 2 ? kn.rows : nullptr);
    if (std::memcmp(o.out.data(), want.data(), want.size() * sizeof(float)) != 0) {
      std::printf("MISMATCH: %s way %d\n", kn.name.c_str(), way);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t m = 64;
  int reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--m")) m = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  // SmolLM2-135M: q, k/v, gate/up and down projections (q4_1), the tied output (q8_0).
  struct Shape {
    QuantLayout layout;
    int64_t rows, k;
    const char* what;
  };
  const Shape shapes[] = {{QuantLayout::Nibble4, 576, 576, "q/o 576x576"},
                          {QuantLayout::Nibble4, 192, 576, "k/v 192x576"},
                          {QuantLayout::Nibble4, 1536, 576, "gate/up 1536x576"},
                          {QuantLayout::Nibble4, 576, 1536, "down 576x1536"},
                          {QuantLayout::Int8, 49152, 576, "output 49152x576 q8_0"}};
  std::printf("one thread; decode: us per matvec; prefill: us per call of %lld rows and its speed-up over the matvec per row\n",
              (long long)m);
  bool ok = true;
  for (const Shape& sh : shapes) {
    for (const Kernel& kn : kernels()) {
      Operands one = make(sh.layout, 1, sh.k, sh.rows, 7);
      ok = check(one, kn) && ok;
      const double dec = best_us([&] { kiln::run_quantized_matmul(one.s, one.args(), kn.matvec); }, reps);
      std::printf("%-22s %-8s decode %9.1f us", sh.what, kn.name.c_str(), dec);
      if (sh.layout == QuantLayout::Int8 && sh.rows > 4096) {  // prefill computes one row of logits
        std::printf("\n");
        continue;
      }
      Operands pre = make(sh.layout, m, sh.k, sh.rows, 11);
      ok = check(pre, kn) && ok;
      const int pr = std::max(3, reps / 4);
      const double rowwise = best_us([&] { kiln::run_quantized_matmul(pre.s, pre.args(), kn.matvec); }, pr);
      std::printf("  prefill: matvec per row %9.1f us", rowwise);
      if (kn.pair || kn.rows) {
        const double fast = best_us([&] {
          kiln::run_quantized_matmul(pre.s, pre.args(), kn.matvec, nullptr, nullptr, kn.pair, kn.rows);
        }, pr);
        std::printf(", %s %9.1f us (%.2fx)", kn.rows ? "rows kernel" : "row pairs", fast, rowwise / fast);
      }
      std::printf("\n");
    }
  }
  return ok ? 0 : 1;
}
