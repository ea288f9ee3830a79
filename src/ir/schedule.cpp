// Schedules for Kernels: split gidx into output axes, then pick tiles, upcast, unroll and
// workgroup sizes that divide the axes (so generated loops need no remainder handling).
#include "ir/schedule.h"

#include <algorithm>
#include <sstream>

namespace kiln {

// Every factor 1: one output per step, no tiles, no workgroups.
ScheduleParams ScheduleParams::cpu() { return {}; }

// The wasm code generator reads reg_rows and reg_vecs (wasm_codegen.cpp: the tiled
// contractions' MR x NR); the other fields are only the scheduler's view of wasm
// (tests/schedule_test.cpp checks the schedules they give), chosen and not measured.
ScheduleParams ScheduleParams::wasm() {
  return {
      .upcast = 4,  // f32x4: the float32 lanes of one SIMD128 vector
      // Not read by wasm codegen: its tiled r loop does one step per iteration, as unrolling
      // by 2 or 4 measured slower (docs/WASM.md, 2-core dev machine, 2026-12-04).
      .unroll = 4,
      .tile_out = 32,  // chosen, not measured (the tiled loop uses its own cache blocks)
      .tile_red = 64,  // chosen, not measured
      .max_local = 1,  // no workgroups: threads split a dispatch's [begin, end) instead
      .local_inner = 1,
      // MR x NR = 4 rows x 2 f32x4 accumulators. Measured with bench/wasm/tile_sweep.mjs
      // (docs/WASM.md, "Register-tiled contractions"): 4 x 2 beat 4 x 4, 6 x 2, 3 x 3, 2 x 4 on
      // matmul 256 and 1024 (Intel Xeon 2-core dev machine, Node 20, 2026-12-03), again with B
      // packed (same day: 38-40 GFLOP/s against 33-35) and with relaxed-SIMD FMA (AMD EPYC Zen 4,
      // 2026-12-04: 50-52 against 47-48.5; tiles of 13 or more v128 values spill in V8).
      .reg_rows = 4,
      .reg_vecs = 2,
  };
}

// No code generator reads these: the WGSL generator has its own WgslParams
// (backend/webgpu/wgsl_codegen.h, tiles measured with bench/webgpu/tune.sh). They are the
// scheduler's view of a GPU, checked by tests/schedule_test.cpp, chosen and not measured.
ScheduleParams ScheduleParams::webgpu() {
  return {
      .upcast = 4,        // vec4<f32>
      .unroll = 4,        // chosen, not measured
      .tile_out = 64,     // chosen, not measured
      .tile_red = 16,     // chosen, not measured
      .max_local = 256,   // WebGPU's default maxComputeInvocationsPerWorkgroup
      .local_inner = 16,  // a 16 x 16 workgroup when both axes allow it
  };
}

int64_t largest_divisor(int64_t n, int64_t cap) {
  if (n <= 0) return 1;
  for (int64_t d = std::min(n, std::max<int64_t>(cap, 1)); d > 1; d--)
    if (n % d == 0) return d;
  return 1;
}

namespace {

// The smallest c > 1 with `gidx // c` or `gidx % c` in the body: the length of the
// innermost output axis of a contraction (matmul's N). 0 when gidx is only used whole.
int64_t inner_axis(const Kernel& k) {
  int64_t best = 0;
  k.exp.visit([&](const AluNode& n) {
    if ((n.op != AluOp::Idiv && n.op != AluOp::Mod) || n.src.size() != 2) return;
    const AluExp &a = n.src[0], &b = n.src[1];
    if (a.op() != AluOp::Var || a.node().arg != int(VarId::Gidx) || !b.is_const()) return;
    int64_t c = int64_t(b.value());
    if (c > 1 && k.size % c == 0 && (best == 0 || c < best)) best = c;
  });
  return best;
}

}  // namespace

Schedule schedule_kernel(const Kernel& k, const ScheduleParams& p) {
  Schedule s;
  s.reduce = k.reduction ? k.reduction->size : 0;
  int64_t n = k.reduction ? inner_axis(k) : 0;
  if (n > 0 && n < k.size) s.out_shape = {k.size / n, n};
  else s.out_shape = {std::max<int64_t>(k.size, 1)};
  const size_t nd = s.out_shape.size();
  const int64_t inner = s.out_shape.back();
  s.upcast = largest_divisor(inner, p.upcast);
  s.tile.resize(nd);
  s.local.assign(nd, 1);
  s.groups.resize(nd);
  for (size_t i = 0; i < nd; i++) {
    // Elementwise kernels stream: one tile per thread group, no blocking beyond upcast.
    int64_t cap = (s.reduce > 0 || i + 1 == nd) ? std::max(p.tile_out, s.upcast) : 1;
    if (i + 1 == nd) cap = std::max(cap, s.upcast);
    s.tile[i] = largest_divisor(s.out_shape[i], cap);
    if (i + 1 == nd && s.tile[i] % s.upcast != 0) s.tile[i] = s.upcast;
  }
  // Workgroups: threads along the innermost axis first, the rest along the outer one;
  // each thread computes upcast (innermost) x tile/local elements of its tile.
  if (p.max_local > 1) {
    int64_t room = p.max_local;
    for (size_t r = 0; r < nd; r++) {
      size_t i = nd - 1 - r;
      int64_t per = i + 1 == nd ? s.tile[i] / s.upcast : s.tile[i];
      int64_t want = i + 1 == nd && nd > 1 ? std::min(p.local_inner, room) : room;
      s.local[i] = largest_divisor(per, want);
      room /= s.local[i];
    }
  }
  for (size_t i = 0; i < nd; i++) s.groups[i] = s.out_shape[i] / s.tile[i];
  if (s.reduce > 0) {
    s.tile_red = largest_divisor(s.reduce, p.tile_red);
    s.unroll = largest_divisor(s.tile_red, p.unroll);
  }
  return s;
}

std::string Schedule::str() const {
  std::ostringstream os;
  auto dims = [&](const Dims& d) {
    os << "(";
    for (size_t i = 0; i < d.size(); i++) os << (i ? "," : "") << d[i];
    os << ")";
  };
  os << "out=";
  dims(out_shape);
  os << " reduce=" << reduce << " tile=";
  dims(tile);
  os << " tile_red=" << tile_red << " upcast=" << upcast << " unroll=" << unroll << " local=";
  dims(local);
  os << " groups=";
  dims(groups);
  return os.str();
}

}  // namespace kiln
