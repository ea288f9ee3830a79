// safetensors reading: header length, the JSON header (formats/json.h) mapped to tensor
// entries, and the range checks that make every entry safe to slice out of the file.
#include "formats/safetensors.h"

#include <algorithm>

#include "formats/json.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

constexpr const char* kOp = "safetensors";
// The reference implementation refuses headers over 100 MB; so does this one, before parsing.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeRow {
  SafetensorsDtype dtype;
  const char* name;
  size_t size;
};
constexpr DtypeRow kDtypes[] = {
    {SafetensorsDtype::F64, "F64", 8},  {SafetensorsDtype::F32, "F32", 4},
    {SafetensorsDtype::F16, "F16", 2},  {SafetensorsDtype::BF16, "BF16", 2},
    {SafetensorsDtype::I64, "I64", 8},  {SafetensorsDtype::I32, "I32", 4},
    {SafetensorsDtype::I16, "I16", 2},  {SafetensorsDtype::I8, "I8", 1},
    {SafetensorsDtype::U64, "U64", 8},  {SafetensorsDtype::U32, "U32", 4},
    {SafetensorsDtype::U16, "U16", 2},  {SafetensorsDtype::U8, "U8", 1},
    {SafetensorsDtype::Bool, "BOOL", 1},
};

std::string quoted(std::string_view s) {
  return "'" + std::string(s.substr(0, 200)) + (s.size() > 200 ? "...'" : "'");
}

const JsonValue& member(const JsonValue& entry, const std::string& part, const char* key,
                        JsonValue::Kind kind) {
  const JsonValue* v = entry.find(key);
  if (!v) fail(kOp, part, ": no \"", key, "\"");
  if (v->kind != kind)
    fail(kOp, part, ": \"", key, "\" is a JSON ", json_kind_name(v->kind), ", expected a JSON ",
         json_kind_name(kind));
  return *v;
}

SafetensorsTensor read_entry(const std::string& name, const JsonValue& entry) {
  const std::string part = "tensor " + quoted(name);
  if (entry.kind != JsonValue::Kind::Object)
    fail(kOp, part, ": its entry is a JSON ", json_kind_name(entry.kind), ", expected an object");
  for (const auto& [key, _] : entry.members)
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      fail(kOp, part, ": unexpected field ", quoted(key));
  SafetensorsTensor t;
  t.name = name;
  const std::string& dtype = member(entry, part, "dtype", JsonValue::Kind::String).str;
  const DtypeRow* row = nullptr;
  for (const DtypeRow& r : kDtypes)
    if (dtype == r.name) row = &r;
  if (!row) fail(kOp, part, ": unknown dtype ", quoted(dtype));
  t.dtype = row->dtype;
  // The element count, every step checked so that count * itemsize fits in 63 bits.
  uint64_t bytes = row->size;
  const uint64_t limit = uint64_t(INT64_MAX);
  for (const JsonValue& d : member(entry, part, "shape", JsonValue::Kind::Array).items) {
    if (d.kind != JsonValue::Kind::Integer || d.integer < 0)
      fail(kOp, part, ": shape entries must be integers >= 0");
    if (t.shape.size() >= 64) fail(kOp, part, ": more than 64 dims");
    t.shape.push_back(d.integer);
    if (d.integer != 0 && bytes > limit / uint64_t(d.integer))
      fail(kOp, part, ": the size of its shape overflows 63 bits");
    bytes *= uint64_t(d.integer);
  }
  const auto& offsets = member(entry, part, "data_offsets", JsonValue::Kind::Array).items;
  if (offsets.size() != 2 || offsets[0].kind != JsonValue::Kind::Integer ||
      offsets[1].kind != JsonValue::Kind::Integer || offsets[0].integer < 0 ||
      offsets[1].integer < offsets[0].integer)
    fail(kOp, part, ": data_offsets must be [begin, end] with 0 <= begin <= end");
  t.begin = uint64_t(offsets[0].integer);
  t.end = uint64_t(offsets[1].integer);
  if (t.end - t.begin != bytes)
    fail(kOp, part, ": data_offsets [", t.begin, ", ", t.end, ") hold ", t.end - t.begin,
         " bytes, its shape and dtype ", row->name, " need ", bytes);
  return t;
}

