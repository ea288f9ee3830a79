// The compiled form of a jitted function: a straight-line program of prepared Kernels over
// numbered buffer slots, plus the jaxpr passes (simplify, print) that run before fusion.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "frontend/jaxpr.h"

namespace kiln::frontend {

// Where a slot's buffer comes from: a call argument, a constant captured at trace time, a
// temporary (pooled, freed after its last use) or an output (handed to the caller).
enum class SlotKind : uint8_t { Input, Const, Temp, Output };

struct Slot {
  SlotKind kind = SlotKind::Temp;
  int64_t bytes = 0;  // Temp/Output: size to allocate
  int input = -1;     // Input: argument number
  BufferRef constant; // Const: the buffer, kept alive by the program
};

// A routine primitive (routine.h) as a program step: what it needs to call the device.
struct RoutineCall {
  Prim prim = Prim::QuantizedMatmul;
  Params params;
  std::vector<Aval> in;  // the avals of the step's `ins`
  Aval out;
  // Each operand's first element in its buffer (routine_reads_offsets; empty: all 0).
  std::vector<int64_t> in_offsets;
};

struct ProgramStep {
  Kernel kernel;  // kept for KernelRecorder and printing
  std::shared_ptr<Executable> exe;
  std::vector<int> ins;  // slots in Load-arg order
  int out = -1;
  std::vector<int> free_after;  // Temp slots whose last use is this step
  // A control flow step (scan, while, cond; no kernel, out = -1): runs the op on the
  // buffers of `ins` (each one value, row-major from offset 0) with its bodies' own
  // compiled programs (control_run.cpp) and binds its results to the slots `outs`.
  std::shared_ptr<const ControlOp> control;
  std::vector<int> outs;
  // A routine step (no kernel): the device runs the primitive on the buffers of `ins` (each
  // row-major from offset 0) into a buffer for `out` (routine_run.cpp).
  std::shared_ptr<const RoutineCall> routine;
};

// An output: an expression over slots seen through a view (usually a plain load, or a
// view at an offset into a buffer shared by several outputs of one kernel).
struct ProgramOutput {
  Aval aval;
  AluExp exp;
  std::vector<int> srcs;
  ShapeTracker st;
};

struct Program {
  std::string device;
  std::vector<Slot> slots;
  std::vector<ProgramStep> steps;
  std::vector<ProgramOutput> outs;
  std::string str() const;  // every kernel, in order
};

// Constant folding (equations of constants only), identities (x*1, x+0), common
// subexpressions (same primitive, params and operands), dead code; returns a new jaxpr.
Jaxpr simplify_jaxpr(const Jaxpr& j);
// JAX-like text: "{ lambda c:f32[3] ; a:f32[3]. let b:f32[3] = sin a in (b,) }".
std::string jaxpr_text(const Jaxpr& j);
// Fuses the jaxpr into kernels for `device` (prepared on its backend). Argument i is read
// row-major from element input_offsets[i] of its buffer (outputs that share one buffer).
Program compile_program(const Jaxpr& j, const std::string& device,
                        const std::vector<int64_t>& input_offsets);
// Runs it on one buffer per argument; no tracing, no expression building.
std::vector<Array> run_program(const Program& p, const std::vector<BufferRef>& args);

// The free buffers that run_program's pool keeps for `be` (live on the device, owned by no
// array): their number and bytes, for kiln::memory_stats.
struct PooledBuffers {
  int64_t buffers = 0, bytes = 0;
};
PooledBuffers pooled_buffers(const Backend& be);
// Frees every buffer the pool keeps (of every device).
void release_pooled_buffers();

}  // namespace kiln::frontend
