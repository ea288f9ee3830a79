// ONNX tensor data: the data-type table (names, sizes, which typed field holds each type)
// and the decoding of a TensorProto's elements into little-endian bytes.
#include <cstring>

#include "formats/onnx.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

// Which repeated field holds a type's values when raw_data is absent (onnx.proto's comments).
enum class TypedField { None, Float, Int32, Int64, Double, Uint64 };

struct DataTypeRow {
  OnnxDataType type;
  const char* name;
  size_t size;  // 0: not decoded by onnx_tensor_bytes
  TypedField field;
};

constexpr DataTypeRow kDataTypes[] = {
    {OnnxDataType::Float, "FLOAT", 4, TypedField::Float},
    {OnnxDataType::Uint8, "UINT8", 1, TypedField::Int32},
    {OnnxDataType::Int8, "INT8", 1, TypedField::Int32},
    {OnnxDataType::Uint16, "UINT16", 2, TypedField::Int32},
    {OnnxDataType::Int16, "INT16", 2, TypedField::Int32},
    {OnnxDataType::Int32, "INT32", 4, TypedField::Int32},
    {OnnxDataType::Int64, "INT64", 8, TypedField::Int64},
    {OnnxDataType::String, "STRING", 0, TypedField::None},
    {OnnxDataType::Bool, "BOOL", 1, TypedField::Int32},
    {OnnxDataType::Float16, "FLOAT16", 2, TypedField::Int32},  // int32_data holds the bits
    {OnnxDataType::Double, "DOUBLE", 8, TypedField::Double},
    {OnnxDataType::Uint32, "UINT32", 4, TypedField::Uint64},
    {OnnxDataType::Uint64, "UINT64", 8, TypedField::Uint64},
    {OnnxDataType::Complex64, "COMPLEX64", 0, TypedField::None},
    {OnnxDataType::Complex128, "COMPLEX128", 0, TypedField::None},
    {OnnxDataType::Bfloat16, "BFLOAT16", 2, TypedField::Int32},
    {OnnxDataType::Float8E4M3FN, "FLOAT8E4M3FN", 0, TypedField::None},
    {OnnxDataType::Float8E4M3FNUZ, "FLOAT8E4M3FNUZ", 0, TypedField::None},
    {OnnxDataType::Float8E5M2, "FLOAT8E5M2", 0, TypedField::None},
    {OnnxDataType::Float8E5M2FNUZ, "FLOAT8E5M2FNUZ", 0, TypedField::None},
    {OnnxDataType::Uint4, "UINT4", 0, TypedField::None},
    {OnnxDataType::Int4, "INT4", 0, TypedField::None},
    {OnnxDataType::Float4E2M1, "FLOAT4E2M1", 0, TypedField::None},
};

const DataTypeRow* row_of(int32_t type) {
  for (const DataTypeRow& r : kDataTypes)
    if (int32_t(r.type) == type) return &r;
  return nullptr;
}

// Copies `values` into `out`, each narrowed (or widened) to `size` little-endian bytes.
template <typename T>
void put_values(const std::vector<T>& values, size_t size, std::vector<uint8_t>& out) {
  out.resize(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (size == sizeof(T)) {
      std::memcpy(&out[i * size], &values[i], size);
    } else {
      const uint64_t bits = uint64_t(values[i]);  // integers only: truncation keeps the low bytes
      std::memcpy(&out[i * size], &bits, size);  // little-endian host
    }
  }
}

}  // namespace

std::string onnx_data_type_name(int32_t type) {
  const DataTypeRow* r = row_of(type);
  return r ? r->name : "DATA_TYPE_" + std::to_string(type);
}

size_t onnx_data_type_size(int32_t type) {
  const DataTypeRow* r = row_of(type);
  return r ? r->size : 0;
}

const char* onnx_attribute_type_name(OnnxAttributeType t) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT",   "INT",     "STRING",        "TENSOR",
                                       "GRAPH",     "FLOATS",  "INTS",    "STRINGS",       "TENSORS",
                                       "GRAPHS",    "SPARSE_TENSOR",      "SPARSE_TENSORS", "TYPE_PROTO",
                                       "TYPE_PROTOS"};
  const int i = int(t);
  return i >= 0 && i <= int(OnnxAttributeType::TypeProtos) ? kNames[i] : "UNKNOWN";
}

std::vector<uint8_t> onnx_tensor_bytes(std::span<const uint8_t> bytes, const OnnxTensor& t) {
  const std::string what = "tensor '" + t.name + "'";
  if (t.external) fail("onnx", what, ": its data is external (in another file), which is not supported yet");
  const DataTypeRow* row = row_of(t.data_type);
  if (!row || row->size == 0)
    fail("onnx", what, ": data type ", onnx_data_type_name(t.data_type),
         " cannot be decoded (supported: the fixed-size numeric types and BOOL)");
  const int64_t n = t.num_elements();
  std::vector<uint8_t> out;
  if (t.has_raw_data) {
    const std::span<const uint8_t> raw = onnx_raw_data(bytes, t);
    if (uint64_t(n) > raw.size() / row->size || raw.size() != uint64_t(n) * row->size)
      fail("onnx", what, ": raw_data has ", raw.size(), " bytes, expected ", n, " elements of ", row->size);
    return std::vector<uint8_t>(raw.begin(), raw.end());
  }
  size_t count = 0;
  switch (row->field) {
    case TypedField::Float: count = t.float_data.size(), put_values(t.float_data, 4, out); break;
    case TypedField::Int32: count = t.int32_data.size(), put_values(t.int32_data, row->size, out); break;
    case TypedField::Int64: count = t.int64_data.size(), put_values(t.int64_data, 8, out); break;
    case TypedField::Double: count = t.double_data.size(), put_values(t.double_data, 8, out); break;
    case TypedField::Uint64: count = t.uint64_data.size(), put_values(t.uint64_data, row->size, out); break;
    case TypedField::None: break;
  }
  if (count != uint64_t(n))
    fail("onnx", what, ": ", count, " values in its typed data field, expected ", n, " (prod of dims)");
  return out;
}

}  // namespace kiln::formats
