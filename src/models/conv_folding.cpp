// Per-channel affines folded into a conv's weights and bias (conv_folding.h). The folded
// conv rounds differently from the conv then the affine (its products use w * scale), by
// float32 rounding of each product: the real models' fixtures bound it.
#include "models/conv_folding.h"

#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;

std::optional<Array> per_channel_operand(const Array& c, int64_t channels, int rank) {
  if (!c.valid() || c.dtype() != DType::Float32 || c.ndim() > rank || rank < 2) return std::nullopt;
  // Axis k of c lines up with axis rank - c.ndim() + k of the conv's output.
  const int lead = rank - c.ndim();
  for (int k = 0; k < c.ndim(); ++k) {
    const int64_t d = c.shape(k);
    if (d == 1) continue;
    if (lead + k != 1 || d != channels) return std::nullopt;
  }
  return np::broadcast_to(np::reshape(c, {c.ndim() > 0 && c.size() == channels ? channels : 1}), {channels});
}

std::optional<ChannelAffine> batch_norm_affine(const Array& mean, const Array& var,
                                               const std::optional<Array>& gamma,
                                               const std::optional<Array>& beta, double eps) {
  auto vector = [&](const Array& a) {
    return a.valid() && a.dtype() == DType::Float32 && a.ndim() == 1 && a.shape(0) == mean.shape(0);
  };
  if (!mean.valid() || mean.ndim() != 1 || !vector(mean) || !vector(var) || (gamma && !vector(*gamma)) ||
      (beta && !vector(*beta)))
    return std::nullopt;
  // The float32 operations ONNX's batch norm computes its factor with.
  const Array root = np::sqrt(np::add(var, Array(eps)));
  const Array scale = gamma ? np::divide(*gamma, root) : np::divide(np::ones_like(root), root);
  return ChannelAffine{mean, scale, beta ? *beta : np::zeros_like(mean)};
}

FoldedConv fold_affine(const Array& weight, const std::optional<Array>& bias, const ChannelAffine& a) {
  Shape along_o(size_t(weight.ndim()), 1);
  along_o[0] = weight.shape(0);
  std::optional<Array> centered = bias;
  if (a.center) centered = bias ? np::subtract(*bias, *a.center) : np::negative(*a.center);
  FoldedConv f{np::multiply(weight, np::reshape(a.scale, along_o)),
               centered ? np::add(np::multiply(*centered, a.scale), a.shift) : a.shift};
  f.weight.eval();
  f.bias.eval();
  return f;
}

}  // namespace kiln::models
