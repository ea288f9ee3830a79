// Public header: kiln::export_onnx and kiln::export_stablehlo, a jitted function traced on
// example arguments and written as an ONNX model or a StableHLO MLIR module.
#pragma once
#include "export/export.h"
