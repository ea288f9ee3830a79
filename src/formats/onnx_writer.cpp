// ONNX writer: the plain structs of formats/onnx.h (ModelProto, GraphProto, NodeProto,
// AttributeProto, TensorProto, ValueInfoProto) encoded as protobuf bytes, field numbers
// from onnx.proto; parse_onnx_model reads back what this writes.
#include <span>

#include "formats/onnx.h"
#include "formats/protobuf_writer.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

// Element data goes in the typed fields (float_data, int32_data, ...), never raw_data:
// OnnxTensor owns typed values only (raw_data stays in the bytes it was parsed from).
WireWriter tensor(const OnnxTensor& t) {
  WireWriter w;
  w.packed_varints(1, std::span<const int64_t>(t.dims));
  w.varint(2, uint64_t(int64_t(t.data_type)));
  w.packed_floats(4, t.float_data);
  w.packed_varints(5, std::span<const int32_t>(t.int32_data));
  for (const std::string& s : t.string_data) w.string(6, s);
  w.packed_varints(7, std::span<const int64_t>(t.int64_data));
  if (!t.name.empty()) w.string(8, t.name);
  w.packed_doubles(10, t.double_data);
  w.packed_varints(11, std::span<const uint64_t>(t.uint64_data));
  if (t.external || t.has_raw_data) fail("onnx", "tensor ", t.name, ": cannot write raw or external data");
  return w;
}

WireWriter type_proto(const OnnxType& t) {
  using K = OnnxType::Kind;
  if (t.kind != K::Tensor) fail("onnx", "can only write tensor types");
  WireWriter tensor_type;
  tensor_type.varint(1, uint64_t(int64_t(t.elem_type)));
  if (t.has_shape) {
    WireWriter shape;
    for (const OnnxDim& d : t.shape) {
      WireWriter dim;
      if (d.has_value) dim.varint(1, uint64_t(d.value));
      if (!d.param.empty()) dim.string(2, d.param);
      shape.message(1, dim);
    }
    tensor_type.message(2, shape);
  }
  WireWriter w;
  w.message(1, tensor_type);
  return w;
}

WireWriter value_info(const OnnxValueInfo& v) {
  WireWriter w;
  w.string(1, v.name);
  w.message(2, type_proto(v.type));
  return w;
}

WireWriter graph(const OnnxGraph& g);

WireWriter attribute(const OnnxAttribute& a) {
  using T = OnnxAttributeType;
  WireWriter w;
  w.string(1, a.name);
  switch (a.type) {
    case T::Float: w.float32(2, a.f); break;
    case T::Int: w.varint(3, uint64_t(a.i)); break;
    case T::String: w.string(4, a.s); break;
    case T::Tensor: w.message(5, tensor(a.tensors.at(0))); break;
    case T::Graph: w.message(6, graph(a.graphs.at(0))); break;
    case T::Floats: w.packed_floats(7, a.floats); break;
    case T::Ints: w.packed_varints(8, std::span<const int64_t>(a.ints)); break;
    case T::Strings:
      for (const std::string& s : a.strings) w.string(9, s);
      break;
    case T::Graphs:
      for (const OnnxGraph& g : a.graphs) w.message(11, graph(g));
      break;
    default: fail("onnx", "attribute ", a.name, ": cannot write type ", onnx_attribute_type_name(a.type));
  }
  w.varint(20, uint64_t(a.type));
  return w;
}

WireWriter node(const OnnxNode& n) {
  WireWriter w;
  for (const std::string& s : n.inputs) w.string(1, s);
  for (const std::string& s : n.outputs) w.string(2, s);
  if (!n.name.empty()) w.string(3, n.name);
  w.string(4, n.op_type);
  for (const OnnxAttribute& a : n.attributes) w.message(5, attribute(a));
  if (!n.domain.empty()) w.string(7, n.domain);
  return w;
}

WireWriter graph(const OnnxGraph& g) {
  WireWriter w;
  for (const OnnxNode& n : g.nodes) w.message(1, node(n));
  w.string(2, g.name);
  for (const OnnxTensor& t : g.initializers) w.message(5, tensor(t));
  for (const OnnxValueInfo& v : g.inputs) w.message(11, value_info(v));
  for (const OnnxValueInfo& v : g.outputs) w.message(12, value_info(v));
  for (const OnnxValueInfo& v : g.value_info) w.message(13, value_info(v));
  return w;
}

}  // namespace

std::vector<uint8_t> write_onnx_model(const OnnxModel& m) {
  WireWriter w;
  w.varint(1, uint64_t(m.ir_version));
  if (!m.producer_name.empty()) w.string(2, m.producer_name);
  if (!m.producer_version.empty()) w.string(3, m.producer_version);
  if (!m.domain.empty()) w.string(4, m.domain);
  if (m.model_version) w.varint(5, uint64_t(m.model_version));
  if (!m.doc_string.empty()) w.string(6, m.doc_string);
  w.message(7, graph(m.graph));
  for (const OnnxOpsetId& o : m.opset_import) {
    WireWriter id;
    if (!o.domain.empty()) id.string(1, o.domain);
    id.varint(2, uint64_t(o.version));
    w.message(8, id);
  }
  for (const OnnxStringPair& p : m.metadata_props) {
    WireWriter kv;
    kv.string(1, p.key);
    kv.string(2, p.value);
    w.message(14, kv);
  }
  return w.take();
}

std::vector<uint8_t> write_onnx_tensor(const OnnxTensor& t) { return tensor(t).take(); }

}  // namespace kiln::formats
