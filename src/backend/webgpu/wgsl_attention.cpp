// decode_attention in WGSL (wgsl_attention.h): one workgroup per query head walks the
// attended cache rows and then the new row, kWG rows at a time: each invocation scores one
// row (q from workgroup memory), and every invocation folds the tile's scores into the
// running maximum, exponential sum and weighted values of its own output dims (an online
// softmax in f32, as flash attention merges blocks). The length comes from the start operand
// at run time, so every position runs the same pipeline; nothing is materialized between the
// six kernels of the unfused form (scores, new row's score, max, exp, sum, weighted sum).
#include "backend/webgpu/wgsl_attention.h"

#include <cstring>
#include <cstdint>

namespace kiln::webgpu {

namespace {

std::string u(int64_t v) { return std::to_string(v) + "u"; }

}  // namespace

std::string decode_attention_wgsl(const DecodeAttentionShape& s) {
  const int64_t D = s.head_dim, G = s.heads / s.kv_heads, row = s.kv_heads * s.head_dim, wg = kAttentionWorkgroup;
  std::string w;
  w += "// decode_attention: one workgroup per query head, online softmax over the cache rows and the new row\n";
  w += "struct Params { size: u32 }\n@group(0) @binding(0) var<uniform> params: Params;\n";
  w += "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n";
  const char* names[6] = {"q", "keys", "vals", "knew", "vnew", "start"};
  for (int i = 0; i < 6; ++i)
    w += "@group(0) @binding(" + std::to_string(2 + i) + ") var<storage, read> " + names[i] + ": array<" +
         (i == 5 ? "i32" : "f32") + ">;\n";
  w += "const D: u32 = " + u(D) + ";\nconst G: u32 = " + u(G) + ";\nconst ROW: u32 = " + u(row) + ";\n";
  w += "const WG: u32 = " + u(wg) + ";\nconst DPT: u32 = " + u((D + wg - 1) / wg) + ";\n";
  w += "const C: i32 = " + std::to_string(s.n_ctx) + ";\nconst W: i32 = " + std::to_string(s.window) + ";\n";
  w += "const QOFF: u32 = " + u(s.offset[0]) + ";\nconst KNOFF: u32 = " + u(s.offset[3]) + ";\n";
  w += "const VNOFF: u32 = " + u(s.offset[4]) + ";\nconst SOFF: u32 = " + u(s.offset[5]) + ";\n";
  w += "const VDELTA: i32 = " + std::to_string(s.offset[2] - s.offset[1]) + ";\n";
  // The scale by its bits: the text gives exactly the float the reference multiplies by.
  w += "const SCALE_BITS: u32 = " + u(float_bits(s.scale)) + ";\n";
  w += "var<workgroup> sq: array<f32, " + std::to_string(D > 0 ? D : 1) + ">;\n";
  w += "var<workgroup> ss: array<f32, " + std::to_string(wg) + ">;\n";
  w += "var<workgroup> send: i32;\n";
  w += R"(
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let h = wid.x;
  let kh = h / G;
  let scale = bitcast<f32>(SCALE_BITS);
  for (var d = t; d < D; d += WG) { sq[d] = q[QOFF + h * D + d]; }
  if (t == 0u) { send = clamp(start[SOFF], 0, C); }
  // The length, uniform across the workgroup (the loop below has barriers).
  let end = workgroupUniformLoad(&send);
  var begin = 0;
  if (W > 0) { begin = max(end - W + 1, 0); }
  let n = end - begin + 1;  // attended rows, the new one last
  let kbase = params.size + kh * D;
  let vbase = u32(i32(params.size) + VDELTA) + kh * D;
  var m = -3.0e38;  // below any score; exp(m - score) is 0
  var l = 0.0;
  var acc: array<f32, DPT>;
  for (var base = 0; base < n; base += i32(WG)) {
    let r = base + i32(t);
    var s = 0.0;
    if (r < n) {
      let c = begin + r;
      var dot = 0.0;
      if (c < end) {
        let o = kbase + u32(c) * ROW;
        for (var d = 0u; d < D; d++) { dot += sq[d] * keys[o + d]; }
      } else {
        let o = KNOFF + kh * D;
        for (var d = 0u; d < D; d++) { dot += sq[d] * knew[o + d]; }
      }
      s = scale * dot;
    }
    ss[t] = s;
    workgroupBarrier();
    let cnt = min(i32(WG), n - base);
    var tm = m;
    for (var j = 0; j < cnt; j++) { tm = max(tm, ss[j]); }
    let corr = exp(m - tm);
    l *= corr;
    for (var i = 0u; i < DPT; i++) { acc[i] *= corr; }
    for (var j = 0; j < cnt; j++) {
      let p = exp(ss[j] - tm);
      l += p;
      let c = begin + base + j;
      for (var i = 0u; i < DPT; i++) {
        let d = t + i * WG;
        if (d < D) {
          if (c < end) {
            acc[i] += p * vals[vbase + u32(c) * ROW + d];
          } else {
            acc[i] += p * vnew[VNOFF + kh * D + d];
          }
        }
      }
    }
    m = tm;
    workgroupBarrier();
  }
  for (var i = 0u; i < DPT; i++) {
    let d = t + i * WG;
    if (d < D) { out[h * D + d] = acc[i] / l; }
  }
}
)";
  return w;
}

}  // namespace kiln::webgpu
