// Public header: kiln::nn, activations, softmax family, attention and initializers.
#pragma once
#include "library/nn.h"
