// Kernel -> Wasm module: the kernel function's loops (loop-invariant values hoisted out of
// the gidx loop, gidx-only values out of the reduction loop), the imports, the cache key.
#include "backend/wasm/wasm_codegen.h"

#include <cstring>
#include <memory>

#include "backend/wasm/wasm_kernel_emitter.h"
#include "backend/wasm/wasm_simd_emitter.h"
#include "backend/wasm/wasm_tiled.h"
#include "ir/error.h"
#include "ir/index_split.h"
#include "ir/legalize.h"
#include "ir/schedule.h"

namespace kiln::wasm {

using V = ValType;

FuncType builtin_type(Builtin b) {
  if (b <= Builtin::Erf) return {{V::F64}, {V::F64}};
  if (b <= Builtin::FloorMod) return {{V::F64, V::F64}, {V::F64}};
  if (b <= Builtin::IPowU32) return {{V::I32, V::I32}, {V::I32}};
  if (b == Builtin::HalfToFloat) return {{V::I32}, {V::F32}};
  if (b == Builtin::FloatToHalf) return {{V::F32}, {V::I32}};
  if (b == Builtin::Scratch) return {{V::I32}, {V::I32}};
  return {{V::F32}, {V::F32}};
}

const char* builtin_name(Builtin b) {
  static const char* names[] = {
      "exp",   "exp2",  "expm1", "log",      "log2",      "log1p",   "sin",
      "cos",   "tan",   "asin",  "acos",     "atan",      "sinh",    "cosh",
      "tanh",  "asinh", "acosh", "atanh",    "erf",       "pow",     "atan2",
      "floordiv", "floormod", "ipow_i32", "ipow_u32", "half_to_float", "float_to_half",
      "round_half", "scratch"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(Builtin::Count));
  return names[size_t(b)];
}

DagPlan DagPlan::of(const std::vector<AluExp>& roots) {
  DagPlan p;
  for (const AluExp& e : roots) e.visit([&](const AluNode& n) {
    if (p.level.count(&n)) return;
    int lvl = 0;
    if (n.op == AluOp::Const) {
      lvl = -1;
    } else if (n.op == AluOp::Var) {
      lvl = n.arg == int(VarId::Ridx) ? 2 : 1;  // gidx and acc change per output element
    } else {
      for (auto& s : n.src) lvl = std::max(lvl, p.level.at(s.get()));
    }
    p.level[&n] = lvl;
    p.nodes.push_back(&n);
  });
  return p;
}

KernelEmitter::KernelEmitter(const Kernel& k)
    : k_(k), red_(k.reduction.has_value()), body_(DagPlan::of(k.exp)) {
  if (red_) epi_ = DagPlan::of(k.reduction->epilogue);
}

void KernelEmitter::emit_prologue() {
  auto load_arg = [&](uint32_t word) {
    uint32_t l = c_.add_local(V::I32);
    c_.local_get(kArgs);
    c_.mem(op::I32Load, 2, word * 4);
    c_.local_set(l);
    return l;
  };
  out_ptr_ = load_arg(0);
  for (size_t i = 0; i < k_.inputs.size(); i++) {
    ptr_.push_back(load_arg(uint32_t(1 + 2 * i)));
    count_.push_back(load_arg(uint32_t(2 + 2 * i)));
  }
  gidx_ = c_.add_local(V::I32);
  ridx_ = c_.add_local(V::I32);
  acc_ = c_.add_local(storage(k_.exp.dtype()));
}

Val KernelEmitter::val(const AluNode* n) const {
  Val v{n->dtype, false, {}};
  CodeBuilder* c = const_cast<CodeBuilder*>(&c_);
  if (n->op == AluOp::Const) {
    OpEmitter* e = const_cast<OpEmitter*>(&e_);
    DType dt = n->dtype;
    double value = n->value;
    v.wide = const_is_wide(dt, value);
    v.push = [e, dt, value] { e->emit_const(dt, value); };
    return v;
  }
  uint32_t l;
  if (n->op == AluOp::Var) {
    l = n->arg == int(VarId::Gidx) ? gidx_ : n->arg == int(VarId::Ridx) ? ridx_ : acc_;
  } else {
    const Slot& s = slots_.at(n);
    l = s.local;
    v.wide = s.wide;
  }
  v.push = [c, l] { c->local_get(l); };
  return v;
}

void KernelEmitter::compute(const AluNode& n) {
  if (n.op == AluOp::Const || n.op == AluOp::Var) return;
  bool wide = false;
  if (n.op == AluOp::Load) {
    e_.emit_load(n.dtype, ptr_local(n.arg), count_local(n.arg), val(n.src[0].get()));
  } else {
    std::vector<Val> srcs;
    for (auto& s : n.src) srcs.push_back(val(s.get()));
    wide = e_.emit(n.op, n.dtype, srcs);
  }
  set_slot(n, wide);
}

void KernelEmitter::assign(const AluNode* n) { set_slot(*n, false); }

void KernelEmitter::set_slot(const AluNode& n, bool wide) {
  // A node's local keeps its value for the rest of the function (loop iterations
  // recompute it), so locals are per node rather than reused.
  auto it = slots_.find(&n);
  uint32_t l = it != slots_.end() ? it->second.local : c_.add_local(storage(n.dtype, wide));
  c_.local_set(l);
  slots_[&n] = {l, wide};
}

void KernelEmitter::compute_level(const DagPlan& plan, int level) {
  for (const AluNode* n : plan.nodes)
    if (plan.level.at(n) == level) compute(*n);
}

void KernelEmitter::store(const AluNode* result) {
  const DType odt = k_.out_dtype();
  e_.emit_store(odt, [&] {
    c_.local_get(out_ptr_);
    c_.local_get(gidx_);
    int sz = itemsize(odt);
    if (sz > 1) {
      c_.i32_const(sz == 2 ? 1 : sz == 4 ? 2 : 3);
      c_.op(op::I32Shl);
    }
    c_.op(op::I32Add);
  }, val(result));
}

void KernelEmitter::emit_epilogue_and_store() {
  compute_level(epi_, 1);
  store(k_.reduction->epilogue.get());
}

void KernelEmitter::emit_scalar_loop(uint32_t from, uint32_t to) {
  c_.local_get(from);
  c_.local_set(gidx_);
  c_.block();
  c_.local_get(gidx_);
  c_.local_get(to);
  c_.op(op::I32GeS);
  c_.br_if(0);
  c_.loop();
  compute_level(body_, 1);
  const AluNode* result = k_.exp.get();
  if (red_) {
    const Reduction& r = *k_.reduction;
    const DType adt = k_.exp.dtype();
    e_.emit_const(adt, Reduction::identity(r.op, adt));
    c_.local_set(acc_);
    if (r.size > 0) {
      c_.i32_const(0);
      c_.local_set(ridx_);
      c_.loop();
      compute_level(body_, 2);
      Val acc{adt, false, [this] { c_.local_get(acc_); }};
      e_.emit(r.op, adt, {acc, val(k_.exp.get())});
      c_.local_set(acc_);
      c_.local_get(ridx_);
      c_.i32_const(1);
      c_.op(op::I32Add);
      c_.local_tee(ridx_);
      c_.i32_const(int32_t(r.size));
      c_.op(op::I32LtS);
      c_.br_if(0);
      c_.end();
    }
    emit_epilogue_and_store();
  } else {
    store(result);
  }
  c_.local_get(gidx_);
  c_.i32_const(1);
  c_.op(op::I32Add);
  c_.local_tee(gidx_);
  c_.local_get(to);
  c_.op(op::I32LtS);
  c_.br_if(0);
  c_.end();
  c_.end();
}

namespace {

// The module's imports, then its functions in order; `k` is exported.
std::vector<uint8_t> build_module(const std::vector<Builtin>& imports, const std::vector<const CodeBuilder*>& fns,
                                  const CodegenOptions& o) {
  ModuleBuilder mb;
  for (size_t i = 0; i < imports.size(); i++)
    mb.import_function("env", "b" + std::to_string(i), builtin_type(imports[i]));
  // A shared import needs a maximum, and links when the memory's own maximum is at most
  // that: 65536 pages (4 GiB, all of wasm32) fits every core.
  if (o.shared_memory) mb.import_memory("env", "memory", 0, true, 65536);
  else mb.import_memory("env", "memory", 0);
  uint32_t f = 0;
  for (const CodeBuilder* c : fns) f = mb.add_function({{ValType::I32, ValType::I32, ValType::I32}, {}}, *c);
  mb.export_function("k", f);
  return mb.build();
}

// Elements [from, to) as scalar steps up to the first multiple of 4 (`start`, a local of the
// caller's, clamped to `to`), SIMD blocks of 4 from there, then the scalar tail.
void emit_blocked_loop(KernelEmitter& ke, SimdEmitter& se, uint32_t start, uint32_t from, uint32_t to) {
  CodeBuilder& c = ke.code();
  c.local_get(from), c.i32_const(3), c.op(op::I32Add), c.i32_const(-4), c.op(op::I32And);
  c.local_get(to), c.local_get(from), c.i32_const(3), c.op(op::I32Add), c.i32_const(-4);
  c.op(op::I32And), c.local_get(to), c.op(op::I32LtS), c.op(op::Select);
  c.local_set(start);
  ke.emit_scalar_loop(from, start);
  se.emit_loop(start, to);
  ke.emit_scalar_loop(ke.gidx_local(), to);
}

// The elementwise loops of ke's kernel over [begin, end): scalar up to a multiple of 4,
// SIMD blocks where they pay, then the scalar tail. Returns whether the SIMD loop is used.
bool emit_pointwise(KernelEmitter& ke, const CodegenOptions& o) {
  CodeBuilder& c = ke.code();
  ke.emit_prologue();
  ke.compute_level(ke.body(), 0);
  SimdEmitter se(ke);
  if (!(o.simd && se.worthwhile())) {
    ke.emit_scalar_loop(KernelEmitter::kBegin, KernelEmitter::kEnd);
    return false;
  }
  emit_blocked_loop(ke, se, c.add_local(ValType::I32), KernelEmitter::kBegin, KernelEmitter::kEnd);
  return true;
}

// A pointwise kernel split by ranges of gidx (ir/index_split.h): one function per piece, each
// the ordinary elementwise loops over its expression, and `k(args, begin, end)` calling them
// row by row (one row when the split is of the whole index) with [begin, end) clipped to each
// piece's range in the row (a thread's chunk may span several pieces and rows).
CompiledKernel compile_pieces(const Kernel& k, const IndexSplit& split, const CodegenOptions& o) {
  const std::vector<IndexPiece>& pieces = split.pieces;
  CompiledKernel out;
  out.index_pieces = int(pieces.size());
  std::vector<Kernel> kernels(pieces.size(), k);  // the emitters keep references
  std::vector<std::unique_ptr<KernelEmitter>> emitters;
  for (size_t i = 0; i < pieces.size(); i++) {
    kernels[i].exp = pieces[i].exp;
    emitters.push_back(std::make_unique<KernelEmitter>(kernels[i]));
    if (i) emitters[i]->ops().adopt_imports(emitters[i - 1]->ops());
    out.simd_loop |= emit_pointwise(*emitters[i], o);
  }
  out.imports = emitters.back()->ops().imports();
  using KE = KernelEmitter;
  CodeBuilder d(3);
  const uint32_t row = d.add_local(ValType::I32), base = d.add_local(ValType::I32);
  const uint32_t lo = d.add_local(ValType::I32), hi = d.add_local(ValType::I32);
  const int32_t period = int32_t(split.period);
  d.local_get(KE::kBegin), d.i32_const(period), d.op(op::I32DivS), d.local_set(row);
  d.block();
  d.loop();
  d.local_get(row), d.i32_const(period), d.op(op::I32Mul), d.local_tee(base);
  d.local_get(KE::kEnd), d.op(op::I32GeS), d.br_if(1);
  for (size_t i = 0; i < pieces.size(); i++) {
    d.local_get(KE::kBegin), d.local_get(base), d.i32_const(int32_t(pieces[i].lo)), d.op(op::I32Add), d.local_tee(lo);
    d.local_get(KE::kBegin), d.local_get(lo), d.op(op::I32GtS), d.op(op::Select), d.local_set(lo);  // max
    d.local_get(KE::kEnd), d.local_get(base), d.i32_const(int32_t(pieces[i].hi)), d.op(op::I32Add), d.local_tee(hi);
    d.local_get(KE::kEnd), d.local_get(hi), d.op(op::I32LtS), d.op(op::Select), d.local_set(hi);  // min
    d.local_get(lo), d.local_get(hi), d.op(op::I32LtS);
    d.if_();
    d.local_get(KE::kArgs), d.local_get(lo), d.local_get(hi);
    d.call(uint32_t(out.imports.size() + i));
    d.end();
  }
  d.local_get(row), d.i32_const(1), d.op(op::I32Add), d.local_set(row);
  d.br(0);
  d.end();
  d.end();
  std::vector<const CodeBuilder*> fns;
  for (auto& e : emitters) fns.push_back(&e->code());
  fns.push_back(&d);
  out.bytes = build_module(out.imports, fns, o);
  out.grain = out.simd_loop ? 4 : 1;
  return out;
}

}  // namespace

CompiledKernel compile_kernel(const Kernel& original, const CodegenOptions& o) {
  if (original.size > INT32_MAX || (original.reduction && original.reduction->size > INT32_MAX))
    fail("wasm.codegen", "kernel of ", original.size, " elements is too large, expected < 2^31");
  const Kernel k = legalize(original);
  if (auto split = split_index_ranges(k)) return compile_pieces(k, *split, o);
  KernelEmitter ke(k);
  CodeBuilder& c = ke.code();
  ke.emit_prologue();
  ke.compute_level(ke.body(), 0);
  if (ke.epilogue()) ke.compute_level(*ke.epilogue(), 0);
  CompiledKernel out;
  SimdEmitter se(ke);
  const bool simd = o.simd && se.worthwhile();
  // [from, to): scalar up to a multiple of 4, SIMD blocks, then the scalar tail.
  const uint32_t start = simd ? c.add_local(ValType::I32) : 0;
  out.simd_loop = simd;
  if (simd) out.reduction_unroll = se.reduction_unroll();
  if (simd) out.reduction_groups = se.reduction_groups();
  auto generic = [&](uint32_t from, uint32_t to) {
    if (!simd) return ke.emit_scalar_loop(from, to);
    emit_blocked_loop(ke, se, start, from, to);
  };
  std::optional<ContractionShape> ct = o.simd && o.tile ? find_contraction(k) : std::nullopt;
  // A factor holding a weak constant's double value would be rounded once with the product on
  // the cpu; evaluated into scratch it would be rounded first. Such kernels keep the generic loop.
  const ScheduleParams sp = ScheduleParams::wasm();
  TileShape ts;
  ts.rows = o.tile_rows ? o.tile_rows : int(sp.reg_rows);
  ts.vecs = o.tile_vecs ? o.tile_vecs : int(sp.reg_vecs);
  if (ct && !o.tile_rows && !o.tile_vecs) ts = fit_tile_to_columns(*ct, ts);
  if (ct && (se.info(ct->a.factor.get()).wide || se.info(ct->b.factor.get()).wide || !tiling_pays(*ct, ts)))
    ct.reset();
  if (ct && !o.tile_rows && !o.tile_vecs) ts = fit_tile_to_rows(*ct, ts);
  if (ct) {
    // Cache blocks only when asked: without packing B, blocking measured slower (1024^3:
    // 3.5 vs 9.2 GFLOP/s, Intel Xeon 2-core dev machine, 2026-12-03; power-of-2 row strides).
    if (o.tile_panel) ts.panel = o.tile_panel;
    if (o.tile_kblock) ts.kblock = o.tile_kblock;
    // A B that is not read in place is always packed; an in-place one when asked or when it pays.
    ts.pack = !b_in_place(*ct) || o.tile_pack > 0 || (o.tile_pack == 0 && pack_pays(*ct));
    // A packed A holds MR x KC values, so packing either factor bounds the reduction block.
    if ((ts.pack || !a_in_place(*ct)) && !o.tile_panel) ts.panel = kPackPanel;
    if ((ts.pack || !a_in_place(*ct)) && !o.tile_kblock) ts.kblock = kPackKblock;
    ts.fma = o.fma;
    out.scratch_bytes = emit_tiled(ke, se, *ct, ts, generic);
    out.tiled = true;
    out.grain = ct->n * ts.rows;
    out.split_per_thread = ct->batch == 1 && ts.pack;
  } else {
    generic(KernelEmitter::kBegin, KernelEmitter::kEnd);
    out.grain = simd ? 4 : 1;
  }

  out.imports = ke.ops().imports();
  out.bytes = build_module(out.imports, {&c}, o);
  return out;
}

namespace {
void key_dag(std::string& out, const AluExp& e) {
  std::unordered_map<const AluNode*, uint32_t> id;
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  e.visit([&](const AluNode& n) {
    uint32_t i = uint32_t(id.size());
    id[&n] = i;
    uint8_t head[3] = {uint8_t(n.op), uint8_t(n.dtype), uint8_t(n.src.size())};
    put(head, 3);
    if (n.op == AluOp::Const) put(&n.value, 8);
    if (n.op == AluOp::Load || n.op == AluOp::Var) {
      int32_t a = n.arg;
      put(&a, 4);
    }
    for (auto& s : n.src) {
      uint32_t si = id.at(s.get());
      put(&si, 4);
    }
  });
  out.push_back(';');
}
}  // namespace

std::string kernel_key(const Kernel& k, const CodegenOptions& o) {
  std::string out;
  const int32_t opts[] = {o.simd,      o.tile,        o.fma,         o.tile_rows, o.tile_vecs,
                          o.tile_panel, o.tile_kblock, o.tile_pack,   o.shared_memory};
  out.append(reinterpret_cast<const char*>(opts), sizeof opts);
  for (DType d : k.inputs) out.push_back(char('0' + int(d)));
  out.push_back('|');
  out.append(reinterpret_cast<const char*>(&k.size), 8);
  key_dag(out, k.exp);
  if (k.reduction) {
    out.push_back(char(k.reduction->op));
    out.append(reinterpret_cast<const char*>(&k.reduction->size), 8);
    key_dag(out, k.reduction->epilogue);
  }
  if (k.prelude) {
    out.push_back('P');
    out.push_back(char(k.prelude->op));
    out.append(reinterpret_cast<const char*>(&k.prelude->size), 8);
    key_dag(out, k.prelude->exp);
    key_dag(out, k.prelude->value);
  }
  return out;
}

}  // namespace kiln::wasm
