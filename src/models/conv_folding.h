// Folding a per-channel affine that follows a convolution (an inference-mode batch norm, a
// constant Mul or Add) into the convolution's weights and bias at load, shared by the model
// importers (ONNX's graph pass in onnx_model.cpp, ExecuTorch's in constant_folding.cpp).
// Why: PyTorch and Paddle export conv, batch norm as two ops, so every conv's epilogue read
// four more per-channel vectors and computed (y - mean) * scale + shift on each output; with
// the affine folded the conv's epilogue is its bias alone, which also leaves nothing
// between a conv and its activation.
#pragma once
#include <cstdint>
#include <optional>

#include "frontend/array.h"

namespace kiln::models {

// A per-output-channel affine (y - center) * scale + shift, each [O]; an absent center is 0.
// A batch norm keeps its mean as the center so that a conv bias close to it cancels before
// the product (bias - mean, then * scale), as the unfolded graph computes it.
struct ChannelAffine {
  std::optional<Array> center;
  Array scale, shift;
};

// A conv's weights [O, C / groups, kernel...] and bias [O] after folding an affine.
struct FoldedConv {
  Array weight, bias;
};

// The [O] vector a constant operand of an elementwise op on a conv's output [N, O, ...] of
// rank `rank` broadcasts to when it varies along the channel axis at most (a scalar, [1],
// [O, 1, 1], [1, O, 1, 1], ...), so that the op is per channel and keeps the conv's shape;
// nothing otherwise (other axes, a larger rank, another dtype than float32).
std::optional<Array> per_channel_operand(const Array& c, int64_t channels, int rank);

// Inference batch norm: center = mean, scale = gamma / sqrt(var + eps), shift = beta, with
// an absent gamma 1 and beta 0; each argument [O] float32 (nothing otherwise).
std::optional<ChannelAffine> batch_norm_affine(const Array& mean, const Array& var,
                                               const std::optional<Array>& gamma,
                                               const std::optional<Array>& beta, double eps);

// conv(x, w) + bias followed by the affine a, as conv(x, w') + bias': w' = w * scale along O,
// bias' = (bias - center) * scale + shift (an absent bias is 0). Float32 weights [O, ...] and
// vectors [O]; the results are computed and evaluated now, on the weights' device.
FoldedConv fold_affine(const Array& weight, const std::optional<Array>& bias, const ChannelAffine& a);

}  // namespace kiln::models
