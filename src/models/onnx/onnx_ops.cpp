// The rule table's lookup and support check, NodeContext's attribute and input accessors,
// and ONNX tensors as kiln Arrays (dtype mapping).
#include "models/onnx/onnx_ops.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>

#include "frontend/trace.h"
#include "library/numpy.h"

namespace kiln::onnx {

using formats::OnnxAttribute;
using formats::OnnxAttributeType;
using formats::OnnxDataType;

DType dtype_of(int32_t onnx_type, const std::string& what) {
  switch (OnnxDataType(onnx_type)) {
    case OnnxDataType::Float:
    case OnnxDataType::Bfloat16: return float32;
    case OnnxDataType::Double: return float64;
    case OnnxDataType::Float16: return float16;
    case OnnxDataType::Int8:
    case OnnxDataType::Int16:
    case OnnxDataType::Int32:
    case OnnxDataType::Int64:
    case OnnxDataType::Uint8:
    case OnnxDataType::Uint16: return int32;
    case OnnxDataType::Uint32:
    case OnnxDataType::Uint64: return uint32;
    case OnnxDataType::Bool: return bool_;
    default: break;
  }
  fail("onnx", what, ": element type ", formats::onnx_data_type_name(onnx_type),
       " is not supported (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16, BOOL, INT8/16/32/64, UINT8/16/32/64)");
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

int32_t saturate_int32(int64_t v) { return int32_t(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)); }

// Converts elements of an ONNX type into kiln's storage of `to` (see dtype_of).
std::vector<uint8_t> convert_elements(const std::vector<uint8_t>& in, int32_t type, DType to, int64_t n) {
  if (int(to) == int(DType::Float32) && OnnxDataType(type) == OnnxDataType::Float) return in;
  std::vector<uint8_t> out(size_t(n) * itemsize(to));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = in.data();
    switch (OnnxDataType(type)) {
      case OnnxDataType::Bfloat16: {
        const uint32_t bits = uint32_t(load<uint16_t>(p + 2 * i)) << 16;
        std::memcpy(&out[4 * i], &bits, 4);
        break;
      }
      case OnnxDataType::Int8: reinterpret_cast<int32_t*>(out.data())[i] = load<int8_t>(p + i); break;
      case OnnxDataType::Uint8: reinterpret_cast<int32_t*>(out.data())[i] = load<uint8_t>(p + i); break;
      case OnnxDataType::Int16: reinterpret_cast<int32_t*>(out.data())[i] = load<int16_t>(p + 2 * i); break;
      case OnnxDataType::Uint16: reinterpret_cast<int32_t*>(out.data())[i] = load<uint16_t>(p + 2 * i); break;
      case OnnxDataType::Int64:
        reinterpret_cast<int32_t*>(out.data())[i] = saturate_int32(load<int64_t>(p + 8 * i));
        break;
      case OnnxDataType::Uint64:
        reinterpret_cast<uint32_t*>(out.data())[i] = uint32_t(std::min<uint64_t>(load<uint64_t>(p + 8 * i), UINT32_MAX));
        break;
      default: return in;  // same layout: FLOAT, DOUBLE, FLOAT16, INT32, UINT32, BOOL
    }
  }
  return out;
}

}  // namespace

Array tensor_to_array(std::span<const uint8_t> file, const formats::OnnxTensor& t) {
  const DType dt = dtype_of(t.data_type, "tensor '" + t.name + "'");
  const std::vector<uint8_t> bytes = formats::onnx_tensor_bytes(file, t);
  const std::vector<uint8_t> data = convert_elements(bytes, t.data_type, dt, t.num_elements());
  return numpy::array(data.data(), Shape(t.dims.begin(), t.dims.end()), dt);
}

std::string NodeContext::where() const {
  return "node '" + node_.name + "' (" + node_.op_type + ", opset " + std::to_string(opset_) + ")";
}

const Array& NodeContext::input(size_t i) const {
  if (!has_input(i)) fail("input ", i, " is missing, expected it to be given");
  return *inputs_[i];
}

std::vector<Array> NodeContext::present_inputs() const {
  std::vector<Array> out;
  for (const auto& a : inputs_)
    if (a) out.push_back(*a);
  return out;
}

std::vector<int64_t> NodeContext::host_ints(size_t i) const {
  const Array& a = input(i);
  if (frontend::tracer_of(a))
    fail("input ", i, " ('", node_.inputs[i], "') must be known when the graph is translated (an initializer, ",
         "Constant or a value computed from shapes), but it depends on the graph's inputs");
  return a.to_vector<int64_t>();
}

