// The block interpreter: hot ops (index arithmetic, loads, float32 math) have dedicated
// loops; every other op runs a lane loop made from alu_eval's inline definition
// (ir/alu_semantics.h), which defines the semantics.
#include "backend/cpu/cpu_interpreter.h"

#include <array>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "ir/alu_semantics.h"

namespace kiln::cpu {

namespace {
constexpr int kBlock = 512;

// One loop per op over a block's lanes, each a copy of alu_eval with the op fixed, so the
// op's switch folds away and its body is inlined into the loop (interpreting through the
// out-of-line alu_eval, a call and a switch per lane, took most of an LLM test's time).
// The result dtypes most kernels use get a copy each too (int32: index arithmetic), so
// round_to's switch folds as well. Missing operands read zeros.
using LaneLoop = void (*)(DType, DType, const double*, const double*, const double*, double*, int);
template <AluOp Op, DType Dt>
void lanes_of(DType sdt, const double* a, const double* b, const double* c, double* d, int n) {
  for (int i = 0; i < n; i++) d[i] = alu_eval_inline(Op, Dt, sdt, a[i], b[i], c[i]);
}
template <AluOp Op>
void lane_loop(DType dt, DType sdt, const double* a, const double* b, const double* c, double* d, int n) {
  switch (dt) {
    case DType::Float32: return lanes_of<Op, DType::Float32>(sdt, a, b, c, d, n);
    case DType::Int32: return lanes_of<Op, DType::Int32>(sdt, a, b, c, d, n);
    case DType::Uint32: return lanes_of<Op, DType::Uint32>(sdt, a, b, c, d, n);
    case DType::Bool: return lanes_of<Op, DType::Bool>(sdt, a, b, c, d, n);
    default:
      for (int i = 0; i < n; i++) d[i] = alu_eval_inline(Op, dt, sdt, a[i], b[i], c[i]);
  }
}
// A load's lanes with the buffer's dtype fixed; out-of-bounds lanes read 0 (load_element).
template <class T>
void load_lanes(const BufferView& buf, const double* idx, double* d, int n) {
  for (int i = 0; i < n; i++) {
    const int64_t j = int64_t(idx[i]);
    T v{};
    if (j >= 0 && j < buf.count) std::memcpy(&v, buf.data + sizeof(T) * size_t(j), sizeof(T));
    d[i] = double(v);
  }
}
template <size_t... I>
constexpr std::array<LaneLoop, sizeof...(I)> lane_loops(std::index_sequence<I...>) {
  return {&lane_loop<AluOp(I)>...};
}
constexpr auto kLaneLoops = lane_loops(std::make_index_sequence<size_t(AluOp::Where) + 1>());
const double kZeros[kBlock] = {};
}  // namespace

Program Program::compile(const AluExp& exp) {
  Program p;
  std::unordered_map<const AluNode*, int> reg;
  exp.visit([&](const AluNode& n) {
    Instr in;
    in.op = n.op;
    in.dtype = n.dtype;
    in.src_dtype = n.src.empty() ? n.dtype : n.src[0].dtype();
    for (size_t i = 0; i < n.src.size(); i++) in.src[i] = reg.at(n.src[i].get());
    in.value = n.value;
    in.arg = n.arg;
    reg[&n] = int(p.code.size());
    p.code.push_back(in);
  });
  p.result = reg.at(exp.get());
  return p;
}

double load_element(const BufferView& b, int64_t i) {
  return (i < 0 || i >= b.count) ? 0 : read_element(b.data, b.dtype, i);
}

void store_element(const BufferView& b, int64_t i, double v) { write_element(b.data, b.dtype, i, v); }

void run_block(const Program& prog, const std::vector<BufferView>& inputs, int n,
               const double* gidx, const double* ridx, const double* acc, double* out,
               std::vector<std::vector<double>>& regs) {
  if (regs.size() < prog.code.size()) regs.resize(prog.code.size());
  for (size_t r = 0; r < prog.code.size(); r++) {
    const Instr& in = prog.code[r];
    std::vector<double>& dst = regs[r];
    if (dst.size() < size_t(kBlock)) dst.resize(kBlock);
    double* d = dst.data();
    const double* a = in.src[0] >= 0 ? regs[size_t(in.src[0])].data() : kZeros;
    const double* b = in.src[1] >= 0 ? regs[size_t(in.src[1])].data() : kZeros;
    const double* c = in.src[2] >= 0 ? regs[size_t(in.src[2])].data() : kZeros;
    const bool i32 = in.dtype == DType::Int32;
    const bool f32 = in.dtype == DType::Float32;
    const bool f64 = in.dtype == DType::Float64;
    switch (in.op) {
      case AluOp::Const:
        for (int i = 0; i < n; i++) d[i] = in.value;
        break;
      case AluOp::Var: {
        const double* v = in.arg == int(VarId::Gidx) ? gidx : in.arg == int(VarId::Ridx) ? ridx : acc;
        std::memcpy(d, v, sizeof(double) * size_t(n));
        break;
      }
      case AluOp::Load: {
        const BufferView& buf = inputs[size_t(in.arg)];
        if (buf.dtype == DType::Float32) load_lanes<float>(buf, a, d, n);
        else if (buf.dtype == DType::Int32) load_lanes<int32_t>(buf, a, d, n);
        else if (buf.dtype == DType::Uint32) load_lanes<uint32_t>(buf, a, d, n);
        else for (int i = 0; i < n; i++) d[i] = load_element(buf, int64_t(a[i]));
        break;
      }
      case AluOp::Add:
        if (f64) { for (int i = 0; i < n; i++) d[i] = a[i] + b[i]; break; }
        if (f32) { for (int i = 0; i < n; i++) d[i] = double(float(a[i] + b[i])); break; }
        goto generic;
      case AluOp::Mul:
        if (f64) { for (int i = 0; i < n; i++) d[i] = a[i] * b[i]; break; }
        if (f32) { for (int i = 0; i < n; i++) d[i] = double(float(a[i] * b[i])); break; }
        goto generic;
      case AluOp::Idiv:
        if (i32 && prog.code[size_t(in.src[1])].op == AluOp::Const && prog.code[size_t(in.src[1])].value > 0) {
          for (int i = 0; i < n; i++) d[i] = std::floor(a[i] / b[i]);
          break;
        }
        goto generic;
      case AluOp::Mod:
        if (i32 && prog.code[size_t(in.src[1])].op == AluOp::Const && prog.code[size_t(in.src[1])].value > 0) {
          for (int i = 0; i < n; i++) d[i] = a[i] - b[i] * std::floor(a[i] / b[i]);
          break;
        }
        goto generic;
      case AluOp::CmpLt:
        for (int i = 0; i < n; i++) d[i] = a[i] < b[i] ? 1 : 0;
        break;
      case AluOp::Where:
        for (int i = 0; i < n; i++) d[i] = a[i] != 0 ? b[i] : c[i];
        break;
      default:
      generic:
        kLaneLoops[size_t(in.op)](in.dtype, in.src_dtype, a, b, c, d, n);
    }
  }
  std::memcpy(out, regs[size_t(prog.result)].data(), sizeof(double) * size_t(n));
}

void run_kernel(const Kernel& k, const Program& body, const Program* epilogue,
                const std::vector<BufferView>& inputs, const BufferView& output) {
  std::vector<std::vector<double>> regs;
  double g[kBlock], r[kBlock], v[kBlock];
  if (!k.reduction) {
    for (int64_t start = 0; start < k.size; start += kBlock) {
      int n = int(std::min<int64_t>(kBlock, k.size - start));
      for (int i = 0; i < n; i++) g[i] = double(start + i);
      run_block(body, inputs, n, g, nullptr, nullptr, v, regs);
      for (int i = 0; i < n; i++) store_element(output, start + i, v[i]);
    }
    return;
  }
  const Reduction& red = *k.reduction;
  const DType adt = k.exp.dtype();
  const double init = Reduction::identity(red.op, adt);
  std::vector<double> accs(size_t(k.size), init);
  // Lanes run over the flattened (gidx, ridx) space; each lane's term is folded into its
  // output's accumulator in ridx order, so results do not depend on the block size.
  const int64_t total = k.size * red.size;
  for (int64_t start = 0; start < total; start += kBlock) {
    int n = int(std::min<int64_t>(kBlock, total - start));
    for (int i = 0; i < n; i++) {
      int64_t f = start + i;
      g[i] = double(f / red.size);
      r[i] = double(f % red.size);
    }
    run_block(body, inputs, n, g, r, nullptr, v, regs);
    for (int i = 0; i < n; i++) {
      double& a = accs[size_t(int64_t(g[i]))];
      a = alu_eval_inline(red.op, adt, adt, a, v[i], 0);
    }
  }
  for (int64_t start = 0; start < k.size; start += kBlock) {
    int n = int(std::min<int64_t>(kBlock, k.size - start));
    for (int i = 0; i < n; i++) g[i] = double(start + i);
    run_block(*epilogue, inputs, n, g, nullptr, accs.data() + start, v, regs);
    for (int i = 0; i < n; i++) store_element(output, start + i, v[i]);
  }
}

}  // namespace kiln::cpu
