// Depthwise and pointwise 2-D convolutions in channels-last order (conv_channels_last.h says
// when and why). Measured on PP-OCR det's 3x10 stage (384 channels, wasm, 1 thread): the 5x5
// depthwise conv 1.6 -> 0.6 ms, the 384 -> 384 pointwise one 1.7 -> 0.5 ms.
#include "models/conv_channels_last.h"

#include <algorithm>

#include "frontend/primitive.h"
#include "library/numpy.h"

namespace kiln::models {

namespace np = kiln::numpy;

namespace {

constexpr int64_t kMaxTaps = 49;  // a 7x7 depthwise window at most: one term per tap
const std::vector<int> kToLast{0, 2, 3, 1}, kToFirst{0, 3, 1, 2};  // NCHW <-> NHWC

// x [N, C, H, W] as the [N, H, W, C] value the convs below read, made an elementwise value
// of that shape by -(-t) (exact: the same bits, NaN and -0 included; the jaxpr passes drop
// x * 1 and x + 0, and max(t, t) reads t twice, which makes fusion write t's NCHW value to a
// buffer first). Why: the windows and the product read their operand from
// a buffer, and jit fusion writes a buffer in the order of the elementwise value it holds.
// Without it that value is the NCHW one (the previous conv's bias and activation, computed on
// its NCHW view), so the kernel that wrote it read the previous channels-last conv's output
// with 4 lanes C floats apart, and this conv's windows or rows read it back C-strided too;
// with it, the buffer is written channels-last from the channels-last output.
Array channels_last(const Array& x) {
  return np::negative(np::negative(np::transpose(x, kToLast)));
}

// The depthwise conv as one sum of kh * kw terms, each one tap of the windows of the padded
// channels-last input times that tap's per-channel weight: an elementwise expression, so it
// fuses with the epilogue (bias, batch norm, activation) into one kernel. Term t is added in
// tap order, as the reduction lax builds folds them; a padded position reads 0, as its mask
// does there. The windows are Prim::Window's view, as lax's convolution takes them, so an input
// that is itself an expression (the previous conv's epilogue) is computed into a buffer once
// rather than inside every term.
Array depthwise(const Array& x, const Array& w, const std::vector<int64_t>& strides,
                const std::vector<std::pair<int64_t, int64_t>>& pads) {
  const int64_t c = x.shape(1), kh = w.shape(2), kw = w.shape(3);
  const Array xp = np::pad(channels_last(x), {{0, 0}, pads[0], pads[1], {0, 0}});
  frontend::Params window;
  window.window = {1, kh, kw, 1};
  window.strides = {1, strides[0], strides[1], 1};
  window.dilation = {1, 1, 1, 1};
  // [N, Ho, Wo, C, 1, kh, kw, 1]
  const Array windows = frontend::bind(frontend::Prim::Window, {xp}, window);
  const Array taps = np::transpose(np::reshape(w, {c, kh * kw}));    // [kh * kw, C]
  std::optional<Array> y;
  for (int64_t a = 0; a < kh; ++a)
    for (int64_t b = 0; b < kw; ++b) {
      const Array tap = np::index(windows, {Slice{}, Slice{}, Slice{}, Slice{}, 0, a, b, 0});
      const Array term = tap * np::reshape(np::index(taps, {a * kw + b}), {1, 1, 1, c});
      y = y ? *y + term : term;
    }
  return np::transpose(*y, kToFirst);
}

// The pointwise conv as [N H W, C] x [C, O]: the output channels are the product's columns.
Array pointwise(const Array& x, const Array& w) {
  const int64_t n = x.shape(0), c = x.shape(1), h = x.shape(2), wd = x.shape(3), o = w.shape(0);
  const Array rows = np::reshape(channels_last(x), {n * h * wd, c});
  const Array y = np::matmul(rows, np::transpose(np::reshape(w, {o, c})));
  return np::transpose(np::reshape(y, {n, h, wd, o}), kToFirst);
}

}  // namespace

std::optional<Array> conv2d_channels_last(const Array& x, const Array& w,
                                          const std::vector<int64_t>& strides,
                                          const std::vector<std::pair<int64_t, int64_t>>& pads,
                                          const std::vector<int64_t>& dilations, int64_t groups) {
  if (x.ndim() != 4 || w.ndim() != 4 || x.size() == 0 || w.size() == 0) return std::nullopt;
  if (x.dtype() != DType::Float32 || w.dtype() != DType::Float32) return std::nullopt;
  auto dilated = [](int64_t d) { return d != 1; };
  if (std::any_of(dilations.begin(), dilations.end(), dilated)) return std::nullopt;
  const int64_t c = x.shape(1), o = w.shape(0), kh = w.shape(2), kw = w.shape(3);
  Shape out(2);
  for (int i = 0; i < 2; ++i) {
    const auto [before, after] = pads[size_t(i)];
    const int64_t span = x.shape(2 + i) + before + after - w.shape(2 + i);
    if (span < 0) return std::nullopt;
    out[size_t(i)] = span / strides[size_t(i)] + 1;
  }
  // Channels-last pays where a row of the NCHW output does not fill whole 4-lane steps and the
  // channels do. One pixel (a squeeze-excite block's convs) is the same order either way, and
  // the transposes would only split the bias from its product into a kernel of its own.
  if (out[1] % 4 == 0 || o % 4 != 0 || out[0] * out[1] == 1) return std::nullopt;
  auto negative = [](auto p) { return p.first < 0 || p.second < 0; };
  auto zero = [](auto p) { return p.first == 0 && p.second == 0; };
  const bool negative_pad = std::any_of(pads.begin(), pads.end(), negative);
  if (groups == c && o == c && w.shape(1) == 1 && kh * kw <= kMaxTaps && !negative_pad)
    return depthwise(x, w, strides, pads);
  const bool unit = kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1;
  const bool unpadded = std::all_of(pads.begin(), pads.end(), zero);
  if (groups == 1 && unit && unpadded) return pointwise(x, w);
  return std::nullopt;
}

}  // namespace kiln::models
