// The transposed convolution that ONNX's ConvTranspose and ATen's convolution(transposed=True)
// share (weights [C_in, C_out/groups, k...], pads trimmed from the full output, output_padding
// added at the end): one implementation, so a speed-up serves both importers.
#include "models/conv_transpose.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "library/lax.h"
#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;

namespace {

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

// Every input pixel times the weights, [N, C_out, k..., in...]: one matmul [C_out k..., C_in]
// x [C_in, pixels], a plain contraction the tiled loop runs in place.
Array tap_products(const Array& x, const Array& w) {
  const int n = x.ndim() - 2;
  const int64_t batch = x.shape(0), cin = x.shape(1), cout = w.shape(1);
  Shape k(w.shape().begin() + 2, w.shape().end()), in(x.shape().begin() + 2, x.shape().end());
  int64_t taps = 1, pixels = 1;
  for (int i = 0; i < n; ++i) taps *= k[size_t(i)], pixels *= in[size_t(i)];
  const Array wt = np::transpose(np::reshape(w, {cin, cout * taps}));  // [C_out k..., C_in]
  Shape cols_shape{batch, cout};
  cols_shape.insert(cols_shape.end(), k.begin(), k.end());
  cols_shape.insert(cols_shape.end(), in.begin(), in.end());
  return np::reshape(np::matmul(wt, np::reshape(x, {batch, cin, pixels})), cols_shape);
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
  Shape k(w.shape().begin() + 2, w.shape().end()), in(x.shape().begin() + 2, x.shape().end());
  int64_t taps = 1;
  for (int i = 0; i < n; ++i) taps *= k[size_t(i)];
  const Array cols = tap_products(x, w);
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

// Stride equal to the kernel (dilation 1), PP-OCR det's 2x2 stride-2 upsampling: the taps'
// planes tile the output without overlap, so the output is the product's [C_out, k..., in...]
// with each tap axis moved next to its input axis, [C_out, in0, k0, in1, k1, ...], reshaped
// to [C_out, in0 * k0, ...]: one view, no sum. Each element is the one product the sum of
// planes above would add to zeros: the same value (up to the sign of a zero: -0 + 0 is +0
// there). The sum read k^n planes through padded, reshaped views whose index arithmetic
// (divisions per digit) ran lane by lane: det's first one took 9 ms (wasm, 1 thread).
bool tiles_without_overlap(const Array& w, const std::vector<int64_t>& strides,
                           const std::vector<int64_t>& dil) {
  for (size_t i = 0; i < strides.size(); ++i)
    if (strides[i] != w.shape(int(i) + 2) || dil[i] != 1) return false;
  return true;
}

Array conv_transpose_interleave(const Array& x, const Array& w, const std::vector<int64_t>& pads,
                                const std::vector<int64_t>& out_pad) {
  const int n = x.ndim() - 2;
  const int64_t batch = x.shape(0), cout = w.shape(1);
  Shape k(w.shape().begin() + 2, w.shape().end()), in(x.shape().begin() + 2, x.shape().end());
  const Array cols = tap_products(x, w);
  std::vector<int> perm{0, 1};  // [N, C_out, k..., in...] -> [N, C_out, in0, k0, in1, k1, ...]
  Shape full{batch, cout};
  for (int i = 0; i < n; ++i) {
    perm.push_back(2 + n + i);
    perm.push_back(2 + i);
    full.push_back(in[size_t(i)] * k[size_t(i)]);
  }
  Array y = np::reshape(np::transpose(cols, perm), full);
  std::vector<std::pair<int64_t, int64_t>> widths(size_t(n) + 2, {0, 0});
  std::vector<Index> crop{Slice{}, Slice{}};
  bool padded = false, cropped = false;
  for (size_t i = 0; i < size_t(n); ++i) {
    widths[i + 2] = {0, out_pad[i]};
    padded = padded || out_pad[i] != 0;
    const int64_t len = full[i + 2] + out_pad[i];
    crop.push_back(Slice{pads[i], len - pads[i + size_t(n)], 1});
    cropped = cropped || pads[i] != 0 || pads[i + size_t(n)] != 0;
  }
  if (padded) y = np::pad(y, widths);
  if (cropped) y = np::index(y, crop);
  return y;
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
  return lax::conv_general_dilated(x, rhs, std::vector<int64_t>(size_t(n), 1), padding, strides, dil,
                                   std::nullopt, group);
}

}  // namespace

Array conv_transpose(const Array& x, const Array& w, int64_t groups, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
                     const std::vector<int64_t>& out_pad) {
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s > 1; });
  const bool empty = x.size() == 0 || w.size() == 0;
  if (groups != 1 || !strided || empty)
    return conv_transpose_direct(x, w, groups, strides, dilations, pads, out_pad);
  if (tiles_without_overlap(w, strides, dilations)) return conv_transpose_interleave(x, w, pads, out_pad);
  return conv_transpose_col2im(x, w, strides, dilations, pads, out_pad);
}

}  // namespace kiln::models
