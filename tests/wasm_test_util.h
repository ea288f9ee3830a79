// Helpers of the wasm backend tests: run a Kernel on a backend, compare bit for bit with
// the cpu, edge-case inputs, and random kernels shaped like the ones views produce.
#pragma once
#ifdef __EMSCRIPTEN__
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "backend/wasm/wasm_backend.h"
#include "ir/alu_op.h"
#include "ir/kernel.h"

namespace kiln::wasm_test {

using namespace kiln;
using Bytes = std::vector<uint8_t>;

inline WasmBackend& wasm_be() { return static_cast<WasmBackend&>(get_backend("wasm")); }

inline Bytes run_on(Backend& be, const Kernel& k, const std::vector<Bytes>& ins) {
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

inline double element(const Bytes& b, DType dt, size_t i) {
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
inline ::testing::AssertionResult same_bits(const Kernel& k, const Bytes& want, const Bytes& got) {
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
inline Bytes special_values(DType dt, size_t n, std::mt19937& rng) {
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

inline AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, n - 1); }

// Puts the wasm backend's codegen options back when a scope ends.
struct KeepOptions {
  WasmBackend& be = wasm_be();
  wasm::CodegenOptions saved = be.options();
  ~KeepOptions() { be.set_options(saved); }
};

// Bit-for-bit comparisons with the cpu need unfused contractions: fma off for a scope
// (it is on by default where the engine has Relaxed SIMD; wasm_fma_test.cpp covers it).
struct Unfused : KeepOptions {
  Unfused() {
    wasm::CodegenOptions o = saved;
    o.fma = false;
    be.set_options(o);
  }
};

inline void expect_same(const Kernel& k, const std::vector<Bytes>& ins) {
  Unfused unfused;
  Bytes want = run_on(get_backend("cpu"), k, ins);
  Bytes got = run_on(wasm_be(), k, ins);
  EXPECT_TRUE(same_bits(k, want, got));
}

// out[i, j] = epi(sum_r a[i, r] * b[r, j]) with a bias row and relu or tanh fused.
inline Kernel matmul(int64_t m, int64_t kk, int64_t n, int epilogue, bool swap = false) {
  AluExp g = gidx(m * n), r = AluExp::var(VarId::Ridx, DType::Int32, kk - 1);
  AluExp i = g / n, j = g % n;
  Kernel k;
  k.size = m * n;
  k.inputs = {DType::Float32, DType::Float32, DType::Float32};
  AluExp a = AluExp::load(DType::Float32, 0, i * kk + r), b = AluExp::load(DType::Float32, 1, r * n + j);
  k.exp = swap ? AluExp::binary(AluOp::Mul, b, a) : AluExp::binary(AluOp::Mul, a, b);
  AluExp acc = AluExp::var(VarId::Acc, DType::Float32, 0);
  AluExp bias = AluExp::load(DType::Float32, 2, j);
  AluExp epi = acc;
  if (epilogue >= 1) epi = AluExp::binary(AluOp::Add, acc, bias);
  if (epilogue == 2) epi = AluExp::binary(AluOp::Max, epi, AluExp::constant(DType::Float32, 0));
  if (epilogue == 3) epi = AluExp::unary(AluOp::Tanh, epi);
  k.reduction = Reduction{AluOp::Add, kk, epi};
  return k;
}

inline std::vector<Bytes> matmul_inputs(int64_t m, int64_t kk, int64_t n, std::mt19937& rng, int64_t short_b = 0) {
  return {special_values(DType::Float32, size_t(m * kk), rng),
          special_values(DType::Float32, size_t(kk * n - short_b), rng),
          special_values(DType::Float32, size_t(n), rng)};
}

inline const DType kAll[] = {DType::Bool, DType::Int32, DType::Uint32, DType::Float16, DType::Float32, DType::Float64};

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

inline std::vector<Bytes> inputs_for(const std::vector<DType>& dts, std::mt19937& rng, size_t n) {
  std::vector<Bytes> out;
  for (DType d : dts) out.push_back(special_values(d, n - rng() % std::min<size_t>(n, 5), rng));  // some short
  return out;
}

}  // namespace kiln::wasm_test
#endif  // __EMSCRIPTEN__
