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

// Places p's `axis` (length n) into an output axis of length `len`: element i goes to
// i * stride + shift, the positions between and around get zeros, what falls outside is cut.
Array place_strided(const Array& p, int axis, int64_t stride, int64_t shift, int64_t len) {
  Array d = p;
  if (stride > 1) {  // [.., n, ..] -> [.., n, 1, ..] padded to [.., n, stride, ..] -> [.., n * stride, ..]
    Shape split = p.shape();
    split.insert(split.begin() + axis + 1, 1);
    std::vector<std::pair<int64_t, int64_t>> widths(split.size(), {0, 0});
    widths[size_t(axis) + 1] = {0, stride - 1};
    Shape merged = p.shape();
    merged[size_t(axis)] *= stride;
    d = np::reshape(np::pad(np::reshape(p, split), widths), merged);
  }
  const int64_t n = d.shape(axis);
  const int64_t start = std::min(n, std::max<int64_t>(0, -shift));        // cut before the output
  const int64_t before = std::min(len, std::max<int64_t>(0, shift));      // zeros before the first kept
  const int64_t keep = std::clamp<int64_t>(n - start, 0, len - before);  // kept elements
  if (start != 0 || keep != n) {
    std::vector<Index> index(size_t(d.ndim()), Slice{});
    index[size_t(axis)] = Slice{start, start + keep, 1};
    d = np::index(d, index);
  }
  std::vector<std::pair<int64_t, int64_t>> widths(size_t(d.ndim()), {0, 0});
  widths[size_t(axis)] = {before, len - before - keep};
  return np::pad(d, widths);
}

// A strided ConvTranspose (one group) as a product then a scatter (col2im): each input pixel
// times the weights is a [C_out, k...] patch, all of them one matmul [C_out k..., C_in] x
// [C_in, pixels]; each kernel tap's plane then lands on the output at stride steps, shifted by
// tap * dilation - pad, and the planes add up (one fused elementwise kernel). The convolution
// of the stride-dilated input (below) multiplies stride^n - 1 inserted zeros per useful
// product and reads its input through a gather the tiled loop cannot run in place.
Array conv_transpose_col2im(const Array& x, const Array& w, const std::vector<int64_t>& strides,
                            const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
                            const std::vector<int64_t>& out_pad) {
  const int n = x.ndim() - 2;
  const int64_t batch = x.shape(0), cin = x.shape(1), cout = w.shape(1);
  Shape k(w.shape().begin() + 2, w.shape().end()), in(x.shape().begin() + 2, x.shape().end());
  int64_t taps = 1, pixels = 1;
  for (int i = 0; i < n; ++i) taps *= k[size_t(i)], pixels *= in[size_t(i)];
  const Array wt = np::transpose(np::reshape(cast_to(w, x.dtype()), {cin, cout * taps}));  // [C_out k..., C_in]
  Shape cols_shape{batch, cout};
  cols_shape.insert(cols_shape.end(), k.begin(), k.end());
  cols_shape.insert(cols_shape.end(), in.begin(), in.end());
  const Array cols = np::reshape(np::matmul(wt, np::reshape(x, {batch, cin, pixels})), cols_shape);
  std::vector<int64_t> len(static_cast<size_t>(n));
  for (size_t i = 0; i < size_t(n); ++i)
    len[i] = (in[i] - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 + out_pad[i] - pads[i] - pads[i + size_t(n)];
  std::optional<Array> y;
  for (int64_t t = 0; t < taps; ++t) {
    std::vector<Index> index{Slice{}, Slice{}};
    std::vector<int64_t> tap(static_cast<size_t>(n));
    for (int64_t i = n - 1, rest = t; i >= 0; --i) tap[size_t(i)] = rest % k[size_t(i)], rest /= k[size_t(i)];
    index.insert(index.end(), tap.begin(), tap.end());
    Array plane = np::index(cols, index);  // [N, C_out, in...]
    for (int i = 0; i < n; ++i)
      plane = place_strided(plane, 2 + i, strides[size_t(i)], tap[size_t(i)] * dil[size_t(i)] - pads[size_t(i)], len[size_t(i)]);
    y = y ? *y + plane : plane;
  }
  return *y;
}

Array conv_transpose_direct(const Array& x, const Array& w, int64_t group, const std::vector<int64_t>& strides,
                            const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
                            const std::vector<int64_t>& out_pad);

// ConvTranspose: strided ones of one group as a product and a scatter (conv_transpose_col2im),
// the others as a convolution (conv_transpose_direct); then the bias.
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
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  const bool empty = x.size() == 0 || w.size() == 0;
  Array y = group == 1 && strided && !empty ? conv_transpose_col2im(x, w, strides, dil, pads, out_pad)
                                             : conv_transpose_direct(x, w, group, strides, dil, pads, out_pad);
  if (c.has_input(2)) {
    Shape bshape(size_t(n + 1), 1);
    bshape[0] = c.input(2).shape(0);
    y = y + np::reshape(c.input(2), bshape);
  }
  return {y};
}

// The convolution of the stride-dilated input with the flipped kernel, its in/out channels
// swapped per group; padding k_eff - 1 - pads, plus output_padding at the end.
Array conv_transpose_direct(const Array& x, const Array& w, int64_t group, const std::vector<int64_t>& strides,
                            const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
                            const std::vector<int64_t>& out_pad) {
  const int n = x.ndim() - 2;
  const int64_t cin = w.shape(0), cout_g = w.shape(1);
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end());
  // [C_in, C_out/g, k...] -> [C_out, C_in/g, k...], spatially flipped.
  Shape grouped{group, cin / group, cout_g};
  grouped.insert(grouped.end(), k.begin(), k.end());
  std::vector<int> perm{0, 2, 1};
  for (int i = 0; i < n; ++i) perm.push_back(3 + i);
  Shape rhs_shape{group * cout_g, cin / group};
  rhs_shape.insert(rhs_shape.end(), k.begin(), k.end());
  std::vector<int> spatial;
  for (int i = 0; i < n; ++i) spatial.push_back(2 + i);
  Array rhs = np::flip(np::reshape(np::transpose(np::reshape(w, grouped), perm), rhs_shape), Axes(spatial));
  std::vector<std::pair<int64_t, int64_t>> padding;
  for (int i = 0; i < n; ++i) {
    const int64_t span = (k[size_t(i)] - 1) * dil[size_t(i)];
    padding.push_back({span - pads[size_t(i)], span - pads[size_t(i + n)] + out_pad[size_t(i)]});
  }
  return lax::conv_general_dilated(x, cast_to(rhs, x.dtype()), std::vector<int64_t>(size_t(n), 1), padding, strides, dil,
                                   std::nullopt, group);
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
