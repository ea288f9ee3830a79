// Kernel: the unit every backend compiles. One pointwise expression over N input buffers,
// written to one output, optionally reduced along a second index with a fused epilogue.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/alu_exp.h"

namespace kiln {

// out[gidx] = epilogue(acc = op over ridx in [0, size) of exp(gidx, ridx)).
struct Reduction {
  AluOp op;         // Add, Mul, Max or Min (Or/And on bool after legalize())
  int64_t size;     // length of the reduced index ridx
  AluExp epilogue;  // in terms of acc (the reduced value, dtype of exp) and gidx
  static double identity(AluOp op, DType dtype);
};

struct Kernel {
  std::vector<DType> inputs;  // dtype of each input buffer (Load args index this)
  int64_t size = 0;           // number of output elements, indexed by gidx
  AluExp exp;                 // the element (or, with a reduction, the reduced term)
  std::optional<Reduction> reduction;

  DType out_dtype() const { return reduction ? reduction->epilogue.dtype() : exp.dtype(); }
  // A readable listing, e.g. for docs and debugging.
  std::string to_string() const;
};

}  // namespace kiln
