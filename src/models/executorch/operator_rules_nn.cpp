// ExecuTorch operator rules for the network layers: matmuls, convolution, batch and layer
// norm, pooling, softmax, embedding, GELU; argument positions follow ATen's schemas.
#include <cmath>

#include "ir/error.h"
#include "library/lax.h"
#include "library/nn.h"
#include "library/numpy.h"
#include "models/conv_lowering.h"
#include "models/conv_transpose.h"
#include "models/executorch/operator_rules.h"
#include "models/pick_rows.h"

namespace kiln::executorch::rules {

namespace np = kiln::numpy;

namespace {

// Bound on window parameters multiplied together here (the file chooses them).
constexpr int64_t kMaxWindowParam = int64_t(1) << 20;

// ATen pads symmetric per spatial dim; lax takes (low, high) pairs.
std::vector<std::pair<int64_t, int64_t>> symmetric(const std::vector<int64_t>& padding,
                                                  size_t spatial) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t p = padding.size() == 1 ? padding[0] : padding.at(d);
    pairs.emplace_back(p, p);
  }
  return pairs;
}

// A per-dim argument given once for all dims (ATen allows [k] for [k, k]).
std::vector<int64_t> per_dim(std::vector<int64_t> v, size_t spatial, const OpCall& c,
                             const char* what) {
  if (v.size() == 1) v.assign(spatial, v[0]);
  if (v.size() != spatial)
    c.fail(std::string(what) + " has " + std::to_string(v.size()) + " entries for " +
           std::to_string(spatial) + " spatial dims");
  return v;
}

// A [C] vector shaped to broadcast along axis 1 of a rank-`rank` array.
Array channel(const Array& v, int rank) {
  Shape s(size_t(rank), 1);
  s[1] = v.shape(0);
  return v.reshape(s);
}

}  // namespace

void addmm(OpCall& c) {  // (self = bias, mat1, mat2, beta, alpha)
  Array product = np::matmul(c.tensor(1), c.tensor(2));
  if (c.real(4) != 1.0) product = np::multiply(product, c.scalar(4));
  Array bias = c.tensor(0);
  if (c.real(3) != 1.0) bias = np::multiply(bias, c.scalar(3));
  c.result(np::add(product, bias));
}

void mm(OpCall& c) { c.result(np::matmul(c.tensor(0), c.tensor(1))); }
void bmm(OpCall& c) { c.result(np::matmul(c.tensor(0), c.tensor(1))); }

// A transposed convolution (models::conv_transpose, shared with ONNX's ConvTranspose); ATen's
// padding p trims p from each side, output_padding adds rows at the end.
Array conv_transposed(const OpCall& c, const Array& x, const Array& w, size_t spatial) {
  const int64_t groups = c.integer(8);
  const std::vector<int64_t> stride = per_dim(c.ints(3), spatial, c, "stride");
  const std::vector<int64_t> padding = per_dim(c.ints(4), spatial, c, "padding");
  const std::vector<int64_t> dilation = per_dim(c.ints(5), spatial, c, "dilation");
  const std::vector<int64_t> extra = per_dim(c.ints(7), spatial, c, "output_padding");
  if (groups < 1 || w.shape(0) % groups) c.fail("groups " + std::to_string(groups) + " do not divide the weight");
  for (size_t d = 0; d < spatial; ++d) {
    if (dilation[d] < 1 || dilation[d] > kMaxWindowParam || padding[d] < 0 ||
        padding[d] > kMaxWindowParam || extra[d] < 0 || extra[d] > kMaxWindowParam)
      c.fail("dilation, padding or output_padding out of range");
    if (dilation[d] * (w.shape(int(d) + 2) - 1) - padding[d] < 0)
      c.fail("padding larger than the dilated kernel is not supported yet");
  }
  std::vector<int64_t> pads = padding;
  pads.insert(pads.end(), padding.begin(), padding.end());
  return models::conv_transpose(x, w, groups, stride, dilation, pads, extra);
}

// (input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
void convolution(OpCall& c) {
  const Array x = c.tensor(0), w = c.tensor(1);
  if (x.ndim() < 3) c.fail("input of rank " + std::to_string(x.ndim()) + ", expected >= 3");
  const size_t spatial = size_t(x.ndim() - 2);
  Array y = c.boolean(6) ? conv_transposed(c, x, w, spatial)
                         : models::convolution(x, w, per_dim(c.ints(3), spatial, c, "stride"),
                                               symmetric(c.ints(4), spatial),
                                               per_dim(c.ints(5), spatial, c, "dilation"), c.integer(8));
  if (std::optional<Array> bias = c.optional_tensor(2)) y = np::add(y, channel(*bias, y.ndim()));
  c.result(y);
}

// (input, weight?, bias?, running_mean, running_var, momentum, eps): normalization with the
// running statistics; the saved mean/invstd results are empty in this overload.
void batch_norm_no_training(OpCall& c) {
  const Array x = c.tensor(0);
  const int rank = x.ndim();
  Array y = np::multiply(np::subtract(x, channel(c.tensor(3), rank)),
                         channel(np::rsqrt(np::add(c.tensor(4), c.scalar(6))), rank));
  if (std::optional<Array> w = c.optional_tensor(1)) y = np::multiply(y, channel(*w, rank));
  if (std::optional<Array> b = c.optional_tensor(2)) y = np::add(y, channel(*b, rank));
  c.result(y);
}

