// Routine primitives (PrimKind::Routine: quantized_matmul, decode_attention): each runs as one call of the
// device's routine on realized buffers, never fused into kernels. Eager evaluation realizes
// the operands; jit makes the primitive a fusion barrier with a program step of its own
// (ProgramStep::routine). Their shape, jvp and batching rules live here too, reached from the
// per-transformation tables. docs/ARCHITECTURE.md, "Integer-dot matvec".
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "frontend/jit_program.h"
#include "frontend/vmap.h"

namespace kiln::frontend {

// The operands the device reads (quantized_matmul with Int8 codes has no mins: 3 of 4).
size_t routine_operands(Prim p, const Params& prm);
// Whether the routine reads its operands at an element offset in their buffers (a view of a
// jit argument or of another kernel's output, passed without a copy): decode_attention,
// whose cache operands are a layer's part of the whole cache.
bool routine_reads_offsets(Prim p);
// Runs the routine on `ins` (routine_operands of them, row-major from call.in_offsets, or 0)
// into `out`.
void run_routine(const RoutineCall& call, const std::string& device, const std::vector<BufferRef>& ins,
                 const BufferRef& out);
// Eager lowering: realizes the operands and runs the routine into a new buffer.
ImplRef lower_routine(Prim p, const std::vector<ImplRef>& in, const Params& prm, const Aval& out);

// quantized_matmul's rules (shape_rules, jvp_rules and vmap_rules call them).
Aval quantized_matmul_shape(const std::vector<Aval>& in, const Params& prm);
// Straight-through in x: the tangent is tx @ W^T with W dequantized in float (the rounding's
// derivative is zero almost everywhere), built of linear primitives, so linearize transposes
// it (the cotangent of x is ct @ W). Tangents of the scales and mins are not supported.
std::pair<Array, Array> quantized_matmul_jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                             const Params& prm);
// Batched over x's leading axes; batched weights are an error.
std::pair<Array, BatchDim> quantized_matmul_vmap(const std::vector<Array>& v, const std::vector<BatchDim>& d,
                                                 const Params& prm, int64_t n);
// The weight as float32 [rows, k], a lazy expression of the packed operands (no kernel).
Array dequantize_packed(const Array& codes, const Array& d, const Array& mins, QuantLayout layout, int64_t rows,
                        int64_t k);

// decode_attention's rules (decode_attention_rules.cpp).
Aval decode_attention_shape(const std::vector<Aval>& in, const Params& prm);
// The unfused formula of one call (operands as the primitive's), and of a batch (every
// operand with a leading batch axis): the jvp and vmap rules and the tests use it.
Array decode_attention_unfused(const std::vector<Array>& x, const Params& prm);
Array decode_attention_formula(const std::vector<Array>& batched, const Params& prm);
std::pair<Array, Array> decode_attention_jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                             const Params& prm);
std::pair<Array, BatchDim> decode_attention_vmap(const std::vector<Array>& v, const std::vector<BatchDim>& d,
                                                 const Params& prm, int64_t n);

// A routine's operand check for its shape rule: `prim`'s error names the operand, what it is
// and what was expected.
inline void expect_routine_operand(const char* prim, const Aval& a, const char* name, DType dtype,
                                   const Shape& shape) {
  if (a.dtype != dtype || a.shape != shape)
    fail(prim, std::string(name) + " is " + a.str() + ", expected " + Aval{shape, dtype}.str());
}

}  // namespace kiln::frontend
