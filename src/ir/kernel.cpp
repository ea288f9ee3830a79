// Kernel printing and reduction identities.
#include "ir/kernel.h"

#include <limits>
#include <sstream>

#include "ir/error.h"

namespace kiln {

double Reduction::identity(AluOp op, DType dtype) {
  switch (op) {
    case AluOp::Add:
    case AluOp::Or: return 0;  // Or and And: bool reductions after legalize()
    case AluOp::Mul:
    case AluOp::And: return 1;
    case AluOp::Max:
      return dtype == DType::Bool ? 0
             : dtype == DType::Int32 ? -2147483648.0
             : dtype == DType::Uint32 ? 0
                                      : -std::numeric_limits<double>::infinity();
    case AluOp::Min:
      return dtype == DType::Bool ? 1
             : dtype == DType::Int32 ? 2147483647.0
             : dtype == DType::Uint32 ? 4294967295.0
                                      : std::numeric_limits<double>::infinity();
    default: fail("Reduction", "op ", alu_info(op).name, " is not a reduction, expected add, mul, max, min, or or and");
  }
}

std::string Kernel::to_string() const {
  std::ostringstream os;
  os << "Kernel(size=" << size << ", inputs=[";
  for (size_t i = 0; i < inputs.size(); i++) os << (i ? ", " : "") << "in" << i << ": " << dtype_name(inputs[i]);
  os << "], out: " << dtype_name(out_dtype()) << ")\n";
  if (prelude)
    os << "  pre = " << prelude->value.to_string() << " with acc = " << alu_info(prelude->op).name
       << " over ridx < " << prelude->size << " of " << prelude->exp.to_string() << "\n";
  if (reduction) {
    os << "  reduce " << alu_info(reduction->op).name << " over ridx < " << reduction->size << ":\n";
    os << "    " << exp.to_string() << "\n";
    os << "  epilogue: out[gidx] = " << reduction->epilogue.to_string() << "\n";
  } else {
    os << "  out[gidx] = " << exp.to_string() << "\n";
  }
  return os.str();
}

}  // namespace kiln
