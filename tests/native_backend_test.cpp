// The native backend against the cpu interpreter, bit for bit: every op on every dtype,
// casts, random kernels, tiled contractions, CSE of DAGs, bounds, the compiler and its cache.
#ifndef __EMSCRIPTEN__
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "backend/backend.h"
#include "backend/native/native_backend.h"
#include "backend/native/native_codegen.h"
#include "backend/native/native_compiler.h"
#include "backend/native/thread_pool.h"
#include "ir/alu_op.h"
#include "ir/error.h"
#include "ir/kernel.h"

namespace native_backend_test {

namespace {

using namespace kiln;
using Bytes = std::vector<uint8_t>;

NativeBackend& native_be() { return static_cast<NativeBackend&>(get_backend("native")); }

// Every kernel in this file is compiled, however small.
struct CompileAll {
  int64_t saved;
  CompileAll() : saved(native_be().min_work()) { native_be().set_min_work(0); }
  ~CompileAll() { native_be().set_min_work(saved); }
};

Bytes run_on(Backend& be, const Kernel& k, const std::vector<Bytes>& ins) {
  std::vector<BufferRef> keep;
  std::vector<int64_t> handles;
  for (const Bytes& b : ins) {
    BufferRef r = be.allocate(int64_t(b.size()));
    if (!b.empty()) be.write(r->handle(), 0, b.data(), int64_t(b.size()));
    handles.push_back(r->handle());
    keep.push_back(r);
  }
  int64_t obytes = k.size * itemsize(k.out_dtype());
  BufferRef out = be.allocate(std::max<int64_t>(obytes, 1));
  auto exe = be.prepare(k);
  be.dispatch(*exe, handles, out->handle());
  Bytes result(static_cast<size_t>(obytes));
  be.read_sync(out->handle(), 0, obytes, result.data());
  return result;
}

// Bit-for-bit equality; any NaN equals any NaN (payloads are not specified).
::testing::AssertionResult same_bits(const Kernel& k, const Bytes& want, const Bytes& got) {
  DType dt = k.out_dtype();
  for (int64_t i = 0; i < k.size; i++) {
    double w = read_element(want.data(), dt, i), g = read_element(got.data(), dt, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(w == g && std::signbit(w) == std::signbit(g)))
      return ::testing::AssertionFailure() << "element " << i << ": cpu " << w << ", native " << g << "\n"
                                           << k.to_string();
  }
  return ::testing::AssertionSuccess();
}

void expect_same(const Kernel& k, const std::vector<Bytes>& ins) {
  CompileAll all;
  int64_t before = native_be().interpreted_kernels();
  Bytes want = run_on(get_backend("cpu"), k, ins);
  Bytes got = run_on(native_be(), k, ins);
  EXPECT_EQ(native_be().interpreted_kernels(), before) << "fell back to the interpreter:\n" << k.to_string();
  EXPECT_TRUE(same_bits(k, want, got));
}

// Values at the edges of alu_eval: signed zeros, infinities, NaN, ties, subnormals, float16
// overflow, int32 extremes and shift counts around 32.
Bytes values(DType dt, size_t n, std::mt19937& rng) {
  static const double fl[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, INFINITY,
                              -INFINITY, NAN, 1e-40, -3e-39, 3.4e38, 65504.0, 70000.0, 1e10, -1e10,
                              6e-8, 0.1, 1e-3, 100.0, 2.0, 0.75, -0.25};
  static const double in[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, -31, -32, 100,
                              2147483647.0, -2147483648.0, 65536, -65536, 1000003};
  static const double un[] = {0, 1, 2, 3, 7, 31, 32, 33, 100, 4294967295.0, 2147483648.0, 65536};
  Bytes b(n * size_t(itemsize(dt)));
  std::uniform_real_distribution<double> u(-10, 10);
  for (size_t i = 0; i < n; i++) {
    bool special = rng() % 100 < 60;
    double v;
    switch (dt) {
      case DType::Bool: v = rng() & 1; break;
      case DType::Int32: v = special ? in[rng() % std::size(in)] : double(int32_t(rng())); break;
      case DType::Uint32: v = special ? un[rng() % std::size(un)] : double(uint32_t(rng())); break;
      default: v = special ? fl[rng() % std::size(fl)] : u(rng); break;
    }
    write_element(b.data(), dt, int64_t(i), dt == DType::Float32 ? double(float(v)) : v);
  }
  return b;
}

AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, n - 1); }

