// Load-time rewrite of an ONNX graph: per-channel affines after a Conv folded into the Conv's
// weights and bias (models/conv_folding.h says why).
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "formats/onnx.h"
#include "frontend/array.h"

namespace kiln::onnx {

// How often each value name is read by a node (subgraphs' nodes too), a graph output, or a
// graph input that an initializer gives the default of (IR < 4).
std::map<std::string, int> count_value_reads(const formats::OnnxGraph& g);

// A default-domain Conv with constant float32 weights (and bias, if any: initializers, or
// Constant nodes' values decoded from `file`) whose output only
// one node reads, and that node an inference BatchNormalization with constant statistics, or
// a Mul or Add by a constant that varies along the channels at most: the Conv gets folded
// weights and bias (new constants) and writes that node's output; the node goes. Repeats
// along the chain (BatchNormalization, then a Mul, then an Add). Constants that only the
// rewritten nodes read are dropped (Constant nodes too).
void fold_conv_affines(formats::OnnxGraph& g, std::map<std::string, Array>& constants,
                       std::span<const uint8_t> file);

}  // namespace kiln::onnx
