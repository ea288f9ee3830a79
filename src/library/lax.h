// kiln::lax: JAX's lax-level operations (convolution, windowed reductions, explicit
// dtype conversion), written in terms of primitives.
#pragma once
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "frontend/array.h"

namespace kiln::lax {

// Padding: "VALID", "SAME", "SAME_LOWER", or explicit (low, high) per spatial dimension.
using Padding = std::variant<std::string, std::vector<std::pair<int64_t, int64_t>>>;

// JAX's dimension numbers as layout strings, e.g. {"NCHW", "OIHW", "NCHW"} (the default
// for any rank: N, C then spatial dims; O, I then spatial dims).
struct ConvDimensionNumbers {
  std::string lhs, rhs, out;
};

// JAX's lax.conv_general_dilated: an N-d convolution (cross-correlation, as JAX) of lhs by the
// kernel rhs with strides, padding, input (lhs) and kernel (rhs) dilation, feature and batch
// groups, and dimension_numbers for other layouts. kiln::Error on mismatched ranks, channel
// counts that the groups do not divide, or a bad layout string. Example:
//   Array y = lax::conv_general_dilated(x, w, {1, 1}, std::string("SAME"));  // NCHW, OIHW
Array conv_general_dilated(const Array& lhs, const Array& rhs,
                           const std::vector<int64_t>& window_strides, const Padding& padding,
                           const std::vector<int64_t>& lhs_dilation = {},
                           const std::vector<int64_t>& rhs_dilation = {},
                           const std::optional<ConvDimensionNumbers>& dimension_numbers = std::nullopt,
                           int64_t feature_group_count = 1, int64_t batch_group_count = 1);
// conv_general_dilated with NC... layouts, no dilation.
Array conv(const Array& lhs, const Array& rhs, const std::vector<int64_t>& window_strides,
           const Padding& padding);

// JAX's lax.conv_transpose with NC... / OI... layouts: the gradient of a strided conv with
// respect to its input, as a conv of the stride-dilated lhs. Padding "SAME"/"VALID" or
// explicit pairs, which JAX (and kiln's C++) apply as is to the stride-dilated input;
// jax-js's convTranspose instead pads by k - 1 - p, and js/src/lax.ts converts.
// transpose_kernel flips the kernel's spatial axes and swaps its O and I axes (rhs then
// [C_in, C_out, ...]).
Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<int64_t>& strides,
                     const Padding& padding, const std::vector<int64_t>& rhs_dilation = {},
                     bool transpose_kernel = false);

enum class WindowOp { Sum, Max, Min, Prod };  // the reduction of reduce_window
// Reduces windows over every dimension of the operand (as jax.lax.reduce_window); padded
// elements take the op's identity.
Array reduce_window(const Array& operand, WindowOp op, const std::vector<int64_t>& window_dimensions,
                    const std::vector<int64_t>& window_strides, const Padding& padding = std::string("VALID"),
                    const std::vector<int64_t>& base_dilation = {},
                    const std::vector<int64_t>& window_dilation = {});
// Pooling over the trailing spatial dims of an N, C, spatial... array.
Array max_pool(const Array& x, const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
               const Padding& padding = std::string("VALID"));
// Average over the window; padded elements count in the divisor when count_include_pad.
Array avg_pool(const Array& x, const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
               const Padding& padding = std::string("VALID"), bool count_include_pad = true);

// JAX's convert_element_type: float->int truncates toward zero; to bool is x != 0.
Array convert_element_type(const Array& x, DType dtype);
// Reinterprets the bits (same itemsize).
Array bitcast_convert_type(const Array& x, DType dtype);

// The k largest entries along `axis` and their int32 indices, largest first; equal values
// by lower index first (stable, as jax.lax.top_k). NaN counts as the largest.
std::pair<Array, Array> top_k(const Array& operand, int64_t k, int axis = -1);
}  // namespace kiln::lax