const DType kAll[] = {DType::Bool, DType::Int32, DType::Uint32, DType::Float16, DType::Float32, DType::Float64};

bool defined_on(AluOp op, DType dt) {
  bool f = is_float(dt), b = dt == DType::Bool;
  switch (op) {
    case AluOp::Not: case AluOp::And: case AluOp::Or: case AluOp::Xor: case AluOp::Shl: case AluOp::Shr:
      return !f && (!b || (op != AluOp::Shl && op != AluOp::Shr));
    case AluOp::Neg: return !b;
    case AluOp::Recip: case AluOp::Add: case AluOp::Sub: case AluOp::Mul: case AluOp::Div:
    case AluOp::Idiv: case AluOp::Mod: case AluOp::Pow: case AluOp::Max: case AluOp::Min:
    case AluOp::CmpLt: case AluOp::CmpLe: case AluOp::CmpEq: case AluOp::CmpNe: case AluOp::IsNan:
      return true;
    default: return f;  // sqrt, transcendentals, rounding, atan2
  }
}

// Many cases in one kernel (one compile): output segment s holds case s, chosen by
// where(gidx < (s + 1) * n, ...), every case reading element gidx % n of the inputs.
Kernel segmented(const std::vector<AluExp>& cases, int64_t n, std::vector<DType> inputs) {
  const int64_t size = n * int64_t(cases.size());
  Kernel k;
  k.size = size;
  k.inputs = std::move(inputs);
  AluExp g = gidx(size);
  AluExp e = cases.back();
  for (size_t s = cases.size() - 1; s-- > 0;)
    e = AluExp::where(g < AluExp::idx(int64_t(s + 1) * n), cases[s], e);
  k.exp = e;
  return k;
}

TEST(NativeBackend, IsRegistered) {
  auto devs = available_devices();
  EXPECT_NE(std::find(devs.begin(), devs.end(), "native"), devs.end());
  EXPECT_TRUE(get_backend("native").can_read_sync());
}

TEST(NativeBackend, EveryUnaryAndBinaryOpOnEveryDtype) {
  std::mt19937 rng(1);
  const int64_t n = 97;
  int cases = 0;
  for (DType dt : kAll) {
    // Ops grouped by result dtype (comparisons give bool), each group one kernel.
    std::map<DType, std::vector<AluExp>> groups;
    const int64_t size_hint = n * 64;
    AluExp g = gidx(size_hint) % n;
    AluExp a = AluExp::load(dt, 0, g), b = AluExp::load(dt, 1, g);
    for (int o = int(AluOp::Neg); o <= int(AluOp::Shr); o++) {
      AluOp op = AluOp(o);
      if (op == AluOp::Cast || op == AluOp::Bitcast || !defined_on(op, dt)) continue;
      AluExp e = alu_info(op).arity == 1 ? AluExp::unary(op, a) : AluExp::binary(op, a, b);
      groups[e.dtype()].push_back(e);
      cases++;
    }
    for (auto& [rdt, es] : groups) {
      // The cases were built over a gidx of range size_hint; rebuild with the real size.
      int64_t size = n * int64_t(es.size());
      std::vector<AluExp> fixed;
      for (auto& e : es) fixed.push_back(e.substitute(VarId::Gidx, gidx(size)));
      SCOPED_TRACE(std::string(dtype_name(dt)) + " -> " + dtype_name(rdt));
      expect_same(segmented(fixed, n, {dt, dt}), {values(dt, size_t(n), rng), values(dt, size_t(n), rng)});
    }
  }
  EXPECT_GT(cases, 150);
}

