// Seeded random operands of the attention tests (decode_attention_test, prefill_attention_test):
// uniform floats in [-scale, scale) from a linear congruential generator, so every case is
// reproducible without a fixture, and the run-time start as an int32 scalar.
#pragma once
#include <cstdint>
#include <vector>

#include "library/numpy.h"

namespace attention_operands {

inline uint32_t next(uint32_t& s) { return s = s * 1664525u + 1013904223u; }

// n values, advancing seed (consecutive calls give different operands).
inline std::vector<float> fill(uint32_t& seed, int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = scale * (float(int(next(seed) >> 16) - 32768) / 32768.0f);
  return v;
}

inline kiln::Array random(const kiln::Shape& shape, uint32_t seed, float scale = 1.0f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return kiln::numpy::array(fill(seed, n, scale), shape);
}

inline kiln::Array start_of(int64_t n) { return kiln::numpy::array(std::vector<int32_t>{int32_t(n)}, {}); }

}  // namespace attention_operands
