// Transposed convolution for the model importers (ONNX ConvTranspose, ExecuTorch's transposed
// aten.convolution): strided ones of one group as one matmul and a scatter of each kernel tap's
// plane at stride steps (col2im: no products with inserted zeros), the others as the
// convolution of the stride-dilated input with the flipped kernel.
#pragma once
#include <cstdint>
#include <vector>

#include "frontend/array.h"

namespace kiln::models {

// x [N, C_in, spatial...], w [C_in, C_out/groups, k...] of x's dtype; per spatial axis a
// stride, a dilation and output_padding (rows added at the end); pads: the n begins then the
// n ends trimmed from the full output. No bias.
Array conv_transpose(const Array& x, const Array& w, int64_t groups, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
                     const std::vector<int64_t>& out_pad);

}  // namespace kiln::models
