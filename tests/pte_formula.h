// The seeded formula that defines the weights (and large inputs) of the bigger ExecuTorch
// models in tests/fixtures/pte: tools/gen_pte_fixtures.py sets every parameter of those
// PyTorch modules to it before exporting them with external constants, so the committed
// `.pte` files hold only the programs and this header rebuilds the named data the tests load
// them with (megabytes of weights that never enter the repository). The Python twin is
// `formula_tensor` in tools/pte_models.py; both compute in double and round once to float32,
// so they agree bit for bit.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln_test {

inline uint32_t formula_seed(const std::string& name) {  // FNV-1a, 32 bits
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return h;
}

// Element i of the tensor `name`: center + spread * (2u - 1) with u in [0, 1) from a hash of
// (name, i). Norm scales sit near 1, running variances in [0.5, 1.5], matrices and kernels
// are uniform with variance 2 / fan_in (He), everything else (biases, tokens, position
// tables, inputs) small: spread 0.1, or 1 for model inputs ("input<k>").
inline std::vector<float> formula_values(const std::string& name, const kiln::Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  auto ends_with = [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  double center = 0, spread = 0.1;
  if (name.rfind("input", 0) == 0) {
    spread = 1;
  } else if (ends_with("running_var")) {
    center = 1, spread = 0.5;
  } else if (ends_with("weight") && shape.size() == 1) {
    center = 1, spread = 0.25;
  } else if (ends_with("weight")) {
    spread = std::sqrt(6.0 / double(n / shape[0]));
  }
  const uint32_t seed = formula_seed(name);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t x = uint32_t(i) * 0x9E3779B9u + seed;  // murmur3's finalizer
    x ^= x >> 16, x *= 0x85EBCA6Bu, x ^= x >> 13, x *= 0xC2B2AE35u, x ^= x >> 16;
    const double u = double(x >> 8) / 16777216.0;
    out[size_t(i)] = float(center + spread * (2 * u - 1));
  }
  return out;
}

// Integer tensors (BatchNorm's num_batches_tracked, unused in eval) are zeros, as the
// generator leaves them.
inline kiln::Array formula_tensor(const std::string& name, const kiln::Shape& shape,
                                  kiln::DType dtype = kiln::float32) {
  if (dtype != kiln::float32) return kiln::numpy::zeros(shape, dtype);
  return kiln::numpy::array(formula_values(name, shape), shape);
}

}  // namespace kiln_test
