// Fuzz target `onnx`: formats::parse_onnx_model and parse_onnx_tensor on arbitrary bytes. A
// success must keep every raw_data inside the input and decode each tensor to prod(dims) elements.
#include "formats/onnx.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

namespace {

using namespace kiln::formats;
using kiln::fuzz::check;

void check_tensor(std::span<const uint8_t> file, const OnnxTensor& t) {
  if (t.has_raw_data) check(t.raw_offset + t.raw_size <= file.size(), "onnx: raw_data outside the input");
  try {
    const std::vector<uint8_t> bytes = onnx_tensor_bytes(file, t);
    check(bytes.size() == uint64_t(t.num_elements()) * onnx_data_type_size(t.data_type), "onnx: decoded size");
  } catch (const kiln::Error&) {
  }
}

void check_graph(std::span<const uint8_t> file, const OnnxGraph& g) {
  for (const OnnxTensor& t : g.initializers) check_tensor(file, t);
  for (const OnnxNode& n : g.nodes)
    for (const OnnxAttribute& a : n.attributes) {
      for (const OnnxTensor& t : a.tensors) check_tensor(file, t);
      for (const OnnxGraph& sub : a.graphs) check_graph(file, sub);
      if (a.type == OnnxAttributeType::Graph) check(a.graphs.size() == 1, "onnx: GRAPH attribute");
      if (a.type == OnnxAttributeType::Tensor) check(a.tensors.size() == 1, "onnx: TENSOR attribute");
    }
}

}  // namespace

KILN_FUZZ_TARGET(onnx) {
  const std::span<const uint8_t> file(data, size);
  try {
    check_graph(file, parse_onnx_model(file).graph);
  } catch (const kiln::Error&) {
  }
  try {
    check_tensor(file, parse_onnx_tensor(file));
  } catch (const kiln::Error&) {
  }
  return 0;
}
