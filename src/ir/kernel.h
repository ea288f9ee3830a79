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

// A scalar that every element of a kernel may read, recomputed by the kernel itself instead
// of read from a buffer another kernel wrote: value(acc = op over ridx in [0, size) of
// exp(ridx)), no gidx in either. The kernel's expressions read it as Var(Pre). Only backends that say so get kernels with
// one (Backend::recomputes_preludes: webgpu, where a dispatch costs the host more than a
// workgroup re-reading a small vector; RMSNorm's sum of squares inside the matvecs it feeds).
struct Prelude {
  AluOp op;
  int64_t size;
  AluExp exp;
  AluExp value;  // in terms of acc (the reduced value, dtype of exp)
};

struct Kernel {
  std::vector<DType> inputs;  // dtype of each input buffer (Load args index this)
  int64_t size = 0;           // number of output elements, indexed by gidx
  AluExp exp;                 // the element (or, with a reduction, the reduced term)
  std::optional<Reduction> reduction;
  std::optional<Prelude> prelude;

  DType out_dtype() const { return reduction ? reduction->epilogue.dtype() : exp.dtype(); }
  // A readable listing, e.g. for docs and debugging.
  std::string to_string() const;
};

}  // namespace kiln
