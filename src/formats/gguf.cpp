// GGUF reading: a bounds-checked cursor over the caller's bytes, ggml's type table, the
// metadata value decoder, tensor-info checks (dims, types, offsets, overlaps) and lookups.
#include "formats/gguf.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "ir/error.h"

namespace kiln::formats {

// ---- ggml's type table ---------------------------------------------------------------------

std::string ggml_type_upper_name(GgmlType type) {
  std::string name = ggml_type_name(type);
  for (char& c : name) c = char(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

uint64_t ggml_tensor_bytes(GgmlType type, const std::vector<uint64_t>& dims, const char* op,
                           const std::string& what) {
  const GgmlTypeInfo& info = ggml_type_info(type);
  if (dims.empty()) fail(op, what, " has no dims");
  const uint64_t block_size = uint64_t(info.block_size), block_bytes = uint64_t(info.block_bytes);
  if (dims[0] % block_size != 0)
    fail(op, what, " has a row of ", dims[0], " elements, not a multiple of ",
         ggml_type_upper_name(type), "'s block size ", block_size);
  // bytes = dims[0] / block * block_bytes * dims[1] * ...; every step checked against 2^63.
  const uint64_t limit = uint64_t(INT64_MAX);
  uint64_t bytes = dims[0] / block_size * block_bytes;
  if (dims[0] / block_size > limit / block_bytes) bytes = limit + 1;
  for (size_t i = 1; i < dims.size() && bytes <= limit; ++i)
    bytes = (dims[i] != 0 && bytes > limit / dims[i]) ? limit + 1 : bytes * dims[i];
  if (bytes > limit) fail(op, what, ": its size in bytes overflows 63 bits");
  return bytes;
}

// ---- values ----------------------------------------------------------------------------------

const char* gguf_value_type_name(GgufValueType type) {
  static constexpr const char* kNames[] = {"u8",  "i8",     "u16",   "i16", "u32",
                                           "i32", "f32",    "bool",  "string", "array",
                                           "u64", "i64",    "f64"};
  return uint32_t(type) < 13 ? kNames[uint32_t(type)] : "?";
}

GgufValue GgufValue::of_uint(GgufValueType type, uint64_t v) {
  GgufValue out;
  out.type = type;
  out.uint = v;
  return out;
}
GgufValue GgufValue::of_int(GgufValueType type, int64_t v) {
  GgufValue out;
  out.type = type;
  out.sint = v;
  return out;
}
GgufValue GgufValue::of_float(GgufValueType type, double v) {
  GgufValue out;
  out.type = type;
  out.real = type == GgufValueType::F32 ? double(float(v)) : v;
  return out;
}
GgufValue GgufValue::of_bool(bool v) {
  GgufValue out;
  out.type = GgufValueType::Bool;
  out.boolean = v;
  return out;
}
GgufValue GgufValue::of_string(std::string v) {
  GgufValue out;
  out.type = GgufValueType::String;
  out.str = std::move(v);
  return out;
}
GgufValue GgufValue::of_array(GgufValueType elem_type, std::vector<GgufValue> items) {
  GgufValue out;
  out.type = GgufValueType::Array;
  out.elem_type = elem_type;
  out.items = std::move(items);
  return out;
}

// ---- the reader ------------------------------------------------------------------------------

namespace {

constexpr const char* kOp = "gguf";
// Nested arrays recurse; real files nest at most once, and the cap keeps the stack small.
constexpr int kMaxArrayDepth = 8;
constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// Fewest bytes a KV pair and a tensor info can take: 8-byte key length, 4-byte type, a u8;
// 8-byte name length, n_dims, one dim, type, offset.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (unsigned char c : s.substr(0, 200)) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += char(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + (s.size() > 200 ? "...'" : "'");
}

// Reads little-endian fields from the file; `part` names what is being read for messages.
struct Cursor {
  const uint8_t* data;
  uint64_t size;
  uint64_t pos = 0;
  std::string part = "header";

  uint64_t remaining() const { return size - pos; }
  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      fail(kOp, part, ": truncated file: ", what, " at byte ", pos, " needs ", n,
           " bytes, the file has ", size);
  }
  uint64_t uint(int bytes, const char* what) {
    need(uint64_t(bytes), what);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | data[pos + uint64_t(i)];
    pos += uint64_t(bytes);
    return v;
  }
  uint32_t u32(const char* what) { return uint32_t(uint(4, what)); }
  uint64_t u64(const char* what) { return uint(8, what); }
  std::string string(const char* what) {
    uint64_t n = u64(what);
    if (n > remaining())
      fail(kOp, part, ": ", what, " at byte ", pos - 8, " claims ", n, " bytes, but only ",
           remaining(), " remain in the file");
    std::string s(reinterpret_cast<const char*>(data + pos), size_t(n));
    pos += n;
    return s;
  }
};

// Fewest bytes one value of `type` takes in the file (arrays: elem type + count).
uint64_t min_value_bytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::Bool: return 1;
    case GgufValueType::U16: case GgufValueType::I16: return 2;
    case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
    case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: return 8;
    case GgufValueType::String: return 8;
    case GgufValueType::Array: return 12;
  }
  return 1;
}

