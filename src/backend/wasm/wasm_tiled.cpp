// The register-tiled contraction loop over batch x rows x columns (ir/contraction.h):
// MR rows x NR f32x4 accumulators per tile, summed in ridx order (bit-exact without FMA).
// Factors not read in place are evaluated into scratch per cache block.
#include "backend/wasm/wasm_tiled.h"

#include <algorithm>
#include <unordered_set>

namespace kiln::wasm {

namespace {
// A packed factor's nodes that read ridx but not gidx (a convolution window's channel and
// kernel offsets, a filter gradient's image and pixel) have one value per reduction step for
// every row or column. The int32 ones are computed once per cache block into a table, a row
// of `saved` per step, which each row's or column group's loop then reads instead of
// recomputing them.
struct StepTable {
  DagPlan fill;                       // the ridx-only nodes, computed per step to fill it
  std::vector<const AluNode*> saved;  // those the rest of the factor reads: the columns
  DagPlan rest;                       // level-2 nodes still computed per group and step
};

StepTable plan_step_table(const DagPlan& plan, const AluNode* root, const SimdEmitter& se) {
  std::unordered_set<const AluNode*> reads_gidx;
  for (const AluNode* n : plan.nodes) {
    bool g = n->op == AluOp::Var && n->arg != int(VarId::Ridx);
    for (auto& src : n->src) g = g || reads_gidx.count(src.get());
    if (g) reads_gidx.insert(n);
  }
  auto step_only = [&](const AluNode* n) { return plan.level.at(n) == 2 && !reads_gidx.count(n); };
  auto tabled = [&](const AluNode* n) {  // an int32 scalar (index arithmetic, bools)
    return step_only(n) && n->op != AluOp::Var && se.info(n).kind == LaneKind::Uniform &&
           storage(n->dtype) == ValType::I32;
  };
  std::unordered_set<const AluNode*> saved;
  for (const AluNode* n : plan.nodes)
    if (!step_only(n))
      for (auto& src : n->src)
        if (tabled(src.get())) saved.insert(src.get());
  if (tabled(root)) saved.insert(root);
  // What each part needs, walking uses before sources: the fill computes the saved nodes and
  // their sources, the rest what the root reads through nodes that are not saved.
  std::unordered_set<const AluNode*> fill(saved.begin(), saved.end()), rest{root};
  for (auto it = plan.nodes.rbegin(); it != plan.nodes.rend(); ++it)
    for (auto& src : (*it)->src) {
      if (fill.count(*it)) fill.insert(src.get());
      if (rest.count(*it) && !saved.count(*it)) rest.insert(src.get());
    }
  StepTable t;
  t.fill.level = t.rest.level = plan.level;
  for (const AluNode* n : plan.nodes) {  // plan order: sources first
    if (plan.level.at(n) != 2) continue;
    if (saved.count(n)) t.saved.push_back(n);
    if (fill.count(n)) t.fill.nodes.push_back(n);
    if (rest.count(n) && !saved.count(n)) t.rest.nodes.push_back(n);
  }
  return t;
}
}  // namespace

std::optional<ContractionShape> find_contraction(const Kernel& k) {
  if (k.exp.dtype() != DType::Float32 || k.out_dtype() != DType::Float32) return std::nullopt;
  if (k.size >= INT32_MAX / 4) return std::nullopt;
  auto c = analyze_contraction(k);
  if (!c || c->n < 4) return std::nullopt;
  // In place means unchecked loads at pointer + 4 * index with row offsets as immediates.
  for (ContractionOperand* op : {&c->a, &c->b})
    if (op->linear && (op->lo < 0 || op->hi >= INT32_MAX / 4 || op->ci < 0)) op->linear = false;
  return c;
}

bool pack_pays(const ContractionShape& c) {
  return !b_in_place(c) || (c.m >= 16 && c.k * c.n > 256 * 256);
}

void emit_tiled(KernelEmitter& ke, SimdEmitter& se, const ContractionShape& ct, const TileShape& t,
                const std::function<void(uint32_t, uint32_t)>& generic) {
  using V = ValType;
  CodeBuilder& c = ke.code();
  OpEmitter& e = ke.ops();
  const ContractionOperand &A = ct.a, &Bf = ct.b;
  const int MR = t.rows, NR = t.vecs;
  const int32_t N = int32_t(ct.n), MN = int32_t(ct.m * ct.n), K = int32_t(ct.k);
  const int32_t N4 = int32_t(ct.n - ct.n % (4 * NR));
  const bool a_pack = !a_in_place(ct), b_expr = !b_in_place(ct), pack = t.pack || b_expr;
  // A factor evaluated into scratch: its own DAG (nodes shared with the body), computed at
  // gidx of the element's row (A) or column (B) and row or column 0 of the other.
  const DagPlan plan_a = a_pack ? DagPlan::of(A.factor) : DagPlan{};
  const DagPlan plan_b = b_expr ? DagPlan::of(Bf.factor) : DagPlan{};
  const bool b_simd = N % 4 == 0;  // 4 consecutive columns are 4 consecutive gidx from a multiple of 4
  const StepTable tab_a = a_pack ? plan_step_table(plan_a, A.factor.get(), se) : StepTable{};
  const StepTable tab_b = b_expr ? plan_step_table(plan_b, Bf.factor.get(), se) : StepTable{};
  const int32_t nta = int32_t(tab_a.saved.size()), ntb = int32_t(tab_b.saved.size());
  auto L = [&] { return c.add_local(V::I32); };
  const uint32_t bt = L(), boff = L(), lo = L(), hi = L(), ra = L(), rb = L(), rt0 = L(), rt1 = L(),
                 i0 = L(), j0 = L(), pa = L(), pb = L(), r = L(), seg = L(), nseg = L(), sb = L(),
                 sen = L(), ai = L(), sta = L(), stb = L(), pt = L();
  const uint32_t B = KernelEmitter::kBegin, E = KernelEmitter::kEnd, G = ke.gidx_local(), R = ke.ridx_local();
  auto get = [&](uint32_t l) { c.local_get(l); };
  auto add = [&] { c.op(op::I32Add); };
  auto mul_c = [&](int64_t v) { c.i32_const(int32_t(v)), c.op(op::I32Mul); };
  auto add_c = [&](int64_t v) { if (v) c.i32_const(int32_t(v)), c.op(op::I32Add); };
  auto bytes = [&] { c.i32_const(2), c.op(op::I32Shl); };
  auto min_into = [&](uint32_t dst, uint32_t x, uint32_t y) {  // dst = min(x, y)
    get(x), get(y), get(x), get(y), c.op(op::I32LtS), c.op(op::Select), c.local_set(dst);
  };
  auto min_c = [&](uint32_t l, int32_t v) {  // l = min(l, v)
    get(l), c.i32_const(v), get(l), c.i32_const(v), c.op(op::I32LtS), c.op(op::Select), c.local_set(l);
  };
  auto incr_loop = [&](uint32_t l, int32_t step, const std::function<void()>& push_bound) {
    get(l), c.i32_const(step), add(), c.local_tee(l);
    push_bound();
    c.op(op::I32LtS), c.br_if(0);
  };
  // Step tables: pt walks one table's rows, from `base` for the block's first step.
  auto table_start = [&](const StepTable& t, uint32_t base) {
    if (!t.saved.empty()) get(base), c.local_set(pt);
  };
  auto table_next = [&](const StepTable& t) {
    if (!t.saved.empty()) get(pt), add_c(4 * int64_t(t.saved.size())), c.local_set(pt);
  };
  auto table_read = [&](const StepTable& t) {  // into the scalar emitter's locals
    for (size_t i = 0; i < t.saved.size(); i++) get(pt), c.mem(op::I32Load, 2, uint32_t(4 * i)), ke.assign(t.saved[i]);
  };

  std::vector<uint32_t> acc(static_cast<size_t>(MR * NR)), bv(static_cast<size_t>(NR));
  for (auto& a : acc) a = c.add_local(V::V128);
  for (auto& b : bv) b = c.add_local(V::V128);
  const uint32_t av = c.add_local(V::V128);

  // Cache blocks: column panels of NC (the B panel stays in cache across all rows) and
  // reduction blocks of KC; partial sums go through the output (float32, so exact) and the
  // epilogue runs after the last block.
  const int32_t NC = int32_t(std::max<int64_t>(4 * NR, t.panel / (4 * NR) * (4 * NR)));
  const int32_t KC = int32_t(std::max(1, t.kblock));
  const int32_t ncb = std::min(NC, N4), kcb = std::min(KC, K);
  const uint32_t jb = L(), je = L(), kb = L(), kn = L(), po = L(), scratch = L(), sa = L();
  auto strip_base = [&] {  // pushes scratch + 4 (j0 - jb) kn: the packed strip at column j0
    get(scratch), get(j0), get(jb), c.op(op::I32Sub), get(kn), c.op(op::I32Mul), bytes(), add();
  };
  if (N4 > 0 && (pack || a_pack)) {
    // B's block at scratch, then A's MR x KC panel, then B's and A's step tables.
    c.i32_const(4 * ((pack ? ncb * kcb : 0) + (a_pack ? MR * kcb : 0) + (ntb + nta) * kcb));
    e.call_builtin(Builtin::Scratch);
    c.local_tee(scratch);
    add_c(pack ? 4 * ncb * kcb : 0);
    c.local_tee(sa);
    add_c(a_pack ? 4 * MR * kcb : 0);
    c.local_tee(stb);
    add_c(4 * ntb * kcb);
    c.local_set(sta);
  }
  // In the SIMD evaluation of B, each saved node reads its column of the row at pt.
  for (int32_t i = 0; i < ntb; i++)
    se.bind_uniform(tab_b.saved[size_t(i)], [&c, pt, i] { c.local_get(pt), c.mem(op::I32Load, 2, uint32_t(4 * i)); });
  auto table_fill = [&](const StepTable& t, uint32_t base) {  // rows for steps kb .. kb + kn
    if (t.saved.empty()) return;
    table_start(t, base);
    c.i32_const(0), c.local_set(r);
    c.loop();
    get(kb), get(r), add(), c.local_set(R);
    ke.compute_level(t.fill, 2);
    for (size_t i = 0; i < t.saved.size(); i++) get(pt), ke.val(t.saved[i]).push(), c.mem(op::I32Store, 2, uint32_t(4 * i));
    table_next(t);
    incr_loop(r, 1, [&] { get(kn); });
    c.end();
  };

  // One pass per batch that [begin, end) touches, on batch-local gidx [lo, hi).
  get(B), c.i32_const(MN), c.op(op::I32DivU), c.local_set(bt);
  c.loop();  // batches
  get(bt), mul_c(MN), c.local_set(boff);
  get(B), get(boff), c.op(op::I32Sub), c.local_set(lo);
  c.i32_const(0), get(lo), get(lo), c.i32_const(0), c.op(op::I32LtS), c.op(op::Select), c.local_set(lo);
  get(E), get(boff), c.op(op::I32Sub), c.local_set(hi);
  c.i32_const(MN), get(hi), get(hi), c.i32_const(MN), c.op(op::I32GtS), c.op(op::Select), c.local_set(hi);
  // Whole rows of [lo, hi): [ra, rb); tiled rows [rt0, rt1), a multiple of MR.
  get(lo), add_c(N - 1), c.i32_const(N), c.op(op::I32DivU), c.local_set(ra);
  get(hi), c.i32_const(N), c.op(op::I32DivU), c.local_set(rb);
  get(ra), c.local_set(rt0);
  // rt1 = ra + MR * ((rb - ra) / MR) when rb > ra and every in-place load is in bounds, else ra.
  get(ra);
  get(rb), get(ra), c.op(op::I32Sub), c.i32_const(MR), c.op(op::I32DivS), mul_c(MR), add();
  get(ra);
  get(rb), get(ra), c.op(op::I32GtS);
  if (!a_pack) c.i32_const(int32_t(A.hi)), get(ke.count_local(A.arg)), c.op(op::I32LtS), c.op(op::I32And);
  if (!b_expr) c.i32_const(int32_t(Bf.hi)), get(ke.count_local(Bf.arg)), c.op(op::I32LtS), c.op(op::I32And);
  c.op(op::Select);
  c.local_set(rt1);

  if (N4 > 0) {
    c.i32_const(0), c.local_set(jb);
    c.loop();  // jb
    get(jb), add_c(NC), c.local_set(je);
    min_c(je, N4);
    c.i32_const(0), c.local_set(kb);
    c.loop();  // kb
    c.i32_const(K), get(kb), c.op(op::I32Sub), c.local_set(kn);
    min_c(kn, KC);
    if (pack) {
      // Strip s of the block (columns jb + 4 NR s ..) goes to scratch + 4 (4 NR s) kn, row r at
      // 16 NR r: the tile then reads B sequentially. Skipped when no row is tiled (rt1 == rt0:
      // short operands, or a range with no whole rows), so in-place loads stay in bounds.
      get(rt1), get(rt0), c.op(op::I32GtS);
      c.if_();
      table_fill(tab_b, stb);
      get(jb), c.local_set(j0);
      c.loop();  // strips
      if (!b_expr) {
        get(ke.ptr_local(Bf.arg));
        get(j0), get(kb), mul_c(Bf.cr), add(), get(bt), mul_c(Bf.cb), add(), add_c(Bf.c0), bytes();
        add(), c.local_set(pb);
        strip_base(), c.local_set(po);
        get(kn), c.local_set(r);
        c.loop();  // rows of the strip
        for (int b = 0; b < NR; b++) {
          get(po), get(pb), c.simd_mem(simd::V128Load, 2, uint32_t(16 * b));
          c.simd_mem(simd::V128Store, 2, uint32_t(16 * b));
        }
        get(pb), add_c(4 * Bf.cr), c.local_set(pb);
        get(po), add_c(16 * NR), c.local_set(po);
        get(r), c.i32_const(1), c.op(op::I32Sub), c.local_tee(r), c.br_if(0);
        c.end();
      } else {
        // B evaluated at row 0 of the batch (it does not read the row): per column group,
        // the column-only part once, then each reduction step.
        const int groups = b_simd ? NR : 4 * NR;
        for (int v = 0; v < groups; v++) {
          get(boff), get(j0), add(), add_c(b_simd ? 4 * v : v), c.local_set(G);
          if (b_simd) se.compute_sub(plan_b, 1);
          else ke.compute_level(plan_b, 1);
          strip_base(), add_c(b_simd ? 16 * v : 4 * v), c.local_set(po);
          table_start(tab_b, stb);
          c.i32_const(0), c.local_set(r);
          c.loop();  // reduction steps of the block
          get(kb), get(r), add(), c.local_set(R);
          if (b_simd) {
            se.compute_sub(tab_b.rest, 2);
            get(po), se.push_value(Bf.factor.get()), c.simd_mem(simd::V128Store, 2);
          } else {
            table_read(tab_b);
            ke.compute_level(tab_b.rest, 2);
            e.emit_store(DType::Float32, [&] { get(po); }, ke.val(Bf.factor.get()));
          }
          table_next(tab_b);
          get(po), add_c(16 * NR), c.local_set(po);
          incr_loop(r, 1, [&] { get(kn); });
          c.end();
        }
      }
      incr_loop(j0, 4 * NR, [&] { get(je); });
      c.end();
      c.end();
    }
    get(rt0), c.local_set(i0);
    c.block();
    get(i0), get(rt1), c.op(op::I32GeS), c.br_if(0);
    table_fill(tab_a, sta);
    c.loop();  // i0
    if (a_pack) {
      // A's rows i0 .. i0 + MR - 1 of this reduction block, MR values per step.
      c.i32_const(0), c.local_set(ai);
      c.loop();
      get(boff), get(i0), get(ai), add(), mul_c(N), add(), c.local_set(G);
      ke.compute_level(plan_a, 1);
      get(sa), get(ai), bytes(), add(), c.local_set(po);
      table_start(tab_a, sta);
      c.i32_const(0), c.local_set(r);
      c.loop();
      get(kb), get(r), add(), c.local_set(R);
      table_read(tab_a);
      ke.compute_level(tab_a.rest, 2);
      e.emit_store(DType::Float32, [&] { get(po); }, ke.val(A.factor.get()));
      table_next(tab_a);
      get(po), add_c(4 * MR), c.local_set(po);
      incr_loop(r, 1, [&] { get(kn); });
      c.end();
      incr_loop(ai, 1, [&] { c.i32_const(MR); });
      c.end();
    }
    get(jb), c.local_set(j0);
    c.loop();  // j0
    auto out_row = [&](int a) {  // po = out + 4 (boff + (i0 + a) N + j0)
      get(ke.out_ptr_local());
      get(i0), add_c(a), mul_c(N), get(j0), add(), get(boff), add(), bytes(), add();
      c.local_set(po);
    };
    get(kb), c.op(op::I32Eqz);
    c.if_();
    for (auto x : acc) {
      e.emit_const(DType::Float32, Reduction::identity(AluOp::Add, DType::Float32));
      c.simd(simd::F32x4Splat), c.local_set(x);
    }
    c.else_();
    for (int a = 0; a < MR; a++) {
      out_row(a);
      for (int b = 0; b < NR; b++)
        get(po), c.simd_mem(simd::V128Load, 2, uint32_t(16 * b)), c.local_set(acc[size_t(a * NR + b)]);
    }
    c.end();
    if (a_pack) {
      get(sa), c.local_set(pa);
    } else {  // pa = ptr_a + 4 (a.c0 + a.cb bt + a.ci i0 + a.cr kb)
      get(ke.ptr_local(A.arg));
      get(i0), mul_c(A.ci), get(kb), mul_c(A.cr), add(), get(bt), mul_c(A.cb), add(), add_c(A.c0), bytes();
      add(), c.local_set(pa);
    }
    if (pack) {
      strip_base(), c.local_set(pb);
    } else {  // pb = ptr_b + 4 (b.c0 + b.cb bt + j0 + b.cr kb)
      get(ke.ptr_local(Bf.arg));
      get(j0), get(kb), mul_c(Bf.cr), add(), get(bt), mul_c(Bf.cb), add(), add_c(Bf.c0), bytes();
      add(), c.local_set(pb);
    }
    const int64_t a_row = a_pack ? 1 : A.ci;  // elements between A's rows, and per step
    const int64_t a_step = a_pack ? MR : A.cr, b_step = pack ? 4 * NR : Bf.cr;
    get(kn), c.local_set(r);
    c.loop();  // r
    for (int b = 0; b < NR; b++) get(pb), c.simd_mem(simd::V128Load, 2, uint32_t(16 * b)), c.local_set(bv[size_t(b)]);
    for (int a = 0; a < MR; a++) {
      get(pa), c.simd_mem(simd::V128Load32Splat, 2, uint32_t(4 * a * a_row)), c.local_set(av);
      for (int b = 0; b < NR; b++) {
        uint32_t ac = acc[size_t(a * NR + b)];
        if (t.fma) {
          get(av), get(bv[size_t(b)]), get(ac), c.simd(simd::F32x4RelaxedMadd);
        } else {
          get(ac), get(av), get(bv[size_t(b)]), c.simd(simd::F32x4Mul);
          c.simd(simd::F32x4Add);
        }
        c.local_set(ac);
      }
    }
    get(pa), add_c(4 * a_step), c.local_set(pa);
    get(pb), add_c(4 * b_step), c.local_set(pb);
    get(r), c.i32_const(1), c.op(op::I32Sub), c.local_tee(r), c.br_if(0);
    c.end();
    // After the last reduction block: the fused epilogue per block, at
    // gidx = boff + (i0 + a) N + j0 + 4 b.
    get(kb), get(kn), add(), c.i32_const(K), c.op(op::I32GeS);
    c.if_();
    for (int a = 0; a < MR; a++)
      for (int b = 0; b < NR; b++) {
        get(i0), add_c(a), mul_c(N), get(j0), add(), get(boff), add(), add_c(4 * b);
        c.local_set(G);
        se.emit_epilogue_and_store(acc[size_t(a * NR + b)]);
      }
    c.else_();
    for (int a = 0; a < MR; a++) {
      out_row(a);
      for (int b = 0; b < NR; b++)
        get(po), get(acc[size_t(a * NR + b)]), c.simd_mem(simd::V128Store, 2, uint32_t(16 * b));
    }
    c.end();
    incr_loop(j0, 4 * NR, [&] { get(je); });
    c.end();  // j0
    incr_loop(i0, MR, [&] { get(rt1); });
    c.end();  // i0
    c.end();
    incr_loop(kb, KC, [&] { c.i32_const(K); });
    c.end();  // kb
    incr_loop(jb, NC, [&] { c.i32_const(N4); });
    c.end();  // jb
  }

  // What the tiles did not cover in this batch: [lo, rt0 N), the column tail of each tiled
  // row, and [rt1 N, hi), as segments 0, 1 .. rt1 - rt0, and the last.
  c.i32_const(2);
  if (N4 < N) get(rt1), get(rt0), c.op(op::I32Sub), add();
  c.local_set(nseg);
  c.i32_const(0), c.local_set(seg);
  c.loop();
  get(seg), c.op(op::I32Eqz);
  c.if_();
  {  // [lo, min(rt0 N, hi))
    get(lo), c.local_set(sb);
    get(rt0), mul_c(N), c.local_set(sen);
    min_into(sen, sen, hi);
  }
  c.else_();
  get(seg), add_c(1), get(nseg), c.op(op::I32Eq);
  c.if_();
  {  // [rt1 N, hi)
    get(rt1), mul_c(N), c.local_set(sb);
    get(hi), c.local_set(sen);
  }
  c.else_();
  {  // row rt0 + seg - 1: [row N + N4, row N + N)
    get(rt0), get(seg), add(), add_c(-1), mul_c(N), c.local_tee(sb);
    add_c(N), c.local_set(sen);
    get(sb), add_c(N4), c.local_set(sb);
  }
  c.end();
  c.end();
  get(sb), get(boff), add(), c.local_set(sb);
  get(sen), get(boff), add(), c.local_set(sen);
  generic(sb, sen);
  incr_loop(seg, 1, [&] { get(nseg); });
  c.end();

  get(bt), add_c(1), c.local_tee(bt);
  mul_c(MN), get(E), c.op(op::I32LtS), c.br_if(0);
  c.end();  // batches
}

}  // namespace kiln::wasm
