// Running routine primitives (routine.h) on a device: eager, and as a jit program's step.
#include "frontend/routine.h"

#include <algorithm>

namespace kiln::frontend {

size_t routine_operands(Prim p, const Params& prm) {
  if (p == Prim::QuantizedMatmul) return quant_has_mins(prm.quant) ? 4 : 3;
  fail(prim_name(p), "is not a routine");
}

void run_routine(const RoutineCall& call, const std::string& device, const std::vector<BufferRef>& ins,
                 const BufferRef& out) {
  Backend& be = get_backend(device);
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
  RoutineCall call{p, prm, {}, out};
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