TEST(NativeBackend, CastsBitcastsAndWhere) {
  std::mt19937 rng(2);
  const int64_t n = 61;
  for (DType to : kAll) {
    std::vector<AluExp> cases;
    for (size_t i = 0; i < std::size(kAll); i++)
      cases.push_back(AluExp::cast(to, AluExp::load(kAll[i], int(i), gidx(n * 6) % n)));
    for (size_t i = 0; i < std::size(kAll); i++)
      if (itemsize(kAll[i]) == 4 && itemsize(to) == 4 && kAll[i] != to)
        cases.push_back(AluExp::bitcast(to, AluExp::load(kAll[i], int(i), gidx(n * 6) % n)));
    cases.push_back(AluExp::where(AluExp::load(DType::Bool, 0, gidx(n * 6) % n),
                                  AluExp::cast(to, AluExp::load(DType::Float32, 4, gidx(n * 6) % n)),
                                  AluExp::cast(to, AluExp::load(DType::Int32, 1, gidx(n * 6) % n))));
    int64_t size = n * int64_t(cases.size());
    for (auto& c : cases) c = c.substitute(VarId::Gidx, gidx(size));
    std::vector<Bytes> ins;
    for (DType d : kAll) ins.push_back(values(d, size_t(n), rng));
    SCOPED_TRACE(std::string("to ") + dtype_name(to));
    expect_same(segmented(cases, n, {kAll, kAll + 6}), ins);
  }
}

// Random expressions over strided, broadcast, divided and out-of-range indices.
struct RandomExp {
  std::mt19937& rng;
  int64_t n;
  std::vector<DType>& inputs;
  int pick(int k) { return int(rng() % uint32_t(k)); }
  AluExp index(const AluExp& g, const AluExp* r) {
    AluExp base = g;
    switch (pick(6)) {
      case 0: break;
      case 1: base = g * int64_t(1 + pick(3)) + AluExp::idx(pick(7) - 3); break;
      case 2: base = g / int64_t(1 + pick(8)); break;
      case 3: base = (g % int64_t(2 + pick(6))) * int64_t(1 + pick(2)) + g / int64_t(4); break;
      case 4: base = AluExp::idx(n - 1) - g; break;
      default: base = AluExp::idx(pick(5)); break;
    }
    if (r) base = base * int64_t(1 + pick(2)) + *r * int64_t(pick(3));
    return base;
  }
  AluExp leaf(DType dt, const AluExp& g, const AluExp* r) {
    if (pick(5) == 0)
      return AluExp::constant(dt, is_float(dt) ? double(pick(20)) / 4 - 2 : dt == DType::Bool ? pick(2) : pick(9) - 4);
    inputs.push_back(dt);
    return AluExp::load(dt, int(inputs.size() - 1), index(g, r));
  }
  AluExp expr(DType dt, int depth, const AluExp& g, const AluExp* r) {
    if (depth == 0) return leaf(dt, g, r);
    static const AluOp fbin[] = {AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Div, AluOp::Max,
                                 AluOp::Min, AluOp::Idiv, AluOp::Mod, AluOp::Pow, AluOp::Atan2};
    static const AluOp ibin[] = {AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Div, AluOp::Idiv, AluOp::Mod,
                                 AluOp::Max, AluOp::Min, AluOp::And, AluOp::Xor, AluOp::Shl, AluOp::Shr};
    static const AluOp fun[] = {AluOp::Neg, AluOp::Sqrt, AluOp::Exp, AluOp::Log, AluOp::Tanh,
                                AluOp::Floor, AluOp::Round, AluOp::Recip, AluOp::Sin, AluOp::Erf};
    int kind = pick(10);
    if (kind < 2) return AluExp::cast(dt, expr(kAll[pick(6)], depth - 1, g, r));
    if (kind < 3) {
      AluExp c = AluExp::binary(AluOp::CmpLt, expr(dt, depth - 1, g, r), expr(dt, depth - 1, g, r));
      return AluExp::where(c, expr(dt, depth - 1, g, r), expr(dt, depth - 1, g, r));
    }
    if (dt == DType::Bool) {
      DType sdt = kAll[1 + pick(5)];
      return AluExp::binary(pick(2) ? AluOp::CmpLe : AluOp::CmpNe, expr(sdt, depth - 1, g, r),
                            expr(sdt, depth - 1, g, r));
    }
    if (kind < 5) {
      AluOp op = is_float(dt) ? fun[pick(int(std::size(fun)))] : (pick(2) ? AluOp::Neg : AluOp::Not);
      return AluExp::unary(op, expr(dt, depth - 1, g, r));
    }
    AluOp op = is_float(dt) ? fbin[pick(int(std::size(fbin)))] : ibin[pick(int(std::size(ibin)))];
    return AluExp::binary(op, expr(dt, depth - 1, g, r), expr(dt, depth - 1, g, r));
  }
};

