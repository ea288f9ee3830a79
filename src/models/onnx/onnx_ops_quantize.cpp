// ONNX quantization operators (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv): integer values held as int32.
#include "library/numpy.h"
#include "models/onnx/onnx_ops.h"

namespace kiln::onnx {

namespace np = kiln::numpy;
using formats::OnnxDataType;

namespace {

constexpr int64_t kMax = 1000;

// The value range of a quantized ONNX type (kiln stores all of them as int32).
std::pair<double, double> range_of(const NodeContext& c, int32_t type) {
  switch (OnnxDataType(type)) {
    case OnnxDataType::Uint8: return {0, 255};
    case OnnxDataType::Int8: return {-128, 127};
    case OnnxDataType::Uint16: return {0, 65535};
    case OnnxDataType::Int16: return {-32768, 32767};
    case OnnxDataType::Int32: return {-2147483648.0, 2147483647.0};
    default: break;
  }
  c.fail("quantized type ", formats::onnx_data_type_name(type),
         " is not supported (supported: UINT8, INT8, UINT16, INT16, INT32)");
}

// A scale or zero point: a scalar, or 1-D along `axis` of an input of rank `ndim`.
Array along_axis(const NodeContext& c, const Array& p, int ndim) {
  if (p.ndim() == 0 || ndim == 0) return p;
  const int axis = normalize_axis(c, c.attr_int("axis", 1), ndim);
  Shape s(size_t(ndim), 1);
  s[size_t(axis)] = p.size();
  return np::reshape(p, s);
}

// round-half-even(v) saturated to the range of `type`, as int32.
Array saturate(const NodeContext& c, const Array& v, int32_t type) {
  const auto [lo, hi] = range_of(c, type);
  return cast_to(np::clip(np::round(v), Array(lo), Array(hi)), int32);
}

Array zero_point(const NodeContext& c, size_t i, int ndim) {
  return c.has_input(i) ? along_axis(c, cast_to(c.input(i), float32), ndim) : Array(0.0);
}

std::vector<Array> quantize_linear(const NodeContext& c) {
  const Array& x = c.input(0);
  const int32_t type = c.has_input(2) ? c.declared_type(2, int32_t(OnnxDataType::Uint8)) : int32_t(OnnxDataType::Uint8);
  Array scaled = cast_to(x, float32) / along_axis(c, cast_to(c.input(1), float32), x.ndim());
  return {saturate(c, np::round(scaled) + zero_point(c, 2, x.ndim()), type)};
}

std::vector<Array> dequantize_linear(const NodeContext& c) {
  const Array& x = c.input(0);
  return {(cast_to(x, float32) - zero_point(c, 2, x.ndim())) * along_axis(c, cast_to(c.input(1), float32), x.ndim())};
}

std::vector<Array> dynamic_quantize_linear(const NodeContext& c) {
  const Array x = cast_to(c.input(0), float32);
  const Array lo = np::minimum(np::min(x), Array(0.0)), hi = np::maximum(np::max(x), Array(0.0));
  const Array scale = (hi - lo) / 255.0;
  const Array zp = saturate(c, -lo / scale, int32_t(OnnxDataType::Uint8));
  return {saturate(c, np::round(x / scale) + cast_to(zp, float32), int32_t(OnnxDataType::Uint8)), scale, zp};
}

// (a - a_zero_point) @ (b - b_zero_point) in float32: exact while sums stay below 2^24.
Array integer_matmul(const Array& a, const Array& azp, const Array& b, const Array& bzp) {
  Array az = azp.ndim() == 1 && a.ndim() >= 2 ? np::reshape(azp, {azp.size(), 1}) : azp;
  return np::matmul(cast_to(a, float32) - cast_to(az, float32), cast_to(b, float32) - cast_to(bzp, float32));
}

std::vector<Array> matmul_integer(const NodeContext& c) {
  const Array azp = c.has_input(2) ? c.input(2) : Array(0), bzp = c.has_input(3) ? c.input(3) : Array(0);
  return {cast_to(integer_matmul(c.input(0), azp, c.input(1), bzp), int32)};
}

std::vector<Array> qlinear_matmul(const NodeContext& c) {
  const Array acc = integer_matmul(c.input(0), c.input(2), c.input(3), c.input(5));
  const Array scale = cast_to(c.input(1), float32) * cast_to(c.input(4), float32) / cast_to(c.input(6), float32);
  return {saturate(c, np::round(acc * scale) + cast_to(c.input(7), float32), c.declared_type(7, int32_t(OnnxDataType::Uint8)))};
}

// A weight zero point or scale per output channel, shaped [M, 1, ...] against [M, C, k...].
Array per_output_channel(const Array& p, int ndim) {
  if (p.ndim() == 0) return p;
  Shape s(size_t(ndim - 1), 1);
  s[0] = p.size();
  return np::reshape(p, s);
}

std::vector<Array> conv_integer(const NodeContext& c) {
  const Array &x = c.input(0), &w = c.input(1);
  const Array xzp = c.has_input(2) ? cast_to(c.input(2), float32) : Array(0.0);
  const Array wzp = c.has_input(3) ? per_output_channel(cast_to(c.input(3), float32), w.ndim() + 1) : Array(0.0);
  return {cast_to(conv_with_attributes(c, cast_to(x, float32) - xzp, cast_to(w, float32) - wzp), int32)};
}

std::vector<Array> qlinear_conv(const NodeContext& c) {
  const Array &x = c.input(0), &w = c.input(3);
  const Array xq = cast_to(x, float32) - cast_to(c.input(2), float32);
  const Array wq = cast_to(w, float32) - per_output_channel(cast_to(c.input(5), float32), w.ndim() + 1);
  Array acc = conv_with_attributes(c, xq, wq);
  if (c.has_input(8)) acc = acc + per_output_channel(cast_to(c.input(8), float32), x.ndim());
  const Array scale = cast_to(c.input(1), float32) * per_output_channel(cast_to(c.input(4), float32), x.ndim()) /
                      cast_to(c.input(6), float32);
  return {saturate(c, np::round(acc * scale) + cast_to(c.input(7), float32), c.declared_type(7, int32_t(OnnxDataType::Uint8)))};
}

}  // namespace

std::vector<OpRule> quantize_rules() {
  const std::vector<const char*> conv = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
  return {
      {"QuantizeLinear", 10, kMax, {"axis"}, quantize_linear},
      {"DequantizeLinear", 10, kMax, {"axis"}, dequantize_linear},
      {"DynamicQuantizeLinear", 11, kMax, {}, dynamic_quantize_linear},
      {"MatMulInteger", 10, kMax, {}, matmul_integer},
      {"QLinearMatMul", 10, kMax, {}, qlinear_matmul},
      {"ConvInteger", 10, kMax, conv, conv_integer},
      {"QLinearConv", 10, kMax, conv, qlinear_conv},
  };
}

}  // namespace kiln::onnx
