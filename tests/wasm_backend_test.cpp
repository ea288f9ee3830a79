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

namespace {

using namespace kiln;
using Bytes = std::vector<uint8_t>;

WasmBackend& wasm_be() { return static_cast<WasmBackend&>(get_backend("wasm")); }

Bytes run_on(Backend& be, const Kernel& k, const std::vector<Bytes>& ins) {
  std::vector<BufferRef> keep;
  std::vector<int64_t> handles;
  for (const Bytes& b : ins) {
    BufferRef r = be.allocate(std::max<int64_t>(int64_t(b.size()), 1));
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

double element(const Bytes& b, DType dt, size_t i) {
  switch (dt) {
    case DType::Bool: return b[i];
    case DType::Int32: { int32_t v; std::memcpy(&v, &b[4 * i], 4); return v; }
    case DType::Uint32: { uint32_t v; std::memcpy(&v, &b[4 * i], 4); return v; }
    case DType::Float16: { uint16_t v; std::memcpy(&v, &b[2 * i], 2); return half_to_float(v); }
    case DType::Float32: { float v; std::memcpy(&v, &b[4 * i], 4); return v; }
    case DType::Float64: { double v; std::memcpy(&v, &b[8 * i], 8); return v; }
  }
  return 0;
}

// Bit-for-bit equality, except that any NaN equals any NaN (payloads are not specified).
::testing::AssertionResult same_bits(const Kernel& k, const Bytes& want, const Bytes& got) {
  DType dt = k.out_dtype();
  size_t n = size_t(k.size);
  for (size_t i = 0; i < n; i++) {
    double w = element(want, dt, i), g = element(got, dt, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    bool eq = w == g && std::signbit(w) == std::signbit(g);
    if (dt == DType::Bool) eq = (w != 0) == (g != 0);
    if (!eq)
      return ::testing::AssertionFailure() << "element " << i << ": cpu " << w << ", wasm " << g
                                           << "\n" << k.to_string();
  }
  return ::testing::AssertionSuccess();
}

// Values that exercise every edge of alu_eval: signed zeros, infinities, NaN, ties,
// subnormals, int32 extremes and shift counts around 32.
Bytes special_values(DType dt, size_t n, std::mt19937& rng) {
  static const double fl[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0,
                              INFINITY, -INFINITY, NAN, 1e-40, -3e-39, 3.4e38, 65504.0, 70000.0,
                              1e10, -1e10, 6e-8, 0.1, 1e-3, 100.0, 2.0, 0.75, -0.25};
  static const double in[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, -31, -32, 100,
                              2147483647.0, -2147483648.0, 65536, -65536, 1000003};
  static const double un[] = {0, 1, 2, 3, 7, 31, 32, 33, 100, 4294967295.0, 2147483648.0,
                              2147483647.0, 65536, 1000003};
  Bytes b(n * size_t(itemsize(dt)));
  std::uniform_real_distribution<double> u(-10, 10);
  std::uniform_int_distribution<int> pick(0, 99);
  for (size_t i = 0; i < n; i++) {
    double v = 0;
    bool special = pick(rng) < 60;
    switch (dt) {
      case DType::Bool: v = pick(rng) & 1; break;
      case DType::Int32: v = special ? in[rng() % std::size(in)] : double(int32_t(rng())); break;
      case DType::Uint32: v = special ? un[rng() % std::size(un)] : double(uint32_t(rng())); break;
      default: v = special ? fl[rng() % std::size(fl)] : u(rng); break;
    }
    switch (dt) {
      case DType::Bool: b[i] = v != 0; break;
      case DType::Int32: { int32_t x = int32_t(v); std::memcpy(&b[4 * i], &x, 4); break; }
      case DType::Uint32: { uint32_t x = uint32_t(v); std::memcpy(&b[4 * i], &x, 4); break; }
      case DType::Float16: { uint16_t x = float_to_half(float(v)); std::memcpy(&b[2 * i], &x, 2); break; }
      case DType::Float32: { float x = float(v); std::memcpy(&b[4 * i], &x, 4); break; }
      case DType::Float64: std::memcpy(&b[8 * i], &v, 8); break;
    }
  }
  return b;
}

AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, n - 1); }

void expect_same(const Kernel& k, const std::vector<Bytes>& ins) {
  Bytes want = run_on(get_backend("cpu"), k, ins);
  Bytes got = run_on(wasm_be(), k, ins);
  EXPECT_TRUE(same_bits(k, want, got));
}

const DType kAll[] = {DType::Bool, DType::Int32, DType::Uint32, DType::Float16, DType::Float32, DType::Float64};

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

// ---- random kernels ---------------------------------------------------------------------

struct RandomKernel {
  std::mt19937& rng;
  int64_t n;
  std::vector<DType> inputs;
  int pick(int k) { return int(rng() % uint32_t(k)); }

  // An index expression in gidx (and ridx when given): strided, broadcast, divided,
  // modded, flipped or shifted out of range, as views produce.
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
    if (pick(5) == 0) {
      double v = is_float(dt) ? double(pick(20)) / 4 - 2 : dt == DType::Bool ? pick(2) : pick(9) - 4;
      return AluExp::constant(dt, v);
    }
    inputs.push_back(dt);
    return AluExp::load(dt, int(inputs.size() - 1), index(g, r));
  }

  AluExp expr(DType dt, int depth, const AluExp& g, const AluExp* r) {
    if (depth == 0) return leaf(dt, g, r);
    static const AluOp fbin[] = {AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Div, AluOp::Max,
                                 AluOp::Min, AluOp::Idiv, AluOp::Mod, AluOp::Pow};
    static const AluOp ibin[] = {AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Div, AluOp::Idiv,
                                 AluOp::Mod, AluOp::Max, AluOp::Min, AluOp::And, AluOp::Xor,
                                 AluOp::Shl, AluOp::Shr};
    static const AluOp fun[] = {AluOp::Neg, AluOp::Sqrt, AluOp::Exp, AluOp::Log, AluOp::Tanh,
                                AluOp::Floor, AluOp::Round, AluOp::Recip, AluOp::Sin, AluOp::Erf};
    int kind = pick(10);
    if (kind < 2) {  // a cast from another dtype
      DType from = kAll[pick(6)];
      return AluExp::cast(dt, expr(from, depth - 1, g, r));
    }
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
  for (DType d : dts) out.push_back(special_values(d, n - rng() % std::min<size_t>(n, 5), rng));  // some short
  return out;
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
#endif  // __EMSCRIPTEN__