// Each tensor inside the data section, none overlapping another.
void place_tensors(Safetensors& out, uint64_t file_size) {
  const uint64_t data_size = file_size - out.data_offset;
  for (SafetensorsTensor& t : out.tensors) {
    if (t.end > data_size)
      fail(kOp, "tensor ", quoted(t.name), " data_offsets [", t.begin, ", ", t.end,
           ") run past the end of the data section (", data_size, " bytes)");
    t.file_offset = out.data_offset + t.begin;
  }
  std::vector<const SafetensorsTensor*> order;
  for (const SafetensorsTensor& t : out.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->begin < b->begin || (a->begin == b->begin && a->end < b->end);
  });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->end > order[i]->begin)
      fail(kOp, "tensors ", quoted(order[i - 1]->name), " [", order[i - 1]->begin, ", ",
           order[i - 1]->end, ") and ", quoted(order[i]->name), " [", order[i]->begin, ", ",
           order[i]->end, ") overlap");
}

}  // namespace

const char* safetensors_dtype_name(SafetensorsDtype dtype) {
  for (const DtypeRow& r : kDtypes)
    if (r.dtype == dtype) return r.name;
  return "?";
}

size_t safetensors_dtype_size(SafetensorsDtype dtype) {
  for (const DtypeRow& r : kDtypes)
    if (r.dtype == dtype) return r.size;
  return 0;
}

Safetensors parse_safetensors(std::span<const uint8_t> file) {
  Safetensors out;
  if (file.size() < 8)
    fail(kOp, "truncated file: the header length needs 8 bytes, the file has ", file.size());
  for (int i = 7; i >= 0; --i) out.header_size = out.header_size << 8 | file[size_t(i)];
  if (out.header_size > kMaxHeaderBytes)
    fail(kOp, "header length ", out.header_size, " is over the 100 MB limit");
  if (out.header_size > file.size() - 8)
    fail(kOp, "header length ", out.header_size, " runs past the end of the file (",
         file.size(), " bytes)");
  out.data_offset = 8 + out.header_size;
  std::string_view text(reinterpret_cast<const char*>(file.data()) + 8, size_t(out.header_size));
  if (text.empty() || text[0] != '{') fail(kOp, "the header does not start with '{'");
  JsonValue header = parse_json(text, kOp);
  for (const auto& [name, entry] : header.members) {
    if (name == "__metadata__") {
      if (entry.kind != JsonValue::Kind::Object)
        fail(kOp, "__metadata__ is a JSON ", json_kind_name(entry.kind), ", expected an object");
      for (const auto& [key, value] : entry.members) {
        if (value.kind != JsonValue::Kind::String)
          fail(kOp, "__metadata__ ", quoted(key), " is a JSON ", json_kind_name(value.kind),
               ", expected a string");
        out.metadata.emplace(key, value.str);
      }
      continue;
    }
    out.tensors.push_back(read_entry(name, entry));
  }
  place_tensors(out, file.size());
  return out;
}

const SafetensorsTensor* Safetensors::find_tensor(std::string_view name) const {
  for (const SafetensorsTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const SafetensorsTensor& Safetensors::tensor(std::string_view name) const {
  const SafetensorsTensor* t = find_tensor(name);
  if (!t) fail(kOp, "tensor ", quoted(name), " is missing");
  return *t;
}

std::span<const uint8_t> safetensors_tensor_data(std::span<const uint8_t> file,
                                                 const SafetensorsTensor& t) {
  if (t.file_offset > file.size() || t.size() > file.size() - t.file_offset)
    fail(kOp, "tensor ", quoted(t.name), " data runs past the end of the buffer (",
         file.size(), " bytes)");
  return file.subspan(size_t(t.file_offset), size_t(t.size()));
}

}  // namespace kiln::formats
