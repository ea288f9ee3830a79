// The wasm backend's pthread pool: dispatches split across workers give the cpu
// interpreter's bits and one thread's bits, above the threshold and at many small splits.
#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <tuple>

#include "backend/wasm/wasm_codegen.h"
#include "ir/error.h"
#include "wasm_test_util.h"

namespace wasm_threads_test {

namespace {

using namespace kiln;
using namespace kiln::wasm_test;

// $KILN_NUM_THREADS as Node sees it (Emscripten's getenv does not), 0 when unset.
EM_JS(int, kiln_test_env_threads, (), {
  var v = typeof process == 'object' && process.env['KILN_NUM_THREADS'];
  return v ? parseInt(v, 10) : 0;
});

// Puts the backend's thread settings back when a test ends.
struct KeepThreadSettings {
  WasmBackend& be = wasm_be();
  int threads = be.threads();
  int64_t min_work = be.parallel_min_work();
  ~KeepThreadSettings() {
    be.set_threads(threads);
    be.set_parallel_min_work(min_work);
  }
};

// Runs k on the cpu, on one wasm thread and on all of them; all three must agree bit for bit,
// and the threaded run must have been split when `must_split`.
void expect_threads_agree(const Kernel& k, const std::vector<Bytes>& ins, bool must_split) {
  WasmBackend& be = wasm_be();
  const int all = be.threads();
  Bytes want = run_on(get_backend("cpu"), k, ins);
  be.set_threads(1);
  int64_t before = be.split_dispatches();
  Bytes one = run_on(be, k, ins);
  EXPECT_EQ(be.split_dispatches(), before) << "one thread must not split";
  be.set_threads(all);
  before = be.split_dispatches();
  Bytes many = run_on(be, k, ins);
  if (must_split) EXPECT_EQ(be.split_dispatches(), before + 1) << k.to_string();
  EXPECT_TRUE(same_bits(k, want, one)) << "one thread";
  EXPECT_TRUE(same_bits(k, want, many)) << all << " threads";
}

// out[i, j] = epi(sum_r a[i, r] * b[r, j] + bias[j]): relu (0) or tanh (1, a builtin call).
Kernel dense(int64_t m, int64_t kk, int64_t n, int epi) {
  AluExp g = gidx(m * n), r = AluExp::var(VarId::Ridx, DType::Int32, kk - 1);
  AluExp i = g / n, j = g % n;
  Kernel k;
  k.size = m * n;
  k.inputs = {DType::Float32, DType::Float32, DType::Float32};
  k.exp = AluExp::binary(AluOp::Mul, AluExp::load(DType::Float32, 0, i * kk + r),
                         AluExp::load(DType::Float32, 1, r * n + j));
  AluExp e = AluExp::binary(AluOp::Add, AluExp::var(VarId::Acc, DType::Float32, 0),
                            AluExp::load(DType::Float32, 2, j));
  e = epi == 0 ? AluExp::binary(AluOp::Max, e, AluExp::constant(DType::Float32, 0))
               : AluExp::unary(AluOp::Tanh, e);
  k.reduction = Reduction{AluOp::Add, kk, e};
  return k;
}

std::vector<Bytes> dense_inputs(int64_t m, int64_t kk, int64_t n, std::mt19937& rng) {
  return {special_values(DType::Float32, size_t(m * kk), rng), special_values(DType::Float32, size_t(kk * n), rng),
          special_values(DType::Float32, size_t(n), rng)};
}

TEST(WasmThreads, CoreIsThreadedAsConfigured) {
  WasmBackend& be = wasm_be();
  const int want = kiln_test_env_threads();
  // make test-wasm runs this binary with KILN_NUM_THREADS=2: a shared memory and a pool.
  if (want >= 2) {
    EXPECT_TRUE(be.shared_memory());
    EXPECT_EQ(be.max_threads(), want);
    EXPECT_EQ(be.threads(), want);
  }
  if (want == 1) EXPECT_EQ(be.max_threads(), 1);
  // Kernel modules import the memory as the core has it, or they would not link.
  EXPECT_EQ(be.options().shared_memory, be.shared_memory());
  KeepThreadSettings keep;
  EXPECT_THROW(be.set_threads(0), Error);
  EXPECT_THROW(be.set_threads(be.max_threads() + 1), Error);
  wasm::CodegenOptions o = be.options();
  o.shared_memory = !be.shared_memory();
  be.set_options(o);
  EXPECT_EQ(be.options().shared_memory, be.shared_memory()) << "set_options keeps the memory's kind";
  o.shared_memory = be.shared_memory();
  be.set_options(o);
}

TEST(WasmThreads, LargeKernelsAboveTheThresholdSplitBitExactly) {
  WasmBackend& be = wasm_be();
  if (be.max_threads() < 2) GTEST_SKIP() << "single-threaded core";
  KeepThreadSettings keep;
  Unfused unfused;
  std::mt19937 rng(51);
  // Tiled (n % 8 == 0), partly tiled (odd n: SIMD/scalar columns), and a tanh epilogue.
  for (auto [m, kk, n, epi] : {std::tuple{192, 96, 160, 0}, std::tuple{131, 67, 45, 1}, std::tuple{64, 200, 64, 1}}) {
    Kernel k = dense(m, kk, n, epi);
    const int64_t nodes = k.exp.node_count() + k.reduction->epilogue.node_count();
    ASSERT_GE(k.size * kk * nodes, be.cold_parallel_min_work()) << "the case must split even from a sleeping pool";
    expect_threads_agree(k, dense_inputs(m, kk, n, rng), true);
  }
  // Random pointwise kernels of every output dtype, large enough to split.
  for (int t = 0; t < 8; t++) {
    const int64_t n = 300007 + t * 7919;
    RandomKernel rk{rng, n, {}};
    Kernel k;
    k.size = n;
    k.exp = rk.expr(kAll[t % 6], 3, gidx(n), nullptr);
    k.inputs = rk.inputs;
    if (k.size * k.exp.node_count() < be.cold_parallel_min_work()) continue;
    expect_threads_agree(k, inputs_for(k.inputs, rng, size_t(n)), true);
  }
  // A row reduction with a transcendental in the body: each output folds in ridx order.
  {
    const int64_t rows = 1500, len = 300;
    AluExp g = gidx(rows), r = AluExp::var(VarId::Ridx, DType::Int32, len - 1);
    Kernel k;
    k.size = rows;
    k.inputs = {DType::Float32};
    k.exp = AluExp::unary(AluOp::Exp, AluExp::load(DType::Float32, 0, g * len + r));
    k.reduction = Reduction{AluOp::Add, len, AluExp::var(VarId::Acc, DType::Float32, 0)};
    expect_threads_agree(k, {special_values(DType::Float32, size_t(rows * len), rng)}, true);
  }
}

TEST(WasmThreads, ManySmallSplitsMatchTheCpu) {
  WasmBackend& be = wasm_be();
  if (be.max_threads() < 2) GTEST_SKIP() << "single-threaded core";
  KeepThreadSettings keep;
  Unfused unfused;
  be.set_parallel_min_work(0);  // split everything: chunk edges fall everywhere
  std::mt19937 rng(52);
  for (int t = 0; t < 60; t++) {
    const int64_t n = 9 + int64_t(rng() % 300);
    RandomKernel rk{rng, n, {}};
    Kernel k;
    k.size = n;
    const AluExp g = gidx(n);
    if (t % 2) {
      const int64_t len = 1 + int64_t(rng() % 40);
      AluExp r = AluExp::var(VarId::Ridx, DType::Int32, len - 1);
      k.exp = rk.expr(DType::Float32, 2, g, &r);
      AluOp op = std::array{AluOp::Add, AluOp::Max, AluOp::Mul, AluOp::Min}[size_t(t / 2 % 4)];
      k.reduction = Reduction{op, len, AluExp::var(VarId::Acc, DType::Float32, 0)};
    } else {
      k.exp = rk.expr(kAll[size_t(t / 2 % 6)], 3, g, nullptr);
    }
    k.inputs = rk.inputs;
    expect_threads_agree(k, inputs_for(k.inputs, rng, size_t(2 * n)), true);
  }
  for (auto [m, kk, n] : {std::tuple{9, 5, 16}, std::tuple{13, 7, 24}, std::tuple{40, 3, 12}}) {
    Kernel k = dense(m, kk, n, 0);
    expect_threads_agree(k, dense_inputs(m, kk, n, rng), true);
  }
  // Workers, not only the calling thread, must have run chunks by now (hundreds of splits).
  EXPECT_GT(be.worker_chunks(), 0);
}

TEST(WasmThreads, SmallKernelsStayOnTheCallingThread) {
  WasmBackend& be = wasm_be();
  if (be.max_threads() < 2) GTEST_SKIP() << "single-threaded core";
  KeepThreadSettings keep;
  Kernel k;
  k.size = 1000;
  k.inputs = {DType::Float32};
  k.exp = AluExp::binary(AluOp::Add, AluExp::load(DType::Float32, 0, gidx(1000)), AluExp::constant(DType::Float32, 1));
  ASSERT_LT(k.size * k.exp.node_count(), be.parallel_min_work());
  std::mt19937 rng(53);
  expect_threads_agree(k, {special_values(DType::Float32, 1000, rng)}, false);
  int64_t before = be.split_dispatches();
  run_on(be, k, {special_values(DType::Float32, 1000, rng)});
  EXPECT_EQ(be.split_dispatches(), before);
}

TEST(WasmThreads, MidSizedKernelsDoNotWakeASleepingPool) {
  WasmBackend& be = wasm_be();
  if (be.max_threads() < 2) GTEST_SKIP() << "single-threaded core";
  KeepThreadSettings keep;
  Unfused unfused;
  // x * 2 + 1 over n: work between the awake pool's threshold and the sleeping pool's.
  const int64_t n = 150001;
  Kernel k;
  k.size = n;
  k.inputs = {DType::Float32};
  k.exp = AluExp::binary(AluOp::Add,
                         AluExp::binary(AluOp::Mul, AluExp::load(DType::Float32, 0, gidx(n)), AluExp::constant(DType::Float32, 2)),
                         AluExp::constant(DType::Float32, 1));
  const int64_t work = k.size * k.exp.node_count();
  ASSERT_GE(work, be.parallel_min_work());
  ASSERT_LT(work, be.cold_parallel_min_work());
  std::mt19937 rng(54);
  const std::vector<Bytes> ins = {special_values(DType::Float32, size_t(n), rng)};
  const Bytes want = run_on(get_backend("cpu"), k, ins);
  // Workers sleep once they have spun ~0.2 ms without a job (bounded: a loaded machine).
  for (int i = 0; i < 5000 && be.pool_awake(); i++) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_FALSE(be.pool_awake());
  const int64_t before = be.split_dispatches();
  EXPECT_TRUE(same_bits(k, want, run_on(be, k, ins)));
  EXPECT_EQ(be.split_dispatches(), before) << "a sleeping pool must not be woken for " << work << " work";
}

// Not a timed test (speed lives in benchmarks): run it by hand with
//   KILN_NUM_THREADS=2 node build/wasm/kiln_tests.js --gtest_also_run_disabled_tests
//     --gtest_filter='WasmThreads.DISABLED_*'   (one command line)
// It prints the cost of a dispatch that stays on the calling thread (compare kiln_tests_st's
// WasmDispatch.DISABLED_Overhead), and one thread vs all of them for kernels of growing
// work, which is where parallel_min_work's default comes from (docs/WASM.md, Threads).
TEST(WasmThreads, DISABLED_SplitSweep) {
  WasmBackend& be = wasm_be();
  if (be.max_threads() < 2) GTEST_SKIP() << "single-threaded core";
  KeepThreadSettings keep;
  using clk = std::chrono::steady_clock;
  auto time_dispatch = [&](const Kernel& k, int threads, int reps) {
    std::vector<BufferRef> keep_in;
    std::vector<int64_t> ins;
    for (size_t i = 0; i < k.inputs.size(); i++) {
      keep_in.push_back(be.allocate(std::max<int64_t>(4, k.size * 4 * (k.reduction ? 2 : 1))));
      ins.push_back(keep_in.back()->handle());
    }
    BufferRef out = be.allocate(std::max<int64_t>(4, k.size * 4));
    auto exe = be.prepare(k);
    be.set_threads(threads);
    be.dispatch(*exe, ins, out->handle());  // workers compile the module here
    double best = INFINITY;
    for (int round = 0; round < 5; round++) {
      auto t0 = clk::now();
      for (int i = 0; i < reps; i++) be.dispatch(*exe, ins, out->handle());
      best = std::min(best, std::chrono::duration<double, std::micro>(clk::now() - t0).count() / reps);
    }
    return best;
  };
  auto add1 = [](int64_t n) {
    Kernel k;
    k.size = n;
    k.inputs = {DType::Float32};
    k.exp = AluExp::binary(AluOp::Add, AluExp::load(DType::Float32, 0, gidx(n)), AluExp::constant(DType::Float32, 1));
    return k;
  };
  be.set_parallel_min_work(int64_t(1) << 62);
  std::printf("[ wasm threads ] 1-element kernel, not split: %.1f ns per dispatch\n",
              1000 * time_dispatch(add1(1), be.max_threads(), 100000));
  be.set_parallel_min_work(0);
  const int all = be.max_threads();
  for (int64_t n = 1 << 12; n <= (1 << 22); n *= 4) {
    Kernel k = add1(n);
    int reps = int(std::max<int64_t>(3, (int64_t(1) << 24) / n));
    double t1 = time_dispatch(k, 1, reps), tn = time_dispatch(k, all, reps);
    std::printf("[ wasm threads ] x + 1 over %8lld (work %9lld): 1 thread %9.1f us, %d threads %9.1f us (%.2fx)\n",
                (long long)n, (long long)(n * k.exp.node_count()), t1, all, tn, t1 / tn);
  }
  for (int64_t m : {16, 32, 64, 128, 256, 512}) {
    Kernel k = dense(m, m, m, 0);
    int64_t work = k.size * m * (k.exp.node_count() + k.reduction->epilogue.node_count());
    int reps = int(std::max<int64_t>(3, (int64_t(1) << 26) / work));
    double t1 = time_dispatch(k, 1, reps), tn = time_dispatch(k, all, reps);
    std::printf("[ wasm threads ] dense %4lld^3 (work %11lld): 1 thread %9.1f us, %d threads %9.1f us (%.2fx)\n",
                (long long)m, (long long)work, t1, all, tn, t1 / tn);
  }
}

}  // namespace
}  // namespace wasm_threads_test
#endif  // __EMSCRIPTEN__
