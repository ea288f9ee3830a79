// The wasm backend against the cpu interpreter (Emscripten builds only): every op and
// dtype, random kernels and reductions bit for bit, and transcendentals within their bound.
#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "backend/backend.h"
#include "backend/wasm/wasm_backend.h"
#include "ir/alu_op.h"
#include "ir/kernel.h"
#include "wasm_test_util.h"

namespace wasm_backend_test {

namespace {

using namespace kiln;
using namespace kiln::wasm_test;

bool defined_on(AluOp op, DType dt) {
  bool f = is_float(dt), b = dt == DType::Bool;
  switch (op) {
    case AluOp::Not: return !f;
    case AluOp::And: case AluOp::Or: case AluOp::Xor: case AluOp::Shl: case AluOp::Shr:
      return !f;
    case AluOp::Neg: case AluOp::Recip: case AluOp::Add: case AluOp::Sub: case AluOp::Mul:
    case AluOp::Div: case AluOp::Idiv: case AluOp::Mod: case AluOp::Pow: return !b || op != AluOp::Neg;
    case AluOp::Max: case AluOp::Min: case AluOp::CmpLt: case AluOp::CmpLe: case AluOp::CmpEq:
    case AluOp::CmpNe: case AluOp::IsNan: return true;
    default: return f;  // sqrt, transcendentals, rounding, atan2: floats (ints are promoted first)
  }
}

TEST(WasmBackend, IsRegistered) {
  auto devs = available_devices();
  EXPECT_NE(std::find(devs.begin(), devs.end(), "wasm"), devs.end());
  EXPECT_TRUE(get_backend("wasm").can_read_sync());
}

TEST(WasmBackend, EveryUnaryAndBinaryOpOnEveryDtype) {
  std::mt19937 rng(1);
  const int64_t n = 97;  // not a multiple of 4: exercises the scalar tail after SIMD
  int kernels = 0;
  for (int o = int(AluOp::Neg); o <= int(AluOp::Shr); o++) {
    AluOp op = AluOp(o);
    if (op == AluOp::Cast || op == AluOp::Bitcast) continue;
    for (DType dt : kAll) {
      if (!defined_on(op, dt)) continue;
      Kernel k;
      k.size = n;
      k.inputs = {dt, dt};
      AluExp a = AluExp::load(dt, 0, gidx(n)), b = AluExp::load(dt, 1, gidx(n));
      k.exp = alu_info(op).arity == 1 ? AluExp::unary(op, a) : AluExp::binary(op, a, b);
      SCOPED_TRACE(std::string(alu_info(op).name) + " " + dtype_name(dt));
      expect_same(k, {special_values(dt, size_t(n), rng), special_values(dt, size_t(n), rng)});
      kernels++;
    }
  }
  EXPECT_GT(kernels, 150);
}

TEST(WasmBackend, CastsBitcastsAndWhere) {
  std::mt19937 rng(2);
  const int64_t n = 61;
  for (DType from : kAll) {
    for (DType to : kAll) {
      Kernel k;
      k.size = n;
      k.inputs = {from};
      AluExp a = AluExp::load(from, 0, gidx(n));
      k.exp = AluExp::cast(to, a);
      SCOPED_TRACE(std::string("cast ") + dtype_name(from) + " -> " + dtype_name(to));
      expect_same(k, {special_values(from, size_t(n), rng)});
      if (itemsize(from) == 4 && itemsize(to) == 4 && from != to) {
        k.exp = AluExp::bitcast(to, a);
        expect_same(k, {special_values(from, size_t(n), rng)});
      }
    }
    Kernel w;
    w.size = n;
    w.inputs = {DType::Bool, from, from};
    w.exp = AluExp::where(AluExp::load(DType::Bool, 0, gidx(n)), AluExp::load(from, 1, gidx(n)),
                          AluExp::load(from, 2, gidx(n)));
    expect_same(w, {special_values(DType::Bool, size_t(n), rng), special_values(from, size_t(n), rng),
                    special_values(from, size_t(n), rng)});
  }
}

// Weak float constants keep their double value in alu_eval until an op rounds them.
TEST(WasmBackend, WideWeakConstants) {
  std::mt19937 rng(3);
  const int64_t n = 40;
  for (DType dt : {DType::Float16, DType::Float32}) {
    AluExp a = AluExp::load(dt, 0, gidx(n));
    AluExp c = AluExp::weak_constant(dt, 0.1);
    AluExp cond = AluExp::binary(AluOp::CmpLt, a, c);
    std::vector<AluExp> exps = {
        AluExp::binary(AluOp::Add, a, c), AluExp::binary(AluOp::Mul, a, c), cond,
        AluExp::binary(AluOp::Max, a, c), AluExp::where(cond, c, a),
        AluExp::binary(AluOp::Mul, AluExp::where(cond, c, a), a), AluExp::unary(AluOp::Exp, c * 1),
        AluExp::cast(DType::Float64, AluExp::where(cond, c, a)), AluExp::unary(AluOp::Neg, AluExp::where(cond, c, a))};
    for (auto& e : exps) {
      Kernel k;
      k.size = n;
      k.inputs = {dt};
      k.exp = e;
      expect_same(k, {special_values(dt, size_t(n), rng)});
    }
  }
}

TEST(WasmBackend, OutOfRangeLoadsReadZero) {
  const int64_t n = 50;
  Kernel k;
  k.size = n;
  k.inputs = {DType::Float32, DType::Int32};
  AluExp g = gidx(n);
  AluExp idx = g * 3 + AluExp::idx(-20);  // negative, in range and past the end
  k.exp = AluExp::binary(AluOp::Add, AluExp::load(DType::Float32, 0, idx),
                         AluExp::cast(DType::Float32, AluExp::load(DType::Int32, 1, g)));
  std::mt19937 rng(4);
  expect_same(k, {special_values(DType::Float32, 30, rng), special_values(DType::Int32, size_t(n) - 7, rng)});
}

TEST(WasmBackend, RandomPointwiseKernels) {
  std::mt19937 rng(5);
  for (int t = 0; t < 150; t++) {
    RandomKernel rk{rng, int64_t(1 + rng() % 70), {}};
    DType dt = kAll[rng() % 6];
    AluExp g = gidx(rk.n);
    Kernel k;
    k.size = rk.n;
    k.exp = rk.expr(dt, 1 + int(rng() % 4), g, nullptr);
    k.inputs = rk.inputs;
    expect_same(k, inputs_for(k.inputs, rng, size_t(rk.n) * 3));
  }
}

TEST(WasmBackend, RandomReductions) {
  std::mt19937 rng(6);
  const AluOp ops[] = {AluOp::Add, AluOp::Mul, AluOp::Max, AluOp::Min};
  for (int t = 0; t < 100; t++) {
    RandomKernel rk{rng, int64_t(1 + rng() % 40), {}};
    int64_t rsize = int64_t(rng() % 20);  // includes empty reductions
    DType dt = kAll[1 + rng() % 5];
    AluExp g = gidx(rk.n), r = AluExp::var(VarId::Ridx, DType::Int32, std::max<int64_t>(rsize - 1, 0));
    Kernel k;
    k.size = rk.n;
    k.exp = rk.expr(dt, 1 + int(rng() % 3), g, &r);
    AluExp acc = AluExp::var(VarId::Acc, dt, 0);
    AluExp epi = rng() % 2 ? acc : AluExp::binary(AluOp::Add, acc, rk.leaf(dt, g, nullptr));
    k.reduction = Reduction{ops[rng() % 4], rsize, epi};
    k.inputs = rk.inputs;
    expect_same(k, inputs_for(k.inputs, rng, size_t(rk.n * std::max<int64_t>(rsize, 1)) * 2));
  }
}

// A matmul-shaped reduction: out[i, j] = sum_r a[i, r] * b[r, j].
TEST(WasmBackend, MatmulReduction) {
  Unfused unfused;
  std::mt19937 rng(7);
  for (auto [m, kk, nn] : {std::tuple{5, 7, 9}, std::tuple{16, 33, 20}, std::tuple{1, 1, 1}}) {
    for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Float16}) {
      int64_t size = int64_t(m) * nn;
      AluExp g = gidx(size), r = AluExp::var(VarId::Ridx, DType::Int32, kk - 1);
      AluExp i = g / int64_t(nn), j = g % int64_t(nn);
      Kernel k;
      k.size = size;
      k.inputs = {dt, dt};
      k.exp = AluExp::binary(AluOp::Mul, AluExp::load(dt, 0, i * int64_t(kk) + r),
                             AluExp::load(dt, 1, r * int64_t(nn) + j));
      k.reduction = Reduction{AluOp::Add, kk, AluExp::var(VarId::Acc, dt, 0)};
      expect_same(k, {special_values(dt, size_t(m * kk), rng), special_values(dt, size_t(kk * nn), rng)});
    }
  }
}

TEST(WasmBackend, KernelsAreCachedByExactKey) {
  auto make = [](double c) {
    Kernel k;
    k.size = 4;
    k.inputs = {DType::Float32};
    k.exp = AluExp::binary(AluOp::Add, AluExp::load(DType::Float32, 0, gidx(4)), AluExp::constant(DType::Float32, c));
    return k;
  };
  auto& be = wasm_be();
  auto e1 = be.prepare(make(1.0000001)), e2 = be.prepare(make(1.0000001)), e3 = be.prepare(make(1.0000002));
  EXPECT_EQ(e1.get(), e2.get());
  EXPECT_NE(e1.get(), e3.get());  // Kernel::to_string would print both constants alike
}

}  // namespace
}  // namespace wasm_backend_test
#endif  // __EMSCRIPTEN__
