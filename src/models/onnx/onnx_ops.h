// The ONNX operator rule table: for each (domain, op_type) a rule that maps a node's
// attributes and input Arrays to output Arrays with kiln's library functions.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "formats/onnx.h"
#include "frontend/array.h"
#include "ir/error.h"

namespace kiln::onnx {

// kiln's dtype for an ONNX element type: 64-bit and narrow integers become int32 (values
// saturate), UINT32/UINT64 uint32, BFLOAT16 float32; others throw naming `what`.
DType dtype_of(int32_t onnx_type, const std::string& what);
// A TensorProto's elements as an Array (decoded by formats::onnx_tensor_bytes).
Array tensor_to_array(std::span<const uint8_t> file, const formats::OnnxTensor& t);

// What one rule sees: the node, the opset of its domain, its inputs (nullopt where an
// optional input is omitted) and the bytes its attribute tensors live in.
class NodeContext {
 public:
  NodeContext(const formats::OnnxNode& node, int64_t opset, std::vector<std::optional<Array>> inputs,
              std::span<const uint8_t> file, const std::map<std::string, int32_t>* value_types = nullptr)
      : node_(node), opset_(opset), inputs_(std::move(inputs)), file_(file), value_types_(value_types) {}

  const formats::OnnxNode& node() const { return node_; }
  int64_t opset() const { return opset_; }
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].has_value(); }
  const Array& input(size_t i) const;  // throws naming the node when absent
  std::vector<Array> present_inputs() const;

  // An input whose values the rule needs on the host (a shape, axes, pads): it must not
  // depend on the graph's inputs under a trace (initializers, Constant and Shape do not).
  std::vector<int64_t> host_ints(size_t i) const;
  std::vector<double> host_doubles(size_t i) const;
  // The ONNX element type the file declares for input i (initializer, graph input or
  // value_info), or `fallback` when it declares none: kiln keeps 8/16-bit ints as int32, so
  // quantization ops learn uint8 vs int8 here.
  int32_t declared_type(size_t i, int32_t fallback) const;

  bool has_attr(const std::string& name) const { return node_.find_attribute(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  float attr_float(const std::string& name, float fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> attr_floats(const std::string& name) const;
  Array attr_tensor(const std::string& name) const;

  // Throws kiln::Error("onnx: node '<name>' (<op_type>, opset <n>): ...").
  template <typename... Args>
  [[noreturn]] void fail(Args&&... args) const {
    kiln::fail("onnx", where(), ": ", std::forward<Args>(args)...);
  }
  std::string where() const;

 private:
  const formats::OnnxAttribute& attr(const std::string& name, formats::OnnxAttributeType type) const;
  const formats::OnnxNode& node_;
  int64_t opset_;
  std::vector<std::optional<Array>> inputs_;
  std::span<const uint8_t> file_;
  const std::map<std::string, int32_t>* value_types_;
};

using OpRuleFn = std::vector<Array> (*)(const NodeContext& ctx);

// One row of the table: the op, the opset range its rule implements (inclusive), the
// attributes it reads (any other attribute on a node is refused before running), the rule,
// and the inputs whose values it reads on the host (shapes, axes, pads: NodeContext::host_ints).
// A graph input that reaches such an input is static under jit (onnx_model.cpp).
struct OpRule {
  const char* op_type;
  int64_t min_opset, max_opset;
  std::vector<const char*> attributes;
  OpRuleFn rule;
  std::vector<int> host_inputs = {};
};

// Every rule of the default domain ("" / ai.onnx), from the family tables below.
const std::vector<OpRule>& default_domain_rules();
std::vector<OpRule> elementwise_rules();  // onnx_ops_elementwise.cpp
std::vector<OpRule> shape_rules();        // onnx_ops_shape.cpp
std::vector<OpRule> nn_rules();           // onnx_ops_nn.cpp
std::vector<OpRule> reduce_rules();       // onnx_ops_reduce.cpp
std::vector<OpRule> composite_rules();    // onnx_ops_more.cpp
std::vector<OpRule> resize_rules();       // onnx_ops_resize.cpp
std::vector<OpRule> rnn_rules();          // onnx_ops_rnn.cpp
std::vector<OpRule> scatter_rules();      // onnx_ops_scatter.cpp
std::vector<OpRule> quantize_rules();     // onnx_ops_quantize.cpp
std::vector<OpRule> host_rules();         // onnx_ops_host.cpp

// The rule for `node` at `opset`, or an Error naming the node, op, opset and what is
// supported (the op's opset range, or the attributes its rule reads).
const OpRule& find_rule(const formats::OnnxNode& node, int64_t opset);

// Helpers shared by the family files.
int normalize_axis(const NodeContext& ctx, int64_t axis, int ndim);
std::vector<int> normalize_axes(const NodeContext& ctx, const std::vector<int64_t>& axes, int ndim);
// a.astype(dtype), or a itself when it already has that dtype.
Array cast_to(const Array& a, DType dtype);
// Conv's attributes (auto_pad, pads, strides, dilations, group, kernel_shape) applied to x
// and w, no bias: shared by Conv, ConvInteger and QLinearConv.
Array conv_with_attributes(const NodeContext& c, const Array& x, const Array& w);

}  // namespace kiln::onnx
