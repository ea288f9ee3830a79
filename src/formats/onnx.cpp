// ONNX protobuf messages read field by field (onnx.proto's field numbers) into the plain
// structs of formats/onnx.h; unknown fields are skipped, every count and depth is checked.
#include "formats/onnx.h"

#include "formats/protobuf_wire.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

constexpr const char* kOp = "onnx";
constexpr int kMaxDepth = 32;
constexpr int64_t kMaxElements = int64_t{1} << 62;

struct Parser {
  std::span<const uint8_t> file;  // the whole buffer: raw_data offsets are relative to it

  uint64_t offset_of(std::span<const uint8_t> part) const { return uint64_t(part.data() - file.data()); }

  static void check_depth(int depth, const std::string& what) {
    if (depth > kMaxDepth) fail(kOp, what, ": nested deeper than ", kMaxDepth, " levels");
  }

  OnnxStringPair string_pair(std::span<const uint8_t> bytes, const std::string& what) const {
    OnnxStringPair p;
    WireReader r(bytes, kOp, what);
    for (WireField f; r.next(f);) {
      if (f.number == 1) p.key = r.as_string(f);
      if (f.number == 2) p.value = r.as_string(f);
    }
    return p;
  }

  OnnxTensor tensor(std::span<const uint8_t> bytes, const std::string& what) const {
    OnnxTensor t;
    WireReader r(bytes, kOp, what);
    int32_t data_location = 0;
    for (WireField f; r.next(f);) {
      switch (f.number) {
        case 1: r.append_int64s(f, t.dims); break;
        case 2: t.data_type = r.as_int32(f); break;
        case 4: r.append_floats(f, t.float_data); break;
        case 5: r.append_int32s(f, t.int32_data); break;
        case 6: t.string_data.push_back(r.as_string(f)); break;
        case 7: r.append_int64s(f, t.int64_data); break;
        case 8: t.name = r.as_string(f); break;
        case 9:
          if (f.type != WireType::Bytes) r.fail_field(f, "raw_data must be length-delimited");
          t.has_raw_data = true;
          t.raw_offset = offset_of(f.bytes);
          t.raw_size = f.bytes.size();
          break;
        case 10: r.append_doubles(f, t.double_data); break;
        case 11: r.append_uint64s(f, t.uint64_data); break;
        case 13: t.external_data.push_back(string_pair(f.bytes, what + ".external_data")); break;
        case 14: data_location = r.as_int32(f); break;
        case 3: fail(kOp, what, ": segmented tensors (TensorProto.segment) are not supported");
        default: break;
      }
    }
    if (data_location != 0 && data_location != 1)
      fail(kOp, what, ": data_location ", data_location, ", expected 0 (DEFAULT) or 1 (EXTERNAL)");
    t.external = data_location == 1;
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (d < 0) fail(kOp, what, ": dims has ", d, ", expected sizes >= 0");
      if (d != 0 && n > kMaxElements / d) fail(kOp, what, ": the element count overflows 2^62");
      n *= d;
    }
    return t;
  }

  OnnxType type(std::span<const uint8_t> bytes, const std::string& what, int depth) const {
    check_depth(depth, what);
    OnnxType t;
    WireReader r(bytes, kOp, what);
    for (WireField f; r.next(f);) {
      using K = OnnxType::Kind;
      if (f.number == 1) tensor_type(r, f, t, K::Tensor, what + ".tensor_type");
      if (f.number == 8) tensor_type(r, f, t, K::SparseTensor, what + ".sparse_tensor_type");
      if (f.number == 4 || f.number == 9) {
        t.kind = f.number == 4 ? K::Sequence : K::Optional;
        element_types(r, f, t, what + (f.number == 4 ? ".sequence_type" : ".optional_type"), depth);
      }
      if (f.number == 5) {
        t.kind = K::Map;
        map_type(r, f, t, what + ".map_type", depth);
      }
    }
    return t;
  }

  void tensor_type(const WireReader& outer, const WireField& field, OnnxType& t, OnnxType::Kind kind,
                   const std::string& what) const {
    if (field.type != WireType::Bytes) outer.fail_field(field, "expected a message");
    t.kind = kind;
    WireReader r(field.bytes, kOp, what);
    for (WireField f; r.next(f);) {
      if (f.number == 1) t.elem_type = r.as_int32(f);
      if (f.number == 2) {
        if (f.type != WireType::Bytes) r.fail_field(f, "shape must be a message");
        t.has_shape = true;
        WireReader sr(f.bytes, kOp, what + ".shape");
        for (WireField d; sr.next(d);)
          if (d.number == 1) t.shape.push_back(dim(sr, d, what + ".shape.dim"));
      }
    }
  }

  OnnxDim dim(const WireReader& outer, const WireField& field, const std::string& what) const {
    if (field.type != WireType::Bytes) outer.fail_field(field, "dim must be a message");
    OnnxDim d;
    WireReader r(field.bytes, kOp, what);
    for (WireField f; r.next(f);) {
      if (f.number == 1) {
        d.has_value = true;
        d.value = r.as_int64(f);
      }
      if (f.number == 2) d.param = r.as_string(f);
    }
    return d;
  }

  void element_types(const WireReader& outer, const WireField& field, OnnxType& t, const std::string& what,
                     int depth) const {
    if (field.type != WireType::Bytes) outer.fail_field(field, "expected a message");
    WireReader r(field.bytes, kOp, what);
    for (WireField f; r.next(f);) {
      if (f.number != 1) continue;
      if (f.type != WireType::Bytes) r.fail_field(f, "elem_type must be a message");
      t.elems.assign(1, type(f.bytes, what + ".elem_type", depth + 1));
    }
  }

  void map_type(const WireReader& outer, const WireField& field, OnnxType& t, const std::string& what,
                int depth) const {
    if (field.type != WireType::Bytes) outer.fail_field(field, "expected a message");
    WireReader r(field.bytes, kOp, what);
    for (WireField f; r.next(f);) {
      if (f.number == 1) t.key_type = r.as_int32(f);
      if (f.number == 2) {
        if (f.type != WireType::Bytes) r.fail_field(f, "value_type must be a message");
        t.elems.assign(1, type(f.bytes, what + ".value_type", depth + 1));
      }
    }
  }

  OnnxValueInfo value_info(std::span<const uint8_t> bytes, const std::string& what, int depth) const {
    OnnxValueInfo v;
    WireReader r(bytes, kOp, what);
    for (WireField f; r.next(f);) {
      if (f.number == 1) v.name = r.as_string(f);
      if (f.number == 2) {
        if (f.type != WireType::Bytes) r.fail_field(f, "type must be a message");
        v.type = type(f.bytes, what + ".type", depth + 1);
      }
    }
    return v;
  }

  OnnxAttribute attribute(std::span<const uint8_t> bytes, const std::string& what, int depth) const;
  OnnxNode node(std::span<const uint8_t> bytes, const std::string& what, int depth) const;
  OnnxGraph graph(std::span<const uint8_t> bytes, const std::string& what, int depth) const;
};

