// decode_attention in WGSL (wgsl_attention.h), split-K as FlashDecoding does it. A single
// workgroup per head walking the whole cache was measured on an H100 at 82 tok/s against the
// unfused kernels' 280 (SmolLM2 shape, ~780 rows): one workgroup per SM leaves nothing to hide
// the loads' latency behind. So the rows are cut into chunks of kAttentionChunk, and a
// workgroup per (chunk, kv head) scores its rows for every query head of that kv head (each
// key and value row is read once for the group), takes the chunk's maximum, exponentials and
// weighted values (all f32), and writes them as a partial; a second kernel merges a head's
// partials, rescaling each by exp(m_chunk - m). The length comes from the start operand at
// run time, so every position runs the same two pipelines.
#include "backend/webgpu/wgsl_attention.h"

namespace kiln::webgpu {

namespace {

std::string u(int64_t v) { return std::to_string(v) + "u"; }

// Constants and the start-derived range both kernels share: rows begin .. end - 1 of the
// cache are attended, then the new row (n rows in all).
std::string common_constants(const DecodeAttentionShape& s) {
  std::string w;
  w += "const D: u32 = " + u(s.head_dim) + ";\nconst G: u32 = " + u(s.heads / s.kv_heads) + ";\n";
  w += "const CH: u32 = " + u(kAttentionChunk) + ";\nconst NCH: u32 = " + u(decode_attention_chunks(s)) + ";\n";
  w += "const S: u32 = " + u(s.head_dim + 2) + ";\n";
  w += "const C: i32 = " + std::to_string(s.n_ctx) + ";\nconst W: i32 = " + std::to_string(s.window) + ";\n";
  w += "const SOFF: u32 = " + u(s.offset[5]) + ";\n";
  w += R"(
// The attended range for the run-time start: [begin, end) of the cache, then the new row.
fn attended_begin(end: i32) -> i32 {
  if (W > 0) { return max(end - W + 1, 0); }
  return 0;
}
)";
  return w;
}

std::string binding(int index, const char* name, const char* type) {
  return "@group(0) @binding(" + std::to_string(index) + ") var<storage, read> " + name + ": array<" + type + ">;\n";
}

}  // namespace