// (input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd), statistics [N, group].
void group_norm(OpCall& c) {
  const Array x = c.tensor(0);
  const int64_t n = c.integer(3), channels = c.integer(4), groups = c.integer(6);
  if (groups < 1 || channels % groups || x.ndim() < 2 || x.shape(0) != n || x.shape(1) != channels)
    c.fail("group norm of " + std::to_string(groups) + " groups over " + std::to_string(channels) +
           " channels does not fit the input");
  const Array grouped = x.reshape({n, groups, -1});
  const Array mean = np::mean(grouped, -1, true);
  const Array centered = np::subtract(grouped, mean);
  const Array rstd = np::rsqrt(np::add(np::mean(np::square(centered), -1, true), c.scalar(7)));
  Array y = np::multiply(centered, rstd).reshape(x.shape());
  if (std::optional<Array> w = c.optional_tensor(1)) y = np::multiply(y, channel(*w, x.ndim()));
  if (std::optional<Array> b = c.optional_tensor(2)) y = np::add(y, channel(*b, x.ndim()));
  c.results({y, mean.reshape({n, groups}), rstd.reshape({n, groups})});
}

// (input, output_size?, scale_factors?): output row i reads input row floor(i * scale),
// scale = 1 / scale_factor when factors are given, else in / out (ATen's nearest).
void upsample_nearest2d(OpCall& c) {
  Array y = c.tensor(0);
  if (y.ndim() != 4) c.fail("input of rank " + std::to_string(y.ndim()) + ", expected 4");
  const std::vector<int64_t> sizes = c.is_none(1) ? std::vector<int64_t>{} : c.ints(1);
  const std::vector<double> factors = c.is_none(2) ? std::vector<double>{} : c.reals(2);
  if (sizes.size() != 2 && factors.size() != 2) c.fail("needs 2 output sizes or 2 scale factors");
  for (double f : factors)
    if (!(f > 0 && f <= 1024)) c.fail("scale factor " + std::to_string(f) + " outside (0, 1024]");
  for (int d = 0; d < 2; ++d) {
    const int64_t in = y.shape(d + 2);
    const int64_t out = sizes.size() == 2 ? sizes[size_t(d)] : int64_t(std::floor(double(in) * factors[size_t(d)]));
    if (out < 1 || out > 1024 * in) c.fail("output size " + std::to_string(out) + " out of range");
    const double scale = factors.size() == 2 ? 1.0 / factors[size_t(d)] : double(in) / double(out);
    std::vector<int32_t> rows(size_t(out), 0);
    for (size_t i = 0; i < rows.size(); ++i)
      rows[i] = int32_t(std::min<int64_t>(int64_t(std::floor(double(i) * scale)), in - 1));
    y = models::pick_rows(y, rows, d + 2);
  }
  c.result(y);
}

// (input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd), the statistics with
// the normalized dims kept as 1.
void layer_norm(OpCall& c) {
  const Array x = c.tensor(0);
  const size_t k = c.ints(1).size();
  if (k == 0 || k > size_t(x.ndim()))
    c.fail("normalized_shape of " + std::to_string(k) + " dims for an input of rank " +
           std::to_string(x.ndim()));
  std::vector<int> axes;
  for (size_t i = 0; i < k; ++i) axes.push_back(x.ndim() - int(k) + int(i));
  const Array mean = np::mean(x, axes, true);
  const Array centered = np::subtract(x, mean);
  const Array rstd = np::rsqrt(np::add(np::mean(np::square(centered), axes, true), c.scalar(4)));
  Array y = np::multiply(centered, rstd);
  if (std::optional<Array> w = c.optional_tensor(2)) y = np::multiply(y, *w);
  if (std::optional<Array> b = c.optional_tensor(3)) y = np::add(y, *b);
  c.results({y, mean, rstd});
}

// (self, kernel_size, stride, padding, dilation, ceil_mode) -> (out, indices); the indices
// result is not computed (no exported program seen reads it).
void max_pool2d_with_indices(OpCall& c) {
  const std::vector<int64_t> kernel = per_dim(c.ints(1), 2, c, "kernel_size");
  std::vector<int64_t> stride = c.ints(2);
  stride = stride.empty() ? kernel : per_dim(stride, 2, c, "stride");
  for (int64_t d : per_dim(c.ints(4), 2, c, "dilation"))
    if (d != 1) c.fail("dilation " + std::to_string(d) + " is not supported yet");
  if (c.boolean(5)) c.fail("ceil_mode is not supported yet");
  c.result(lax::max_pool(c.tensor(0), kernel, stride, symmetric(c.ints(3), 2)));
}

// (self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
void avg_pool2d(OpCall& c) {
  const std::vector<int64_t> kernel = per_dim(c.ints(1), 2, c, "kernel_size");
  std::vector<int64_t> stride = c.ints(2);
  stride = stride.empty() ? kernel : per_dim(stride, 2, c, "stride");
  if (c.boolean(4)) c.fail("ceil_mode is not supported yet");
  if (!c.is_none(6)) c.fail("divisor_override is not supported yet");
  c.result(lax::avg_pool(c.tensor(0), kernel, stride, symmetric(c.ints(3), 2), c.boolean(5)));
}

void softmax(OpCall& c) { c.result(nn::softmax(c.tensor(0), int(c.integer(1)))); }
void log_softmax(OpCall& c) { c.result(nn::log_softmax(c.tensor(0), int(c.integer(1)))); }

// (weight, indices, padding_idx, scale_grad_by_freq, sparse): rows of the table.
void embedding(OpCall& c) { c.result(np::take(c.tensor(0), c.tensor(1), 0)); }

// (self, approximate: "none" | "tanh")
void gelu(OpCall& c) {
  const std::string approximate = c.string(1);
  if (approximate != "none" && approximate != "tanh")
    c.fail("approximate '" + approximate + "', expected 'none' or 'tanh'");
  c.result(nn::gelu(c.tensor(0), approximate == "tanh"));
}

}  // namespace kiln::executorch::rules
