// Helpers of the ONNX tests: a TensorProto file as an Array, and the comparison the ONNX
// backend tests use (numpy.testing.assert_allclose with rtol 1e-3, atol 1e-7).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "formats/onnx.h"
#include "kiln/onnx.h"
#include "models/onnx/onnx_ops.h"
#include "tests/model_file_dump.h"

namespace kiln_test {

// onnx/backend/test/runner: rtol=1e-3, atol=1e-7 unless a test overrides them.
constexpr double kOnnxRtol = 1e-3, kOnnxAtol = 1e-7;

inline kiln::Array read_tensor_pb(const std::string& path) {
  const std::vector<uint8_t> bytes = read_bytes(path);
  return kiln::onnx::tensor_to_array(bytes, kiln::formats::parse_onnx_tensor(bytes));
}

// "" when `got` matches `want` (same shape, |got - want| <= atol + rtol * |want|, NaN where
// NaN is expected); otherwise what differs first.
inline std::string allclose_mismatch(const kiln::Array& got, const kiln::Array& want, double rtol = kOnnxRtol,
                                     double atol = kOnnxAtol) {
  if (got.shape() != want.shape())
    return "shape " + kiln::shape_str(got.shape()) + ", expected " + kiln::shape_str(want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) ? std::isnan(g[i]) : (g[i] == w[i] || std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i])))
      continue;
    return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
  }
  return "";
}

}  // namespace kiln_test