std::vector<Bytes> inputs_for(const std::vector<DType>& dts, std::mt19937& rng, size_t n) {
  std::vector<Bytes> out;
  for (DType d : dts) out.push_back(values(d, n - rng() % std::min<size_t>(n, 5), rng));  // some short
  return out;
}

TEST(NativeBackend, RandomPointwiseKernels) {
  std::mt19937 rng(5);
  for (int t = 0; t < 12; t++) {
    // Ten random expressions per kernel, each widened to float64 exactly.
    const int64_t n = int64_t(1 + rng() % 70), segs = 10;
    std::vector<DType> inputs;
    std::vector<AluExp> cases;
    AluExp g = gidx(n * segs) % n;
    for (int s = 0; s < segs; s++) {
      RandomExp re{rng, n, inputs};
      cases.push_back(AluExp::cast(DType::Float64, re.expr(kAll[rng() % 6], 1 + int(rng() % 4), g, nullptr)));
    }
    expect_same(segmented(cases, n, inputs), inputs_for(inputs, rng, size_t(n) * 3));
  }
}

TEST(NativeBackend, RandomReductions) {
  std::mt19937 rng(6);
  const AluOp ops[] = {AluOp::Add, AluOp::Mul, AluOp::Max, AluOp::Min};
  for (int t = 0; t < 40; t++) {
    const int64_t n = int64_t(1 + rng() % 40), rsize = int64_t(rng() % 20);  // includes empty
    std::vector<DType> inputs;
    RandomExp re{rng, n, inputs};
    DType dt = kAll[1 + rng() % 5];
    AluExp g = gidx(n), r = AluExp::var(VarId::Ridx, DType::Int32, std::max<int64_t>(rsize - 1, 0));
    Kernel k;
    k.size = n;
    k.exp = re.expr(dt, 1 + int(rng() % 3), g, &r);
    AluExp acc = AluExp::var(VarId::Acc, dt, 0);
    AluExp epi = rng() % 2 ? acc : AluExp::binary(AluOp::Add, acc, re.leaf(dt, g, nullptr));
    k.reduction = Reduction{ops[rng() % 4], rsize, epi};
    k.inputs = inputs;
    expect_same(k, inputs_for(k.inputs, rng, size_t(n * std::max<int64_t>(rsize, 1)) * 2));
  }
}

