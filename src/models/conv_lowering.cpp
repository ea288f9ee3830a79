// One lowering of the importers' forward convolution (conv_lowering.h), so that ONNX and
// ExecuTorch programs of the same layers get the same kernels: ExecuTorch's MobileNetV3-small
// went straight to lax and its 5x5 depthwise convs over 14- and 7-pixel rows ran lane by lane.
#include "models/conv_lowering.h"

#include <algorithm>

#include "library/lax.h"
#include "library/numpy.h"
#include "models/conv_channels_last.h"

namespace kiln::models {

namespace np = kiln::numpy;

namespace {

// Drops the kernel taps that read only padding at every output position (a 5x5 window over
// PP-OCR cls's 2-row maps: its first and last rows), moving the padding with them: the output
// size is unchanged, and the products dropped were all by zeros, so the sum keeps its values
// (its other terms stay in order) for 15 of 25 products. Undilated axes only.
Array drop_padding_only_taps(const Array& x, const Array& w, const std::vector<int64_t>& strides,
                             std::vector<std::pair<int64_t, int64_t>>& pads,
                             const std::vector<int64_t>& dilations) {
  Array kept = w;
  for (size_t i = 0; i + 2 < size_t(w.ndim()); ++i) {
    const int64_t in = x.shape(int(i) + 2), k = w.shape(int(i) + 2), s = strides[i], d = dilations[i];
    auto& [before, after] = pads[i];
    const int64_t span = in + before + after - (k - 1) * d - 1;
    if (span < 0 || d != 1) continue;
    const int64_t last_start = (span / s) * s;  // the last output's first padded row
    int64_t a = 0, b = k;                       // taps t read padded rows [t d, last_start + t d]
    while (a < k && last_start + a * d < before) ++a;
    while (b > a && (b - 1) * d - before > in - 1) --b;
    if (a >= b || (a == 0 && b == k)) continue;
    std::vector<Index> index(size_t(w.ndim()), Slice{});
    index[i + 2] = Slice{a, b, 1};
    kept = np::index(kept, index);
    before -= a * d;
    after -= (k - b) * d;
  }
  return kept;
}

}  // namespace

Array convolution(const Array& x, const Array& w, const std::vector<int64_t>& strides,
                  std::vector<std::pair<int64_t, int64_t>> pads,
                  const std::vector<int64_t>& dilations, int64_t groups) {
  // Arguments lax would refuse go to lax unchanged, so its error names them.
  const size_t spatial = x.ndim() >= 2 ? size_t(x.ndim() - 2) : 0;
  const bool well_formed = x.ndim() >= 3 && w.ndim() == x.ndim() && strides.size() == spatial &&
                           pads.size() == spatial && dilations.size() == spatial &&
                           std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s >= 1; }) &&
                           std::all_of(dilations.begin(), dilations.end(), [](int64_t d) { return d >= 1; });
  if (!well_formed) return lax::conv_general_dilated(x, w, strides, pads, {}, dilations, std::nullopt, groups);
  const Array kept = drop_padding_only_taps(x, w, strides, pads, dilations);
  if (auto y = conv2d_channels_last(x, kept, strides, pads, dilations, groups)) return *y;
  return lax::conv_general_dilated(x, kept, strides, pads, {}, dilations, std::nullopt, groups);
}

}  // namespace kiln::models
