// GGUF writing (formats::write_gguf): metadata, tensor infos and already-encoded tensor data
// laid out as gguf-py lays them out, so a file read and written again is byte-identical.
#include <cstring>
#include <set>

#include "formats/gguf.h"
#include "ir/error.h"

namespace kiln::formats {

namespace {

constexpr const char* kOp = "write_gguf";

struct Out {
  std::vector<uint8_t> bytes;

  void uint(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes.push_back(uint8_t(v >> (8 * i)));
  }
  void string(const std::string& s) {
    uint(s.size(), 8);
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void pad_to(uint64_t alignment) {
    while (bytes.size() % alignment != 0) bytes.push_back(0);
  }
};

// Integers that do not fit their type would be silently cut to their low bytes: refused.
void check_range(const GgufValue& v, const std::string& key) {
  auto bits = [&]() -> int {
    switch (v.type) {
      case GgufValueType::U8: case GgufValueType::I8: return 8;
      case GgufValueType::U16: case GgufValueType::I16: return 16;
      case GgufValueType::U32: case GgufValueType::I32: return 32;
      default: return 64;
    }
  }();
  if (bits == 64) return;
  const bool is_signed = v.type == GgufValueType::I8 || v.type == GgufValueType::I16 ||
                         v.type == GgufValueType::I32;
  const bool fits = is_signed ? v.sint >= -(int64_t(1) << (bits - 1)) &&
                                    v.sint < (int64_t(1) << (bits - 1))
                              : v.uint < (uint64_t(1) << bits);
  if (!fits)
    fail(kOp, "metadata key '", key, "': ", is_signed ? std::to_string(v.sint)
                                                      : std::to_string(v.uint),
         " does not fit in ", gguf_value_type_name(v.type));
}

void write_value(Out& out, const GgufValue& v, GgufValueType type, const std::string& key) {
  if (v.type != type)
    fail(kOp, "metadata key '", key, "': a ", gguf_value_type_name(v.type),
         " value where the array says ", gguf_value_type_name(type));
  check_range(v, key);
  switch (type) {
    case GgufValueType::U8: out.uint(v.uint, 1); return;
    case GgufValueType::U16: out.uint(v.uint, 2); return;
    case GgufValueType::U32: out.uint(v.uint, 4); return;
    case GgufValueType::U64: out.uint(v.uint, 8); return;
    case GgufValueType::I8: out.uint(uint64_t(v.sint), 1); return;
    case GgufValueType::I16: out.uint(uint64_t(v.sint), 2); return;
    case GgufValueType::I32: out.uint(uint64_t(v.sint), 4); return;
    case GgufValueType::I64: out.uint(uint64_t(v.sint), 8); return;
    case GgufValueType::F32: {
      float f = float(v.real);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      out.uint(bits, 4);
      return;
    }
    case GgufValueType::F64: {
      uint64_t bits;
      std::memcpy(&bits, &v.real, 8);
      out.uint(bits, 8);
      return;
    }
    case GgufValueType::Bool: out.uint(v.boolean ? 1 : 0, 1); return;
    case GgufValueType::String: out.string(v.str); return;
    case GgufValueType::Array:
      out.uint(uint32_t(v.elem_type), 4);
      out.uint(v.items.size(), 8);
      for (const GgufValue& item : v.items) write_value(out, item, v.elem_type, key);
      return;
  }
  fail(kOp, "metadata key '", key, "': unknown value type ", uint32_t(type));
}

uint32_t alignment_of(const std::vector<GgufKv>& metadata) {
  for (const GgufKv& kv : metadata) {
    if (kv.key != "general.alignment") continue;
    const uint64_t a = kv.value.uint;
    if (kv.value.type != GgufValueType::U32 || a == 0 || (a & (a - 1)) != 0)
      fail(kOp, "general.alignment must be a u32 power of two");
    return uint32_t(a);
  }
  return 32;
}

}  // namespace

std::vector<uint8_t> write_gguf(const std::vector<GgufKv>& metadata,
                                const std::vector<GgufTensorToWrite>& tensors,
                                uint32_t version) {
  if (version != 2 && version != 3) fail(kOp, "version ", version, ", expected 2 or 3");
  const uint32_t alignment = alignment_of(metadata);
  Out out;
  out.uint(0x46554747, 4);  // "GGUF"
  out.uint(version, 4);
  out.uint(tensors.size(), 8);
  out.uint(metadata.size(), 8);
  std::set<std::string> seen;
  for (const GgufKv& kv : metadata) {
    if (kv.key.empty() || !seen.insert(kv.key).second)
      fail(kOp, "metadata key '", kv.key, "' is empty or appears twice");
    out.string(kv.key);
    out.uint(uint32_t(kv.value.type), 4);
    write_value(out, kv.value, kv.value.type, kv.key);
  }
  // Tensor infos: each tensor's data starts at the next multiple of the alignment.
  seen.clear();
  uint64_t offset = 0;
  for (const GgufTensorToWrite& t : tensors) {
    if (!seen.insert(t.name).second) fail(kOp, "tensor name '", t.name, "' appears twice");
    if (t.dims.empty() || t.dims.size() > 4)
      fail(kOp, "tensor '", t.name, "' has ", t.dims.size(), " dims, expected 1 to 4");
    const uint64_t size = ggml_tensor_bytes(t.type, t.dims, kOp, "tensor '" + t.name + "'");
    if (size != t.data.size())
      fail(kOp, "tensor '", t.name, "' has ", t.data.size(), " bytes of data, its type ",
           ggml_type_upper_name(t.type), " and dims need ", size);
    out.string(t.name);
    out.uint(t.dims.size(), 4);
    for (uint64_t d : t.dims) out.uint(d, 8);
    out.uint(uint32_t(t.type), 4);
    out.uint(offset, 8);
    offset += (size + alignment - 1) / alignment * alignment;
  }
  out.pad_to(alignment);  // gguf-py pads a metadata-only file too
  for (const GgufTensorToWrite& t : tensors) {
    out.bytes.insert(out.bytes.end(), t.data.begin(), t.data.end());
    out.pad_to(alignment);
  }
  return std::move(out.bytes);
}

}  // namespace kiln::formats
