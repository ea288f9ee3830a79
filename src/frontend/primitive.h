// Primitives: the operations every transformation understands. kPrimTable below says what
// each one is; its rules live in one table per transformation (shape_rules.cpp,
// lowering_rules.cpp, jvp_rules.cpp, transpose_rules.cpp, vmap_rules.cpp). The library
// (numpy, lax) is written only in terms of frontend::bind().
#pragma once
#include <iterator>
#include <string>
#include <vector>

#include "backend/quantized_matmul.h"
#include "frontend/array.h"
#include "frontend/array_impl.h"
#include "ir/alu_op.h"
#include "ir/view.h"

namespace kiln::frontend {

enum class Prim : uint8_t {
  // Elementwise, each lowered to the AluOp of the same name. Operands have equal shapes
  // and dtypes (the numpy layer broadcasts and promotes).
  Neg, Recip, Sqrt, Exp, Exp2, Expm1, Log, Log2, Log1p,
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Erf,
  Floor, Ceil, Round, Trunc, Not, IsNan,
  Add, Sub, Mul, Div, Idiv, Mod, Pow, Atan2, Max, Min,
  Logaddexp,  // log(exp(a) + exp(b)), lowered to an expression of other AluOps
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
  // Routines: run on realized buffers by the device, never fused (routine.h).
  // quantized_matmul(x [..., k] f32, codes, d, mins) -> [..., params.rows]: x against packed
  // integer weight rows of layout params.quant (backend/quantized_matmul.h has the operands'
  // shapes and the definition: x rounded to int16 per 32 values, exact integer block sums).
  QuantizedMatmul,
  // decode_attention(q [H, D], keys [C, Hkv, D], values [C, Hkv, D], k [Hkv, D], v [Hkv, D],
  // start int32 []) -> [H, D]: one token's grouped-query attention over a KV cache's rows
  // before start (within params.sliding_window when > 0) and its own new row, scores scaled by
  // params.scale (backend/decode_attention.h has the definition).
  DecodeAttention,
  NumPrims  // not a primitive: the count, so every table is sized by it
};
inline constexpr size_t kNumPrims = size_t(Prim::NumPrims);

// Parameters of a primitive application. Each field has one meaning, and each primitive
// reads the fields its comment above names.
struct Params {
  DType dtype = DType::Float32;  // Cast, Bitcast: the new dtype
  bool weak = false;             // Cast: the result is weakly typed
  Shape shape;                   // Reshape, Expand: the new shape
  std::vector<int> axes;         // reductions, Flip, Gather: axes; Transpose: the permutation
  Ranges ranges;                 // Pad: (before, after) widths; Shrink: [begin, end) per axis
  Dims window;                   // Window: the window's size per axis
  Dims strides;                  // Stride, Window: the step per axis
  Dims dilation;                 // Window: the distance between window elements per axis
  QuantLayout quant = QuantLayout::Nibble4;  // QuantizedMatmul: how the codes are packed
  int64_t rows = 0;                          // QuantizedMatmul: the weight's rows (outputs)
  float scale = 0;                           // DecodeAttention: scores are scale * dot(q, k)
  int64_t sliding_window = 0;                // DecodeAttention: attended cache rows (0: all)
};

// What the transformations need to know of a primitive. The lowering follows from the kind;
// a linear primitive has a transpose rule (in its linear operands), every one a jvp and a
// batching rule. The rule tables check this when they are built.
enum class PrimKind : uint8_t {
  Elementwise,  // one AluOp over operands of equal shape
  Convert,      // Cast, Bitcast: a dtype change, elementwise
  Reduction,    // an AluOp folded over params.axes
  Movement,     // a view of the operand
  Gather,
  Routine,      // run on realized buffers by the device's routine (routine.h), not fused
};
// The dtypes an elementwise primitive accepts (its shape rule checks them).
enum class Operands : uint8_t {
  Any,
  Numeric,    // not bool
  Float,      // float16/32/64
  Int,        // int32/uint32
  IntOrBool,  // bitwise ops
};
struct PrimInfo {
  Prim prim;
  const char* name;  // JAX's name: errors and printed jaxprs use it
  int arity;
  PrimKind kind;
  // Elementwise and Reduction: the scalar op. Const for the other kinds, and for composite
  // elementwise primitives, whose expression lowering_rules.cpp builds from other AluOps.
  AluOp alu;
  bool linear;
  Operands operands = Operands::Any;
};

// One row per primitive, in the order of Prim (checked below).
inline constexpr PrimInfo kPrimTable[] = {
    // clang-format off
    {Prim::Neg, "neg", 1, PrimKind::Elementwise, AluOp::Neg, true, Operands::Numeric},
    {Prim::Recip, "recip", 1, PrimKind::Elementwise, AluOp::Recip, false, Operands::Numeric},
    {Prim::Sqrt, "sqrt", 1, PrimKind::Elementwise, AluOp::Sqrt, false, Operands::Float},
    {Prim::Exp, "exp", 1, PrimKind::Elementwise, AluOp::Exp, false, Operands::Float},
    {Prim::Exp2, "exp2", 1, PrimKind::Elementwise, AluOp::Exp2, false, Operands::Float},
    {Prim::Expm1, "expm1", 1, PrimKind::Elementwise, AluOp::Expm1, false, Operands::Float},
    {Prim::Log, "log", 1, PrimKind::Elementwise, AluOp::Log, false, Operands::Float},
    {Prim::Log2, "log2", 1, PrimKind::Elementwise, AluOp::Log2, false, Operands::Float},
    {Prim::Log1p, "log1p", 1, PrimKind::Elementwise, AluOp::Log1p, false, Operands::Float},
    {Prim::Sin, "sin", 1, PrimKind::Elementwise, AluOp::Sin, false, Operands::Float},
    {Prim::Cos, "cos", 1, PrimKind::Elementwise, AluOp::Cos, false, Operands::Float},
    {Prim::Tan, "tan", 1, PrimKind::Elementwise, AluOp::Tan, false, Operands::Float},
    {Prim::Asin, "asin", 1, PrimKind::Elementwise, AluOp::Asin, false, Operands::Float},
    {Prim::Acos, "acos", 1, PrimKind::Elementwise, AluOp::Acos, false, Operands::Float},
    {Prim::Atan, "atan", 1, PrimKind::Elementwise, AluOp::Atan, false, Operands::Float},
    {Prim::Sinh, "sinh", 1, PrimKind::Elementwise, AluOp::Sinh, false, Operands::Float},
    {Prim::Cosh, "cosh", 1, PrimKind::Elementwise, AluOp::Cosh, false, Operands::Float},
    {Prim::Tanh, "tanh", 1, PrimKind::Elementwise, AluOp::Tanh, false, Operands::Float},
    {Prim::Asinh, "asinh", 1, PrimKind::Elementwise, AluOp::Asinh, false, Operands::Float},
    {Prim::Acosh, "acosh", 1, PrimKind::Elementwise, AluOp::Acosh, false, Operands::Float},
    {Prim::Atanh, "atanh", 1, PrimKind::Elementwise, AluOp::Atanh, false, Operands::Float},
    {Prim::Erf, "erf", 1, PrimKind::Elementwise, AluOp::Erf, false, Operands::Float},
    {Prim::Floor, "floor", 1, PrimKind::Elementwise, AluOp::Floor, false},
    {Prim::Ceil, "ceil", 1, PrimKind::Elementwise, AluOp::Ceil, false},
    {Prim::Round, "round", 1, PrimKind::Elementwise, AluOp::Round, false},
    {Prim::Trunc, "trunc", 1, PrimKind::Elementwise, AluOp::Trunc, false},
    {Prim::Not, "not", 1, PrimKind::Elementwise, AluOp::Not, false, Operands::IntOrBool},
    {Prim::IsNan, "is_nan", 1, PrimKind::Elementwise, AluOp::IsNan, false},
    {Prim::Add, "add", 2, PrimKind::Elementwise, AluOp::Add, true, Operands::Numeric},
    {Prim::Sub, "sub", 2, PrimKind::Elementwise, AluOp::Sub, true, Operands::Numeric},
    {Prim::Mul, "mul", 2, PrimKind::Elementwise, AluOp::Mul, true, Operands::Numeric},
    {Prim::Div, "div", 2, PrimKind::Elementwise, AluOp::Div, true, Operands::Numeric},
    {Prim::Idiv, "floor_div", 2, PrimKind::Elementwise, AluOp::Idiv, false, Operands::Numeric},
    {Prim::Mod, "mod", 2, PrimKind::Elementwise, AluOp::Mod, false, Operands::Numeric},
    {Prim::Pow, "pow", 2, PrimKind::Elementwise, AluOp::Pow, false, Operands::Numeric},
    {Prim::Atan2, "atan2", 2, PrimKind::Elementwise, AluOp::Atan2, false, Operands::Float},
    {Prim::Max, "max", 2, PrimKind::Elementwise, AluOp::Max, false},
    {Prim::Min, "min", 2, PrimKind::Elementwise, AluOp::Min, false},
    {Prim::Logaddexp, "logaddexp", 2, PrimKind::Elementwise, AluOp::Const, false, Operands::Float},
    {Prim::CmpLt, "lt", 2, PrimKind::Elementwise, AluOp::CmpLt, false},
    {Prim::CmpLe, "le", 2, PrimKind::Elementwise, AluOp::CmpLe, false},
    {Prim::CmpEq, "eq", 2, PrimKind::Elementwise, AluOp::CmpEq, false},
    {Prim::CmpNe, "ne", 2, PrimKind::Elementwise, AluOp::CmpNe, false},
    {Prim::And, "and", 2, PrimKind::Elementwise, AluOp::And, false, Operands::IntOrBool},
    {Prim::Or, "or", 2, PrimKind::Elementwise, AluOp::Or, false, Operands::IntOrBool},
    {Prim::Xor, "xor", 2, PrimKind::Elementwise, AluOp::Xor, false, Operands::IntOrBool},
    {Prim::Shl, "shift_left", 2, PrimKind::Elementwise, AluOp::Shl, false, Operands::Int},
    {Prim::Shr, "shift_right", 2, PrimKind::Elementwise, AluOp::Shr, false, Operands::Int},
    {Prim::Where, "select", 3, PrimKind::Elementwise, AluOp::Where, true},
    {Prim::Cast, "convert_element_type", 1, PrimKind::Convert, AluOp::Const, true},
    {Prim::Bitcast, "bitcast_convert_type", 1, PrimKind::Convert, AluOp::Const, false},
    {Prim::ReduceSum, "reduce_sum", 1, PrimKind::Reduction, AluOp::Add, true},
    {Prim::ReduceProd, "reduce_prod", 1, PrimKind::Reduction, AluOp::Mul, false},
    {Prim::ReduceMax, "reduce_max", 1, PrimKind::Reduction, AluOp::Max, false},
    {Prim::ReduceMin, "reduce_min", 1, PrimKind::Reduction, AluOp::Min, false},
    {Prim::Reshape, "reshape", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Transpose, "transpose", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Expand, "broadcast_in_dim", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Pad, "pad", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Shrink, "slice", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Flip, "rev", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Stride, "stride", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Window, "window", 1, PrimKind::Movement, AluOp::Const, true},
    {Prim::Gather, "gather", 2, PrimKind::Gather, AluOp::Const, true},
    {Prim::QuantizedMatmul, "quantized_matmul", 4, PrimKind::Routine, AluOp::Const, false},
    {Prim::DecodeAttention, "decode_attention", 6, PrimKind::Routine, AluOp::Const, false},
    // clang-format on
};

constexpr bool prim_table_follows_enum() {
  if (std::size(kPrimTable) != kNumPrims) return false;
  for (size_t i = 0; i < kNumPrims; i++)
    if (size_t(kPrimTable[i].prim) != i) return false;
  return true;
}
static_assert(prim_table_follows_enum(), "kPrimTable needs one row per Prim, in the enum's order");

constexpr const PrimInfo& prim_info(Prim p) { return kPrimTable[size_t(p)]; }
constexpr const char* prim_name(Prim p) { return prim_info(p).name; }
constexpr int prim_arity(Prim p) { return prim_info(p).arity; }
constexpr bool is_elementwise(Prim p) { return prim_info(p).kind == PrimKind::Elementwise; }
constexpr bool is_reduction(Prim p) { return prim_info(p).kind == PrimKind::Reduction; }
constexpr bool is_routine(Prim p) { return prim_info(p).kind == PrimKind::Routine; }
AluOp prim_alu_op(Prim p);  // for elementwise and reduction primitives; throws otherwise

// Checks a transformation's rule table once it is built: one slot per primitive, a rule in
// every slot `needs` says must have one and none elsewhere; throws naming the primitive.
template <class Rule>
void check_rule_table(const char* transformation, const std::vector<Rule>& table, bool (*needs)(Prim)) {
  if (table.size() != kNumPrims)
    fail(transformation, "rule table has ", table.size(), " slots, expected ", kNumPrims);
  for (size_t i = 0; i < kNumPrims; i++) {
    Prim p = Prim(i);
    if (bool(table[i]) != needs(p))
      fail(transformation, "primitive ", prim_name(p), needs(p) ? " has no rule" : " has a rule but is not linear");
  }
}

// The output type of p applied to inputs of these types; throws kiln::Error on bad input.
Aval shape_rule(Prim p, const std::vector<Aval>& in, const Params& params);
// Evaluates p eagerly on concrete arrays (building lazy expressions or running kernels).
ImplRef lower(Prim p, const std::vector<ImplRef>& in, const Params& params, const Aval& out);

// Applies a primitive: checks its inputs, then evaluates it. Transformations hook in here.
Array bind(Prim p, const std::vector<Array>& args, const Params& params = {});

}  // namespace kiln::frontend
