// Kernel -> WGSL: the element (and epilogue) as functions of gidx/ridx/acc, then a main
// entry point per strategy. The output size is a uniform, so kernels that differ only in
// their size (contiguous elementwise ops) share one WGSL text and one pipeline.
#include "backend/webgpu/wgsl_codegen.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "backend/webgpu/wgsl_expr.h"
#include "backend/webgpu/wgsl_tiled.h"
#include "backend/webgpu/wgsl_vec_loads.h"
#include "ir/error.h"
#include "ir/legalize.h"
#include "ir/reduction_unroll.h"

namespace kiln::webgpu {

namespace {

// f_exp(gidx, ridx) -> element (or reduced term); f_epi(gidx, acc) -> output.
std::string functions(const Kernel& k, int workgroup) {
  std::string out;
  std::string body;
  ExprEmitter ex(&body, "gidx", "ridx", "acc");
  std::string v = ex.emit(k.exp);
  out += "fn f_exp(gidx: i32, ridx: i32) -> " + std::string(wgsl_type(k.exp.dtype())) + " {\n" + body +
         "  return " + v + ";\n}\n";
  if (k.prelude) {
    // The prelude's value, set by main before the kernel's own work (prelude_main).
    const std::string T = wgsl_type(k.prelude->exp.dtype()), V = wgsl_type(k.prelude->value.dtype());
    std::string pb, vb;
    ExprEmitter pe(&pb, "gidx", "ridx", "acc"), ve(&vb, "gidx", "ridx", "acc");
    std::string e = pe.emit(k.prelude->exp), v = ve.emit(k.prelude->value);
    out += "var<private> pre: " + V + ";\nvar<workgroup> psh: array<" + T + ", " + std::to_string(workgroup) + ">;\n";
    out += "fn f_pre(ridx: i32) -> " + T + " {\n" + pb + "  return " + e + ";\n}\n";
    out += "fn f_pre_value(acc: " + T + ") -> " + V + " {\n" + vb + "  return " + v + ";\n}\n";
  }
  if (k.reduction) {
    std::string eb;
    ExprEmitter ee(&eb, "gidx", "ridx", "acc");
    std::string e = ee.emit(k.reduction->epilogue);
    out += "fn f_epi(gidx: i32, acc: " + std::string(wgsl_type(k.exp.dtype())) + ") -> " +
           wgsl_type(k.out_dtype()) + " {\n" + eb + "  return " + e + ";\n}\n";
  }
  return out;
}

std::string bindings(const Kernel& k) {
  // w1..w3: run-time constants of the kernel (load offsets: wgsl_uniform_offsets.h).
  std::string s = "struct Params { size: u32, w1: u32, w2: u32, w3: u32 }\n"
                  "@group(0) @binding(0) var<uniform> params: Params;\n"
                  "@group(0) @binding(1) var<storage, read_write> out: array<u32>;\n";
  for (size_t i = 0; i < k.inputs.size(); i++)
    s += "@group(0) @binding(" + std::to_string(2 + i) + ") var<storage, read> in" + std::to_string(i) +
         ": array<u32>;\n";
  return s;
}

// The value of output gidx (a serial reduction folds ridx in order, as the cpu does).
std::string serial_value(const Kernel& k) {
  if (!k.reduction) return "f_exp(g, 0)";
  return "reduce_serial(g)";
}

std::string serial_reducer(const Kernel& k) {
  const DType d = k.exp.dtype();
  const Reduction& r = *k.reduction;
  return "fn reduce_serial(g: i32) -> " + std::string(wgsl_type(k.out_dtype())) + " {\n  var acc: " +
         wgsl_type(d) + " = " + wgsl_const(d, Reduction::identity(r.op, d)) + ";\n  for (var r = 0; r < " +
         std::to_string(r.size) + "; r = r + 1) {\n    acc = " + wgsl_combine(r.op, d, "acc", "f_exp(g, r)") +
         ";\n  }\n  return f_epi(g, acc);\n}\n";
}

// The prelude (Kernel::prelude) folded by the whole workgroup into `psh` (functions()
// declares it): invocation lid folds terms lid, lid + wg, ..., then the partials meet in a
// tree in workgroup memory, and every invocation reads the value. Every workgroup folds in
// the same order, so all read the same value. Placed before any early return: every
// invocation reaches its barriers (uniform control flow). A serial reduction's invocations
// (one per output: 262144 for Gemma 3's output projection) would each fold it alone.
std::string prelude_main(const Kernel& k, int workgroup) {
  if (!k.prelude) return "";
  const Prelude& p = *k.prelude;
  const DType d = p.exp.dtype();
  const std::string wg = std::to_string(workgroup);
  return "  var pacc: " + std::string(wgsl_type(d)) + " = " + wgsl_const(d, Reduction::identity(p.op, d)) +
         ";\n  for (var r = i32(lid); r < " + std::to_string(p.size) + "; r = r + " + wg + ") {\n    pacc = " +
         wgsl_combine(p.op, d, "pacc", "f_pre(r)") + ";\n  }\n  psh[lid] = pacc;\n  workgroupBarrier();\n" +
         "  for (var s = " + std::to_string(workgroup / 2) + "u; s > 0u; s = s >> 1u) {\n    if (lid < s) { psh[lid] = " +
         wgsl_combine(p.op, d, "psh[lid]", "psh[lid + s]") + "; }\n    workgroupBarrier();\n  }\n" +
         "  pre = f_pre_value(psh[0]);\n";
}

// The reduction unrolled by the period of its index arithmetic (ir/reduction_unroll.h), as
// the wasm SIMD loop does: a quantized matvec's term ridx reads word ridx // 8 shifted by
// (ridx % 8) * 4, so with ridx = chunk * 8 + u the 8 copies share one u32 load (and the
// scale's), and the value is dequantized in registers (shift, mask, convert, scale) instead
// of reloading a word per value with integer division. (The fused views write the scale's
// index as ridx // 8 // 4, so the period is the word's: 8 for 4-bit codes, 4 for bytes.)
// Period 1 when the body has no such period (an f32 matvec).
constexpr int64_t kMaxPeriod = 32;
constexpr int64_t kMaxChunkNodes = 8192;  // summed over the copies (before sharing)

int64_t chunk_period(const Kernel& k) {
  if (!k.reduction) return 1;
  return reduction_period(k.exp, k.reduction->size, kMaxPeriod);
}

// What one lane of a tree reduction folds per step: `period` consecutive terms (a chunk) of
// each of `outputs` neighbouring outputs, as expressions of the lane group's index gidx
// (output gidx * outputs + i) and the chunk's ridx, with equal subexpressions shared: a
// matvec's x loads and the chunk's index arithmetic are computed once for all its rows.
struct TreeTerms {
  int64_t period = 1;
  int outputs = 1;
  std::vector<std::vector<AluExp>> terms;  // [output][u], folded in u order
};

// The terms for `outputs` outputs per lane group and a chunk of `period`, or nothing when
// the unrolled body passes kMaxChunkNodes.
std::optional<TreeTerms> tree_terms(const Kernel& k, int64_t period, int outputs) {
  const int64_t size = k.reduction->size;
  std::vector<AluExp> chunk = period > 1 ? unroll_reduction(k.exp, size, period) : std::vector<AluExp>{k.exp};
  const AluExp group = AluExp::var(VarId::Gidx, DType::Int32, k.size / outputs - 1);
  std::vector<AluExp> all;
  int64_t nodes = 0;
  for (int i = 0; i < outputs; i++)
    for (const AluExp& t : chunk) {
      all.push_back(outputs > 1 ? t.substitute(VarId::Gidx, group * outputs + i) : t);
      nodes += all.back().node_count();
    }
  if (period > 1 && nodes > kMaxChunkNodes) return std::nullopt;
  all = share_equal_nodes(all);
  TreeTerms tt{period, outputs, {}};
  for (int i = 0; i < outputs; i++)
    tt.terms.emplace_back(all.begin() + i * int64_t(chunk.size()), all.begin() + (i + 1) * int64_t(chunk.size()));
  return tt;
}

// The 128-bit loads of a chunk (wgsl_vec_loads.h) where WgslParams::vec4_loads allows them
// and the inputs bound again still fit the device's storage buffers; `aliased` gets the
// inputs to bind again (as bindings 2 + ninputs + j).
std::vector<VecLoad> chunk_vec_loads(const Kernel& k, const TreeTerms& tt, const WgslParams& p, std::vector<int>& aliased) {
  if (!p.vec4_loads || tt.period < 4) return {};
  std::vector<AluExp> all;
  for (const auto& t : tt.terms) all.insert(all.end(), t.begin(), t.end());
  std::vector<VecLoad> quads = find_vec_loads(all);
  for (const VecLoad& q : quads)
    if (std::find(aliased.begin(), aliased.end(), q.arg) == aliased.end()) aliased.push_back(q.arg);
  if (int64_t(k.inputs.size() + aliased.size()) + 1 > p.max_storage_buffers) aliased.clear(), quads.clear();
  return quads;
}

// f_rows(gidx, ridx) -> the outputs' folded chunks at chunk ridx of lane group gidx. Quads of
// loads are read first, each as one vec4 whose components stand for the four scalar loads.
std::string rows_function(const Kernel& k, const TreeTerms& tt, const std::vector<VecLoad>& quads) {
  const DType d = k.exp.dtype();
  const std::string T = wgsl_type(d), R = std::to_string(tt.outputs);
  std::string body, fold, result;
  ExprEmitter ex(&body, "gidx", "ridx", "acc");
  for (size_t n = 0; n < quads.size(); n++) {
    const VecLoad& q = quads[n];
    const std::string v = "vq" + std::to_string(n), first = ex.emit(q.first);
    ex.line("  let " + v + " = in" + std::to_string(q.arg) + "v[u32(" + first + ") >> 2u];\n");
    for (int lane = 0; lane < 4; lane++) {
      const std::string c = v + "." + "xyzw"[lane];
      const DType ld = q.lanes[size_t(lane)]->dtype;
      ex.preset(q.lanes[size_t(lane)], ld == DType::Uint32 ? c : "bitcast<" + std::string(wgsl_type(ld)) + ">(" + c + ")");
    }
  }
  for (size_t i = 0; i < tt.terms.size(); i++) {
    const std::string c = "c" + std::to_string(i);
    for (size_t u = 0; u < tt.terms[i].size(); u++) {
      const std::string v = ex.emit(tt.terms[i][u]);
      fold += u == 0 ? "  var " + c + " = " + v + ";\n" : "  " + c + " = " + wgsl_combine(k.reduction->op, d, c, v) + ";\n";
    }
    result += (i ? ", " : "") + c;
  }
  return "fn f_rows(gidx: i32, ridx: i32) -> array<" + T + ", " + R + "> {\n" + body + fold + "  return array<" + T +
         ", " + R + ">(" + result + ");\n}\n";
}

// Outputs per lane group: WgslParams::row_outputs, or by the rule: 2 for reductions of at
// least kTwoRowsTerms terms in all (on an H100, 2026-12-06: f32 matvec 4096 73.5 -> 61.0 us, a
// q4_0 matvec 8192x2048 104 -> 69, 2048x8192 162 -> 68; SmolLM2's 1536x576 and 576x1536
// unchanged or slower at 2 and 4, so they keep 1); then the most up to that which divide the
// output count and leave the workgroup storage room for the lanes' sums.
constexpr int64_t kTwoRowsTerms = int64_t(1) << 22;

int tree_outputs(const Kernel& k, const WgslParams& p) {
  int r = p.row_outputs > 0 ? p.row_outputs : k.size * k.reduction->size >= kTwoRowsTerms ? 2 : 1;
  const int prelude = k.prelude ? 1 : 0;  // psh: one slot per invocation
  while (r > 1 && (k.size % r != 0 || int64_t(p.workgroup) * (r + prelude) * 4 > p.workgroup_storage)) r /= 2;
  return r;
}

// The tree reduction's main: lane group j of the workgroup reduces outputs (group * G + j) *
// R + i (G = workgroup / lanes, R outputs), each lane folding chunks lane, lane + L, ... of
// all R (neighbouring lanes read neighbouring terms); the lanes' sums then meet in a tree in
// workgroup memory. Every invocation reaches every barrier (uniform control flow). Each
// output's sum is the same sequence of roundings whatever R is.
std::string tree_main(const Kernel& k, const WgslParams& p, WgslKernel& w) {
  const DType d = k.exp.dtype(), od = k.out_dtype();
  const Reduction& r = *k.reduction;
  const std::string T = wgsl_type(d), id = wgsl_const(d, Reduction::identity(r.op, d));
  std::optional<TreeTerms> tt;
  const int64_t period = chunk_period(k);
  for (int outputs = tree_outputs(k, p); !tt; outputs = std::max(1, outputs / 2)) {
    if (period > 1) tt = tree_terms(k, period, outputs);
    if (!tt && (outputs == 1 || period == 1)) tt = tree_terms(k, 1, outputs);
  }
  const int lanes = tree_lanes(r.size, p, tt->period);
  const int R = tt->outputs;
  w.outputs_per_group = p.workgroup / lanes * R;
  const std::string L = std::to_string(lanes), Rs = std::to_string(R), wg = std::to_string(p.workgroup);
  // The R sums stay scalars (unrolled here, not a private array a driver might spill).
  auto each = [R](const std::function<std::string(const std::string&)>& line) {
    std::string out;
    for (int i = 0; i < R; i++) out += line(std::to_string(i));
    return out;
  };
  const auto slot = [&](const std::string& at, const std::string& i) { return "sh[" + at + " * " + Rs + "u + " + i + "u]"; };
  const std::vector<VecLoad> quads = chunk_vec_loads(k, *tt, p, w.vec4_inputs);
  std::string s;
  for (size_t j = 0; j < w.vec4_inputs.size(); j++)
    s += "@group(0) @binding(" + std::to_string(2 + k.inputs.size() + j) + ") var<storage, read> in" +
         std::to_string(w.vec4_inputs[j]) + "v: array<vec4<u32>>;\n";
  s += rows_function(k, *tt, quads);
  s += "var<workgroup> sh: array<" + T + ", " + std::to_string(p.workgroup * R) + ">;\n";
  s += "@compute @workgroup_size(" + wg + ")\n"
       "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,\n"
       "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
       "  let lane = lid % " + L + "u;\n"
       "  let grp = i32((wid.x + wid.y * nwg.x) * " + std::to_string(p.workgroup / lanes) + "u + lid / " + L + "u);\n" +
       prelude_main(k, p.workgroup) +
       each([&](const std::string& i) { return "  var acc" + i + ": " + T + " = " + id + ";\n"; }) +
       "  if (u32(grp * " + Rs + ") < params.size) {\n"
       "    for (var r = i32(lane); r < " + std::to_string(r.size / tt->period) + "; r = r + " + L + ") {\n"
       "      let t = f_rows(grp, r);\n" +
       each([&](const std::string& i) { return "      acc" + i + " = " + wgsl_combine(r.op, d, "acc" + i, "t[" + i + "]") + ";\n"; }) +
       "    }\n  }\n" +
       each([&](const std::string& i) { return "  " + slot("lid", i) + " = acc" + i + ";\n"; }) +
       "  workgroupBarrier();\n"
       "  for (var s = " + std::to_string(lanes / 2) + "u; s > 0u; s = s >> 1u) {\n"
       "    if (lane < s) {\n" +
       each([&](const std::string& i) {
         return "      " + slot("lid", i) + " = " + wgsl_combine(r.op, d, slot("lid", i), slot("(lid + s)", i)) + ";\n";
       }) +
       "    }\n    workgroupBarrier();\n  }\n"
       "  if (lane == 0u) {\n" +
       each([&](const std::string& i) {
         return "    if (u32(grp * " + Rs + " + " + i + ") < params.size) { out[u32(grp * " + Rs + " + " + i + ")] = " +
                wgsl_store_bits(od, "f_epi(grp * " + Rs + " + " + i + ", " + slot("lid", i) + ")") + "; }\n";
       }) +
       "  }\n}\n";
  return s;
}

}  // namespace

WgslKernel generate_wgsl(const Kernel& original, const WgslParams& p) {
  // WGSL orders no bools: bool < and <= become logic too.
  const Kernel k = legalize(original, LegalizeOptions{.bool_order_as_logic = true, .expand_float32_math = false});
  WgslKernel w;
  w.workgroup = p.workgroup;
  const DType od = k.out_dtype();
  w.per_word = 4 / itemsize(od);  // itemsize throws nothing; float64 fails in wgsl_type below
  if (od == DType::Float64 || k.exp.dtype() == DType::Float64) wgsl_type(DType::Float64);
  for (DType d : k.inputs) wgsl_type(d);
  const bool tree = k.reduction && w.per_word == 1 && k.exp.dtype() != DType::Bool &&
                    k.reduction->size >= p.tree_min_reduce && k.size <= p.tree_max_outputs;
  w.strategy = !k.reduction ? WgslStrategy::Elementwise : tree ? WgslStrategy::TreeReduce : WgslStrategy::SerialReduce;
  std::string s = wgsl_prelude();
  s += bindings(k) + functions(k, p.workgroup);
  // A prelude is computed before the kernel's own loop: the tiled contraction has no place
  // for it, and the tree folds it in its workgroup array of the terms' dtype.
  if (!k.prelude)
    if (auto tiled = generate_tiled(k, p, s)) return *tiled;
  const std::string wg = std::to_string(p.workgroup);
  if (w.strategy == WgslStrategy::TreeReduce) return w.wgsl = s + tree_main(k, p, w), w;
  if (k.reduction) s += serial_reducer(k);
  // One invocation per output word: sub-word outputs (bool, float16) are packed by the one
  // invocation that owns the word, so no two invocations write the same word.
  s += "@compute @workgroup_size(" + wg + ")\n"
       "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
       "        @builtin(local_invocation_index) lid: u32) {\n"
       "  let word = gid.x + gid.y * nwg.x * " + wg + "u;\n"
       "  let first = word * " + std::to_string(w.per_word) + "u;\n" +
       prelude_main(k, p.workgroup) +
       "  if (first >= params.size) { return; }\n"
       "  var bits = 0u;\n";
  for (int e = 0; e < w.per_word; e++) {
    const std::string ge = "first + " + std::to_string(e) + "u";
    s += "  if (" + ge + " < params.size) {\n    let g = i32(" + ge + ");\n    bits = bits | (" +
         wgsl_store_bits(od, serial_value(k)) + " << " + std::to_string(e * 8 * itemsize(od)) + "u);\n  }\n";
  }
  s += "  out[word] = bits;\n}\n";
  w.wgsl = std::move(s);
  return w;
}

int tree_lanes(int64_t reduce, const WgslParams& p, int64_t period) {
  if (p.row_lanes > 0) return std::min(p.row_lanes, p.workgroup);
  if (period > 1) {
    // Chunks of `period` terms (a quantized matvec: one packed word per chunk): about 2
    // chunks per lane, from 4 lanes up; SmolLM2's 576 q4 columns (72 words) get 32 lanes.
    const int64_t chunks = reduce / period;
    int lanes = 4;
    while (lanes < p.workgroup && int64_t(lanes) * 2 * 2 <= chunks) lanes *= 2;
    return std::min(lanes, p.workgroup);
  }
  // About 16 terms per lane, between 32 lanes (a warp) and the whole workgroup: a matvec over
  // 576 or 1536 columns keeps 8 or 4 outputs per workgroup instead of 256 invocations that
  // fold 2-6 terms each and then wait at 8 barriers; long rows keep the one-output tree.
  int lanes = 32;
  while (lanes < p.workgroup && int64_t(lanes) * 2 * 16 <= reduce) lanes *= 2;
  return std::min(lanes, p.workgroup);
}

Grid dispatch_grid(const WgslKernel& w, int64_t size, const WgslParams& p) {
  int64_t groups = w.strategy == WgslStrategy::Tiled        ? w.groups
                   : w.strategy == WgslStrategy::TreeReduce ? (size + w.outputs_per_group - 1) / w.outputs_per_group
                                                            : ((size + w.per_word - 1) / w.per_word + w.workgroup - 1) / w.workgroup;
  groups = std::max<int64_t>(groups, 1);
  Grid g;
  g.x = std::min<int64_t>(groups, p.max_groups_x);
  g.y = (groups + g.x - 1) / g.x;
  return g;
}

}  // namespace kiln::webgpu
