// ONNX operators built from several library calls: the losses (NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss), ConvTranspose, MeanVarianceNormalization, GatherND, Compress,
// ReverseSequence, Det and the window functions.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "backend/backend.h"
#include "library/array_args.h"
#include "library/lax.h"
#include "library/linalg.h"
#include "library/nn.h"
#include "library/numpy.h"
#include "models/conv_transpose.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMax = 1000;

// -input[n, target[n, d...], d...] weighted and reduced as onnx's reference does: entries
// whose target is ignore_index count 0; "mean" with weights divides by the weights' sum.
Array nll(const NodeContext& c, const Array& input, const Array& target, const std::optional<Array>& weight) {
  const std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    c.fail("reduction '", reduction, "', expected mean, sum or none");
  if (input.ndim() < 2 || target.ndim() != input.ndim() - 1) c.fail("input [N, C, ...] and target [N, ...] expected");
  const bool has_ignore = c.has_attr("ignore_index");
  const Array mask = has_ignore ? np::not_equal(target, double(c.attr_int("ignore_index", 0))) : np::ones(target.shape(), bool_);
  const Array safe = cast_to(np::where(mask, target, np::zeros_like(target)), int32);
  Array picked = np::squeeze(np::take_along_axis(input, np::expand_dims(safe, 1), 1), 1);
  Array loss = np::where(mask, -picked, np::zeros_like(picked));
  std::optional<Array> w;
  if (weight) w = cast_to(np::where(mask, np::take(*weight, safe), 0.0), input.dtype());
  else if (has_ignore) w = cast_to(mask, input.dtype());
  if (w) loss = loss * *w;
  if (reduction == "none") return loss;
  if (reduction == "sum") return np::sum(loss);
  return w ? np::sum(loss) / np::sum(*w) : np::mean(loss);
}

std::vector<Array> nll_loss(const NodeContext& c) {
  return {nll(c, c.input(0), c.input(1), c.has_input(2) ? std::optional<Array>(c.input(2)) : std::nullopt)};
}

std::vector<Array> softmax_cross_entropy(const NodeContext& c) {
  const Array log_prob = nn::log_softmax(c.input(0), 1);
  return {nll(c, log_prob, c.input(1), c.has_input(2) ? std::optional<Array>(c.input(2)) : std::nullopt), log_prob};
}

