// ONNX neural-network operators (MatMul, Gemm, Conv, pooling, normalizations, Softmax family,
// Dropout at inference, LRN, Einsum) as kiln::numpy / lax / nn calls.
#include <algorithm>
#include <cmath>
#include <limits>

#include "library/lax.h"
#include "library/nn.h"
#include "library/numpy.h"
#include "models/conv_lowering.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;
using Pads = std::vector<std::pair<int64_t, int64_t>>;

std::vector<Array> matmul(const NodeContext& c) { return {np::matmul(c.input(0), c.input(1))}; }

std::vector<Array> gemm(const NodeContext& c) {
  Array a = c.input(0), b = c.input(1);
  if (c.attr_int("transA", 0)) a = np::transpose(a);
  if (c.attr_int("transB", 0)) b = np::transpose(b);
  const double alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  Array y = np::matmul(a, b);
  if (alpha != 1.0) y = y * alpha;
  if (c.has_input(2)) y = y + (beta == 1.0 ? c.input(2) : c.input(2) * beta);
  return {y};
}

// The window geometry shared by Conv and the pools: kernel, strides, dilations, and the
// explicit (begin, end) padding of every spatial axis that auto_pad/pads give.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  Pads pads;
};

Window window_of(const NodeContext& c, const Array& x, std::vector<int64_t> kernel) {
  const size_t n = size_t(x.ndim() - 2);
  if (kernel.size() != n) c.fail("kernel_shape has ", kernel.size(), " entries, expected ", n);
  Window w{kernel, c.attr_ints("strides", std::vector<int64_t>(n, 1)), c.attr_ints("dilations", std::vector<int64_t>(n, 1)), {}};
  if (w.strides.size() != n || w.dilations.size() != n) c.fail("strides/dilations need ", n, " entries");
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> p = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (p.size() != 2 * n) c.fail("pads has ", p.size(), " entries, expected ", 2 * n);
    for (size_t i = 0; i < n; ++i) w.pads.push_back({p[i], p[i + n]});
  } else if (auto_pad == "VALID") {
    w.pads.assign(n, {0, 0});
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = x.shape(int(i) + 2), out = (in + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - in, 0);
      const int64_t small = total / 2;
      w.pads.push_back(auto_pad == "SAME_UPPER" ? std::pair{small, total - small} : std::pair{total - small, small});
    }
  } else {
    c.fail("auto_pad '", auto_pad, "', expected NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  }
  return w;
}

}  // namespace

Array conv_with_attributes(const NodeContext& c, const Array& x, const Array& w) {
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    c.fail("input rank ", x.ndim(), " and weight rank ", w.ndim(), ", expected equal and >= 3");
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (c.has_attr("kernel_shape") && c.attr_ints("kernel_shape") != kernel) c.fail("kernel_shape differs from the weight's shape");
  Window win = window_of(c, x, kernel);
  const int64_t group = c.attr_int("group", 1);
  return models::convolution(x, cast_to(w, x.dtype()), win.strides, win.pads, win.dilations, group);
}

