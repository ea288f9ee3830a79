// Legalization: the last rewrite of a kernel before a backend renders it. It replaces the
// ops whose alu_eval semantics are not one plain operator in C, WGSL or Wasm by ops that are,
// so that every backend renders the same smaller op set the same way instead of re-encoding
// each rule. Every rewrite is exact: legalized and original expressions agree under alu_eval
// for every input (NaN, infinities, -0.0, division by zero, integer extremes).
//
// After legalize():
// - no arithmetic on bool: Add/Max become Or, Mul/Min/Div/Idiv And, Sub Xor, Mod false,
//   Pow a | !b, Neg/Recip/Sqrt the operand; bool reductions combine with Or/And;
// - Cast to bool is `x != 0` (true for NaN, as alu_eval's cast);
// - float32 Exp and Tanh are kiln's float32_math.h steps (unless expand_float32_math is off);
// - Where's condition is a bool (a number c means c != 0);
// - and, as the builders already guarantee: IsNan reads only floats, Floor/Ceil/Round/Trunc
//   only floats.
// Float Max/Min stay one op (NaN-propagating): every backend has a faster form than the
// select chain (a wasm bitselect sequence, g++'s vectorized ternary, a WGSL helper) and
// reductions combine with the op itself. Integer Idiv/Mod stay too: the index form (a
// non-negative dividend by a positive constant) is recognized by the analyses (contractions,
// lane strides) and rendered as the plain operator (truncation equals floor there).
#pragma once
#include "ir/alu_exp.h"
#include "ir/kernel.h"

namespace kiln {

struct LegalizeOptions {
  // CmpLt/CmpLe of bools as !a & b and !a | b: for targets that order no bools (WGSL).
  bool bool_order_as_logic = false;
  // float32 Exp and Tanh as the float32_math.h steps (what alu_eval computes), so that they
  // vectorize. Off for WGSL, whose exp and tanh are the GPU's (WebGPU's stated accuracy).
  bool expand_float32_math = true;
};

AluExp legalize(const AluExp& e, const LegalizeOptions& opts = {});
// The kernel's expression, epilogue and reduction op legalized.
Kernel legalize(const Kernel& k, const LegalizeOptions& opts = {});
// The combine op of a reduction over dtype after legalization (bool Add/Max -> Or,
// Mul/Min -> And); the identity is the same value.
AluOp legal_reduce_op(AluOp op, DType dtype);

// Whether truncating division and remainder equal op's floor semantics on these operands: an
// int Idiv/Mod of a non-negative dividend by a positive constant, which C, WGSL and
// Wasm compute with their own `/` and `%` (no zero divisor, no sign fix).
bool is_index_divmod(AluOp op, DType dt, int64_t dividend_vmin, bool divisor_is_const, double divisor);
inline bool is_index_divmod(AluOp op, const AluExp& a, const AluExp& b) {
  return is_index_divmod(op, a.dtype(), a.vmin(), b.is_const(), b.is_const() ? b.value() : 0);
}

}  // namespace kiln
