// kiln_attention_bench: decode_attention for a prefill chunk (T query rows, causal) timed on
// one thread, process CPU time per call, on SmolLM2-135M's (9 heads on 3 kv heads, head_dim 64)
// and Gemma 3 270M's (4 on 1, 256; a sliding window of 512) attention shapes: the C++
// reference, the native rows kernels (prefill_attention_avx2.cpp, and the AVX-512 one where
// the CPU has it) and, for scale, the
// decode kernel called once per row over a cache holding the rows before it (what T decode
// steps would cost). Each kernel's output is checked bit for bit against the reference first.
//
//   kiln_attention_bench [--rows 256] [--start 0] [--reps 20]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "backend/decode_attention.h"
#include "backend/native/decode_attention_x86.h"

namespace {

struct Case {
  const char* name;
  int64_t heads, kv_heads, head_dim, window;
};

double cpu_ms() { return 1000.0 * double(std::clock()) / CLOCKS_PER_SEC; }

std::vector<float> random(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  for (float& x : v) x = scale * (float(int((seed = seed * 1664525u + 1013904223u) >> 16) - 32768) / 32768.0f);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 256, start = 0, reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--rows") rows = std::atoll(argv[i + 1]);
    else if (k == "--start") start = std::atoll(argv[i + 1]);
    else if (k == "--reps") reps = std::atoll(argv[i + 1]);
  }
  if (!kiln::native::best_decode_attention()) {
    std::printf("no AVX2 on this CPU\n");
    return 0;
  }
  for (const Case c : {Case{"SmolLM2", 9, 3, 64, 0}, Case{"Gemma3 sliding", 4, 1, 256, 512}}) {
    kiln::DecodeAttentionShape s;
    s.rows = rows, s.heads = c.heads, s.kv_heads = c.kv_heads, s.head_dim = c.head_dim, s.window = c.window;
    s.n_ctx = start + rows, s.scale = 1.0f / std::sqrt(float(c.head_dim));
    const size_t row = size_t(c.kv_heads * c.head_dim), qn = size_t(rows * c.heads * c.head_dim);
    const auto q = random(qn, 1, 2), keys = random(size_t(s.n_ctx) * row, 2, 2), values = random(size_t(s.n_ctx) * row, 3, 1);
    const auto k = random(size_t(rows) * row, 4, 2), v = random(size_t(rows) * row, 5, 1);
    std::vector<float> want(qn), got(qn);
    auto time = [&](const char* what, auto&& run) {
      run();  // warm-up, then checked
      if (std::memcmp(got.data(), want.data(), qn * 4) != 0) std::printf("%s: MISMATCH against the reference\n", what);
      const double t0 = cpu_ms();
      for (int64_t r = 0; r < reps; ++r) run();
      std::printf("%-15s T=%lld start=%lld %-28s %8.3f ms per call\n", c.name, (long long)rows, (long long)start, what,
                  (cpu_ms() - t0) / double(reps));
    };
    kiln::decode_attention_reference(s, q.data(), keys.data(), values.data(), k.data(), v.data(), int32_t(start), want.data());
    time("reference", [&] {
      kiln::decode_attention_reference(s, q.data(), keys.data(), values.data(), k.data(), v.data(), int32_t(start), got.data());
    });
    time("AVX2 rows kernel", [&] {
      kiln::native::prefill_attention_avx2(s, q.data(), keys.data(), values.data(), k.data(), v.data(), int32_t(start),
                                           got.data(), nullptr, nullptr);
    });
    if (__builtin_cpu_supports("avx512f"))
      time("AVX-512 rows kernel", [&] {
        kiln::native::prefill_attention_avx512(s, q.data(), keys.data(), values.data(), k.data(), v.data(),
                                               int32_t(start), got.data(), nullptr, nullptr);
      });
    // T decode steps: row t over a cache holding the rows before it (same floats: the
    // definition is T decode steps).
    std::vector<float> ck = keys, cv = values;
    std::memcpy(ck.data() + start * int64_t(row), k.data(), size_t(rows) * row * 4);
    std::memcpy(cv.data() + start * int64_t(row), v.data(), size_t(rows) * row * 4);
    kiln::DecodeAttentionShape one = s;
    one.rows = 1;
    const size_t qrow = size_t(c.heads * c.head_dim);
    time("AVX2 decode kernel per row", [&] {
      for (int64_t t = 0; t < rows; ++t)
        kiln::native::decode_attention_avx2(one, q.data() + t * qrow, ck.data(), cv.data(), k.data() + t * row,
                                            v.data() + t * row, int32_t(start + t), got.data() + t * qrow);
    });
  }
  return 0;
}
