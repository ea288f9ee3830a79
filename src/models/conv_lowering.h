// The forward N-d convolution the model importers (ONNX's Conv, ExecuTorch's aten.convolution)
// lower to: padding-only taps dropped, narrow 2-D rows channels-last, else lax's convolution.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "frontend/array.h"

namespace kiln::models {

// x [N, C, spatial...], w [O, C / groups, kernel...] of x's dtype; pads (begin, end) per
// spatial axis. No bias. The same values as lax::conv_general_dilated with these arguments
// (the forms chosen here add the same terms in the same order).
Array convolution(const Array& x, const Array& w, const std::vector<int64_t>& strides,
                  std::vector<std::pair<int64_t, int64_t>> pads,
                  const std::vector<int64_t>& dilations, int64_t groups);

}  // namespace kiln::models