// out[i, j] = epilogue(sum_r a[i, r] * b[r, j]): the scheduler finds (M, N) and the
// generator register-tiles it; shapes cover full blocks, ragged divisors and 1 x 1.
TEST(NativeBackend, TiledContractions) {
  std::mt19937 rng(7);
  for (auto [m, kk, nn] : {std::tuple{5, 7, 9}, std::tuple{16, 33, 20}, std::tuple{1, 1, 1},
                           std::tuple{64, 64, 64}, std::tuple{3, 5, 48}, std::tuple{12, 30, 10}}) {
    for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Float16}) {
      int64_t size = int64_t(m) * nn;
      AluExp g = gidx(size), r = AluExp::var(VarId::Ridx, DType::Int32, kk - 1);
      AluExp i = g / int64_t(nn), j = g % int64_t(nn);
      Kernel k;
      k.size = size;
      k.inputs = {dt, dt, dt};
      k.exp = AluExp::binary(AluOp::Mul, AluExp::load(dt, 0, i * int64_t(kk) + r), AluExp::load(dt, 1, r * int64_t(nn) + j));
      // Bias add and relu in the epilogue.
      AluExp acc = AluExp::var(VarId::Acc, dt, 0);
      AluExp biased = AluExp::binary(AluOp::Add, acc, AluExp::load(dt, 2, g % int64_t(nn)));
      k.reduction = Reduction{AluOp::Add, kk, AluExp::binary(AluOp::Max, biased, AluExp::constant(dt, 0))};
      native::Plan plan = native::plan_kernel(k);
      if (nn > 1 && m > 1) {
        EXPECT_EQ(plan.rows, m) << plan.schedule.str();
      }
      expect_same(k, {values(dt, size_t(m * kk), rng), values(dt, size_t(kk * nn), rng), values(dt, size_t(nn), rng)});
    }
  }
}

// A DAG whose tree expansion has 2^60 nodes (like threefry's rounds): each distinct node
// must become one local, so the source stays small and the result matches.
TEST(NativeBackend, SharedSubexpressionsAreEmittedOnce) {
  const int64_t n = 300;
  AluExp x = AluExp::load(DType::Uint32, 0, gidx(n));
  for (int i = 0; i < 60; i++) {
    AluExp t = AluExp::binary(AluOp::Add, x, AluExp::constant(DType::Uint32, 0x9e3779b9u + uint32_t(i)));
    x = AluExp::binary(AluOp::Xor, t, AluExp::binary(AluOp::Shr, t, AluExp::constant(DType::Uint32, 7)));
  }
  Kernel k;
  k.size = n;
  k.inputs = {DType::Uint32};
  k.exp = x;
  std::string src = native::generate_source(native::plan_kernel(k), {false});
  EXPECT_LT(src.size(), size_t(30000));
  std::mt19937 rng(8);
  expect_same(k, {values(DType::Uint32, size_t(n), rng)});
}

TEST(NativeBackend, OutOfRangeLoadsReadZero) {
  const int64_t n = 500;
  Kernel k;
  k.size = n;
  k.inputs = {DType::Float32, DType::Int32};
  AluExp g = gidx(n);
  AluExp idx = g * 3 + AluExp::idx(-20);  // negative, in range and far past the end: checked
  // Just outside on both sides: read from the zeroed slack around the buffer, unchecked.
  AluExp near = AluExp::binary(AluOp::Add, AluExp::load(DType::Float32, 0, g + AluExp::idx(-20)),
                               AluExp::load(DType::Float32, 0, g / 2 + AluExp::idx(100)));
  k.exp = AluExp::binary(AluOp::Add, AluExp::load(DType::Float32, 0, idx),
                         AluExp::cast(DType::Float32, AluExp::load(DType::Int32, 1, g)));
  k.exp = AluExp::binary(AluOp::Add, k.exp, near);
  native::Plan plan = native::plan_kernel(k);
  std::vector<bool> guards = native::load_guards(plan, {300, n - 7}, NativeBackend::kSlack);
  EXPECT_EQ(std::count(guards.begin(), guards.end(), true), 1) << "only g * 3 - 20 needs a check";
  std::mt19937 rng(4);
  expect_same(k, {values(DType::Float32, 300, rng), values(DType::Int32, size_t(n) - 7, rng)});
}

