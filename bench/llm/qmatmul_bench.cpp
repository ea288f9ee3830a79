// kiln_qmatmul_bench: the library's quantized_matmul kernels (src/backend/quantized_matmul.h,
// native/qmatmul_*.cpp, wasm/qmatmul_wasm.cpp) timed on one thread on SmolLM2-135M's matrix
// shapes (issue 19): decode (one activation row) per kernel of this build, and prefill (m rows)
// with each group's codes widened once for every row (native rows kernels: AVX2, and AVX-VNNI /
// AVX512-VNNI / AMX on int16 and int8 activations where the CPU has them; wasm: two rows per
// pass) against the
// matvec once per row. The operands are random codes in the packed
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
  kiln::QuantRowsKernel rows;
};

std::vector<Kernel> kernels() {
#ifdef __EMSCRIPTEN__
  return {{"simd128", &kiln::wasm::quantized_matvec_simd128, &kiln::wasm::quantized_matvec2_simd128, {}}};
#else
  using kiln::native::QuantIsa;
  std::vector<Kernel> v = {{"sse2", &kiln::native::quantized_matvec_sse2, nullptr, {}}};
  for (QuantIsa isa : {QuantIsa::Avx2, QuantIsa::AvxVnni, QuantIsa::Avx512Vnni, QuantIsa::Amx})
    for (bool int8 : {false, true})
      if (isa <= kiln::native::cpu_quant_isa() && (isa > QuantIsa::Avx2 || !int8))
        v.push_back({std::string(kiln::native::quant_isa_name(isa)) + (int8 ? "-i8" : ""),
                     &kiln::native::quantized_matvec_avx2, nullptr, kiln::native::quantized_matmul_rows_for(isa, int8)});
  return v;
#endif
}

// The reference over activations rounded at max_code (32767: the definition; 127: the VNNI
// rows kernels').
std::vector<float> reference(const Operands& o, int16_t max_code) {
  const int64_t k = o.s.k, nb = k / kiln::kQuantBlock;
  const kiln::QuantMatmulShape one{o.s.layout, 1, k, o.s.rows};
  std::vector<int16_t> q(static_cast<size_t>(k));
  std::vector<float> dx(static_cast<size_t>(nb)), sx(static_cast<size_t>(nb)), out(o.out.size());
  for (int64_t i = 0; i < o.s.m; ++i) {
    kiln::quantize_activation_row(&o.x[size_t(i * k)], k, q.data(), dx.data(), sx.data(), max_code);
    kiln::quantized_matvec_reference(one, q.data(), dx.data(), sx.data(), o.codes.data(), o.d.data(), o.mins.data(),
                                     0, kiln::quant_groups(o.s.rows), &out[size_t(i * o.s.rows)]);
  }
  return out;
}

// Runs every way this kernel has on o, each checked against the reference; false on a mismatch.
bool check(Operands& o, const Kernel& kn) {
  const std::vector<float> want = reference(o, kiln::kActMaxInt16);
  for (int way = 0; way < 3; ++way) {
    if ((way == 1 && !kn.pair) || (way == 2 && !kn.rows.fn)) continue;
    std::fill(o.out.begin(), o.out.end(), -1.0f);
    kiln::run_quantized_matmul(o.s, o.args(), kn.matvec, nullptr, nullptr, way == 1 ? kn.pair : nullptr,
                               way == 2 ? kn.rows : kiln::QuantRowsKernel{});
    const std::vector<float> w = way == 2 && o.s.m > 1 ? reference(o, kn.rows.max_code) : want;
    if (std::memcmp(o.out.data(), w.data(), w.size() * sizeof(float)) != 0) {
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
      std::printf("%-22s %-13s decode %9.1f us", sh.what, kn.name.c_str(), dec);
      if (sh.layout == QuantLayout::Int8 && sh.rows > 4096) {  // prefill computes one row of logits
        std::printf("\n");
        continue;
      }
      Operands pre = make(sh.layout, m, sh.k, sh.rows, 11);
      ok = check(pre, kn) && ok;
      const int pr = std::max(3, reps / 4);
      const double rowwise = best_us([&] { kiln::run_quantized_matmul(pre.s, pre.args(), kn.matvec); }, pr);
      std::printf("  prefill: matvec per row %9.1f us", rowwise);
      if (kn.pair || kn.rows.fn) {
        const double fast = best_us([&] {
          kiln::run_quantized_matmul(pre.s, pre.args(), kn.matvec, nullptr, nullptr, kn.pair, kn.rows);
        }, pr);
        std::printf(", %s %9.1f us (%.2fx, %.1f G multiply-adds/s)", kn.rows.fn ? "rows kernel" : "row pairs", fast,
                    rowwise / fast, double(m) * double(sh.rows) * double(sh.k) / fast * 1e-3);
      }
      std::printf("\n");
    }
  }
  return ok ? 0 : 1;
}
