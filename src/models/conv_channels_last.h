// 2-D convolutions of the model importers computed with the channels as the fastest axis, for
// the cases where the NCHW order makes kiln's code generators slow: an output row whose width
// is not a multiple of 4 (PP-OCR det's last stage, 3x10 pixels). The Wasm SIMD loop runs 4
// consecutive outputs per step; with W % 4 != 0 those cross rows, their window indices go lane
// by lane, and a pointwise conv's tiled product has the few pixels as its columns. In
// [N, H, W, C] order the 4 lanes are 4 channels (one pixel: uniform masks and indices) and the
// pointwise product's columns are the output channels. The result is returned as the NCHW view.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "frontend/array.h"

namespace kiln::models {

// x [N, C, H, W], w [O, C / groups, kh, kw] of x's dtype; pads (top, bottom), (left, right).
// The NCHW result when channels-last pays and the conv is one this computes: float32,
// dilation 1, and either depthwise (groups == C == O) or pointwise (1x1, stride 1, no
// padding, one group); otherwise nothing (the caller runs lax's convolution). Sums run in the
// order lax's does (kernel rows, then columns; input channels), so a depthwise conv gives the
// same values; no bias.
std::optional<Array> conv2d_channels_last(const Array& x, const Array& w,
                                          const std::vector<int64_t>& strides,
                                          const std::vector<std::pair<int64_t, int64_t>>& pads,
                                          const std::vector<int64_t>& dilations, int64_t groups);

}  // namespace kiln::models
