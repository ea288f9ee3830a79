// Primitives: the operations every transformation understands. Each has one entry in
// the rule tables: its shape/dtype rule (shape_rules.cpp) and eager lowering
// (lowering.cpp). The library (numpy, lax) is written only in terms of frontend::bind().
#pragma once
#include <string>
#include <vector>

#include "frontend/array.h"
#include "frontend/array_impl.h"
#include "ir/view.h"

namespace kiln::frontend {

enum class Prim : uint8_t {
  // Elementwise, each lowered to the AluOp of the same name. Operands have equal shapes
  // and dtypes (the numpy layer broadcasts and promotes).
  Neg, Recip, Sqrt, Exp, Exp2, Expm1, Log, Log2, Log1p,
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Erf,
  Floor, Ceil, Round, Trunc, Not, IsNan,
  Add, Sub, Mul, Div, Idiv, Mod, Pow, Atan2, Max, Min,
  CmpLt, CmpLe, CmpEq, CmpNe, And, Or, Xor, Shl, Shr,
  Where,
  Cast,     // params.dtype (and params.weak)
  Bitcast,  // params.dtype
  // Reductions over params.axes, dropping them.
  ReduceSum, ReduceProd, ReduceMax, ReduceMin,
  // Movement: views, never copies.
  Reshape,    // params.shape
  Transpose,  // params.axes: the permutation
  Expand,     // params.shape: size-1 axes grow (same rank)
  Pad,        // params.ranges: (before, after) per axis, zeros
  Shrink,     // params.ranges: [begin, end) per axis
  Flip,       // params.axes
  Stride,     // params.dims: a step >= 1 per axis
  // Sliding windows: x[d0..dn) -> [o0..on, k0..kn) with element
  // x[o*strides + k*dilation]; params.dims = window, params.strides, params.dilation.
  Window,
  // x.take(indices) along params.axes[0], negative indices wrapped once, then clamped.
  Gather,
};

// Parameters of a primitive application; each primitive reads the fields it documents.
struct Params {
  DType dtype = DType::Float32;
  bool weak = false;
  Shape shape;
  std::vector<int> axes;
  Ranges ranges;
  Dims dims, strides, dilation;
};

const char* prim_name(Prim p);
AluOp prim_alu_op(Prim p);  // for elementwise and reduction primitives
bool is_elementwise(Prim p);
bool is_reduction(Prim p);
int prim_arity(Prim p);

// The output type of p applied to inputs of these types; throws kiln::Error on bad input.
Aval shape_rule(Prim p, const std::vector<Aval>& in, const Params& params);
// Evaluates p eagerly on concrete arrays (building lazy expressions or running kernels).
ImplRef lower(Prim p, const std::vector<ImplRef>& in, const Params& params, const Aval& out);

// Applies a primitive: checks its inputs, then evaluates it. Transformations hook in here.
Array bind(Prim p, const std::vector<Array>& args, const Params& params = {});

}  // namespace kiln::frontend
