// The register-tiled contraction loop: exact linear index analysis over the output grid,
// then MR rows x NR f32x4 accumulators per tile, summed in ridx order (bit-exact without FMA).
#include "backend/wasm/wasm_tiled.h"

#include <algorithm>
#include <unordered_map>

#include "ir/schedule.h"

namespace kiln::wasm {

namespace {

struct Box {
  int64_t mi, mj, mr;  // inclusive maxima of i, j, r (minima are 0)
};

std::pair<int64_t, int64_t> range_of(const LinearIndex& l, const Box& b) {
  int64_t lo = l.c0, hi = l.c0;
  for (auto [c, m] : {std::pair{l.ci, b.mi}, std::pair{l.cj, b.mj}, std::pair{l.cr, b.mr}}) {
    lo += std::min<int64_t>(0, c * m);
    hi += std::max<int64_t>(0, c * m);
  }
  return {lo, hi};
}

int64_t floordiv(int64_t a, int64_t c) { return a >= 0 ? a / c : -((-a + c - 1) / c); }

// The linear form of an int32 index over the grid, exactly (floor division and mod by a
// constant only when the remainder part provably stays in [0, c) over the whole grid).
struct Linearizer {
  int64_t n;
  Box box;
  std::unordered_map<const AluNode*, std::optional<LinearIndex>> memo;
  static constexpr int64_t kBig = int64_t(1) << 40;  // coefficients beyond this: give up

  std::optional<LinearIndex> of(const AluExp& e) {
    auto it = memo.find(e.get());
    if (it != memo.end()) return it->second;
    auto r = compute(e);
    if (r && (std::abs(r->c0) > kBig || std::abs(r->ci) > kBig || std::abs(r->cj) > kBig ||
              std::abs(r->cr) > kBig))
      r.reset();
    return memo[e.get()] = r;
  }

