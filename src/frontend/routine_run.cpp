// Running routine primitives (routine.h) on a device: eager, and as a jit program's step.
#include "frontend/routine.h"

#include <algorithm>

namespace kiln::frontend {

size_t routine_operands(Prim p, const Params& prm) {
  if (p == Prim::QuantizedMatmul) return quant_has_mins(prm.quant) ? 4 : 3;
  if (p == Prim::DecodeAttention) return kDecodeAttentionOperands;
  fail(prim_name(p), "is not a routine");
}

bool routine_reads_offsets(Prim p) { return p == Prim::DecodeAttention; }

namespace {

void run_decode_attention(const RoutineCall& call, Backend& be, const std::vector<BufferRef>& ins,
                          const BufferRef& out) {
  if (!be.has_decode_attention())
    fail("decode_attention", "the ", be.name(),
         " device has no decode_attention routine (cpu, native, wasm and webgpu have one; the unfused",
         " formula runs anywhere)");
  DecodeAttentionShape s;
  const Shape& q = call.in[0].shape;  // [heads, head_dim] or [rows, heads, head_dim]
  s.rows = q.size() == 3 ? q[0] : 1;
  s.heads = q[q.size() - 2];
  s.head_dim = q[q.size() - 1];
  if (s.rows > 1 && !be.has_prefill_attention())
    fail("decode_attention", "the ", be.name(), " device runs decode_attention for one query row, not ", s.rows,
         " (the unfused formula runs anywhere)");
  s.n_ctx = call.in[1].shape[0];
  s.kv_heads = call.in[1].shape[1];
  s.window = call.params.sliding_window;
  s.scale = call.params.scale;
  std::vector<int64_t> handles;
  for (size_t i = 0; i < ins.size(); ++i) {
    handles.push_back(ins[i]->handle());
    s.offset[i] = call.in_offsets.empty() ? 0 : call.in_offsets[i];
  }
  if (s.rows * s.heads * s.head_dim == 0) return;  // nothing to write
  be.decode_attention(s, handles, out->handle());
}

}  // namespace

void run_routine(const RoutineCall& call, const std::string& device, const std::vector<BufferRef>& ins,
                 const BufferRef& out) {
  Backend& be = get_backend(device);
  if (call.prim == Prim::DecodeAttention) return run_decode_attention(call, be, ins, out);
  if (call.prim != Prim::QuantizedMatmul) fail(prim_name(call.prim), "is not a routine");
  if (!be.has_quantized_matmul())
    fail("quantized_matmul", "the ", device, " device has no quantized_matmul routine (cpu, native and wasm have one)");
  const Aval& x = call.in[0];
  QuantMatmulShape s;
  s.layout = call.params.quant;
  s.k = x.shape.back();
  s.m = s.k == 0 ? 0 : x.size() / s.k;
  s.rows = call.params.rows;
  std::vector<int64_t> handles;
  for (auto& b : ins) handles.push_back(b->handle());
  while (handles.size() < 4) handles.push_back(handles[0]);  // no mins: never read
  if (s.k == 0) {
    // An empty contraction: every output is 0 (the kernels would read no block).
    std::vector<float> zeros(size_t(call.out.size()), 0.0f);
    be.write(out->handle(), 0, zeros.data(), int64_t(zeros.size() * 4));
    return;
  }
  be.quantized_matmul(s, handles, out->handle());
}

ImplRef lower_routine(Prim p, const std::vector<ImplRef>& in, const Params& prm, const Aval& out) {
  const std::string& device = in[0]->device;
  RoutineCall call{p, prm, {}, out, {}};
  std::vector<BufferRef> ins;
  for (size_t i = 0; i < routine_operands(p, prm); ++i) {
    call.in.push_back(in[i]->aval);
    ins.push_back(in[i]->buffer());
  }
  BufferRef buf = get_backend(device).allocate(std::max<int64_t>(out.size(), 1) * itemsize(out.dtype));
  run_routine(call, device, ins, buf);
  return make_from_buffer(out, device, buf);
}

}  // namespace kiln::frontend
