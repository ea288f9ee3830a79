// Writes WebGPU check cases as JSON lines: kernels (every op on its dtypes, casts, packed bool
// and float16 outputs, serial and tree reductions), their generated WGSL and dispatch grid,
// random inputs, and the cpu interpreter's output (the reference) for tests/webgpu/run_wgsl.mjs.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/webgpu/wgsl_codegen.h"
#include "ir/alu_op.h"
#include "ir/kernel.h"

using namespace kiln;
using Bytes = std::vector<uint8_t>;

namespace {

std::string hex(const Bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) s += d[c >> 4], s += d[c & 15];
  return s;
}

std::mt19937 rng(1234);

// Inputs that exercise edge cases: signed zeros, infinities, NaN, negatives, integer extremes.
Bytes random_input(DType d, int64_t n, bool positive) {
  Bytes b(size_t(n * itemsize(d)));
  std::uniform_real_distribution<double> u(positive ? 0.05 : -4, 4);
  std::uniform_int_distribution<int> pick(0, 15);
  for (int64_t i = 0; i < n; i++) {
    double v = u(rng);
    if (is_float(d)) {
      int p = pick(rng);
      if (!positive && p == 0) v = 0.0;
      if (!positive && p == 1) v = -0.0;
    } else if (d == DType::Bool) {
      v = pick(rng) & 1;
    } else {
      v = std::floor(v * 3);
      if (d == DType::Uint32) v = std::fabs(v);
      if (pick(rng) == 0) v = d == DType::Int32 ? -2147483648.0 : 4294967295.0;
    }
    write_element(b.data(), d, i, v);
  }
  return b;
}

Bytes run_cpu(const Kernel& k, const std::vector<Bytes>& ins) {
  Backend& be = get_backend("cpu");
  std::vector<BufferRef> keep;
  std::vector<int64_t> h;
  for (const Bytes& b : ins) {
    keep.push_back(be.allocate(int64_t(b.size())));
    be.write(keep.back()->handle(), 0, b.data(), int64_t(b.size()));
    h.push_back(keep.back()->handle());
  }
  int64_t ob = k.size * itemsize(k.out_dtype());
  BufferRef out = be.allocate(std::max<int64_t>(ob, 1));
  be.dispatch(*be.prepare(k), h, out->handle());
  Bytes r(static_cast<size_t>(ob));
  be.read_sync(out->handle(), 0, ob, r.data());
  return r;
}

// rtol for float results: 0 for ops WGSL rounds correctly (+, -, *, casts, compares),
// else a bound for WebGPU's builtins (exp/log/sin... are not correctly rounded there).
void emit(const std::string& name, const Kernel& k, const std::vector<Bytes>& ins, double rtol, double atol,
          const webgpu::WgslParams& p = {}) {
  webgpu::WgslKernel w = webgpu::generate_wgsl(k, p);
  webgpu::Grid g = webgpu::dispatch_grid(w, k.size, p);
  std::string ws;
  for (char c : w.wgsl) {
    if (c == '\n') ws += "\\n";
    else if (c == '"') ws += "\\\"";
    else if (c == '\\') ws += "\\\\";
    else ws += c;
  }
  std::printf("{\"name\":\"%s\",\"size\":%lld,\"out\":\"%s\",\"gx\":%lld,\"gy\":%lld,\"rtol\":%g,\"atol\":%g,"
              "\"strategy\":%d,\"inputs\":[",
              name.c_str(), (long long)k.size, dtype_name(k.out_dtype()), (long long)g.x, (long long)g.y, rtol,
              atol, int(w.strategy));
  for (size_t i = 0; i < ins.size(); i++) std::printf("%s\"%s\"", i ? "," : "", hex(ins[i]).c_str());
  std::printf("],\"expect\":\"%s\",\"wgsl\":\"%s\"}\n", hex(run_cpu(k, ins)).c_str(), ws.c_str());
}

AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, n - 1); }

}  // namespace

