// The native code generator: the legalized kernel (ir/legalize.h) rendered by the shared
// C-like renderer with the C++ dialect (native_dialect.h), one local per distinct node,
// inside the loop nest the Plan chose.
#include "backend/native/native_codegen.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>
#include <unordered_map>

#include "backend/native/native_dialect.h"
#include "backend/native/native_prelude.h"
#include "ir/error.h"
#include "ir/legalize.h"

namespace kiln::native {

ScheduleParams native_params() {
  return {
      .upcast = 16,  // columns per block: 4 SSE / 2 AVX vectors of float32
      // Rows per block; 4 x 16 accumulators fit the 16 xmm registers. Measured on a 256^3
      // float32 matmul, one core, 2026-12-03 (docs/ARCHITECTURE.md, "Native backend"): at -O3
      // 4 x 16 40.6 GFLOP/s, 8 x 16 38.5. KILN_NATIVE_TM overrides it.
      .tile_out = 4,
  };
}

namespace {

int64_t native_tm() {
  static const int64_t v = [] {
    const char* e = std::getenv("KILN_NATIVE_TM");
    return e && *e ? std::atoll(e) : native_params().tile_out;
  }();
  return v;
}

std::string store(DType d, const std::string& v) {
  if (d == DType::Bool) return "(u8)(" + v + " ? 1 : 0)";
  if (d == DType::Float16) return "k_f2h(" + v + ")";
  return v;
}

bool uses_var(const AluExp& e, VarId id) {
  bool used = false;
  e.visit([&](const AluNode& n) { used |= n.op == AluOp::Var && n.arg == int(id); });
  return used;
}

// The Load nodes of the emitted expressions in emission order (body, then epilogue).
std::vector<const AluNode*> loads(const Plan& p) {
  std::vector<const AluNode*> out;
  auto add = [&](const AluExp& e) {
    e.visit([&](const AluNode& n) {
      if (n.op == AluOp::Load) out.push_back(&n);
    });
  };
  if (p.pieces.empty()) add(p.body);
  for (const IndexPiece& piece : p.pieces) add(piece.exp);
  if (p.kernel.reduction) add(p.kernel.reduction->epilogue);
  return out;
}

// The body in block coordinates: gidx = m * cols + blk * tn + lane, with m in gidx's place,
// the column block in acc's (a reduction body never reads acc) and the SIMD column in lane's.
// The simplifier then turns gidx // cols into m and (gidx % cols) // tn into blk, so loads
// become affine in lane and g++ vectorizes them.
AluExp block_body(const AluExp& exp, int64_t rows, int64_t cols, int64_t tn) {
  AluExp m = AluExp::var(VarId::Gidx, DType::Int32, rows - 1);
  AluExp blk = AluExp::var(VarId::Acc, DType::Int32, cols / tn - 1);
  AluExp lane = AluExp::var(VarId::Lane, DType::Int32, tn - 1);
  return exp.substitute(VarId::Gidx, m * AluExp::idx(cols) + blk * AluExp::idx(tn) + lane);
}

bool uses_row(const AluNode& n, std::unordered_map<const AluNode*, bool>& memo) {
  auto it = memo.find(&n);
  if (it != memo.end()) return it->second;
  bool r = n.op == AluOp::Var && n.arg == int(VarId::Gidx);
  for (auto& c : n.src) r = r || uses_row(c.node(), memo);
  return memo[&n] = r;
}

// Work a block's rows can share: float nodes that do not depend on the row, beyond a bare
// load (a dequantized weight: shift, mask, convert, scale). Hoisted per column (below).
bool shareable(const AluNode& n, std::unordered_map<const AluNode*, bool>& memo) {
  return is_float(n.dtype) && n.op != AluOp::Load && n.op != AluOp::Const && !uses_row(n, memo);
}

int shared_nodes(const AluExp& body) {
  std::unordered_map<const AluNode*, bool> memo;
  int count = 0;
  body.visit([&](const AluNode& n) { count += shareable(n, memo); });
  return count;
}

// The output split (rows x cols) for a contraction: the scheduler's innermost axis, unless a
// wider one (another gidx // c or gidx % c of the body) leaves more of the body shared by
// the rows of a block. With weights stored row-interleaved, the scheduler sees the 16-wide
// interleave as the innermost axis and each row of a block reads other weights; splitting at
// the true output width instead lets a prefill's tokens share each dequantized weight.
int64_t shared_columns(const Kernel& k, int64_t inner) {
  std::vector<int64_t> candidates{inner};
  k.exp.visit([&](const AluNode& n) {
    if ((n.op != AluOp::Idiv && n.op != AluOp::Mod) || !n.src[1].is_const()) return;
    if (n.src[0].op() != AluOp::Var || n.src[0].node().arg != int(VarId::Gidx)) return;
    const int64_t c = int64_t(n.src[1].value());
    if (c > inner && c < k.size && k.size % c == 0 && c % inner == 0) candidates.push_back(c);
  });
  int64_t best = inner;
  int best_shared = -1;
  for (int64_t c : candidates) {
    const int64_t tn = largest_divisor(c, native_params().upcast);
    const int shared = shared_nodes(block_body(k.exp, k.size / c, c, tn));
    if (shared > best_shared) best = c, best_shared = shared;
  }
  return best;
}

}  // namespace

Plan plan_kernel(const Kernel& original) {
  const Kernel k = legalize(original);
  Plan p;
  p.kernel = k;
  p.schedule = schedule_kernel(k, native_params());
  p.body = k.exp;
  const int64_t nodes = k.exp.node_count() + (k.reduction ? k.reduction->epilogue.node_count() : 0);
  if (k.size >= (int64_t(1) << 31) || (k.reduction && k.reduction->size >= (int64_t(1) << 31)))
    fail("native", "kernel of ", k.size, " elements exceeds the int32 index range");
  if (!k.reduction) {
    p.items = k.size;
    p.work_per_item = nodes;
    if (auto split = split_index_ranges(k)) {
      p.period = split->period;
      p.pieces = std::move(split->pieces);
      if (p.period < k.size) {  // row * period + j: the loads become affine in j
        const AluExp row = AluExp::var(VarId::Lane, DType::Int32, k.size / p.period - 1) * AluExp::idx(p.period);
        for (IndexPiece& piece : p.pieces)
          piece.exp = piece.exp.substitute(VarId::Gidx, row + AluExp::var(VarId::Gidx, DType::Int32, piece.lo, piece.hi - 1));
      }
    }
    p.loads = loads(p);
    return p;
  }
  if (uses_var(k.exp, VarId::Acc)) fail("native", "reduction body reads acc, expected only the epilogue to");
  const Schedule& s = p.schedule;
  p.mode = Plan::Mode::Tiled;
  if (s.out_shape.size() == 2) {
    p.cols = shared_columns(k, s.out_shape[1]);
    p.rows = k.size / p.cols;
    // The scheduler tiles both axes up to max(tile_out, upcast); registers hold only
    // tile_out rows (measured below), so the row block is capped again here.
    p.tm = largest_divisor(p.rows, native_tm());
    p.tn = p.cols == s.out_shape[1] ? s.tile[1] : largest_divisor(p.cols, native_params().upcast);
    p.body = block_body(k.exp, p.rows, p.cols, p.tn);
  } else {
    // A row reduction: blocks of consecutive outputs, each with its own accumulator, so
    // the reduction keeps alu order per output while the block gives independent chains.
    p.rows = 1;
    p.cols = k.size;
    p.tn = s.tile[0];
  }
  p.items = (p.rows / p.tm) * (p.cols / p.tn);
  p.work_per_item = p.tm * p.tn * k.reduction->size * nodes;
  p.loads = loads(p);
  return p;
}

std::vector<bool> load_guards(const Plan& p, const std::vector<int64_t>& counts, int64_t slack_bytes) {
  std::vector<bool> g;
  for (const AluNode* n : p.loads) {
    const AluExp& idx = n->src[0];
    int64_t count = size_t(n->arg) < counts.size() ? counts[size_t(n->arg)] : 0;
    int64_t slack = slack_bytes / itemsize(p.kernel.inputs[size_t(n->arg)]);
    g.push_back(idx.vmin() < -slack || idx.vmax() >= count + slack);
  }
  return g;
}

namespace {

// The shareable nodes (see shareable) that a row-dependent node or the root reads: computed
// once per column of a block, before its rows, into arrays h0[tn], h1[tn], ...
std::vector<const AluNode*> hoisted_nodes(const Plan& p) {
  std::vector<const AluNode*> out;
  if (p.rows <= 1 || p.tm <= 1) return out;
  std::unordered_map<const AluNode*, bool> memo;
  auto add = [&](const AluNode& n) {
    if (shareable(n, memo) && std::find(out.begin(), out.end(), &n) == out.end()) out.push_back(&n);
  };
  p.body.visit([&](const AluNode& n) {
    if (!shareable(n, memo))
      for (auto& c : n.src) add(c.node());
  });
  add(p.body.node());
  return out;
}

// The reduction loop nest of a Tiled plan: accumulators for tm x tn outputs, the reduction
// steps, then the epilogue per output.
void emit_tiled(std::ostringstream& os, const Plan& p, const NativeDialect& dialect) {
  const Kernel& k = p.kernel;
  const Reduction& red = *k.reduction;
  const DType adt = k.exp.dtype(), odt = k.out_dtype();
  const char* at = ctype(adt);
  const int64_t nb = p.cols / p.tn;
  os << "  for (i64 it = begin; it < end; ++it) {\n"
     << "    const i32 blk = (i32)(it % " << nb << "), m0 = (i32)(it / " << nb << ") * " << p.tm
     << ", n0 = blk * " << p.tn << ";\n    (void)blk;\n"
     << "    " << at << " accs[" << p.tm << "][" << p.tn << "];\n"
     << "    for (int i = 0; i < " << p.tm << "; ++i)\n      for (int j = 0; j < " << p.tn
     << "; ++j) accs[i][j] = " << literal(adt, round_to(adt, Reduction::identity(red.op, adt))) << ";\n"
     << "    for (i32 ridx = 0; ridx < " << red.size << "; ++ridx) {\n";
  std::map<VarId, std::string> vars;
  if (p.rows > 1) vars = {{VarId::Gidx, "m"}, {VarId::Acc, "blk"}, {VarId::Lane, "j"}, {VarId::Ridx, "ridx"}};
  else vars = {{VarId::Gidx, "n"}, {VarId::Ridx, "ridx"}};
  CScope body(dialect, os, "          ", "v", vars);
  const std::vector<const AluNode*> hoisted = hoisted_nodes(p);
  if (!hoisted.empty()) {
    CScope per_column(dialect, os, "        ", "w", vars);
    for (size_t h = 0; h < hoisted.size(); h++)
      os << "      " << ctype(hoisted[h]->dtype) << " h" << h << "[" << p.tn << "];\n";
    os << "      for (int j = 0; j < " << p.tn << "; ++j) {\n";
    for (size_t h = 0; h < hoisted.size(); h++) {
      const std::string v = per_column.emit(AluExp(std::shared_ptr<const AluNode>(std::shared_ptr<const AluNode>{}, hoisted[h])));
      os << "        h" << h << "[j] = " << v << ";\n";
      body.preset(hoisted[h], "h" + std::to_string(h) + "[j]");
    }
    os << "      }\n";
  }
  os << "      for (int i = 0; i < " << p.tm << "; ++i) {\n"
     << "        const i32 m = m0 + i;\n        (void)m;\n"
     << "        for (int j = 0; j < " << p.tn << "; ++j) {\n"
     << "          const i32 n = n0 + j;\n          (void)n;\n";
  const std::string v = body.emit(p.body);
  const CValue a{"accs[i][j]", adt}, b{v, adt};
  CValue res{"", adt, INT32_MIN, INT32_MAX};
  if (is_int(adt)) res.vmin = adt == DType::Int32 ? INT32_MIN : 0, res.vmax = adt == DType::Int32 ? INT32_MAX : UINT32_MAX;
  const std::string fold = render_op(dialect, red.op, adt, {a, b}, res);
  os << "          accs[i][j] = " << fold << ";\n";
  os << "        }\n      }\n    }\n"
     << "    for (int i = 0; i < " << p.tm << "; ++i)\n      for (int j = 0; j < " << p.tn << "; ++j) {\n"
     << "        const i32 gidx = (m0 + i) * " << p.cols << " + n0 + j;\n"
     << "        const " << at << " acc = accs[i][j];\n        (void)acc;\n";
  CScope epi(dialect, os, "        ", "e", {{VarId::Gidx, "gidx"}, {VarId::Acc, "acc"}});
  std::string r = epi.emit(red.epilogue);
  os << "        out[gidx] = " << store(odt, r) << ";\n      }\n  }\n";
}

}  // namespace

std::string generate_source(const Plan& p, const std::vector<bool>& guard_bits) {
  const Kernel& k = p.kernel;
  std::map<const AluNode*, bool> guards;
  const std::vector<const AluNode*>& load_nodes = p.loads;
  for (size_t i = 0; i < load_nodes.size() && i < guard_bits.size(); i++) guards[load_nodes[i]] = guard_bits[i];
  const NativeDialect dialect(guards);
  std::ostringstream os;
  os << kPrelude << "\n// " << p.schedule.str() << " rows=" << p.rows << " cols=" << p.cols << "\n";
  os << "extern \"C\" void kiln_kernel(void* const* bufs, const i64* cnt, i64 begin, i64 end) {\n";
  for (size_t i = 0; i < k.inputs.size(); i++)
    os << "  const " << storage_type(k.inputs[i]) << "* __restrict in" << i << " = (const "
       << storage_type(k.inputs[i]) << "*)bufs[" << i << "];\n";
  const DType odt = k.out_dtype();
  os << "  " << storage_type(odt) << "* __restrict out = (" << storage_type(odt) << "*)bufs["
     << k.inputs.size() << "];\n  (void)cnt;\n";
  if (!k.reduction && p.pieces.empty()) {
    os << "  for (i32 gidx = (i32)begin; gidx < (i32)end; ++gidx) {\n";
    CScope body(dialect, os, "    ", "v", {{VarId::Gidx, "gidx"}});
    std::string r = body.emit(k.exp);
    os << "    out[gidx] = " << store(odt, r) << ";\n  }\n}\n";
    return os.str();
  }
  if (!k.reduction && p.period == k.size) {
    // One loop per range, each computing only its branch: [begin, end) clipped to it.
    for (const IndexPiece& piece : p.pieces) {
      os << "  for (i32 gidx = (i32)(begin > " << piece.lo << " ? begin : " << piece.lo << "), hi = (i32)(end < "
         << piece.hi << " ? end : " << piece.hi << "); gidx < hi; ++gidx) {\n";
      CScope body(dialect, os, "    ", "v", {{VarId::Gidx, "gidx"}});
      std::string r = body.emit(piece.exp);
      os << "    out[gidx] = " << store(odt, r) << ";\n  }\n";
    }
    os << "}\n";
    return os.str();
  }
  if (!k.reduction) {
    // Rows of `period`: per row, one loop per range of the row, clipped to [begin, end).
    os << "  for (i64 row = begin / " << p.period << "; row * " << p.period << " < end; ++row) {\n"
       << "    const i32 o = (i32)row;\n    (void)o;\n    const i64 base = row * " << p.period << ";\n";
    for (const IndexPiece& piece : p.pieces) {
      os << "    for (i32 j = (i32)(begin - base > " << piece.lo << " ? begin - base : " << piece.lo
         << "), hi = (i32)(end - base < " << piece.hi << " ? end - base : " << piece.hi << "); j < hi; ++j) {\n";
      CScope body(dialect, os, "      ", "v", {{VarId::Gidx, "j"}, {VarId::Lane, "o"}});
      std::string r = body.emit(piece.exp);
      os << "      out[base + j] = " << store(odt, r) << ";\n    }\n";
    }
    os << "  }\n}\n";
    return os.str();
  }
  emit_tiled(os, p, dialect);
  os << "}\n";
  return os.str();
}

}  // namespace kiln::native