namespace {

std::vector<Array> conv(const NodeContext& c) {
  const Array& x = c.input(0);
  Array y = conv_with_attributes(c, x, c.input(1));
  if (c.has_input(2)) {
    Shape bshape(size_t(x.ndim() - 1), 1);
    bshape[0] = c.input(2).shape(0);
    y = y + np::reshape(c.input(2), bshape);
  }
  return {y};
}

// Extra end padding so that ceil_mode's last, partial window exists (ONNX drops a window
// that would start past the end of the padded input).
Pads with_ceil_padding(const NodeContext& c, const Array& x, const Window& w, Pads& extra) {
  Pads pads = w.pads;
  extra.assign(pads.size(), {0, 0});
  if (!c.attr_int("ceil_mode", 0)) return pads;
  for (size_t i = 0; i < pads.size(); ++i) {
    const int64_t in = x.shape(int(i) + 2) + pads[i].first + pads[i].second;
    const int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t out = (in - span + w.strides[i] - 1) / w.strides[i] + 1;
    if ((out - 1) * w.strides[i] >= x.shape(int(i) + 2) + pads[i].first) --out;
    const int64_t need = std::max<int64_t>((out - 1) * w.strides[i] + span - in, 0);
    extra[i].second = need;
    pads[i].second += need;
  }
  return pads;
}

// Full-rank window arguments (N and C untouched) for lax::reduce_window.
std::vector<int64_t> full(const std::vector<int64_t>& spatial) {
  std::vector<int64_t> v{1, 1};
  v.insert(v.end(), spatial.begin(), spatial.end());
  return v;
}
Pads full(const Pads& spatial) {
  Pads v{{0, 0}, {0, 0}};
  v.insert(v.end(), spatial.begin(), spatial.end());
  return v;
}

std::vector<Array> max_pool(const NodeContext& c) {
  const Array& x = c.input(0);
  if (c.node().outputs.size() > 1 && !c.node().outputs[1].empty()) c.fail("the Indices output is not supported");
  if (c.attr_int("storage_order", 0)) c.fail("storage_order 1 is not supported");
  const Window w = window_of(c, x, c.attr_ints("kernel_shape"));
  Pads extra;
  const Pads pads = with_ceil_padding(c, x, w, extra);
  return {lax::reduce_window(x, lax::WindowOp::Max, full(w.kernel), full(w.strides), full(pads), {}, full(w.dilations))};
}

std::vector<Array> average_pool(const NodeContext& c) {
  const Array& x = c.input(0);
  const Window w = window_of(c, x, c.attr_ints("kernel_shape"));
  Pads extra;
  const Pads pads = with_ceil_padding(c, x, w, extra);
  Array sum = lax::reduce_window(x, lax::WindowOp::Sum, full(w.kernel), full(w.strides), full(pads), {}, full(w.dilations));
  // The divisor counts the elements each window covers: padding counts when
  // count_include_pad, the ceil_mode extension never does.
  Shape ones_shape = x.shape();
  ones_shape[0] = ones_shape[1] = 1;
  Array ones = np::ones(ones_shape, x.dtype());
  Array count;
  if (c.attr_int("count_include_pad", 0)) {
    Array padded = np::pad(ones, full(w.pads), "constant", Array(1.0));
    count = lax::reduce_window(padded, lax::WindowOp::Sum, full(w.kernel), full(w.strides), full(extra), {}, full(w.dilations));
  } else {
    count = lax::reduce_window(ones, lax::WindowOp::Sum, full(w.kernel), full(w.strides), full(pads), {}, full(w.dilations));
  }
  return {sum / count};
}

std::vector<int> spatial_axes(const Array& x) {
  std::vector<int> axes;
  for (int i = 2; i < x.ndim(); ++i) axes.push_back(i);
  return axes;
}

std::vector<Array> global_average_pool(const NodeContext& c) {
  return {np::mean(c.input(0), Axes(spatial_axes(c.input(0))), true)};
}
std::vector<Array> global_max_pool(const NodeContext& c) {
  return {np::max(c.input(0), Axes(spatial_axes(c.input(0))), true)};
}

// A per-channel parameter [C] shaped to broadcast against N, C, spatial...
Array per_channel(const Array& p, int ndim) {
  Shape s(size_t(std::max(ndim - 1, 1)), 1);
  s[0] = p.shape(0);
  return np::reshape(p, s);
}

// Inference normalizes by the running statistics; training_mode 1 (opset 14) by the batch's,
// and also returns the running statistics updated with `momentum`.
std::vector<Array> batch_norm(const NodeContext& c) {
  const Array& x = c.input(0);
  const double eps = c.attr_float("epsilon", 1e-5f);
  const int r = x.ndim();
  auto normalize = [&](const Array& mean, const Array& var) {
    Array inv = per_channel(c.input(1), r) / np::sqrt(per_channel(var, r) + eps);
    return (x - per_channel(mean, r)) * inv + per_channel(c.input(2), r);
  };
  if (!c.attr_int("training_mode", 0)) {
    if (c.node().outputs.size() > 1) c.fail("running mean/var outputs need training_mode 1");
    return {normalize(c.input(3), c.input(4))};
  }
  std::vector<int> axes{0};
  for (int i = 2; i < r; ++i) axes.push_back(i);
  const Array mean = np::mean(x, Axes(axes)), var = np::var(x, Axes(axes));
  const double m = c.attr_float("momentum", 0.9f);
  return {normalize(mean, var), c.input(3) * m + mean * (1 - m), c.input(4) * m + var * (1 - m)};
}

std::vector<Array> instance_norm(const NodeContext& c) {
  const Array& x = c.input(0);
  const Axes axes(spatial_axes(x));
  const double eps = c.attr_float("epsilon", 1e-5f);
  Array mean = np::mean(x, axes, true), var = np::var(x, axes, true);
  return {(x - mean) / np::sqrt(var + eps) * per_channel(c.input(1), x.ndim()) + per_channel(c.input(2), x.ndim())};
}

std::vector<Array> layer_norm(const NodeContext& c) {
  const Array& x = c.input(0);
  const int axis = normalize_axis(c, c.attr_int("axis", -1), x.ndim());
  std::vector<int> axes;
  for (int i = axis; i < x.ndim(); ++i) axes.push_back(i);
  const double eps = c.attr_float("epsilon", 1e-5f);
  Array xf = cast_to(x, float32);
  Array mean = np::mean(xf, Axes(axes), true);
  Array inv_std = 1.0 / np::sqrt(np::var(xf, Axes(axes), true) + eps);
  Array y = cast_to((xf - mean) * inv_std, x.dtype()) * c.input(1);
  if (c.has_input(2)) y = y + c.input(2);
  return {y, mean, inv_std};
}

// Softmax, LogSoftmax and Hardmax before opset 13 flatten to 2-D at `axis` (default 1).
template <Array (*F)(const Array&, int)>
std::vector<Array> softmax_like(const NodeContext& c) {
  const Array& x = c.input(0);
  if (c.opset() >= 13) return {F(x, normalize_axis(c, c.attr_int("axis", -1), x.ndim()))};
  const int axis = normalize_axis(c, c.attr_int("axis", 1), x.ndim());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < x.ndim(); ++i) (i < axis ? outer : inner) *= x.shape(i);
  return {np::reshape(F(np::reshape(x, {outer, inner}), 1), x.shape())};
}
Array softmax(const Array& x, int axis) { return nn::softmax(x, axis); }
Array log_softmax(const Array& x, int axis) { return nn::log_softmax(x, axis); }
Array hardmax(const Array& x, int axis) {
  return nn::one_hot(np::argmax(x, axis), x.shape(axis), x.dtype(), axis);
}

