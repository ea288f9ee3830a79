// What the C++ benchmarks share: the median-of-calls timer and the MLP SGD step that
// jit_bench and native_bench both measure.
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "kiln/kiln.h"

namespace kiln_bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call of f over `reps` calls after one warm-up call; `first`, when
// given, gets the warm-up call's time (trace + compile, or cache load).
inline double time_per_call(const std::function<void()>& f, int reps, double* first = nullptr) {
  double t0 = now();
  f();
  if (first) *first = now() - t0;
  std::vector<double> t;
  for (int r = 0; r < reps; r++) {
    double a = now();
    f();
    t.push_back(now() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The MLP's squared-error loss: (params {w1, b1, w2, b2}, x, y) -> scalar.
inline kiln::Tree mlp_loss(const std::vector<kiln::Tree>& a) {
  namespace np = kiln::numpy;
  const kiln::Tree& p = a[0];
  kiln::Array h =
      np::maximum(np::matmul(a[1].as_array(), p["w1"].as_array()) + p["b1"].as_array(), 0.0f);
  kiln::Array y = np::matmul(h, p["w2"].as_array()) + p["b2"].as_array();
  return kiln::Tree(np::mean(np::square(y - a[2].as_array())));
}

// One SGD step: (params, x, y) -> new params.
inline kiln::Tree mlp_sgd_step(const std::vector<kiln::Tree>& a) {
  kiln::Tree g = kiln::grad(mlp_loss)(a);
  return kiln::tree_map([](const kiln::Array& p, const kiln::Array& d) { return p - 0.01f * d; },
                        a[0], g);
}

}  // namespace kiln_bench
