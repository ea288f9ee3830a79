// jax.nn.initializers: variance scaling (glorot/xavier, he/kaiming, lecun) and the simple
// constant and random initializers, all drawing from kiln::random keys.
#include <cmath>

#include "library/nn.h"
#include "library/random.h"

namespace kiln::nn {

namespace np = kiln::numpy;

namespace {

// (fan_in, fan_out) of a weight shape: the in/out axes times the receptive field.
std::pair<double, double> fans(const Shape& shape, int in_axis, int out_axis) {
  int nd = int(shape.size());
  if (nd < 2)
    fail("variance_scaling", "got shape ", shape_str(shape), ", expected at least 2 dimensions");
  int ia = in_axis < 0 ? in_axis + nd : in_axis, oa = out_axis < 0 ? out_axis + nd : out_axis;
  if (ia < 0 || ia >= nd || oa < 0 || oa >= nd || ia == oa)
    fail("variance_scaling", "got in_axis ", in_axis, " and out_axis ", out_axis, " for shape ",
         shape_str(shape), ", expected two distinct axes");
  double receptive = 1;
  for (int i = 0; i < nd; ++i)
    if (i != ia && i != oa) receptive *= double(shape[size_t(i)]);
  return {double(shape[size_t(ia)]) * receptive, double(shape[size_t(oa)]) * receptive};
}

}  // namespace

Initializer zeros() {
  return [](const Array&, const Shape& s, DType dt) { return np::zeros(s, dt); };
}
Initializer ones() {
  return [](const Array&, const Shape& s, DType dt) { return np::ones(s, dt); };
}
Initializer constant(double value) {
  return [value](const Array&, const Shape& s, DType dt) { return np::full(s, value, dt); };
}
Initializer uniform(double scale) {
  return [scale](const Array& key, const Shape& s, DType dt) {
    return random::uniform(key, s, dt) * np::asarray(Array(scale), dt);
  };
}
Initializer normal(double stddev) {
  return [stddev](const Array& key, const Shape& s, DType dt) {
    return random::normal(key, s, dt) * np::asarray(Array(stddev), dt);
  };
}
Initializer truncated_normal(double stddev, double lower, double upper) {
  return [=](const Array& key, const Shape& s, DType dt) {
    return random::truncated_normal(key, lower, upper, s, dt) * np::asarray(Array(stddev), dt);
  };
}

Initializer variance_scaling(double scale, const std::string& mode, const std::string& distribution,
                             int in_axis, int out_axis) {
  if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg")
    fail("variance_scaling", "got mode '", mode, "', expected fan_in, fan_out or fan_avg");
  if (distribution != "truncated_normal" && distribution != "normal" && distribution != "uniform")
    fail("variance_scaling", "got distribution '", distribution,
         "', expected truncated_normal, normal or uniform");
  return [=](const Array& key, const Shape& s, DType dt) {
    auto [fan_in, fan_out] = fans(s, in_axis, out_axis);
    double denom = mode == "fan_in" ? fan_in : mode == "fan_out" ? fan_out : (fan_in + fan_out) / 2;
    // JAX rounds the variance to the dtype before taking roots.
    Array variance = np::asarray(Array(scale / denom), dt);
    if (distribution == "truncated_normal") {
      // The stddev of a standard normal truncated to (-2, 2).
      Array stddev = np::sqrt(variance) / np::asarray(Array(.87962566103423978), dt);
      return random::truncated_normal(key, -2.0, 2.0, s, dt) * stddev;
    }
    if (distribution == "normal") return random::normal(key, s, dt) * np::sqrt(variance);
    return random::uniform(key, s, dt, -1.0, 1.0) * np::sqrt(Array(3.0) * variance);
  };
}

Initializer glorot_uniform(int i, int o) {
  return variance_scaling(1.0, "fan_avg", "uniform", i, o);
}
Initializer glorot_normal(int i, int o) {
  return variance_scaling(1.0, "fan_avg", "truncated_normal", i, o);
}
Initializer xavier_uniform(int i, int o) { return glorot_uniform(i, o); }
Initializer xavier_normal(int i, int o) { return glorot_normal(i, o); }
Initializer lecun_uniform(int i, int o) { return variance_scaling(1.0, "fan_in", "uniform", i, o); }
Initializer lecun_normal(int i, int o) {
  return variance_scaling(1.0, "fan_in", "truncated_normal", i, o);
}
Initializer he_uniform(int i, int o) { return variance_scaling(2.0, "fan_in", "uniform", i, o); }
Initializer he_normal(int i, int o) {
  return variance_scaling(2.0, "fan_in", "truncated_normal", i, o);
}
Initializer kaiming_uniform(int i, int o) { return he_uniform(i, o); }
Initializer kaiming_normal(int i, int o) { return he_normal(i, o); }

}  // namespace kiln::nn