std::span<const uint8_t> message(const WireReader& r, const WireField& f) {
  if (f.type != WireType::Bytes) r.fail_field(f, "expected a message (length-delimited)");
  return f.bytes;
}

std::string indexed(const std::string& what, const char* field, size_t i) {
  return what + "." + field + "[" + std::to_string(i) + "]";
}

// The attribute type a file without `type` means, from the field that is set.
OnnxAttributeType inferred_type(const OnnxAttribute& a, bool has_f, bool has_i, bool has_s) {
  using T = OnnxAttributeType;
  if (has_f) return T::Float;
  if (has_i) return T::Int;
  if (has_s) return T::String;
  if (!a.floats.empty()) return T::Floats;
  if (!a.ints.empty()) return T::Ints;
  if (!a.strings.empty()) return T::Strings;
  if (!a.graphs.empty()) return T::Graphs;
  if (!a.tensors.empty()) return T::Tensors;
  return T::Undefined;
}

OnnxAttribute Parser::attribute(std::span<const uint8_t> bytes, const std::string& what, int depth) const {
  OnnxAttribute a;
  WireReader r(bytes, kOp, what);
  bool has_f = false, has_i = false, has_s = false, has_type = false;
  int singular_tensor = 0, singular_graph = 0, singular_type = 0;
  for (WireField f; r.next(f);) {
    switch (f.number) {
      case 1: a.name = r.as_string(f); break;
      case 21: a.ref_attr_name = r.as_string(f); break;
      case 20: a.type = OnnxAttributeType(r.as_int32(f)), has_type = true; break;
      case 2: a.f = r.as_float(f), has_f = true; break;
      case 3: a.i = r.as_int64(f), has_i = true; break;
      case 4: a.s = r.as_string(f), has_s = true; break;
      case 5: ++singular_tensor; [[fallthrough]];
      case 10: a.tensors.push_back(tensor(message(r, f), indexed(what, "tensors", a.tensors.size()))); break;
      case 6: ++singular_graph; [[fallthrough]];
      case 11:
        a.graphs.push_back(graph(message(r, f), indexed(what, "graphs", a.graphs.size()), depth + 1));
        break;
      case 14: ++singular_type; [[fallthrough]];
      case 15: a.type_protos.push_back(type(message(r, f), what + ".type_protos", depth + 1)); break;
      case 7: r.append_floats(f, a.floats); break;
      case 8: r.append_int64s(f, a.ints); break;
      case 9: a.strings.push_back(r.as_string(f)); break;
      case 22:
      case 23: fail(kOp, what, ": sparse tensor attributes are not supported");
      default: break;
    }
  }
  if (!has_type) a.type = inferred_type(a, has_f, has_i, has_s);
  using T = OnnxAttributeType;
  const int t = int(a.type);
  if (t < 0 || t > int(T::TypeProtos)) fail(kOp, what, ": attribute type ", t, ", expected 0..14");
  auto one = [&](size_t count, int singular, const char* field) {
    if (count != 1 || singular != 1)
      fail(kOp, what, ": attribute of type ", onnx_attribute_type_name(a.type), " needs exactly one ", field);
  };
  if (a.type == T::Tensor) one(a.tensors.size(), singular_tensor, "t");
  if (a.type == T::Graph) one(a.graphs.size(), singular_graph, "g");
  if (a.type == T::TypeProto) one(a.type_protos.size(), singular_type, "tp");
  return a;
}