// Inference (and training with ratio 0) is the identity with an all-true mask; random
// dropping is not supported.
std::vector<Array> dropout(const NodeContext& c) {
  const bool training = c.opset() >= 12 && c.has_input(2) && c.host_ints(2).at(0) != 0;
  const double ratio = c.has_input(1) ? c.host_doubles(1).at(0) : 0.5;
  if (training && ratio != 0) c.fail("training_mode true with ratio ", ratio, " is not supported (random masks)");
  const Array& x = c.input(0);
  return {x, np::ones(x.shape(), bool_)};
}

std::vector<Array> lrn(const NodeContext& c) {
  const Array& x = c.input(0);
  const int64_t size = c.attr_int("size", 0);
  if (size <= 0) c.fail("size ", size, ", expected > 0");
  const double alpha = c.attr_float("alpha", 1e-4f), beta = c.attr_float("beta", 0.75f), bias = c.attr_float("bias", 1.0f);
  std::vector<int64_t> window(size_t(x.ndim()), 1), strides(size_t(x.ndim()), 1);
  window[1] = size;
  Pads pads(size_t(x.ndim()), {0, 0});
  pads[1] = {(size - 1) / 2, size / 2};
  Array sq = lax::reduce_window(x * x, lax::WindowOp::Sum, window, strides, pads);
  return {x / np::power(bias + alpha / double(size) * sq, Array(beta))};
}

std::vector<Array> einsum(const NodeContext& c) {
  std::string eq = c.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  return {np::einsum(eq, c.present_inputs())};
}

}  // namespace

std::vector<OpRule> nn_rules() {
  const std::vector<const char*> pool = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"};
  std::vector<const char*> max_pool_attrs = pool, avg_pool_attrs = pool;
  max_pool_attrs.push_back("storage_order");
  avg_pool_attrs.push_back("count_include_pad");
  return {
      {"MatMul", 1, kMax, {}, matmul},
      {"Gemm", 7, kMax, {"alpha", "beta", "transA", "transB"}, gemm},
      {"Conv", 1, kMax, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}, conv},
      {"MaxPool", 8, kMax, max_pool_attrs, max_pool},
      {"AveragePool", 7, kMax, avg_pool_attrs, average_pool},
      {"GlobalAveragePool", 1, kMax, {}, global_average_pool},
      {"GlobalMaxPool", 1, kMax, {}, global_max_pool},
      {"BatchNormalization", 9, kMax, {"epsilon", "momentum", "training_mode"}, batch_norm},
      {"InstanceNormalization", 6, kMax, {"epsilon"}, instance_norm},
      {"LayerNormalization", 17, kMax, {"axis", "epsilon", "stash_type"}, layer_norm},
      {"Softmax", 1, kMax, {"axis"}, softmax_like<softmax>},
      {"LogSoftmax", 1, kMax, {"axis"}, softmax_like<log_softmax>},
      {"Hardmax", 1, kMax, {"axis"}, softmax_like<hardmax>},
      {"Dropout", 7, kMax, {"seed", "ratio"}, dropout, {1, 2}},
      {"LRN", 1, kMax, {"alpha", "beta", "bias", "size"}, lrn},
      {"Einsum", 12, kMax, {"equation"}, einsum},
  };
}

}  // namespace kiln::onnx
