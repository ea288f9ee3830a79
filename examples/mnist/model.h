// The models the MNIST examples train: the small CNN and a one-hidden-layer MLP
// (the cheaper model of the one-epoch test), as init / apply / loss over a kiln::Tree.
#pragma once
#include <string>

#include "kiln/kiln.h"

namespace mnist {

enum class Model {
  // conv 5x5x24 -> relu -> max-pool 2 -> conv 3x3x32 -> relu -> max-pool 2 -> dense 128 ->
  // relu -> dense 10 (VALID convolutions, so 28 -> 24 -> 12 -> 10 -> 5; 800 features).
  Cnn,
  // flatten 784 -> dense `hidden` (default 128) -> relu -> dense 10.
  Mlp,
  // conv 3x3x16 -> relu -> max-pool 2 -> dense 10 (26 -> 13; 2704 features): a CNN about
  // 10x cheaper than Cnn per example, the model of the one-epoch test.
  SmallCnn,
};

Model parse_model(const std::string& name);  // "cnn", "mlp" or "small-cnn"; else kiln::Error
const char* model_name(Model m);

// Parameters as a dict of arrays: weights lecun_normal (flax's default), biases zero.
// `hidden` is the MLP's hidden width (the CNN's shape is fixed).
kiln::Tree init(Model m, const kiln::Array& key, int64_t hidden = 128);
// Logits [b, 10] for images [b, 1, 28, 28].
kiln::Array apply(Model m, const kiln::Tree& params, const kiln::Array& x);
// Mean softmax cross-entropy of the logits against int labels [b].
kiln::Array loss(Model m, const kiln::Tree& params, const kiln::Array& x, const kiln::Array& y);

}  // namespace mnist
