// kiln::formats ONNX reader: ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto and
// ValueInfoProto decoded from protobuf bytes (formats/protobuf_wire.h) into plain structs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace kiln::formats {

// TensorProto.DataType (onnx.proto's numbering).
enum class OnnxDataType : int32_t {
  Undefined = 0, Float = 1, Uint8 = 2, Int8 = 3, Uint16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, Uint32 = 12, Uint64 = 13, Complex64 = 14,
  Complex128 = 15, Bfloat16 = 16, Float8E4M3FN = 17, Float8E4M3FNUZ = 18, Float8E5M2 = 19,
  Float8E5M2FNUZ = 20, Uint4 = 21, Int4 = 22, Float4E2M1 = 23,
};
// "FLOAT", "INT64", ... (onnx's names), "DATA_TYPE_<n>" for numbers it does not know.
std::string onnx_data_type_name(int32_t type);
// Bytes per element of the fixed-size types onnx_tensor_bytes decodes; 0 for the others
// (strings, complex, 4-bit and 8-bit floats).
size_t onnx_data_type_size(int32_t type);

struct OnnxStringPair {
  std::string key, value;
};

// A TensorProto. Data is either raw_data (little-endian elements, left in the parsed bytes:
// raw_offset/raw_size locate it there), a typed repeated field, or external (data_location
// EXTERNAL: the external_data records say which file and range).
struct OnnxTensor {
  std::string name;
  std::vector<int64_t> dims;  // checked: each >= 0, the element count fits in 2^62
  int32_t data_type = 0;      // OnnxDataType, kept as read (unknown numbers pass through)
  bool has_raw_data = false;
  uint64_t raw_offset = 0, raw_size = 0;  // from the start of the bytes given to the parser
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  std::vector<std::string> string_data;
  bool external = false;
  std::vector<OnnxStringPair> external_data;  // location, offset, length, checksum
  int64_t num_elements() const;
};

// One dimension of a ValueInfo's shape: a size, a symbolic name (dim_param), or neither.
struct OnnxDim {
  bool has_value = false;
  int64_t value = 0;
  std::string param;
};

// A TypeProto. Tensor and SparseTensor use elem_type and shape; Sequence and Optional hold
// their element type in `elems` (one entry); Map holds key_type and its value in `elems`.
struct OnnxType {
  enum class Kind { Unknown, Tensor, Sequence, Map, Optional, SparseTensor } kind = Kind::Unknown;
  int32_t elem_type = 0;
  int32_t key_type = 0;
  bool has_shape = false;  // false: rank unknown
  std::vector<OnnxDim> shape;
  std::vector<OnnxType> elems;
};

struct OnnxValueInfo {
  std::string name;
  OnnxType type;
};

struct OnnxGraph;

// AttributeProto.AttributeType numbering.
enum class OnnxAttributeType : int32_t {
  Undefined = 0, Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5, Floats = 6, Ints = 7,
  Strings = 8, Tensors = 9, Graphs = 10, SparseTensor = 11, SparseTensors = 12, TypeProto = 13,
  TypeProtos = 14,
};
const char* onnx_attribute_type_name(OnnxAttributeType t);

// An AttributeProto. `type` is as stored, or inferred from the field that is set when the
// file leaves it out (old exporters); a singular TENSOR/GRAPH/TYPE_PROTO sits in tensors[0],
// graphs[0] or type_protos[0]. ref_attr_name is kept for function bodies.
struct OnnxAttribute {
  std::string name;
  std::string ref_attr_name;
  OnnxAttributeType type = OnnxAttributeType::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<OnnxTensor> tensors;
  std::vector<OnnxGraph> graphs;
  std::vector<OnnxType> type_protos;
};

struct OnnxNode {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;  // "" marks an omitted optional input/output
  std::vector<OnnxAttribute> attributes;
  const OnnxAttribute* find_attribute(const std::string& attr_name) const;
};