GgufValueType read_value_type(Cursor& c, const char* what) {
  uint32_t t = c.u32(what);
  if (t > uint32_t(GgufValueType::F64))
    fail(kOp, c.part, ": unknown value type ", t, " at byte ", c.pos - 4,
         ", expected 0..12 (u8 ... f64)");
  return GgufValueType(t);
}

GgufValue read_value(Cursor& c, GgufValueType type, int depth);

GgufValue read_array(Cursor& c, int depth) {
  if (depth >= kMaxArrayDepth)
    fail(kOp, c.part, ": arrays nested more than ", kMaxArrayDepth, " deep");
  GgufValueType elem = read_value_type(c, "array element type");
  uint64_t count = c.u64("array length");
  // Checked before anything is reserved: a huge count in a small file is refused here.
  if (count > c.remaining() / min_value_bytes(elem))
    fail(kOp, c.part, ": array of ", count, " ", gguf_value_type_name(elem),
         " values does not fit in the ", c.remaining(), " bytes left in the file");
  std::vector<GgufValue> items;
  items.reserve(size_t(count));
  for (uint64_t i = 0; i < count; ++i) items.push_back(read_value(c, elem, depth + 1));
  return GgufValue::of_array(elem, std::move(items));
}

GgufValue read_value(Cursor& c, GgufValueType type, int depth) {
  switch (type) {
    case GgufValueType::U8: return GgufValue::of_uint(type, c.uint(1, "u8 value"));
    case GgufValueType::U16: return GgufValue::of_uint(type, c.uint(2, "u16 value"));
    case GgufValueType::U32: return GgufValue::of_uint(type, c.uint(4, "u32 value"));
    case GgufValueType::U64: return GgufValue::of_uint(type, c.uint(8, "u64 value"));
    case GgufValueType::I8: return GgufValue::of_int(type, int8_t(c.uint(1, "i8 value")));
    case GgufValueType::I16: return GgufValue::of_int(type, int16_t(c.uint(2, "i16 value")));
    case GgufValueType::I32: return GgufValue::of_int(type, int32_t(c.uint(4, "i32 value")));
    case GgufValueType::I64: return GgufValue::of_int(type, int64_t(c.uint(8, "i64 value")));
    case GgufValueType::F32: {
      uint32_t bits = uint32_t(c.uint(4, "f32 value"));
      float f;
      std::memcpy(&f, &bits, 4);
      return GgufValue::of_float(type, f);
    }
    case GgufValueType::F64: {
      uint64_t bits = c.uint(8, "f64 value");
      double d;
      std::memcpy(&d, &bits, 8);
      return GgufValue::of_float(type, d);
    }
    case GgufValueType::Bool: {
      uint64_t b = c.uint(1, "bool value");
      if (b > 1) fail(kOp, c.part, ": bool value ", b, " at byte ", c.pos - 1, " is not 0 or 1");
      return GgufValue::of_bool(b == 1);
    }
    case GgufValueType::String: return GgufValue::of_string(c.string("string value"));
    case GgufValueType::Array: return read_array(c, depth);
  }
  fail(kOp, c.part, ": unknown value type ", uint32_t(type));
}

void read_header(Cursor& c, Gguf& out, uint64_t& n_tensors, uint64_t& n_kv) {
  c.need(4, "magic");
  if (std::memcmp(c.data, "GGUF", 4) != 0)
    fail(kOp, "bad magic ", quoted(std::string_view(reinterpret_cast<const char*>(c.data), 4)),
         ", expected 'GGUF'");
  c.pos = 4;
  uint32_t version = c.u32("version");
  if (version == 1)
    fail(kOp, "version 1 files (32-bit counts, before August 2023) are not supported; "
         "convert the file to version 3");
  // A big-endian file (gguf-py --bigendian) stores 3 as 0x03000000.
  if (version == 0x02000000u || version == 0x03000000u)
    fail(kOp, "a big-endian file (version field ", version, "); only little-endian GGUF is read");
  if (version != 2 && version != 3)
    fail(kOp, "unsupported version ", version, ", expected 2 or 3");
  out.version = version;
  n_tensors = c.u64("tensor count");
  n_kv = c.u64("metadata count");
  const uint64_t rest = c.remaining();
  if (n_kv > rest / kMinKvBytes)
    fail(kOp, "header claims ", n_kv, " metadata pairs, but the ", rest,
         " bytes after the header hold at most ", rest / kMinKvBytes);
  if (n_tensors > rest / kMinTensorInfoBytes)
    fail(kOp, "header claims ", n_tensors, " tensors, but the ", rest,
         " bytes after the header hold at most ", rest / kMinTensorInfoBytes, " tensor infos");
}