std::vector<double> NodeContext::host_doubles(size_t i) const {
  host_ints(i);  // the same check
  return input(i).to_vector<double>();
}

int32_t NodeContext::declared_type(size_t i, int32_t fallback) const {
  if (!value_types_ || i >= node_.inputs.size()) return fallback;
  auto it = value_types_->find(node_.inputs[i]);
  return it == value_types_->end() ? fallback : it->second;
}

const OnnxAttribute& NodeContext::attr(const std::string& name, OnnxAttributeType type) const {
  const OnnxAttribute* a = node_.find_attribute(name);
  if (!a) fail("no attribute '", name, "'");
  if (a->type != type)
    fail("attribute '", name, "' is ", formats::onnx_attribute_type_name(a->type), ", expected ",
         formats::onnx_attribute_type_name(type));
  return *a;
}

int64_t NodeContext::attr_int(const std::string& name, int64_t fallback) const {
  return has_attr(name) ? attr(name, OnnxAttributeType::Int).i : fallback;
}
float NodeContext::attr_float(const std::string& name, float fallback) const {
  return has_attr(name) ? attr(name, OnnxAttributeType::Float).f : fallback;
}
std::string NodeContext::attr_string(const std::string& name, const std::string& fallback) const {
  return has_attr(name) ? attr(name, OnnxAttributeType::String).s : fallback;
}
std::vector<int64_t> NodeContext::attr_ints(const std::string& name, const std::vector<int64_t>& fallback) const {
  return has_attr(name) ? attr(name, OnnxAttributeType::Ints).ints : fallback;
}
std::vector<float> NodeContext::attr_floats(const std::string& name) const {
  return attr(name, OnnxAttributeType::Floats).floats;
}
Array NodeContext::attr_tensor(const std::string& name) const {
  return tensor_to_array(file_, attr(name, OnnxAttributeType::Tensor).tensors.at(0));
}

int normalize_axis(const NodeContext& ctx, int64_t axis, int ndim) {
  if (axis < -ndim || axis >= std::max(ndim, 1))
    ctx.fail("axis ", axis, " is out of range for rank ", ndim, ", expected ", -ndim, "..", ndim - 1);
  return int(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(const NodeContext& ctx, const std::vector<int64_t>& axes, int ndim) {
  std::vector<int> out;
  for (int64_t a : axes) out.push_back(normalize_axis(ctx, a, ndim));
  return out;
}

Array cast_to(const Array& a, DType dtype) { return a.dtype() == dtype ? a : a.astype(dtype); }

const std::vector<OpRule>& default_domain_rules() {
  static const std::vector<OpRule> rules = [] {
    std::vector<OpRule> all;
    for (auto family : {elementwise_rules, shape_rules, nn_rules, reduce_rules, composite_rules, resize_rules,
                        rnn_rules, scatter_rules, quantize_rules, host_rules}) {
      std::vector<OpRule> f = family();
      all.insert(all.end(), f.begin(), f.end());
    }
    return all;
  }();
  return rules;
}

const OpRule& find_rule(const formats::OnnxNode& node, int64_t opset) {
  const std::string where = "node '" + node.name + "' (" + node.op_type + ", opset " + std::to_string(opset) + ")";
  if (!node.domain.empty() && node.domain != "ai.onnx")
    fail("onnx", where, ": domain '", node.domain, "' is not supported (supported: the default domain ai.onnx)");
  const OpRule* match = nullptr;
  std::string ranges;
  for (const OpRule& r : default_domain_rules()) {
    if (node.op_type != r.op_type) continue;
    ranges += (ranges.empty() ? "" : ", ") + std::to_string(r.min_opset) + ".." + std::to_string(r.max_opset);
    if (opset >= r.min_opset && opset <= r.max_opset) match = &r;
  }
  if (ranges.empty()) fail("onnx", where, ": operator ", node.op_type, " is not supported");
  if (!match) fail("onnx", where, ": supported for opsets ", ranges, " only");
  for (const OnnxAttribute& a : node.attributes) {
    const auto& known = match->attributes;
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return a.name == k; })) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail("onnx", where, ": attribute '", a.name, "' is not supported (supported: ", list.empty() ? "none" : list, ")");
    }
  }
  return *match;
}

}  // namespace kiln::onnx