struct OnnxGraph {
  std::string name;
  std::vector<OnnxNode> nodes;
  std::vector<OnnxTensor> initializers;
  std::vector<OnnxValueInfo> inputs, outputs, value_info;
};

struct OnnxOpsetId {
  std::string domain;  // "" (or "ai.onnx") is the default domain
  int64_t version = 0;
};

struct OnnxModel {
  int64_t ir_version = 0;
  std::vector<OnnxOpsetId> opset_import;
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<OnnxStringPair> metadata_props;
  OnnxGraph graph;
  // The opset version imported for `domain` ("" and "ai.onnx" are one); 0 if none.
  int64_t opset_version(const std::string& domain) const;
};

// Parses a ModelProto. Every length and varint is checked against its message, nesting
// (graphs inside attributes, types inside types) is limited to 32 levels, unknown fields
// are skipped, and sparse initializers are refused; a malformed file throws
// kiln::Error("onnx: <where>: ...") and nothing reads outside `bytes`.
OnnxModel parse_onnx_model(std::span<const uint8_t> bytes);
// Parses a lone TensorProto (the node tests' input_0.pb ... files).
OnnxTensor parse_onnx_tensor(std::span<const uint8_t> bytes);

// Writes a ModelProto (formats/onnx_writer.cpp): tensor data in the typed fields, tensor
// types only; parse_onnx_model reads back the same structs. Raw or external tensor data
// and non-tensor types throw kiln::Error.
std::vector<uint8_t> write_onnx_model(const OnnxModel& model);
// Writes a lone TensorProto (the node tests' .pb layout).
std::vector<uint8_t> write_onnx_tensor(const OnnxTensor& tensor);

// The raw_data bytes of `t` inside `bytes` (the buffer it was parsed from).
std::span<const uint8_t> onnx_raw_data(std::span<const uint8_t> bytes, const OnnxTensor& t);
// The elements of `t` as little-endian values of its own type (onnx_data_type_size bytes
// each), from raw_data or the typed field the format puts that type in; the count must
// equal prod(dims). External data, strings and types without a size throw kiln::Error.
std::vector<uint8_t> onnx_tensor_bytes(std::span<const uint8_t> bytes, const OnnxTensor& t);

// An external tensor's records (TensorProto.external_data) read and checked: which file,
// relative to the model's directory, and which byte range of it holds the elements.
struct OnnxExternalRef {
  std::string location;  // normalized: '/' separators, no "." or empty parts
  uint64_t offset = 0;
  bool has_length = false;  // without one, the data runs to the end of the file
  uint64_t length = 0;
  std::string checksum;  // SHA-1 hex as written; kept, not verified
};
// The records of `t` (which must be external): `location` is required and must be a relative
// path that stays inside the model's directory (no absolute path, drive letter or ".."
// part); offset and length must be decimal integers; unknown keys are ignored as onnx does.
// Throws kiln::Error naming the tensor.
OnnxExternalRef onnx_external_ref(const OnnxTensor& t);
// A location made canonical as onnx_external_ref does (backslashes become slashes, "." parts go), so a
// caller's file names match the records; throws kiln::Error for one onnx_external_ref refuses.
std::string onnx_external_location(const std::string& location);
// Every external tensor of the model (initializers and attribute tensors, in subgraphs too),
// in file order, each with its records checked (non-const: a loader rewrites them in place
// once it has their bytes).
std::vector<std::pair<OnnxTensor*, OnnxExternalRef>> onnx_external_tensors(OnnxModel& model);
// The bytes of external tensor `t` inside `file` (the contents of ref.location): the range
// must lie inside the file and hold exactly prod(dims) elements of the tensor's type. Errors
// name the tensor and the file.
std::span<const uint8_t> onnx_external_data(const OnnxTensor& t, const OnnxExternalRef& ref,
                                            std::span<const uint8_t> file);

}  // namespace kiln::formats
