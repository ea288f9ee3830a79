// Public header: kiln::onnx, ONNX models: load a ModelProto, run it compiled by jit, or use it
// as a pure function under jit, grad and vmap.
#pragma once
#include "models/onnx/onnx_model.h"