// Large enough to be split over the pool; results must not depend on the split.
TEST(NativeBackend, ParallelDispatchMatches) {
  std::mt19937 rng(9);
  const int64_t n = 1 << 18;
  Kernel k;
  k.size = n;
  k.inputs = {DType::Float32};
  AluExp a = AluExp::load(DType::Float32, 0, gidx(n));
  k.exp = AluExp::unary(AluOp::Tanh, AluExp::binary(AluOp::Mul, a, a));
  expect_same(k, {values(DType::Float32, size_t(n), rng)});
  const int64_t rows = 512, len = 300;  // a row reduction split by blocks
  Kernel s;
  s.size = rows;
  s.inputs = {DType::Float32};
  AluExp r = AluExp::var(VarId::Ridx, DType::Int32, len - 1);
  s.exp = AluExp::load(DType::Float32, 0, gidx(rows) * len + r);
  s.reduction = Reduction{AluOp::Add, len, AluExp::var(VarId::Acc, DType::Float32, 0)};
  expect_same(s, {values(DType::Float32, size_t(rows * len), rng)});
}

TEST(NativeThreadPool, CoversTheRangeOnceAndRethrows) {
  native::ThreadPool pool(3);
  EXPECT_EQ(pool.size(), 3);
  for (int64_t n : {1, 2, 5, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) hits[size_t(i)]++;
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
  EXPECT_THROW(pool.parallel_for(10, [](int64_t b, int64_t) {
    if (b > 0) throw Error("chunk failed");
  }), Error);
}

// Jobs back to back, with workers that sleep at once (spin 0: every job wakes them by futex)
// and with workers that poll between jobs: every item exactly once, no chunk empty, and a
// worker that comes late to a job (the caller took every chunk) never runs a later job's
// function with an earlier job's range.
TEST(NativeThreadPool, JobsBackToBackSleepingOrSpinning) {
  for (int spin_us : {0, 2000}) {
    native::ThreadPool pool(3, spin_us);
    int64_t total = 0, want = 0;
    std::atomic<int64_t> sum{0};
    std::atomic<int> empty{0};
    for (int job = 0; job < 3000; job++) {
      const int64_t n = 2 + job % 37;
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        if (b >= e || b < 0 || e > n) empty++;
        for (int64_t i = b; i < e; i++) sum += i + 1;
      });
      want += n * (n + 1) / 2;
      total = sum.load();
      ASSERT_EQ(total, want) << "spin " << spin_us << " job " << job;
    }
    EXPECT_EQ(empty.load(), 0) << "spin " << spin_us;
  }
}

TEST(NativeCompiler, CachesInProcessAndOnDisk) {
  const std::string src = "extern \"C\" void kiln_kernel(void* const*, const long*, long, long) {}\n// cache test\n";
  auto before = native::compile_stats();
  native::KernelFn f = native::load_kernel(src);
  native::KernelFn g = native::load_kernel(src);
  EXPECT_EQ(f, g);
  auto after = native::compile_stats();
  EXPECT_EQ(after.memory_hits, before.memory_hits + 1);
  EXPECT_EQ(after.compiled + after.disk_hits, before.compiled + before.disk_hits + 1);
  const auto& cfg = native::compiler_config();
  std::string key = native::hash_hex(cfg.version + "\n" + cfg.cxx + "\n" + cfg.flags + "\n" + src);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(cfg.cache_dir) / (key + ".so")));
}

TEST(NativeCompiler, CompilerErrorsAreKilnErrors) {
  try {
    native::load_kernel("this is not C++;\n");
    FAIL() << "expected a kiln::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("native.compile"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exited with status"), std::string::npos) << e.what();
  }
  native::set_compiler("kiln-no-such-compiler");
  try {
    native::load_kernel("extern \"C\" void kiln_kernel() {}\n// missing compiler\n");
    native::set_compiler("");
    FAIL() << "expected a kiln::Error";
  } catch (const Error& e) {
    native::set_compiler("");
    EXPECT_NE(std::string(e.what()).find("cannot run the C++ compiler 'kiln-no-such-compiler'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace native_backend_test
#endif  // __EMSCRIPTEN__
