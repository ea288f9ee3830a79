// Kernel -> WGSL: the element (and epilogue) as functions of gidx/ridx/acc, then a main
// entry point per strategy. The output size is a uniform, so kernels that differ only in
// their size (contiguous elementwise ops) share one WGSL text and one pipeline.
#include "backend/webgpu/wgsl_codegen.h"

#include <algorithm>

#include "backend/webgpu/wgsl_expr.h"
#include "backend/webgpu/wgsl_tiled.h"
#include "ir/error.h"
#include "ir/legalize.h"
#include "ir/reduction_unroll.h"

namespace kiln::webgpu {

namespace {

// f_exp(gidx, ridx) -> element (or reduced term); f_epi(gidx, acc) -> output.
std::string functions(const Kernel& k) {
  std::string out;
  std::string body;
  ExprEmitter ex(&body, "gidx", "ridx", "acc");
  std::string v = ex.emit(k.exp);
  out += "fn f_exp(gidx: i32, ridx: i32) -> " + std::string(wgsl_type(k.exp.dtype())) + " {\n" + body +
         "  return " + v + ";\n}\n";
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
  std::string s = "struct Params { size: u32 }\n@group(0) @binding(0) var<uniform> params: Params;\n"
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

// The reduction unrolled by the period of its index arithmetic (ir/reduction_unroll.h), as
// the wasm SIMD loop does: a quantized matvec's term ridx reads word ridx // 8 shifted by
// (ridx % 8) * 4, so with ridx = chunk * 8 + u the 8 copies share one u32 load (and the
// scale's), and the value is dequantized in registers (shift, mask, convert, scale) instead
// of reloading a word per value with integer division. (The fused views write the scale's
// index as ridx // 8 // 4, so the period is the word's: 8 for 4-bit codes, 4 for bytes.)
// Empty when the body has no such period (an f32 matvec) or the unrolled body is too large.
constexpr int64_t kMaxPeriod = 32;
constexpr int64_t kMaxChunkNodes = 8192;  // summed over the copies (before sharing)

int64_t chunk_period(const Kernel& k) {
  if (!k.reduction) return 1;
  return reduction_period(k.exp, k.reduction->size, kMaxPeriod);
}

// f_chunk(gidx, ridx) -> the `period` terms of chunk ridx folded in ridx order.
std::string chunk_function(const Kernel& k, int64_t period) {
  const std::vector<AluExp> terms = unroll_reduction(k.exp, k.reduction->size, period);
  int64_t nodes = 0;
  for (const AluExp& t : terms) nodes += t.node_count();
  if (nodes > kMaxChunkNodes) return "";
  const DType d = k.exp.dtype();
  std::string body;
  ExprEmitter ex(&body, "gidx", "ridx", "acc");
  std::string fold;
  for (const AluExp& t : terms) {
    const std::string v = ex.emit(t);
    fold += fold.empty() ? "  var c = " + v + ";\n" : "  c = " + wgsl_combine(k.reduction->op, d, "c", v) + ";\n";
  }
  const std::string T = wgsl_type(d);
  return "fn f_chunk(gidx: i32, ridx: i32) -> " + T + " {\n" + body + fold + "  return c;\n}\n";
}

}  // namespace

WgslKernel generate_wgsl(const Kernel& original, const WgslParams& p) {
  // WGSL orders no bools: bool < and <= become logic too.
  const Kernel k = legalize(original, LegalizeOptions{.bool_order_as_logic = true});
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
  s += bindings(k) + functions(k);
  if (auto tiled = generate_tiled(k, p, s)) return *tiled;
  const std::string wg = std::to_string(p.workgroup);
  if (w.strategy == WgslStrategy::TreeReduce) {
    const DType d = k.exp.dtype();
    const Reduction& r = *k.reduction;
    const std::string T = wgsl_type(d);
    int64_t period = chunk_period(k);
    const std::string chunk = period > 1 ? chunk_function(k, period) : "";
    if (chunk.empty()) period = 1;
    s += chunk;
    const int lanes = tree_lanes(r.size, p, period);
    w.outputs_per_group = p.workgroup / lanes;
    // Each lane folds whole chunks of `period` terms (f_chunk) or single terms (f_exp).
    const std::string term = period > 1 ? "f_chunk(g, r)" : "f_exp(g, r)";
    const std::string L = std::to_string(lanes), id = wgsl_const(d, Reduction::identity(r.op, d));
    // Output g of the group is reduced by lanes [g * L, g * L + L): lane l folds terms (or
    // chunks) l, l + L, ... (neighbouring lanes read neighbouring terms), then the lanes'
    // sums meet in a tree in workgroup memory. Every invocation reaches every barrier
    // (uniform control flow).
    s += "var<workgroup> sh: array<" + T + ", " + wg + ">;\n";
    s += "@compute @workgroup_size(" + wg + ")\n"
         "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,\n"
         "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
         "  let lane = lid % " + L + "u;\n"
         "  let g = i32((wid.x + wid.y * nwg.x) * " + std::to_string(w.outputs_per_group) + "u + lid / " + L + "u);\n"
         "  var acc: " + T + " = " + id + ";\n"
         "  if (u32(g) < params.size) {\n"
         "    for (var r = i32(lane); r < " + std::to_string(r.size / period) + "; r = r + " + L + ") {\n"
         "      acc = " + wgsl_combine(r.op, d, "acc", term) + ";\n    }\n  }\n"
         "  sh[lid] = acc;\n  workgroupBarrier();\n"
         "  for (var s = " + std::to_string(lanes / 2) + "u; s > 0u; s = s >> 1u) {\n"
         "    if (lane < s) { sh[lid] = " + wgsl_combine(r.op, d, "sh[lid]", "sh[lid + s]") + "; }\n"
         "    workgroupBarrier();\n  }\n"
         "  if (lane == 0u && u32(g) < params.size) { out[u32(g)] = " + wgsl_store_bits(od, "f_epi(g, sh[lid])") + "; }\n}\n";
    return w.wgsl = std::move(s), w;
  }
  if (k.reduction) s += serial_reducer(k);
  // One invocation per output word: sub-word outputs (bool, float16) are packed by the one
  // invocation that owns the word, so no two invocations write the same word.
  s += "@compute @workgroup_size(" + wg + ")\n"
       "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n"
       "  let word = gid.x + gid.y * nwg.x * " + wg + "u;\n"
       "  let first = word * " + std::to_string(w.per_word) + "u;\n"
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