int main() {
  const int64_t n = 1000;  // not a multiple of the workgroup or of the packing
  const DType all[] = {DType::Float32, DType::Int32, DType::Uint32, DType::Float16, DType::Bool};
  // Transcendentals: positive inputs for the ones with restricted domains.
  struct U {
    AluOp op;
    bool positive;
    double rtol, atol;
  };
  const U unary[] = {
      {AluOp::Neg, false, 0, 0},      {AluOp::Recip, false, 3e-7, 0}, {AluOp::Sqrt, true, 3e-7, 0},
      {AluOp::Exp, false, 4e-6, 0},   {AluOp::Exp2, false, 4e-6, 0},  {AluOp::Expm1, false, 1e-5, 1e-7},
      {AluOp::Log, true, 4e-6, 1e-7}, {AluOp::Log2, true, 4e-6, 1e-7}, {AluOp::Log1p, true, 4e-6, 1e-7},
      {AluOp::Sin, false, 1e-5, 1e-6}, {AluOp::Cos, false, 1e-5, 1e-6}, {AluOp::Tan, false, 1e-4, 1e-6},
      {AluOp::Atan, false, 4e-6, 0},  {AluOp::Sinh, false, 1e-5, 1e-7}, {AluOp::Cosh, false, 1e-5, 0},
      {AluOp::Tanh, false, 1e-5, 1e-7}, {AluOp::Asinh, false, 1e-5, 1e-7}, {AluOp::Erf, false, 1e-6, 3e-7},
      {AluOp::Floor, false, 0, 0},    {AluOp::Ceil, false, 0, 0},     {AluOp::Round, false, 0, 0},
      {AluOp::Trunc, false, 0, 0},
  };
  for (const U& u : unary) {
    Kernel k;
    k.inputs = {DType::Float32};
    k.size = n;
    k.exp = AluExp::unary(u.op, AluExp::load(DType::Float32, 0, gidx(n)));
    emit(std::string("f32_") + alu_info(u.op).name, k, {random_input(DType::Float32, n, u.positive)}, u.rtol, u.atol);
  }
  const AluOp binary[] = {AluOp::Add, AluOp::Sub,   AluOp::Mul,   AluOp::Div,   AluOp::Idiv,  AluOp::Mod,
                          AluOp::Max, AluOp::Min,   AluOp::CmpLt, AluOp::CmpLe, AluOp::CmpEq, AluOp::CmpNe,
                          AluOp::Pow, AluOp::Atan2, AluOp::And,   AluOp::Or,    AluOp::Xor,   AluOp::Shl,
                          AluOp::Shr};
  for (DType d : all) {
    for (AluOp op : binary) {
      bool bitwise = op == AluOp::And || op == AluOp::Or || op == AluOp::Xor || op == AluOp::Shl || op == AluOp::Shr;
      if (bitwise && is_float(d)) continue;
      if ((op == AluOp::Shl || op == AluOp::Shr) && d == DType::Bool) continue;
      if (op == AluOp::Atan2 && !is_float(d)) continue;
      // A bool % is false (ir/legalize.h): the shader reads no input, so the "auto" layout of
      // run_wgsl.mjs would have no bindings for the inputs it passes.
      if (op == AluOp::Mod && d == DType::Bool) continue;
      Kernel k;
      k.inputs = {d, d};
      k.size = n;
      k.exp = AluExp::binary(op, AluExp::load(d, 0, gidx(n)), AluExp::load(d, 1, gidx(n)));
      bool exact_op = op != AluOp::Div && op != AluOp::Idiv && op != AluOp::Mod && op != AluOp::Pow && op != AluOp::Atan2;
      double rtol = !is_float(d) || exact_op ? 0 : op == AluOp::Pow ? 2e-5 : 1e-6;
      // float16 results are rounded to half: one half ulp of slack for inexact f32 ops.
      if (d == DType::Float16 && rtol > 0) rtol = 1e-3;
      double atol = is_float(d) && (op == AluOp::Mod || op == AluOp::Idiv) ? 1e-5 : 0;
      emit(std::string(dtype_name(d)) + "_" + alu_info(op).name, k, {random_input(d, n, false), random_input(d, n, false)},
           rtol, atol);
    }
    for (DType to : all) {
      if (to == d) continue;
      Kernel k;
      k.inputs = {d};
      k.size = n;
      k.exp = AluExp::cast(to, AluExp::load(d, 0, gidx(n)));
      emit(std::string("cast_") + dtype_name(d) + "_" + dtype_name(to), k, {random_input(d, n, false)}, 0, 0);
    }
  }
  // Reductions: a serial one (short rows), a tree one (long rows, few outputs), max with an
  // epilogue, and an int sum; rows x cols over a row-major input.
  struct R {
    int64_t rows, cols;
    AluOp op;
    DType d;
  };
  const R reds[] = {{300, 7, AluOp::Add, DType::Float32},   {5, 3000, AluOp::Add, DType::Float32},
                    {64, 1024, AluOp::Max, DType::Float32}, {9, 777, AluOp::Add, DType::Int32},
                    {33, 500, AluOp::Min, DType::Uint32},   {200, 50, AluOp::Max, DType::Float16}};
  for (const R& r : reds) {
    Kernel k;
    k.inputs = {r.d};
    k.size = r.rows;
    AluExp ridx = AluExp::var(VarId::Ridx, DType::Int32, r.cols - 1);
    k.exp = AluExp::load(r.d, 0, gidx(r.rows) * r.cols + ridx);
    AluExp acc = AluExp::var(VarId::Acc, r.d, 0);
    k.reduction = Reduction{r.op, r.cols, is_float(r.d) ? AluExp::binary(AluOp::Mul, acc, AluExp::constant(r.d, 0.5)) : acc};
    // A tree sums in another order than the cpu: float sums get a relative bound of cols ulps.
    double rtol = r.op == AluOp::Add && is_float(r.d) ? double(r.cols) * 6e-8 : 0;
    emit(std::string("reduce_") + alu_info(r.op).name + "_" + dtype_name(r.d) + "_" + std::to_string(r.rows) + "x" +
             std::to_string(r.cols),
         k, {random_input(r.d, r.rows * r.cols, false)}, rtol, rtol > 0 ? 1e-5 : 0);
  }
  // Contractions (the tiled path): ragged sizes, a batch, an A stored transposed, and an
  // epilogue; sums in ridx order but with fma, so a bound of K ulps.
  struct C {
    int64_t batch, m, n, k;
    bool a_transposed;
  };
  // The last four with other generator parameters: a tile whose quads do not divide among
  // the invocations (and an odd BK), single and prefetch staging (the default is double),
  // and a 128x256 tile of 8x16 sums per invocation (more workgroup memory than the default).
  webgpu::WgslParams odd_tile, single, prefetch, big;
  odd_tile.tiles = {{32, 32, 12, 4, 4}};
  single.staging = webgpu::WgslStaging::Single;
  prefetch.staging = webgpu::WgslStaging::Prefetch;
  big.tiles = {{128, 256, 8, 8, 16}};  // 256 invocations, as SwiftShader allows at most
  big.workgroup_storage = 32768;        // room for two copies of the slices
  big.fill_groups = 1;
  const C cons[] = {{1, 70, 50, 40, false}, {3, 96, 64, 64, false}, {1, 256, 256, 256, false}, {1, 33, 130, 17, true},
                    {2, 70, 50, 40, false}, {1, 256, 256, 256, false}, {2, 70, 50, 40, false}, {1, 256, 512, 64, true}};
  for (size_t ci = 0; ci < std::size(cons); ci++) {
    const C& c = cons[ci];
    const webgpu::WgslParams& params =
        ci == 4 ? odd_tile : ci == 5 ? single : ci == 6 ? prefetch : ci == 7 ? big : webgpu::WgslParams{};
    Kernel k;
    k.inputs = {DType::Float32, DType::Float32};
    k.size = c.batch * c.m * c.n;
    AluExp g = gidx(k.size), r = AluExp::var(VarId::Ridx, DType::Int32, c.k - 1);
    AluExp bi = g / (c.m * c.n), i = (g / c.n) % c.m, j = g % c.n;
    AluExp a = c.a_transposed ? AluExp::load(DType::Float32, 0, bi * (c.m * c.k) + r * c.m + i)
                              : AluExp::load(DType::Float32, 0, (g / c.n) * c.k + r);
    AluExp b = AluExp::load(DType::Float32, 1, bi * (c.k * c.n) + r * c.n + j);
    k.exp = a * b;
    AluExp acc = AluExp::var(VarId::Acc, DType::Float32, 0);
    k.reduction = Reduction{AluOp::Add, c.k, AluExp::binary(AluOp::Mul, acc, AluExp::constant(DType::Float32, 0.5))};
    double rtol = double(c.k) * 6e-8;
    emit("contraction_" + std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
             std::to_string(c.k) + (c.a_transposed ? "_at" : "") + (ci == 4   ? "_odd_tile"
                                                : ci == 5 ? "_single"
                                                : ci == 6 ? "_prefetch"
                                                : ci == 7 ? "_big_tile"
                                                          : ""),
         k, {random_input(DType::Float32, c.batch * c.m * c.k, false), random_input(DType::Float32, c.batch * c.k * c.n, false)},
         rtol, 1e-5, params);
  }
  return 0;
}