// ConvTranspose: models::conv_transpose (shared with ExecuTorch's), then the bias.
std::vector<Array> conv_transpose(const NodeContext& c) {
  const Array &x = c.input(0), &w = c.input(1);
  const int n = x.ndim() - 2;
  if (n < 1 || w.ndim() != x.ndim()) c.fail("input rank ", x.ndim(), " and weight rank ", w.ndim(), ", expected equal and >= 3");
  const int64_t group = c.attr_int("group", 1);
  if (w.shape(0) != x.shape(1)) c.fail("weight ", shape_str(w.shape()), " for input ", shape_str(x.shape()), ", expected the input's channels first");
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end());
  auto ints = [&](const char* name, int64_t fill, size_t count) {
    std::vector<int64_t> v = c.attr_ints(name, std::vector<int64_t>(count, fill));
    if (v.size() != count) c.fail(name, " has ", v.size(), " entries, expected ", count);
    return v;
  };
  const std::vector<int64_t> strides = ints("strides", 1, n), dil = ints("dilations", 1, n);
  const std::vector<int64_t> out_pad = ints("output_padding", 0, n);
  std::vector<int64_t> pads = ints("pads", 0, 2 * size_t(n));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (c.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::vector<int64_t> out = c.attr_ints("output_shape");
    if (out.size() > size_t(n)) out.erase(out.begin(), out.end() - n);  // a full N, C, ... shape
    for (int i = 0; i < n; ++i) {
      const int64_t in = x.shape(i + 2), want = out.empty() ? in * strides[size_t(i)] : out[size_t(i)];
      const int64_t total = strides[size_t(i)] * (in - 1) + out_pad[size_t(i)] + (k[size_t(i)] - 1) * dil[size_t(i)] + 1 - want;
      // Python's floor division, as onnx's reference: a negative total (output_shape past the
      // natural size) becomes extra output at the end.
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pads[size_t(i)] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[size_t(i + n)] = total - pads[size_t(i)];
    }
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    c.fail("auto_pad '", auto_pad, "', expected NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  }
  Array y = models::conv_transpose(x, cast_to(w, x.dtype()), group, strides, dil, pads, out_pad);
  if (c.has_input(2)) {
    Shape bshape(size_t(n + 1), 1);
    bshape[0] = c.input(2).shape(0);
    y = y + np::reshape(c.input(2), bshape);
  }
  return {y};
}

std::vector<Array> mean_variance_normalization(const NodeContext& c) {
  const Array& x = c.input(0);
  const Axes axes(normalize_axes(c, c.attr_ints("axes", {0, 2, 3}), x.ndim()));
  Array mean = np::mean(x, axes, true);
  Array var = np::mean(x * x, axes, true) - mean * mean;
  return {(x - mean) / (np::sqrt(var) + 1e-9)};
}

// GatherND: the last axis of indices addresses the first k axes of data after batch_dims.
std::vector<Array> gather_nd(const NodeContext& c) {
  const Array &data = c.input(0), &idx = c.input(1);
  const int b = int(c.attr_int("batch_dims", 0));
  const int64_t k = idx.shape(-1);
  if (b < 0 || b >= idx.ndim() || b + k > data.ndim())
    c.fail("batch_dims ", b, " and index depth ", k, " do not fit data of rank ", data.ndim());
  int64_t batch = 1, cells = 1;
  for (int i = 0; i < b; ++i) batch *= data.shape(i);
  for (int i = b; i < b + k; ++i) cells *= data.shape(i);
  Shape rest(data.shape().begin() + b + k, data.shape().end());
  Shape flat{batch * cells};
  flat.insert(flat.end(), rest.begin(), rest.end());
  // Linear cell index per index row, plus the row's batch offset.
  Shape rows(idx.shape().begin(), idx.shape().end() - 1);
  Array lin = np::zeros(rows, int32);
  for (int64_t j = 0, stride = cells; j < k; ++j) {
    stride /= data.shape(b + int(j));
    Array ij = np::take(idx, Array(int(j)), idx.ndim() - 1);
    ij = np::where(ij < 0, ij + double(data.shape(b + int(j))), ij);
    lin = lin + cast_to(ij, int32) * double(stride);
  }
  if (b > 0) {
    Shape bshape(rows.size(), 1);
    int64_t per = 1;
    for (size_t i = size_t(b); i < rows.size(); ++i) per *= rows[i];
    Array offset = np::reshape(np::arange(batch, int32) * double(cells), Shape{batch});
    lin = np::reshape(np::reshape(lin, {batch, per}) + np::reshape(offset, {batch, 1}), rows);
  }
  Shape out = rows;
  out.insert(out.end(), rest.begin(), rest.end());
  return {np::reshape(np::take(np::reshape(data, flat), cast_to(lin, int32), 0), out)};
}

// Compress: the output's size depends on the condition's values, which must be static.
std::vector<Array> compress(const NodeContext& c) {
  const Array& x = c.input(0);
  const std::vector<int64_t> cond = c.host_ints(1);
  std::vector<int32_t> keep;
  for (size_t i = 0; i < cond.size(); ++i)
    if (cond[i]) keep.push_back(int32_t(i));
  const Array idx = np::array(keep, {int64_t(keep.size())});
  if (!c.has_attr("axis")) return {np::take(np::ravel(x), idx, 0)};
  const int axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  if (int64_t(cond.size()) > x.shape(axis)) c.fail("condition longer than axis ", axis);
  return {np::take(x, idx, axis)};
}

// ReverseSequence: the first sequence_lens[b] steps of each batch entry reversed, a gather
// along the time axis at where(t < len, len - 1 - t, t).
std::vector<Array> reverse_sequence(const NodeContext& c) {
  const Array& x = c.input(0);
  const int time = int(c.attr_int("time_axis", 0)), batch = int(c.attr_int("batch_axis", 1));
  if (x.ndim() < 2 || (time != 0 && time != 1) || batch != 1 - time) c.fail("time_axis/batch_axis must be 0 and 1");
  Shape tshape(size_t(x.ndim()), 1), bshape(size_t(x.ndim()), 1);
  tshape[size_t(time)] = x.shape(time);
  bshape[size_t(batch)] = x.shape(batch);
  const Array t = np::reshape(np::arange(x.shape(time), int32), tshape);
  const Array len = np::reshape(cast_to(c.input(1), int32), bshape);
  Array idx = np::broadcast_to(np::where(t < len, len - 1 - t, t), x.shape());
  return {np::take_along_axis(x, cast_to(idx, int32), time)};
}

std::vector<Array> det(const NodeContext& c) { return {linalg::det(c.input(0))}; }

// Hann, Hamming and Blackman windows: sums of cosines over n / N, N = size (periodic) or size - 1.
template <int Kind>
std::vector<Array> window(const NodeContext& c) {
  const int64_t size = c.host_ints(0).at(0);
  const DType dt = dtype_of(int32_t(c.attr_int("output_datatype", 1)), c.where());
  const double n_den = c.attr_int("periodic", 1) ? double(size) : double(size - 1);
  // On the host in double, rounded once to the output dtype (no float64 on WebGPU).
  std::vector<double> w(size_t(std::max<int64_t>(size, 0)));
  for (size_t i = 0; i < w.size(); ++i) {
    const double a = double(i) * 2 * std::numbers::pi / n_den;
    w[i] = Kind == 0 ? 0.5 - 0.5 * std::cos(a)
           : Kind == 1 ? 25.0 / 46.0 - (21.0 / 46.0) * std::cos(a)
                       : 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
  }
  return {np::detail::host_array(w, {int64_t(w.size())}, dt, default_device())};
}

}  // namespace