void read_metadata(Cursor& c, Gguf& out, uint64_t n_kv) {
  out.metadata.reserve(size_t(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    c.part = "metadata pair " + std::to_string(i);
    std::string key = c.string("key");
    c.part = "metadata key " + quoted(key);
    if (key.empty()) fail(kOp, "metadata pair ", i, " has an empty key");
    if (out.key_index.count(key)) fail(kOp, c.part, ": duplicate key");
    GgufValueType type = read_value_type(c, "value type");
    GgufValue value = read_value(c, type, 0);
    out.key_index.emplace(key, out.metadata.size());
    out.metadata.push_back({std::move(key), std::move(value)});
  }
  if (const GgufValue* a = out.find("general.alignment")) {
    if (a->type != GgufValueType::U32)
      fail(kOp, "metadata key 'general.alignment' has type ", gguf_value_type_name(a->type),
           ", expected u32");
    if (a->uint == 0 || (a->uint & (a->uint - 1)) != 0)
      fail(kOp, "metadata key 'general.alignment' is ", a->uint, ", expected a power of two");
    out.alignment = uint32_t(a->uint);
  }
}

GgufTensorInfo read_tensor_info(Cursor& c, const Gguf& out, uint64_t index) {
  GgufTensorInfo t;
  c.part = "tensor info " + std::to_string(index);
  t.name = c.string("name");
  c.part = "tensor " + quoted(t.name);
  uint32_t n_dims = c.u32("n_dims");
  if (n_dims == 0 || n_dims > kMaxDims)
    fail(kOp, c.part, ": ", n_dims, " dims, expected 1 to ", kMaxDims);
  for (uint32_t d = 0; d < n_dims; ++d) {
    uint64_t dim = c.u64("dim");
    if (dim == 0 || dim > uint64_t(INT64_MAX))
      fail(kOp, c.part, ": dim ", d, " is ", dim, dim == 0 ? "" : " (negative as int64)",
           ", expected 1 to 2^63-1");
    t.dims.push_back(dim);
  }
  uint32_t type_id = c.u32("type");
  const GgmlTypeInfo* type = find_ggml_type(type_id);
  if (!type) fail(kOp, c.part, ": unknown ggml type id ", type_id);
  t.type = type->type;
  t.offset = c.u64("data offset");
  if (t.offset % out.alignment != 0)
    fail(kOp, c.part, ": data offset ", t.offset, " is not a multiple of the alignment ",
         out.alignment);
  // Element count first, so that absurd dims are reported as such, not as a size overflow.
  uint64_t count = 1;
  for (uint64_t d : t.dims) {
    if (count > uint64_t(INT64_MAX) / d) fail(kOp, c.part, ": the product of its dims overflows");
    count *= d;
  }
  t.size = ggml_tensor_bytes(t.type, t.dims, kOp, c.part);
  return t;
}

// Places each tensor in the file: in range, no overflow, no two overlapping.
void place_tensors(Gguf& out, uint64_t file_size) {
  for (GgufTensorInfo& t : out.tensors) {
    const uint64_t start = out.data_offset + t.offset;
    if (start < t.offset || start + t.size < start)
      fail(kOp, "tensor ", quoted(t.name), " data offset ", t.offset, " + size ", t.size,
           " overflows 64 bits");
    if (start + t.size > file_size)
      fail(kOp, "tensor ", quoted(t.name), " data [", start, "..", start + t.size,
           ") runs past the end of the file (", file_size, " bytes)");
    t.file_offset = start;
  }
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : out.tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensorInfo &a = *by_offset[i - 1], &b = *by_offset[i];
    if (a.file_offset + a.size > b.file_offset)
      fail(kOp, "tensors ", quoted(a.name), " [", a.file_offset, "..", a.file_offset + a.size,
           ") and ", quoted(b.name), " [", b.file_offset, "..", b.file_offset + b.size,
           ") overlap");
  }
}

}  // namespace