OnnxNode Parser::node(std::span<const uint8_t> bytes, const std::string& what, int depth) const {
  OnnxNode n;
  WireReader r(bytes, kOp, what);
  for (WireField f; r.next(f);) {
    switch (f.number) {
      case 1: n.inputs.push_back(r.as_string(f)); break;
      case 2: n.outputs.push_back(r.as_string(f)); break;
      case 3: n.name = r.as_string(f); break;
      case 4: n.op_type = r.as_string(f); break;
      case 7: n.domain = r.as_string(f); break;
      case 5:
        n.attributes.push_back(attribute(message(r, f), indexed(what, "attribute", n.attributes.size()), depth));
        break;
      default: break;
    }
  }
  return n;
}

OnnxGraph Parser::graph(std::span<const uint8_t> bytes, const std::string& what, int depth) const {
  check_depth(depth, what);
  OnnxGraph g;
  WireReader r(bytes, kOp, what);
  for (WireField f; r.next(f);) {
    switch (f.number) {
      case 1: g.nodes.push_back(node(message(r, f), indexed(what, "node", g.nodes.size()), depth)); break;
      case 2: g.name = r.as_string(f); break;
      case 5:
        g.initializers.push_back(tensor(message(r, f), indexed(what, "initializer", g.initializers.size())));
        break;
      case 11: g.inputs.push_back(value_info(message(r, f), indexed(what, "input", g.inputs.size()), depth)); break;
      case 12: g.outputs.push_back(value_info(message(r, f), indexed(what, "output", g.outputs.size()), depth)); break;
      case 13:
        g.value_info.push_back(value_info(message(r, f), indexed(what, "value_info", g.value_info.size()), depth));
        break;
      case 15: fail(kOp, what, ": sparse initializers are not supported");
      default: break;
    }
  }
  return g;
}

}  // namespace

const OnnxAttribute* OnnxNode::find_attribute(const std::string& attr_name) const {
  for (const OnnxAttribute& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

int64_t OnnxTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // bounded by the parser's check
  return n;
}

int64_t OnnxModel::opset_version(const std::string& d) const {
  const bool default_domain = d.empty() || d == "ai.onnx";
  for (const OnnxOpsetId& o : opset_import)
    if (o.domain == d || (default_domain && (o.domain.empty() || o.domain == "ai.onnx"))) return o.version;
  return 0;
}

OnnxModel parse_onnx_model(std::span<const uint8_t> bytes) {
  const Parser p{bytes};
  OnnxModel m;
  WireReader r(bytes, kOp, "model");
  bool has_graph = false;
  for (WireField f; r.next(f);) {
    switch (f.number) {
      case 1: m.ir_version = r.as_int64(f); break;
      case 2: m.producer_name = r.as_string(f); break;
      case 3: m.producer_version = r.as_string(f); break;
      case 4: m.domain = r.as_string(f); break;
      case 5: m.model_version = r.as_int64(f); break;
      case 6: m.doc_string = r.as_string(f); break;
      case 7:
        if (has_graph) fail(kOp, "model: more than one graph");
        m.graph = p.graph(message(r, f), "graph", 0), has_graph = true;
        break;
      case 8: {
        OnnxOpsetId id;
        WireReader o(message(r, f), kOp, indexed("model", "opset_import", m.opset_import.size()));
        for (WireField g; o.next(g);) {
          if (g.number == 1) id.domain = o.as_string(g);
          if (g.number == 2) id.version = o.as_int64(g);
        }
        m.opset_import.push_back(id);
        break;
      }
      case 14:
        m.metadata_props.push_back(p.string_pair(message(r, f), indexed("model", "metadata_props", m.metadata_props.size())));
        break;
      default: break;
    }
  }
  if (!has_graph) fail(kOp, "model: no graph (field 7); is this an ONNX model file?");
  return m;
}

OnnxTensor parse_onnx_tensor(std::span<const uint8_t> bytes) { return Parser{bytes}.tensor(bytes, "tensor"); }

std::span<const uint8_t> onnx_raw_data(std::span<const uint8_t> bytes, const OnnxTensor& t) {
  if (t.raw_offset > bytes.size() || t.raw_size > bytes.size() - t.raw_offset)
    fail(kOp, "tensor '", t.name, "': raw_data [", t.raw_offset, ", +", t.raw_size, ") lies outside the ",
         bytes.size(), " bytes given");
  return bytes.subspan(size_t(t.raw_offset), size_t(t.raw_size));
}

}  // namespace kiln::formats
