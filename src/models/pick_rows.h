// Rows picked along one axis by a list of constants known when the model is loaded: the
// importers' nearest-neighbour resizes (ONNX Resize, ExecuTorch's upsample_nearest2d).
#pragma once
#include <cstdint>
#include <vector>

#include "frontend/array.h"

namespace kiln::models {

// x's elements at index rows[i] along `axis` (x.take(rows, axis)). Rows that repeat each input
// row f times in order (rows[i] == i / f: an upsample by an integer factor) are a broadcast
// view instead of a gather, so the fuser keeps it in the reader's index arithmetic (i // f)
// rather than loading each output's row from an index buffer, lane by lane.
Array pick_rows(const Array& x, const std::vector<int32_t>& rows, int axis);

}  // namespace kiln::models
