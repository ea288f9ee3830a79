// Fuzz target `onnx`: formats::parse_onnx_model and parse_onnx_tensor on arbitrary bytes. A
// success must keep every raw_data inside the input and decode each tensor to prod(dims)
// elements; an external tensor's records must give a normalized relative location and, read
// against the input itself as its file, a range inside it that holds exactly its elements.
#include "formats/onnx.h"
#include "fuzz/fuzz_target.h"
#include "ir/error.h"

namespace {

using namespace kiln::formats;
using kiln::fuzz::check;

void check_external(std::span<const uint8_t> file, const OnnxTensor& t) {
  try {
    const OnnxExternalRef ref = onnx_external_ref(t);
    const std::string parts = "/" + ref.location + "/";
    for (const char* bad : {"/../", "/./", "//", "\\"})
      check(parts.find(bad) == std::string::npos, "onnx: external location not normalized");
    check(ref.location.size() < 2 || ref.location[1] != ':', "onnx: external location with a drive letter");
    const std::span<const uint8_t> data = onnx_external_data(t, ref, file);
    check(data.data() >= file.data() && data.data() + data.size() <= file.data() + file.size(),
          "onnx: external range outside the file");
    check(data.size() == uint64_t(t.num_elements()) * onnx_data_type_size(t.data_type), "onnx: external size");
  } catch (const kiln::Error&) {
  }
}

void check_tensor(std::span<const uint8_t> file, const OnnxTensor& t) {
  if (t.external) check_external(file, t);
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
    OnnxModel model = parse_onnx_model(file);
    check_graph(file, model.graph);
    onnx_external_tensors(model);  // the walk over every graph's tensors (throws on bad records)
  } catch (const kiln::Error&) {
  }
  try {
    check_tensor(file, parse_onnx_tensor(file));
  } catch (const kiln::Error&) {
  }
  return 0;
}