std::string decode_attention_partial_wgsl(const DecodeAttentionShape& s) {
  const int64_t D = s.head_dim, G = s.heads / s.kv_heads;
  std::string w = "// decode_attention, partial: one chunk of rows for the query heads of one kv head\n";
  w += "struct Params { size: u32 }\n@group(0) @binding(0) var<uniform> params: Params;\n";
  w += "@group(0) @binding(1) var<storage, read_write> part: array<f32>;\n";
  const char* names[6] = {"q", "keys", "vals", "knew", "vnew", "start"};
  for (int i = 0; i < 6; ++i) w += binding(2 + i, names[i], i == 5 ? "i32" : "f32");
  w += common_constants(s);
  w += "const ROW: u32 = " + u(s.kv_heads * D) + ";\nconst DPT: u32 = " + u((D + kAttentionChunk - 1) / kAttentionChunk) + ";\n";
  w += "const QOFF: u32 = " + u(s.offset[0]) + ";\nconst KNOFF: u32 = " + u(s.offset[3]) + ";\n";
  w += "const VNOFF: u32 = " + u(s.offset[4]) + ";\n";
  w += "const VDELTA: i32 = " + std::to_string(s.offset[2] - s.offset[1]) + ";\n";
  // The scale by its bits: the text gives exactly the float the reference multiplies by.
  w += "const SCALE_BITS: u32 = " + u(float_bits(s.scale)) + ";\n";
  w += "var<workgroup> sq: array<f32, " + std::to_string(G * D > 0 ? G * D : 1) + ">;\n";
  w += "var<workgroup> sp: array<f32, " + std::to_string(G * kAttentionChunk) + ">;  // scores, then exponentials\n";
  w += "var<workgroup> send: i32;\n";
  w += R"(
@compute @workgroup_size(CH)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let chunk = wid.x;
  let kh = wid.y;
  if (t == 0u) { send = clamp(start[SOFF], 0, C); }
  let end = workgroupUniformLoad(&send);  // uniform across the workgroup (barriers follow)
  let begin = attended_begin(end);
  let n = end - begin + 1;
  let r0 = i32(chunk * CH);
  if (r0 >= n) { return; }  // past the length: the merge reads no partial of this chunk
  for (var i = t; i < G * D; i += CH) { sq[i] = q[QOFF + kh * G * D + i]; }
  workgroupBarrier();
  let scale = bitcast<f32>(SCALE_BITS);
  let kbase = params.size + kh * D;
  let vbase = u32(i32(params.size) + VDELTA) + kh * D;
  // Scores of this invocation's row for the group's heads.
  let r = r0 + i32(t);
  var s: array<f32, G>;
  if (r < n) {
    let c = begin + r;
    if (c < end) {
      let o = kbase + u32(c) * ROW;
      for (var d = 0u; d < D; d++) {
        let k = keys[o + d];
        for (var g = 0u; g < G; g++) { s[g] += sq[g * D + d] * k; }
      }
    } else {
      let o = KNOFF + kh * D;
      for (var d = 0u; d < D; d++) {
        let k = knew[o + d];
        for (var g = 0u; g < G; g++) { s[g] += sq[g * D + d] * k; }
      }
    }
    for (var g = 0u; g < G; g++) { sp[g * CH + t] = scale * s[g]; }
  }
  workgroupBarrier();
  let cnt = u32(min(i32(CH), n - r0));
  var m: array<f32, G>;
  for (var g = 0u; g < G; g++) {
    m[g] = sp[g * CH];
    for (var j = 1u; j < cnt; j++) { m[g] = max(m[g], sp[g * CH + j]); }
  }
  workgroupBarrier();  // every invocation has its maxima before the scores become exponentials
  if (t < cnt) {
    for (var g = 0u; g < G; g++) { sp[g * CH + t] = exp(sp[g * CH + t] - m[g]); }
  }
  workgroupBarrier();
  let pbase = (kh * G * NCH + chunk) * S;  // head kh * G + g's partial is g * NCH * S further
  for (var i = 0u; i < DPT; i++) {
    let d = t + i * CH;
    if (d < D) {
      var acc: array<f32, G>;
      // Zeroed explicitly: SwiftShader kept the previous iteration's values in a declaration
      // inside the loop.
      for (var g = 0u; g < G; g++) { acc[g] = 0.0; }
      for (var j = 0u; j < cnt; j++) {
        let c = begin + r0 + i32(j);
        var v: f32;
        if (c < end) { v = vals[vbase + u32(c) * ROW + d]; } else { v = vnew[VNOFF + kh * D + d]; }
        for (var g = 0u; g < G; g++) { acc[g] += sp[g * CH + j] * v; }
      }
      for (var g = 0u; g < G; g++) { part[pbase + g * NCH * S + 2u + d] = acc[g]; }
    }
  }
  if (t < G) {
    var l = 0.0;
    for (var j = 0u; j < cnt; j++) { l += sp[t * CH + j]; }
    part[pbase + t * NCH * S] = m[t];
    part[pbase + t * NCH * S + 1u] = l;
  }
}
)";
  return w;
}

std::string decode_attention_merge_wgsl(const DecodeAttentionShape& s) {
  std::string w = "// decode_attention, merge: a query head's chunk partials rescaled to one maximum\n";
  w += "struct Params { size: u32 }\n@group(0) @binding(0) var<uniform> params: Params;\n";
  w += "@group(0) @binding(1) var<storage, read_write> out: array<f32>;\n";
  w += binding(2, "part", "f32") + binding(3, "start", "i32");
  w += common_constants(s);
  w += R"(
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let h = wid.x;
  let end = clamp(start[SOFF], 0, C);
  let n = end - attended_begin(end) + 1;
  let chunks = u32((n + i32(CH) - 1) / i32(CH));
  let base = h * NCH * S;
  var m = part[base];
  for (var c = 1u; c < chunks; c++) { m = max(m, part[base + c * S]); }
  var l = 0.0;
  for (var c = 0u; c < chunks; c++) { l += part[base + c * S + 1u] * exp(part[base + c * S] - m); }
  for (var d = t; d < D; d += 64u) {
    var acc = 0.0;
    for (var c = 0u; c < chunks; c++) { acc += part[base + c * S + 2u + d] * exp(part[base + c * S] - m); }
    out[h * D + d] = acc / l;
  }
}
)";
  return w;
}

}  // namespace kiln::webgpu
