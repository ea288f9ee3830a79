// AluOp: the scalar operations of kernel expressions, with one table of their names and
// arities, and alu_eval, the exact scalar semantics every backend must reproduce.
#pragma once
#include <cstdint>

#include "ir/dtype.h"

namespace kiln {

enum class AluOp : uint8_t {
  // Leaves.
  Const,  // value
  Var,    // an index variable: gidx, ridx or acc (see VarId)
  Load,   // arg: kernel input number; src[0]: element index (int32)
  // Unary.
  Neg, Recip, Sqrt, Exp, Exp2, Expm1, Log, Log2, Log1p,
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Erf,
  Floor, Ceil, Round, Trunc,
  Not,      // bitwise not of ints, logical not of bool
  IsNan,    // -> bool
  Cast,     // converts src[0] to dtype (JAX's convert_element_type)
  Bitcast,  // reinterprets the bits of src[0] as dtype (same itemsize)
  // Binary.
  Add, Sub, Mul,
  Div,   // true division for floats; truncating for ints
  Idiv,  // floor division (NumPy floor_divide); x // 0 == 0 for ints
  Mod,   // NumPy mod: the result takes the sign of the divisor; x % 0 == 0 for ints
  Pow, Atan2, Max, Min,
  CmpLt, CmpLe, CmpEq, CmpNe,  // -> bool
  And, Or, Xor,                // bitwise for ints, logical for bool
  Shl, Shr,                    // shifts; Shr is arithmetic for int32, logical for uint32
  // Ternary.
  Where,  // src[0] ? src[1] : src[2]
};

// Lane: a code generator's position inside an output block (the native SIMD columns), so
// index arithmetic over "block * width + lane" simplifies to adjacent elements.
// Pre: the value of a Kernel's prelude (a small full reduction the kernel recomputes).
enum class VarId : uint8_t {
  Gidx, Ridx, Acc, Lane, Pre,
  Last = Pre  // a backend numbers Vars of its own after this one (webgpu's uniform words)
};

struct AluOpInfo {
  const char* name;
  int arity;  // number of sources
};
const AluOpInfo& alu_info(AluOp op);
inline bool is_comparison(AluOp op) { return op >= AluOp::CmpLt && op <= AluOp::CmpNe; }

// Rounds a double to the values representable in dtype (ints wrap, bool is x != 0).
double round_to(DType dtype, double x);
// float16 bits <-> float, round to nearest even.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

// Element i of a little-endian buffer of dtype, as a double, and back (float16 as IEEE
// half bits, bool as one byte).
double read_element(const uint8_t* data, DType dtype, int64_t i);
void write_element(uint8_t* data, DType dtype, int64_t i, double v);

// Applies op to already-rounded operands. `dtype` is the result dtype and `src_dtype` the
// dtype of the first operand (they differ for comparisons, Cast and Bitcast).
double alu_eval(AluOp op, DType dtype, DType src_dtype, double a, double b = 0, double c = 0);

}  // namespace kiln
