// kiln::nn: jax.nn's activations, normalizations, attention and parameter initializers,
// written with kiln::numpy so they differentiate, batch and run on every backend.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "frontend/array.h"
#include "library/numpy.h"

namespace kiln::nn {

// ---- activations (elementwise; ints compute in float32 as jax.nn does) ----
// relu and relu6 have JAX's derivative convention: 0 at the kinks.
Array relu(const Array& x);
Array relu6(const Array& x);
Array sigmoid(const Array& x);
Array log_sigmoid(const Array& x);
Array silu(const Array& x);  // x * sigmoid(x); also `swish`
Array swish(const Array& x);
Array softplus(const Array& x);  // log(1 + exp(x)), stable
Array elu(const Array& x, double alpha = 1.0);
Array leaky_relu(const Array& x, double negative_slope = 0.01);
// approximate = true (JAX's default): the tanh form; false: x * (1 + erf(x / sqrt 2)) / 2.
Array gelu(const Array& x, bool approximate = true);

// ---- reductions along axes (default: the last) ----
// The max is subtracted (and not differentiated) for stability, as in jax.nn.
Array softmax(const Array& x, Axes axis = -1);
Array log_softmax(const Array& x, Axes axis = -1);
// log(sum(exp(a))) over `axis` (default: all axes); infinite maxima are handled as JAX does.
Array logsumexp(const Array& a, Axes axis = {}, bool keepdims = false);
// (x - mean) / sqrt(variance + epsilon) over `axis`; mean/variance computed when absent.
Array standardize(const Array& x, Axes axis = -1, std::optional<Array> mean = std::nullopt,
                  std::optional<Array> variance = std::nullopt, double epsilon = 1e-5);
// x[..., None] == arange(num_classes), as dtype, with the new axis at `axis`. Indices out
// of range give all zeros.
Array one_hot(const Array& x, int64_t num_classes, DType dtype = float32, int axis = -1);

// jax.nn.dot_product_attention (implementation "xla"): query [B, T, N, H] (or [T, N, H]),
// key/value [B, S, K, H] with K dividing N (grouped-query attention); bias and mask
// broadcast to [B, N, T, S] (mask: true keeps a logit); scale defaults to 1/sqrt(H);
// is_causal keeps logits with s <= t. Softmax in float32; the result has query's shape.
Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            std::optional<Array> bias = std::nullopt,
                            std::optional<Array> mask = std::nullopt,
                            std::optional<double> scale = std::nullopt, bool is_causal = false);

// ---- initializers (jax.nn.initializers) ----
// An initializer maps (key, shape, dtype) to an array, as in JAX.
using Initializer = std::function<Array(const Array& key, const Shape& shape, DType dtype)>;

Initializer zeros();  // all zeros
Initializer ones();  // all ones
Initializer constant(double value);  // every element `value`
Initializer uniform(double scale = 1e-2);  // [0, scale)
Initializer normal(double stddev = 1e-2);  // normal with mean 0 and this stddev
// A normal with mean 0 and this stddev, cut to [lower, upper] stddevs.
Initializer truncated_normal(double stddev = 1e-2, double lower = -2.0, double upper = 2.0);
// Samples with variance scale / fan (jax.nn.initializers.variance_scaling).
// mode: "fan_in", "fan_out" or "fan_avg"; distribution: "truncated_normal", "normal" or
// "uniform". Fans count the receptive field (every axis but in_axis and out_axis).
Initializer variance_scaling(double scale, const std::string& mode, const std::string& distribution,
                             int in_axis = -2, int out_axis = -1);
// variance_scaling's named forms (as JAX): glorot/xavier scale 1 with fan_avg, lecun 1 with
// fan_in, he/kaiming 2 with fan_in; _uniform and _normal pick the distribution (normal ones are
// truncated normals).
Initializer glorot_uniform(int in_axis = -2, int out_axis = -1);
Initializer glorot_normal(int in_axis = -2, int out_axis = -1);
Initializer xavier_uniform(int in_axis = -2, int out_axis = -1);
Initializer xavier_normal(int in_axis = -2, int out_axis = -1);
Initializer lecun_uniform(int in_axis = -2, int out_axis = -1);
Initializer lecun_normal(int in_axis = -2, int out_axis = -1);
Initializer he_uniform(int in_axis = -2, int out_axis = -1);
Initializer he_normal(int in_axis = -2, int out_axis = -1);
Initializer kaiming_uniform(int in_axis = -2, int out_axis = -1);
Initializer kaiming_normal(int in_axis = -2, int out_axis = -1);

}  // namespace kiln::nn
