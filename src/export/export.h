// kiln::export_onnx / export_stablehlo: a jitted function traced on example arguments into
// its jaxpr, then written as an ONNX ModelProto or a StableHLO MLIR module, one rule table
// per target keyed by primitive (onnx_export.cpp, stablehlo_export.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/transforms.h"

namespace kiln {

// How export_onnx / export_stablehlo trace and name what they write.
struct ExportOptions {
  // Arguments passed through unchanged (trees of scalars), as jit's static_argnums.
  std::vector<int> static_argnums;
  // The ONNX graph's / StableHLO module's name.
  std::string name = "kiln_export";
  // The ONNX opset of the default domain (18 or later: Bitwise*, ReduceMax's axes input).
  int64_t opset = 18;
  // ONNX only: when not empty, axis 0 of the batch arguments is a symbolic size of this
  // name (dim_param), and sizes that depend on it (reshapes, broadcasts, slices) are
  // computed in the graph from the input's shape. Found by tracing at the example's batch
  // size and at one more; a function whose jaxpr changes otherwise with the batch (a
  // constant, a window or gather along the batch axis) throws kiln::Error, as does a
  // function with control flow.
  std::string batch_dim;
  // The arguments whose array leaves carry the batch on axis 0 (empty: every non-static
  // argument); the others (weights) keep their sizes.
  std::vector<int> batch_argnums;
};

// Traces f on `example_args` (only their structure, shapes and dtypes matter) and writes
// the jaxpr as an ONNX ModelProto: inputs input_0.. and outputs output_0.. in flattened
// order, constants as initializers; scan, while_loop and fori_loop as Loop, cond and
// switch as If. Throws kiln::Error naming the primitive that has no ONNX form
// (bitcast_convert_type) or that cannot be written at these types.
std::vector<uint8_t> export_onnx(const Fn& f, const std::vector<Tree>& example_args, const ExportOptions& options = {});

// The same jaxpr as StableHLO MLIR text: one `func.func public @main` taking the flattened
// arguments and returning the flattened outputs (the form jax's own lowering prints),
// compilable by XLA; loops as stablehlo.while, cond and switch as stablehlo.case.
std::string export_stablehlo(const Fn& f, const std::vector<Tree>& example_args, const ExportOptions& options = {});

// One array as an ONNX TensorProto (the layout of onnx's test data .pb files), for feeding
// an exported model from files.
std::vector<uint8_t> export_onnx_tensor(const Array& a, const std::string& name = "");

}  // namespace kiln
