// Contractions (ir/contraction.h: matmuls, batched matmuls, convolutions and their
// gradients) as workgroup-tiled WGSL: each workgroup owns a BM x BN tile of one batch's
// output and steps through ridx BK at a time, staging that slice of both factors in
// workgroup memory; each invocation keeps a TM x TN block of sums in registers.
#pragma once
#include <optional>

#include "backend/webgpu/wgsl_codegen.h"

namespace kiln::webgpu {

// The tiled kernel for k, or nullopt when k is no float32 contraction that tiling pays for.
// `common` is the shader's start: prelude, bindings and f_epi (wgsl_codegen.cpp).
std::optional<WgslKernel> generate_tiled(const Kernel& k, const WgslParams& p, const std::string& common);

}  // namespace kiln::webgpu
