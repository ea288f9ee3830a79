// The tiled contraction shader. Per workgroup and BK-step of ridx:
//   1. every invocation evaluates a few 4-row (A) and 4-column (B) quads of the factors at
//      one ridx and stores each as one vec4 in workgroup memory (A transposed: As[r][row]),
//      so factors that are no plain loads (convolution windows, padding) cost the same;
//   2. after a barrier, each invocation reads its TM rows and TN columns of each staged
//      ridx as vec4s and updates TM x TN sums with fma.
// Sums run in ridx order per output. An invocation's rows sit at ty*4 + q*(BM/hm) (hm =
// TM/4 quads), spread over the tile, so the vec4 reads of neighbouring invocations touch
// neighbouring addresses.
#include "backend/webgpu/wgsl_tiled.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "backend/webgpu/wgsl_expr.h"
#include "ir/contraction.h"
#include "ir/error.h"

namespace kiln::webgpu {

namespace {

std::string n(int64_t v) { return std::to_string(v); }
std::string u(int64_t v) { return std::to_string(v) + "u"; }

// A factor as a function of (gidx, ridx); the caller passes a gidx whose other digits are 0.
std::string factor_fn(const char* name, const AluExp& f) {
  std::string body;
  ExprEmitter ex(&body, "gidx", "ridx", "acc");
  std::string v = ex.emit(f);
  return std::string("fn ") + name + "(gidx: i32, ridx: i32) -> f32 {\n" + body + "  return " + v + ";\n}\n";
}

// Whether neighbouring invocations should take neighbouring ridx when staging this factor:
// when it is a load whose ridx stride is the smaller one (a row-major A of a matmul).
bool ridx_fastest(const ContractionOperand& op, int64_t other_stride) {
  return op.linear && std::llabs(op.cr) < std::llabs(other_stride);
}

// Copies of the staged slices in workgroup memory (two for double staging).
int staging_copies(const WgslParams& p) { return p.staging == WgslStaging::Double ? 2 : 1; }

const WgslTile* pick_tile(const ContractionShape& c, const WgslParams& p) {
  const WgslTile* pick = nullptr;
  for (const WgslTile& t : p.tiles) {
    if (staging_copies(p) * (t.bm + t.bn) * t.bk * 4 > p.workgroup_storage || t.invocations() > p.max_invocations) continue;
    pick = &t;
    int64_t groups = c.batch * ((c.m + t.bm - 1) / t.bm) * ((c.n + t.bn - 1) / t.bn);
    if (groups >= p.fill_groups) break;
  }
  return pick;
}

// fn stage_<x>(e, k0, base) -> vec4<f32>: quad e of a factor's BK x rows slice at ridx
// k0 (the 4 rows base + 4q .. base + 4q + 3 at one ridx), zeros outside the contraction;
// fn slot_<x>(e) -> u32: where that quad lives in workgroup memory ([ridx][row / 4]).
// `rows` is the tile's extent in this factor's own index (BM for A, BN for B).
std::string stage_fns(const char* x, const char* fn, const WgslTile& t, int rows, bool rfast, int64_t limit,
                      int64_t k, const char* gidx_of, bool exact) {
  std::string split = rfast ? "  let kk = e % " + u(t.bk) + "; let q = e / " + u(t.bk) + ";\n"
                            : "  let q = e % " + u(rows / 4) + "; let kk = e / " + u(rows / 4) + ";\n";
  std::string s = std::string("fn slot_") + x + "(e: u32) -> u32 {\n" + split + "  return kk * " + u(rows / 4) +
                  " + q;\n}\n";
  s += std::string("fn stage_") + x + "(e: u32, k0: u32, base: i32) -> vec4<f32> {\n" + split;
  s += "  let r = i32(k0 + kk);\n  let row = base + i32(q * 4u);\n";
  if (exact) {
    s += "  return vec4<f32>(";
    for (int c = 0; c < 4; c++)
      s += std::string(c ? ", " : "") + fn + "(" + gidx_of + "(row + " + n(c) + "), r)";
    return s + ");\n}\n";
  }
  s += "  var v = vec4<f32>(0.0);\n  if (r < " + n(k) + ") {\n";
  for (int c = 0; c < 4; c++)
    s += "    if (row + " + n(c) + " < " + n(limit) + ") { v[" + n(c) + "] = " + fn + "(" + gidx_of + "(row + " +
         n(c) + "), r); }\n";
  return s + "  }\n  return v;\n}\n";
}

}  // namespace

void check_tile(const WgslTile& t) {
  const bool ok = t.tm > 0 && t.tn > 0 && t.bk > 0 && t.tm % 4 == 0 && t.tn % 4 == 0 && t.bm % t.tm == 0 &&
                  t.bn % t.tn == 0 && t.bm > 0 && t.bn > 0;
  if (!ok)
    fail("webgpu", "tile ", t.bm, "x", t.bn, "x", t.bk, " with ", t.tm, "x", t.tn,
         " per invocation is invalid, expected tm and tn multiples of 4 that divide bm and bn");
}

std::optional<WgslKernel> generate_tiled(const Kernel& k, const WgslParams& p, const std::string& common) {
  if (!k.reduction || k.reduction->op != AluOp::Add) return std::nullopt;
  if (k.exp.dtype() != DType::Float32 || itemsize(k.out_dtype()) != 4) return std::nullopt;
  if (k.size >= INT32_MAX / 2) return std::nullopt;
  auto c = analyze_contraction(k);
  if (!c || c->m < p.tile_min || c->n < p.tile_min || c->k < p.tile_min) return std::nullopt;
  const WgslTile* tp = pick_tile(*c, p);
  if (!tp) return std::nullopt;
  const WgslTile& t = *tp;
  const int hm = t.tm / 4, hn = t.tn / 4, tx_n = t.bn / t.tn;
  const int64_t tiles_m = (c->m + t.bm - 1) / t.bm, tiles_n = (c->n + t.bn - 1) / t.bn;
  const int64_t g = std::max<int64_t>(1, std::min<int64_t>(p.band_rows, tiles_m));

  WgslKernel w;
  w.strategy = WgslStrategy::Tiled;
  w.workgroup = t.invocations();
  w.groups = c->batch * tiles_m * tiles_n;
  std::string s = common;
  // Exact tiles need no bounds checks in staging or stores.
  const bool exact = c->m % t.bm == 0 && c->n % t.bn == 0 && c->k % t.bk == 0;
  s += factor_fn("f_a", c->a.factor) + factor_fn("f_b", c->b.factor);
  // gidx = (b * M + i) * N + j: A's functions see column 0, B's see row 0.
  s += "var<private> bm0: i32;\n";
  s += "fn a_gidx(i: i32) -> i32 { return (bm0 + i) * " + n(c->n) + "; }\n";
  s += "fn b_gidx(j: i32) -> i32 { return bm0 * " + n(c->n) + " + j; }\n";
  s += stage_fns("a", "f_a", t, t.bm, ridx_fastest(c->a, c->a.ci), c->m, c->k, "a_gidx", exact);
  s += stage_fns("b", "f_b", t, t.bn, ridx_fastest(c->b, c->b.cj), c->n, c->k, "b_gidx", exact);
  // Double staging keeps two slices of workgroup memory: [0, size) and [size, 2 size).
  const int copies = staging_copies(p);
  s += "var<workgroup> As: array<vec4<f32>, " + n(copies * t.bm * t.bk / 4) + ">;\n";
  s += "var<workgroup> Bs: array<vec4<f32>, " + n(copies * t.bn * t.bk / 4) + ">;\n";
  s += "@compute @workgroup_size(" + n(w.workgroup) + ")\n"
       "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,\n"
       "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
       "  _ = params.size;  // the size is in the shader; the binding stays for the runtime's layout\n"
       "  let id = wid.x + wid.y * nwg.x;\n"
       "  if (id >= " + u(w.groups) + ") { return; }\n"
       "  let b = i32(id / " + u(tiles_m * tiles_n) + ");\n"
       "  let rest = id % " + u(tiles_m * tiles_n) + ";\n"
       // Workgroups in bands of G tile rows, column by column within a band: neighbours in
       // launch order share A's rows or B's columns, so they read them from L2.
       "  let band = rest / " + u(g * tiles_n) + "; let within = rest % " + u(g * tiles_n) + ";\n"
       "  let rows = min(" + u(tiles_m) + " - band * " + u(g) + ", " + u(g) + ");\n"
       "  let i0 = i32(band * " + u(g) + " + within % rows) * " + n(t.bm) + ";\n"
       "  let j0 = i32(within / rows) * " + n(t.bn) + ";\n"
       "  bm0 = b * " + n(c->m) + ";\n"
       "  let tx = lid % " + u(tx_n) + "; let ty = lid / " + u(tx_n) + ";\n";
  for (int q = 0; q < hm; q++)
    for (int a = 0; a < 4; a++)
      for (int r = 0; r < hn; r++) s += "  var c" + n(q) + "_" + n(a) + "_" + n(r) + " = vec4<f32>(0.0);\n";
  // Each invocation stages the quads lid, lid + inv, ... of each factor (held in registers
  // pa<s>/pb<s> between the global loads and the workgroup store).
  struct Side {
    const char* x;
    int quads;
    const char* base;
  };
  const Side sides[] = {{"a", t.bm * t.bk / 4, "i0"}, {"b", t.bn * t.bk / 4, "j0"}};
  const int inv = t.invocations();
  auto each_quad = [&](const Side& sd, const std::function<std::string(const std::string&, const std::string&)>& f) {
    std::string out;
    for (int q = 0; q * inv < sd.quads; q++) {
      std::string e = "(lid + " + u(q * inv) + ")", v = std::string("p") + sd.x + n(q);
      out += sd.quads % inv == 0 ? f(e, v) : "    if (" + e + " < " + u(sd.quads) + ") {" + f(e, v) + "}\n";
    }
    return out;
  };
  for (const Side& sd : sides)
    for (int q = 0; q * inv < sd.quads; q++) s += std::string("  var p") + sd.x + n(q) + " = vec4<f32>(0.0);\n";
  auto load = [&](const std::string& k0) {
    std::string out;
    for (const Side& sd : sides)
      out += each_quad(sd, [&](const std::string& e, const std::string& v) {
        return "    " + v + " = stage_" + sd.x + "(" + e + ", " + k0 + ", " + sd.base + ");\n";
      });
    return out;
  };
  std::string store;
  for (const Side& sd : sides)
    store += each_quad(sd, [&](const std::string& e, const std::string& v) {
      return std::string("    ") + (sd.x[0] == 'a' ? "As[ao + " : "Bs[bo + ") + "slot_" + sd.x + "(" + e + ")] = " + v +
             ";\n";
    });
  // The BK steps of one staged slice, unrolled: workgroup addresses are constants plus tx/ty.
  std::string compute;
  for (int kk = 0; kk < t.bk; kk++) {
    for (int q = 0; q < hm; q++)
      compute += "    let a" + n(q) + "_" + n(kk) + " = As[ao + ty + " + u(kk * t.bm / 4 + q * t.bm / (4 * hm)) + "];\n";
    for (int r = 0; r < hn; r++)
      compute += "    let b" + n(r) + "_" + n(kk) + " = Bs[bo + tx + " + u(kk * t.bn / 4 + r * t.bn / (4 * hn)) + "];\n";
    for (int q = 0; q < hm; q++)
      for (int a = 0; a < 4; a++)
        for (int r = 0; r < hn; r++) {
          std::string cv = "c" + n(q) + "_" + n(a) + "_" + n(r);
          compute += "    " + cv + " = fma(vec4<f32>(a" + n(q) + "_" + n(kk) + "[" + n(a) + "]), b" + n(r) + "_" +
                     n(kk) + ", " + cv + ");\n";
        }
  }
  const std::string steps = u(c->k), bk = u(t.bk);
  const std::string size_a = u(t.bm * t.bk / 4), size_b = u(t.bn * t.bk / 4), more = "k0 + " + bk + " < " + steps;
  switch (p.staging) {
    case WgslStaging::Single:
      s += "  let ao = 0u; let bo = 0u;\n";
      s += "  for (var k0 = 0u; k0 < " + steps + "; k0 = k0 + " + bk + ") {\n" + load("k0") + store;
      s += "    workgroupBarrier();\n" + compute + "    workgroupBarrier();\n  }\n";
      break;
    case WgslStaging::Prefetch:
      // The next slice's global loads are issued before this slice's arithmetic, so their
      // latency hides behind it.
      s += "  let ao = 0u; let bo = 0u;\n" + load("0u");
      s += "  for (var k0 = 0u; k0 < " + steps + "; k0 = k0 + " + bk + ") {\n" + store + "    workgroupBarrier();\n";
      s += "    if (" + more + ") {\n" + load("k0 + " + bk) + "    }\n" + compute + "    workgroupBarrier();\n  }\n";
      break;
    case WgslStaging::Double:
      // Prefetching into the other copy: slice s+1 is stored while no one reads that copy
      // (the barrier ending step s-1 separated its last reads), so one barrier per step.
      s += "  var ao = 0u; var bo = 0u;\n" + load("0u") + store + "  workgroupBarrier();\n";
      s += "  for (var k0 = 0u; k0 < " + steps + "; k0 = k0 + " + bk + ") {\n";
      s += "    if (" + more + ") {\n" + load("k0 + " + bk) + "    }\n" + compute;
      s += "    ao = " + size_a + " - ao; bo = " + size_b + " - bo;\n";
      s += "    if (" + more + ") {\n" + store + "    }\n    workgroupBarrier();\n  }\n";
      break;
  }
  // Stores: row i0 + ty*4 + q*(BM/hm) + a, column j0 + tx*4 + r*(BN/hn) + e.
  for (int q = 0; q < hm; q++)
    for (int a = 0; a < 4; a++) {
      s += "  {\n    let i = i0 + i32(ty) * 4 + " + n(q * t.bm / hm + a) + ";\n    if (i < " + n(c->m) + ") {\n";
      for (int r = 0; r < hn; r++)
        for (int e = 0; e < 4; e++) {
          s += "      { let j = j0 + i32(tx) * 4 + " + n(r * t.bn / hn + e) + "; if (j < " + n(c->n) +
               ") { let g = (bm0 + i) * " + n(c->n) + " + j; out[u32(g)] = " +
               wgsl_store_bits(k.out_dtype(), "f_epi(g, c" + n(q) + "_" + n(a) + "_" + n(r) + "[" + n(e) + "])") +
               "; } }\n";
        }
      s += "    }\n  }\n";
    }
  s += "}\n";
  w.wgsl = std::move(s);
  return w;
}

}  // namespace kiln::webgpu
