// A Kernel compiled to a flat instruction list and run over blocks of lanes, so the
// dispatch cost of interpreting is paid once per block rather than per element.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/kernel.h"

namespace kiln::cpu {

struct Instr {
  AluOp op;
  DType dtype;      // result dtype
  DType src_dtype;  // dtype of src[0]
  int src[3] = {-1, -1, -1};
  double value = 0;  // Const
  int arg = 0;       // Load input / VarId
};

// Straight-line code: register i holds instruction i's result.
struct Program {
  std::vector<Instr> code;
  int result = -1;
  static Program compile(const AluExp& exp);
};

// A typed view of one input or output buffer.
struct BufferView {
  uint8_t* data;
  DType dtype;
  int64_t count;
};
double load_element(const BufferView& b, int64_t i);  // 0 when out of bounds
void store_element(const BufferView& b, int64_t i, double v);

// Evaluates `prog` for `n` lanes whose variables are given per lane (nullptr = unused);
// writes the result of each lane into `out`.
void run_block(const Program& prog, const std::vector<BufferView>& inputs, int n,
               const double* gidx, const double* ridx, const double* acc, double* out,
               std::vector<std::vector<double>>& regs);

// Runs a whole kernel into `output`.
void run_kernel(const Kernel& k, const Program& body, const Program* epilogue,
                const std::vector<BufferView>& inputs, const BufferView& output);

}  // namespace kiln::cpu
