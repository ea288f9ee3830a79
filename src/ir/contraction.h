// The batch x rows x columns structure of a sum-of-products reduction kernel, for code
// generators that tile it (wasm's register tiles; later WebGPU's workgroup tiles).
//
// gidx and ridx are split into mixed-radix digits (gidx = sum of place * digit): a digit is
// split whenever an index divides or takes a remainder at a place inside it, until every
// `//` and `%` by a constant acts on whole digits. Each operand of the product then reads a
// known set of digits, and the output digits group as [batch | rows | columns] (most to
// least significant): columns are read by one operand (B) only, rows by the other (A) only,
// the batch by either. So a matmul, a batched matmul, a convolution (rows = output
// channels, columns = output pixels, batch = images) and both of its gradients all match.
#pragma once
#include <cstdint>
#include <optional>

#include "ir/alu_exp.h"
#include "ir/kernel.h"

namespace kiln {

struct ContractionOperand {
  AluExp factor;  // the factor of the product (a subtree of the body)
  // When the factor is a plain load whose index is exactly
  //   c0 + cb * batch + ci * row + cj * column + cr * ridx,
  // `linear` is set (A has cj == 0, B has ci == 0) and the range of the index over the
  // whole grid is [lo, hi]. Otherwise the factor is an expression to evaluate per element.
  bool linear = false;
  int arg = -1;
  int64_t c0 = 0, cb = 0, ci = 0, cj = 0, cr = 0;
  int64_t lo = 0, hi = 0;
};

struct ContractionShape {
  int64_t batch = 1, m = 1, n = 1, k = 0;  // gidx = (b * m + i) * n + j, ridx < k
  ContractionOperand a;                    // reads (batch, row, ridx), never the column
  ContractionOperand b;                    // reads (batch, column, ridx), never the row
};

// For an Add reduction whose body is `x * y` (any dtype), the split with the most columns
// (x and y may swap roles); nullopt if the digits do not separate that way.
std::optional<ContractionShape> analyze_contraction(const Kernel& k);

}  // namespace kiln