  std::optional<LinearIndex> compute(const AluExp& e) {
    const AluNode& nd = e.node();
    if (nd.dtype != DType::Int32) return std::nullopt;
    if (nd.op == AluOp::Const) return LinearIndex{int64_t(nd.value), 0, 0, 0};
    if (nd.op == AluOp::Var) {
      if (nd.arg == int(VarId::Gidx)) return LinearIndex{0, n, 1, 0};
      if (nd.arg == int(VarId::Ridx)) return LinearIndex{0, 0, 0, 1};
      return std::nullopt;
    }
    if (nd.src.size() != 2) return std::nullopt;
    auto a = of(nd.src[0]), b = of(nd.src[1]);
    if (!a || !b) return std::nullopt;
    auto is_c = [](const LinearIndex& l) { return l.ci == 0 && l.cj == 0 && l.cr == 0; };
    switch (nd.op) {
      case AluOp::Add: return LinearIndex{a->c0 + b->c0, a->ci + b->ci, a->cj + b->cj, a->cr + b->cr};
      case AluOp::Sub: return LinearIndex{a->c0 - b->c0, a->ci - b->ci, a->cj - b->cj, a->cr - b->cr};
      case AluOp::Mul: {
        if (!is_c(*a) && !is_c(*b)) return std::nullopt;
        const LinearIndex& x = is_c(*a) ? *b : *a;
        int64_t c = is_c(*a) ? a->c0 : b->c0;
        return LinearIndex{x.c0 * c, x.ci * c, x.cj * c, x.cr * c};
      }
      case AluOp::Idiv:
      case AluOp::Mod: {
        if (!is_c(*b) || b->c0 <= 0) return std::nullopt;
        const int64_t c = b->c0;
        LinearIndex q, r;
        q.c0 = floordiv(a->c0, c);
        r.c0 = a->c0 - q.c0 * c;
        auto split = [&](int64_t coef, int64_t& qc, int64_t& rc) {
          if (coef % c == 0) qc = coef / c;
          else rc = coef;
        };
        split(a->ci, q.ci, r.ci);
        split(a->cj, q.cj, r.cj);
        split(a->cr, q.cr, r.cr);
        auto [lo, hi] = range_of(r, box);
        if (lo < 0 || hi >= c) return std::nullopt;
        return nd.op == AluOp::Idiv ? q : r;
      }
      default: return std::nullopt;
    }
  }
};

}  // namespace

std::optional<Contraction> find_contraction(const Kernel& k) {
  if (!k.reduction || k.reduction->op != AluOp::Add || k.reduction->size <= 0) return std::nullopt;
  if (k.exp.dtype() != DType::Float32 || k.out_dtype() != DType::Float32) return std::nullopt;
  if (k.exp.op() != AluOp::Mul) return std::nullopt;
  const AluExp &x = k.exp.src(0), &y = k.exp.src(1);
  if (x.op() != AluOp::Load || y.op() != AluOp::Load) return std::nullopt;
  // The scheduler finds (M, N) from how the body indexes gidx.
  Schedule s = schedule_kernel(k, ScheduleParams::wasm());
  if (s.out_shape.size() != 2 || s.out_shape[1] % 4 != 0) return std::nullopt;
  Contraction c;
  c.m = s.out_shape[0];
  c.n = s.out_shape[1];
  c.k = k.reduction->size;
  Box box{c.m - 1, c.n - 1, c.k - 1};
  Linearizer lin{c.n, box, {}};
  auto lx = lin.of(x.src(0)), ly = lin.of(y.src(0));
  if (!lx || !ly) return std::nullopt;
  auto is_a = [](const LinearIndex& l) { return l.cj == 0 && l.ci >= 0; };
  auto is_b = [](const LinearIndex& l) { return l.cj == 1 && l.ci == 0; };
  if (is_a(*lx) && is_b(*ly)) {
    c.a_arg = x.node().arg, c.a = *lx, c.b_arg = y.node().arg, c.b = *ly;
  } else if (is_a(*ly) && is_b(*lx)) {
    c.a_arg = y.node().arg, c.a = *ly, c.b_arg = x.node().arg, c.b = *lx;
  } else {
    return std::nullopt;
  }
  std::tie(c.a_lo, c.a_hi) = range_of(c.a, box);
  std::tie(c.b_lo, c.b_hi) = range_of(c.b, box);
  if (c.a_lo < 0 || c.b_lo < 0 || c.a_hi >= INT32_MAX / 4 || c.b_hi >= INT32_MAX / 4) return std::nullopt;
  return c;
}

bool pack_pays(const Contraction& c) { return c.m >= 16 && c.k * c.n > 256 * 256; }

void emit_tiled(KernelEmitter& ke, SimdEmitter& se, const Contraction& ct, const TileShape& t,
                const std::function<void(uint32_t, uint32_t)>& generic) {
  using V = ValType;
  CodeBuilder& c = ke.code();
  OpEmitter& e = ke.ops();
  const int MR = t.rows, NR = t.vecs;
  const int32_t N = int32_t(ct.n), N4 = int32_t(ct.n - ct.n % (4 * NR));
  auto L = [&] { return c.add_local(V::I32); };
  const uint32_t ra = L(), rb = L(), rt0 = L(), rt1 = L(), i0 = L(), j0 = L(), pa = L(), pb = L(),
                 r = L(), seg = L(), nseg = L(), sb = L(), sen = L();
  const uint32_t B = KernelEmitter::kBegin, E = KernelEmitter::kEnd;
  // Whole rows of [begin, end): [ra, rb); tiled rows [rt0, rt1), a multiple of MR.
  c.local_get(B), c.i32_const(N - 1), c.op(op::I32Add), c.i32_const(N), c.op(op::I32DivU), c.local_set(ra);
  c.local_get(E), c.i32_const(N), c.op(op::I32DivU), c.local_set(rb);
  c.local_get(ra), c.local_set(rt0);
  // rt1 = ra + MR * ((rb - ra) / MR) when rb > ra and every load is in bounds, else ra.
  c.local_get(ra);
  c.local_get(rb), c.local_get(ra), c.op(op::I32Sub), c.i32_const(MR), c.op(op::I32DivS);
  c.i32_const(MR), c.op(op::I32Mul), c.op(op::I32Add);
  c.local_get(ra);
  c.local_get(rb), c.local_get(ra), c.op(op::I32GtS);
  c.i32_const(int32_t(ct.a_hi)), c.local_get(ke.count_local(ct.a_arg)), c.op(op::I32LtS), c.op(op::I32And);
  c.i32_const(int32_t(ct.b_hi)), c.local_get(ke.count_local(ct.b_arg)), c.op(op::I32LtS), c.op(op::I32And);
  c.op(op::Select);
  c.local_set(rt1);

  std::vector<uint32_t> acc(static_cast<size_t>(MR * NR)), bv(static_cast<size_t>(NR));
  for (auto& a : acc) a = c.add_local(V::V128);
  for (auto& b : bv) b = c.add_local(V::V128);
  const uint32_t av = c.add_local(V::V128);

  // Cache blocks: column panels of NC (the B panel stays in cache across all rows) and
  // reduction blocks of KC; partial sums go through the output (float32, so exact) and the
  // epilogue runs after the last block.
  const int32_t NC = int32_t(std::max<int64_t>(4 * NR, t.panel / (4 * NR) * (4 * NR)));
  const int32_t KC = int32_t(std::max(1, t.kblock));
  const int32_t K = int32_t(ct.k);
  const uint32_t jb = L(), je = L(), kb = L(), kn = L(), po = L(), scratch = L();
  if (N4 > 0) {
    if (t.pack) {
      c.i32_const(4 * std::min(NC, N4) * std::min(KC, K));
      e.call_builtin(Builtin::Scratch);
      c.local_set(scratch);
    }
    c.i32_const(0), c.local_set(jb);
    c.loop();  // jb
    c.local_get(jb), c.i32_const(NC), c.op(op::I32Add), c.local_tee(je);
    c.i32_const(N4), c.local_get(je), c.i32_const(N4), c.op(op::I32LtS), c.op(op::Select), c.local_set(je);
    c.i32_const(0), c.local_set(kb);
    c.loop();  // kb
    // kn = min(KC, K - kb)
    c.i32_const(K), c.local_get(kb), c.op(op::I32Sub), c.local_tee(kn);
    c.i32_const(KC), c.local_get(kn), c.i32_const(KC), c.op(op::I32LtS), c.op(op::Select), c.local_set(kn);
    if (t.pack) {
      // Strip s of the block (columns jb + 4 NR s ..) goes to scratch + 4 (4 NR s) kn, row r at
      // 16 NR r: the tile then reads B sequentially. Skipped when no row is tiled (rt1 == rt0:
      // short operands, or a range with no whole rows), so the loads stay in bounds.
      c.local_get(rt1), c.local_get(rt0), c.op(op::I32GtS);
      c.if_();
      c.local_get(jb), c.local_set(j0);
      c.loop();  // strips
      c.local_get(ke.ptr_local(ct.b_arg));
      c.local_get(j0), c.local_get(kb), c.i32_const(int32_t(ct.b.cr)), c.op(op::I32Mul), c.op(op::I32Add);
      c.i32_const(int32_t(ct.b.c0)), c.op(op::I32Add), c.i32_const(2), c.op(op::I32Shl);
      c.op(op::I32Add), c.local_set(pb);
      c.local_get(scratch);
      c.local_get(j0), c.local_get(jb), c.op(op::I32Sub), c.local_get(kn), c.op(op::I32Mul);
      c.i32_const(2), c.op(op::I32Shl), c.op(op::I32Add), c.local_set(po);
      c.local_get(kn), c.local_set(r);
      c.loop();  // rows of the strip
      for (int b = 0; b < NR; b++) {
        c.local_get(po), c.local_get(pb), c.simd_mem(simd::V128Load, 2, uint32_t(16 * b));
        c.simd_mem(simd::V128Store, 2, uint32_t(16 * b));
      }
      c.local_get(pb), c.i32_const(int32_t(4 * ct.b.cr)), c.op(op::I32Add), c.local_set(pb);
      c.local_get(po), c.i32_const(16 * NR), c.op(op::I32Add), c.local_set(po);
      c.local_get(r), c.i32_const(1), c.op(op::I32Sub), c.local_tee(r), c.br_if(0);
      c.end();
      c.local_get(j0), c.i32_const(4 * NR), c.op(op::I32Add), c.local_tee(j0);
      c.local_get(je), c.op(op::I32LtS), c.br_if(0);
      c.end();
      c.end();
    }
    c.local_get(rt0), c.local_set(i0);
    c.block();
    c.local_get(i0), c.local_get(rt1), c.op(op::I32GeS), c.br_if(0);
    c.loop();  // i0
    c.local_get(jb), c.local_set(j0);
    c.loop();  // j0
    auto out_row = [&](int a) {  // po = out + 4 ((i0 + a) N + j0)
      c.local_get(ke.out_ptr_local());
      c.local_get(i0), c.i32_const(a), c.op(op::I32Add), c.i32_const(N), c.op(op::I32Mul);
      c.local_get(j0), c.op(op::I32Add), c.i32_const(2), c.op(op::I32Shl), c.op(op::I32Add);
      c.local_set(po);
    };
    c.local_get(kb), c.op(op::I32Eqz);
    c.if_();
    for (auto x : acc) {
      e.emit_const(DType::Float32, Reduction::identity(AluOp::Add, DType::Float32));
      c.simd(simd::F32x4Splat), c.local_set(x);
    }
    c.else_();
    for (int a = 0; a < MR; a++) {
      out_row(a);
      for (int b = 0; b < NR; b++)
        c.local_get(po), c.simd_mem(simd::V128Load, 2, uint32_t(16 * b)), c.local_set(acc[size_t(a * NR + b)]);
    }
    c.end();
    // pa = ptr_a + 4 (a.c0 + a.ci i0 + a.cr kb), pb = ptr_b + 4 (b.c0 + j0 + b.cr kb)
    c.local_get(ke.ptr_local(ct.a_arg));
    c.local_get(i0), c.i32_const(int32_t(ct.a.ci)), c.op(op::I32Mul);
    c.local_get(kb), c.i32_const(int32_t(ct.a.cr)), c.op(op::I32Mul), c.op(op::I32Add);
    c.i32_const(int32_t(ct.a.c0)), c.op(op::I32Add), c.i32_const(2), c.op(op::I32Shl), c.op(op::I32Add);
    c.local_set(pa);
    if (t.pack) {  // pb = scratch + 4 (j0 - jb) kn
      c.local_get(scratch);
      c.local_get(j0), c.local_get(jb), c.op(op::I32Sub), c.local_get(kn), c.op(op::I32Mul);
      c.i32_const(2), c.op(op::I32Shl), c.op(op::I32Add), c.local_set(pb);
    } else {
      c.local_get(ke.ptr_local(ct.b_arg));
      c.local_get(j0), c.local_get(kb), c.i32_const(int32_t(ct.b.cr)), c.op(op::I32Mul), c.op(op::I32Add);
      c.i32_const(int32_t(ct.b.c0)), c.op(op::I32Add), c.i32_const(2), c.op(op::I32Shl);
      c.op(op::I32Add), c.local_set(pb);
    }
    c.local_get(kn), c.local_set(r);
    c.loop();  // r
    for (int b = 0; b < NR; b++) {
      c.local_get(pb), c.simd_mem(simd::V128Load, 2, uint32_t(16 * b)), c.local_set(bv[size_t(b)]);
    }
    for (int a = 0; a < MR; a++) {
      c.local_get(pa), c.simd_mem(simd::V128Load32Splat, 2, uint32_t(4 * a * ct.a.ci)), c.local_set(av);
      for (int b = 0; b < NR; b++) {
        uint32_t ac = acc[size_t(a * NR + b)];
        if (t.fma) {
          c.local_get(av), c.local_get(bv[size_t(b)]), c.local_get(ac), c.simd(simd::F32x4RelaxedMadd);
        } else {
          c.local_get(ac), c.local_get(av), c.local_get(bv[size_t(b)]), c.simd(simd::F32x4Mul);
          c.simd(simd::F32x4Add);
        }
        c.local_set(ac);
      }
    }
    c.local_get(pa), c.i32_const(int32_t(4 * ct.a.cr)), c.op(op::I32Add), c.local_set(pa);
    c.local_get(pb), c.i32_const(t.pack ? 16 * NR : int32_t(4 * ct.b.cr)), c.op(op::I32Add), c.local_set(pb);
    c.local_get(r), c.i32_const(1), c.op(op::I32Sub), c.local_tee(r), c.br_if(0);
    c.end();
    // After the last reduction block: the fused epilogue per block, at gidx = (i0 + a) N + j0 + 4 b.
    c.local_get(kb), c.local_get(kn), c.op(op::I32Add), c.i32_const(K), c.op(op::I32GeS);
    c.if_();
    for (int a = 0; a < MR; a++)
      for (int b = 0; b < NR; b++) {
        c.local_get(i0), c.i32_const(a), c.op(op::I32Add), c.i32_const(N), c.op(op::I32Mul);
        c.local_get(j0), c.op(op::I32Add), c.i32_const(4 * b), c.op(op::I32Add);
        c.local_set(ke.gidx_local());
        se.emit_epilogue_and_store(acc[size_t(a * NR + b)]);
      }
    c.else_();
    for (int a = 0; a < MR; a++) {
      out_row(a);
      for (int b = 0; b < NR; b++)
        c.local_get(po), c.local_get(acc[size_t(a * NR + b)]), c.simd_mem(simd::V128Store, 2, uint32_t(16 * b));
    }
    c.end();
    c.local_get(j0), c.i32_const(4 * NR), c.op(op::I32Add), c.local_tee(j0);
    c.local_get(je), c.op(op::I32LtS), c.br_if(0);
    c.end();  // j0
    c.local_get(i0), c.i32_const(MR), c.op(op::I32Add), c.local_tee(i0);
    c.local_get(rt1), c.op(op::I32LtS), c.br_if(0);
    c.end();  // i0
    c.end();
    c.local_get(kb), c.i32_const(KC), c.op(op::I32Add), c.local_tee(kb);
    c.i32_const(K), c.op(op::I32LtS), c.br_if(0);
    c.end();  // kb
    c.local_get(jb), c.i32_const(NC), c.op(op::I32Add), c.local_tee(jb);
    c.i32_const(N4), c.op(op::I32LtS), c.br_if(0);
    c.end();  // jb
  }

  // What the tiles did not cover: [begin, rt0 N), the column tail of each tiled row, and
  // [rt1 N, end), as segments 0, 1 .. rt1 - rt0, and the last.
  c.i32_const(2);
  if (N4 < N) c.local_get(rt1), c.local_get(rt0), c.op(op::I32Sub), c.op(op::I32Add);
  c.local_set(nseg);
  c.i32_const(0), c.local_set(seg);
  c.loop();
  c.local_get(seg), c.op(op::I32Eqz);
  c.if_();
  {  // [begin, min(rt0 N, end))
    c.local_get(B), c.local_set(sb);
    c.local_get(rt0), c.i32_const(N), c.op(op::I32Mul), c.local_set(sen);
    c.local_get(sen), c.local_get(E), c.local_get(sen), c.local_get(E), c.op(op::I32LtS);
    c.op(op::Select), c.local_set(sen);
  }
  c.else_();
  c.local_get(seg), c.i32_const(1), c.op(op::I32Add), c.local_get(nseg), c.op(op::I32Eq);
  c.if_();
  {  // [rt1 N, end)
    c.local_get(rt1), c.i32_const(N), c.op(op::I32Mul), c.local_set(sb);
    c.local_get(E), c.local_set(sen);
  }
  c.else_();
  {  // row rt0 + seg - 1: [row N + N4, row N + N)
    c.local_get(rt0), c.local_get(seg), c.op(op::I32Add), c.i32_const(1), c.op(op::I32Sub);
    c.i32_const(N), c.op(op::I32Mul), c.local_tee(sb);
    c.i32_const(N), c.op(op::I32Add), c.local_set(sen);
    c.local_get(sb), c.i32_const(N4), c.op(op::I32Add), c.local_set(sb);
  }
  c.end();
  c.end();
  generic(sb, sen);
  c.local_get(seg), c.i32_const(1), c.op(op::I32Add), c.local_tee(seg);
  c.local_get(nseg), c.op(op::I32LtS), c.br_if(0);
  c.end();
}

}  // namespace kiln::wasm
