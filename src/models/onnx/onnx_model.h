// kiln::onnx::Model: an ONNX graph translated into a kiln function of its inputs (every node
// through the rule table of onnx_ops.h), run under jit or used as a pure function under grad.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "frontend/array.h"
#include "frontend/transforms.h"

namespace kiln::onnx {

struct ModelState;  // onnx_model.cpp

// The files that hold a model's external tensor data, by the location its tensors name
// (relative to the model's directory, '/'-separated, as onnx.save_model writes it).
using ExternalData = std::map<std::string, std::vector<uint8_t>>;

// The declared type of a graph input or output: kiln's dtype and the shape with symbolic
// (dim_param) or unknown dimensions as -1 and their names in dim_params ("" when unnamed).
struct ValueSpec {
  std::string name;
  DType dtype = float32;
  bool has_shape = false;
  Shape shape;
  std::vector<std::string> dim_params;
};

// An ONNX model mapped onto kiln's library functions: run it compiled by jit, or call it as a
// pure function under jit, grad and vmap. Example:
//   auto model = onnx::Model::load(bytes);  // std::span<const uint8_t> of the .onnx file
//   auto out = model.run({{model.input_names()[0], x}});
class Model {
 public:
  Model() = default;  // an empty model; load() makes real ones
  // Parses an ONNX ModelProto and checks, before anything runs, that every node has a
  // rule for its op type and opset, with attributes the rule knows, and that every value
  // a node reads is defined earlier; initializers become constant Arrays on the default
  // device. Throws kiln::Error naming the node, op type, opset and what is supported.
  // A model whose tensors keep their data in other files (data_location EXTERNAL) needs
  // the overload below or load_file.
  static Model load(std::span<const uint8_t> bytes);
  // load() with the external data files given by location: each external tensor's range
  // must lie inside its file and hold exactly its elements; a missing file, a range past the
  // end or a length that does not match the tensor's size throws kiln::Error naming the
  // tensor and the file. Example (a model saved with save_as_external_data):
  //   auto model = onnx::Model::load(model_bytes, {{"model.onnx.data", data_bytes}});
  static Model load(std::span<const uint8_t> bytes, const ExternalData& external_data);
  // Reads the .onnx file at `path` and the external data files its tensors name, from the
  // model's directory; a location that is absolute or leaves that directory ("..") is
  // refused. Throws kiln::Error for an unreadable file, naming it (and the tensor).
  static Model load_file(const std::string& path);
  // The external data files the model's tensors name (each once, in file order), checked
  // as load does: what a caller reading the files itself must provide.
  static std::vector<std::string> external_files(std::span<const uint8_t> bytes);

  // The graph's inputs (initializers excluded) and outputs, by name and with their types.
  const std::vector<std::string>& input_names() const;
  const std::vector<std::string>& output_names() const;
  const std::vector<ValueSpec>& inputs() const;
  const std::vector<ValueSpec>& outputs() const;
  int64_t opset() const;  // of the default domain

  // Runs the graph compiled by jit: one trace and compilation per new set of input shapes
  // (a symbolic batch dimension recompiles per size and reuses kernels of sizes seen before).
  // Feeds are checked against the declared types, and a dim_param must have one size
  // across the inputs of one call.
  std::map<std::string, Array> run(const std::map<std::string, Array>& feeds) const;

  // The graph as a pure function: inputs in input_names() order, outputs in output_names()
  // order. It calls only kiln library functions, so jit, grad, vjp and vmap trace it.
  std::vector<Array> call(const std::vector<Array>& inputs) const;
  // call() as a transformable Fn: a Tree::List of inputs to a Tree::List of outputs.
  Fn function() const;

 private:
  static Model from_state(std::shared_ptr<ModelState> st);  // the checks after parsing
  std::shared_ptr<const ModelState> state_;
};

}  // namespace kiln::onnx
