// The SIMD128 main loop of a kernel: 4 gidx per iteration, with a scalar tail.
// (Stage (a) emits none yet; the scalar loop covers every kernel.)
#include "backend/wasm/wasm_kernel_emitter.h"

namespace kiln::wasm {

bool emit_simd_loop(KernelEmitter&, uint32_t) { return false; }

}  // namespace kiln::wasm