// If's branches and Loop's body read values of the enclosing scope by name, which a rule
// cannot see: the graph evaluator (onnx_model.cpp, run_if and run_loop) runs them, and these
// rows only declare their opsets and attributes for the load-time checks (and Loop's trip
// count as read on the host).
static std::vector<Array> in_evaluator(const NodeContext& c) { c.fail(c.node().op_type, " is run by the graph evaluator"); }

std::vector<OpRule> composite_rules() {
  return {
      {"If", 1, kMax, {"then_branch", "else_branch"}, in_evaluator},
      {"Loop", 1, kMax, {"body"}, in_evaluator, {0}},
      {"NegativeLogLikelihoodLoss", 12, kMax, {"ignore_index", "reduction"}, nll_loss},
      {"SoftmaxCrossEntropyLoss", 12, kMax, {"ignore_index", "reduction"}, softmax_cross_entropy},
      {"ConvTranspose", 1, kMax,
       {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}, conv_transpose},
      {"MeanVarianceNormalization", 9, kMax, {"axes"}, mean_variance_normalization},
      {"GatherND", 11, kMax, {"batch_dims"}, gather_nd},
      {"Compress", 9, kMax, {"axis"}, compress, {1}},
      {"ReverseSequence", 10, kMax, {"batch_axis", "time_axis"}, reverse_sequence},
      {"Det", 11, kMax, {}, det},
      {"HannWindow", 17, kMax, {"output_datatype", "periodic"}, window<0>, {0}},
      {"HammingWindow", 17, kMax, {"output_datatype", "periodic"}, window<1>, {0}},
      {"BlackmanWindow", 17, kMax, {"output_datatype", "periodic"}, window<2>, {0}},
  };
}

}  // namespace kiln::onnx
