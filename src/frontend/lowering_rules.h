// What each primitive computes, as expressions over its operands' elements and as views: the
// one lowering that both drivers use, eager (lowering.cpp) and the jit fuser (jit_fusion.cpp).
// The drivers differ only in how they read an operand and when they materialize one.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "frontend/primitive.h"

namespace kiln::frontend::lowering {

// Fusion limits: past these, operands are materialized first so kernels stay small.
inline constexpr int kMaxFusedNodes = 400;
inline constexpr size_t kMaxFusedInputs = 12;
// kMaxFusedInputs, or fewer where the device's kernels cannot bind that many buffers (webgpu).
size_t max_fused_inputs(const std::string& device);

// Primitives lowered to one scalar expression of their operands' elements.
bool is_pointwise(Prim p);
// Primitives lowered to a view of their operand (no computation).
bool is_view_op(Prim p);

// An expression whose recomputation per use costs no more than loading it: a constant, one
// buffer read at a variable index, or a few integer ops of the index alone (no loads).
bool is_cheap(const AluExp& e);

// The element of a pointwise primitive's output, given its operands' elements there.
AluExp pointwise_exp(Prim p, const Params& prm, const std::vector<AluExp>& operands);

// A reduction over prm.axes of an array of shape `in`: the per-axis index of the element
// read at step ridx of output gidx, the output size and the number of reduced elements.
struct ReduceIndex {
  std::vector<AluExp> idxs;
  int64_t out_size = 0, reduced_size = 0;
};
ReduceIndex reduce_index(const Shape& in, const std::vector<int>& axes);

// The view a movement primitive (is_view_op) makes of an operand viewed through st.
ShapeTracker view_rule(Prim p, const ShapeTracker& st, const Shape& in, const Params& prm, const Shape& out);

// Gather: the per-axis indices into x for the output element at gidx. index_at(idxs) is the
// index array's element at idxs; indices are wrapped once if negative, then clamped.
std::vector<AluExp> gather_source_index(const Shape& x, const Params& prm, const Shape& index_shape,
                                        const Aval& out,
                                        const std::function<AluExp(const std::vector<AluExp>&)>& index_at);

}  // namespace kiln::frontend::lowering