Gguf parse_gguf(std::span<const uint8_t> file) {
  Cursor c{file.data(), file.size()};
  Gguf out;
  uint64_t n_tensors = 0, n_kv = 0;
  read_header(c, out, n_tensors, n_kv);
  read_metadata(c, out, n_kv);
  out.tensors.reserve(size_t(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GgufTensorInfo t = read_tensor_info(c, out, i);
    if (out.tensor_index.count(t.name)) fail(kOp, "duplicate tensor name ", quoted(t.name));
    out.tensor_index.emplace(t.name, out.tensors.size());
    out.tensors.push_back(std::move(t));
  }
  // The data section starts at the next multiple of the alignment (pos < 2^63: it is inside
  // the file). A file without tensors may end before it.
  out.data_offset = (c.pos + out.alignment - 1) / out.alignment * out.alignment;
  place_tensors(out, file.size());
  return out;
}

std::span<const uint8_t> gguf_tensor_data(std::span<const uint8_t> file,
                                          const GgufTensorInfo& t) {
  if (t.file_offset > file.size() || t.size > file.size() - t.file_offset)
    fail(kOp, "tensor ", quoted(t.name), " data [", t.file_offset, "..", t.file_offset + t.size,
         ") runs past the end of the buffer (", file.size(), " bytes)");
  return file.subspan(size_t(t.file_offset), size_t(t.size));
}

// ---- lookups ---------------------------------------------------------------------------------

const GgufValue* Gguf::find(std::string_view key) const {
  auto it = key_index.find(key);
  return it == key_index.end() ? nullptr : &metadata[it->second].value;
}

const GgufValue& Gguf::get(std::string_view key, GgufValueType type) const {
  const GgufValue* v = find(key);
  if (!v) fail(kOp, "metadata key ", quoted(key), " is missing");
  if (v->type != type)
    fail(kOp, "metadata key ", quoted(key), " has type ", gguf_value_type_name(v->type),
         ", expected ", gguf_value_type_name(type));
  return *v;
}

uint8_t Gguf::get_u8(std::string_view k) const { return uint8_t(get(k, GgufValueType::U8).uint); }
int8_t Gguf::get_i8(std::string_view k) const { return int8_t(get(k, GgufValueType::I8).sint); }
uint16_t Gguf::get_u16(std::string_view k) const {
  return uint16_t(get(k, GgufValueType::U16).uint);
}
int16_t Gguf::get_i16(std::string_view k) const {
  return int16_t(get(k, GgufValueType::I16).sint);
}
uint32_t Gguf::get_u32(std::string_view k) const {
  return uint32_t(get(k, GgufValueType::U32).uint);
}
int32_t Gguf::get_i32(std::string_view k) const {
  return int32_t(get(k, GgufValueType::I32).sint);
}
uint64_t Gguf::get_u64(std::string_view k) const { return get(k, GgufValueType::U64).uint; }
int64_t Gguf::get_i64(std::string_view k) const { return get(k, GgufValueType::I64).sint; }
float Gguf::get_f32(std::string_view k) const { return float(get(k, GgufValueType::F32).real); }
double Gguf::get_f64(std::string_view k) const { return get(k, GgufValueType::F64).real; }
bool Gguf::get_bool(std::string_view k) const { return get(k, GgufValueType::Bool).boolean; }
const std::string& Gguf::get_string(std::string_view k) const {
  return get(k, GgufValueType::String).str;
}

const std::vector<GgufValue>& Gguf::get_array(std::string_view key,
                                              GgufValueType elem_type) const {
  const GgufValue& v = get(key, GgufValueType::Array);
  if (v.elem_type != elem_type)
    fail(kOp, "metadata key ", quoted(key), " is an array of ",
         gguf_value_type_name(v.elem_type), ", expected an array of ",
         gguf_value_type_name(elem_type));
  return v.items;
}

std::vector<std::string> Gguf::get_string_array(std::string_view key) const {
  std::vector<std::string> out;
  for (const GgufValue& v : get_array(key, GgufValueType::String)) out.push_back(v.str);
  return out;
}

const GgufTensorInfo* Gguf::find_tensor(std::string_view name) const {
  auto it = tensor_index.find(name);
  return it == tensor_index.end() ? nullptr : &tensors[it->second];
}

const GgufTensorInfo& Gguf::tensor(std::string_view name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (!t) fail(kOp, "tensor ", quoted(name), " is missing");
  return *t;
}

}  // namespace kiln::formats
