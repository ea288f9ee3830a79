// Wasm code generation for Kernels: one module per Kernel, exporting `k(args, begin, end)`
// that computes out[gidx] for gidx in [begin, end), reading buffers in the core's memory.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backend/wasm/wasm_module_builder.h"
#include "ir/kernel.h"

namespace kiln::wasm {

// Functions of the core that kernels import, so that their results are bit-identical to
// the cpu interpreter (same libm, evaluated in f64 and rounded once, as alu_eval does).
enum class Builtin : uint8_t {
  // (f64) -> f64
  Exp, Exp2, Expm1, Log, Log2, Log1p, Sin, Cos, Tan, Asin, Acos, Atan,
  Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Erf,
  // (f64, f64) -> f64
  Pow, Atan2, FloorDiv, FloorMod,
  // (i32, i32) -> i32: integer powers as alu_eval defines them
  IPowI32, IPowU32,
  HalfToFloat,  // (i32 bits) -> f32
  FloatToHalf,  // (f32) -> i32 bits
  RoundHalf,    // (f32) -> f32: the nearest float16 value, ties to even
  Scratch,      // (i32 bytes) -> i32 address of this thread's scratch buffer (packed panels)
  Count,
};
FuncType builtin_type(Builtin b);
const char* builtin_name(Builtin b);

// The ABI of a kernel: args points at uint32 words [out_ptr, in0_ptr, in0_count, in1_ptr,
// in1_count, ...]; counts are element counts, and loads outside [0, count) read 0. The
// gidx range is a parameter so that a dispatch can be split across workers.
struct CompiledKernel {
  std::vector<uint8_t> bytes;
  std::vector<Builtin> imports;  // imported as env.b0, env.b1, ... in this order
  bool simd_loop = false;        // has the SIMD128 main loop
  bool tiled = false;            // has the register-tiled contraction loop
  int64_t reduction_unroll = 1;  // the SIMD loop's reduction copies per iteration (reduction_unroll.h)
  int reduction_groups = 1;      // blocks of 4 outputs per reduction step (wasm_simd_groups.cpp)
  // Ranges of gidx given a function each (ir/index_split.h: a concatenation's or packed
  // kernel's branches computed apart); `k` calls them. 0: one loop over the whole expression.
  int index_pieces = 0;
  // Splits of [0, size) at multiples of this keep every piece on the fast loops (whole
  // MR-row blocks of a tiled contraction, 4-blocks of the SIMD loop), so a dispatch split
  // across threads runs the same code per element as one that is not.
  int64_t grain = 1;
  // Split into one piece per thread rather than many: each piece of a tiled contraction over
  // one batch packs all of B again (a filter gradient's few rows: 8 pieces made 2 threads
  // slower than 1).
  bool split_per_thread = false;
  // Scratch each thread running it needs (builtin `scratch`), reserved by the backend before a
  // dispatch so that no worker grows it at a time that depends on scheduling.
  uint32_t scratch_bytes = 0;
};

// How kernels are generated. Every combination computes the same bits as alu_eval, except
// `fma`, which lets the engine fuse a * b + c in tiled contractions (rounding differs).
struct CodegenOptions {
  bool simd = true;   // the SIMD128 main loop (4 outputs per block) where it pays
  bool tile = true;   // register-tiled float32 contractions
  bool fma = false;   // f32x4.relaxed_madd in tiles; only where the engine validates it
  int tile_rows = 0;  // register tile MR x NR f32x4; 0: ScheduleParams::wasm()
  int tile_vecs = 0;
  int tile_panel = 0;   // cache blocks: output columns, reduction steps; 0: ScheduleParams
  int tile_kblock = 0;
  // Import the core's memory as shared (pthreads builds: the core's memory is shared, and
  // an import must match it). The backend sets this from the memory it runs in.
  bool shared_memory = false;
  int tile_pack = 0;    // pack B's panels into scratch: 0 when large enough, 1 always, -1 never
  bool operator==(const CodegenOptions&) const = default;
};

CompiledKernel compile_kernel(const Kernel& k, const CodegenOptions& o = {});

// An exact serialization of a kernel (every constant's bits) and the options: the cache key.
std::string kernel_key(const Kernel& k, const CodegenOptions& o = {});

}  // namespace kiln::wasm
