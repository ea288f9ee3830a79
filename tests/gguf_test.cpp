// Checks formats::parse_gguf / write_gguf: the fixtures gguf-py wrote (tools/gen_gguf_fixtures.py)
// parse as their dumps say and write back byte for byte; malformed files fail with the part named.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "formats/gguf.h"
#include "ir/error.h"
#include "tests/model_file_dump.h"

namespace gguf_test {

namespace {

using namespace kiln::formats;
using Bytes = std::vector<uint8_t>;
using VT = GgufValueType;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/gguf/";
const char* kFixtures[] = {"all_types", "v2", "align64", "metadata_only"};

std::string format_value(const GgufValue& v) {
  char buf[40];
  switch (v.type) {
    case VT::U8: case VT::U16: case VT::U32: case VT::U64: return std::to_string(v.uint);
    case VT::I8: case VT::I16: case VT::I32: case VT::I64: return std::to_string(v.sint);
    case VT::F32: std::snprintf(buf, sizeof buf, "%.9g", v.real); return buf;
    case VT::F64: std::snprintf(buf, sizeof buf, "%.17g", v.real); return buf;
    case VT::Bool: return v.boolean ? "true" : "false";
    case VT::String: return kiln_test::dump_quote(v.str);
    case VT::Array: {
      std::string out = std::string(gguf_value_type_name(v.elem_type)) + "[";
      for (size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + format_value(v.items[i]);
      return out + "]";
    }
  }
  return "?";
}

// The parse of `file` in the generator's dump format.
std::string dump(const Gguf& g, std::span<const uint8_t> file) {
  std::string out = "version " + std::to_string(g.version) + "\nalignment " +
                    std::to_string(g.alignment) + "\ndata_offset " +
                    std::to_string(g.data_offset) + "\n";
  for (const GgufKv& kv : g.metadata)
    out += "kv " + kv.key + " " + gguf_value_type_name(kv.value.type) + " " +
           format_value(kv.value) + "\n";
  for (const GgufTensorInfo& t : g.tensors)
    out += "tensor " + t.name + " " + ggml_type_upper_name(t.type) + " dims " +
           kiln_test::join(t.dims, ",") + " offset " + std::to_string(t.offset) + " size " +
           std::to_string(t.size) + " fnv " + kiln_test::fnv1a64(gguf_tensor_data(file, t)) +
           "\n";
  return out;
}

// The error text of parsing `b`, or "" if it parsed.
std::string error_of(const Bytes& b) {
  try {
    parse_gguf(b);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_GGUF_ERROR(bytes, part)                                        \
  do {                                                                        \
    std::string err_ = error_of(bytes);                                       \
    EXPECT_EQ(err_.rfind("gguf: ", 0), 0u) << "no gguf error: '" << err_ << "'"; \
    EXPECT_NE(err_.find(part), std::string::npos) << err_;                   \
  } while (0)

// Little-endian GGUF pieces for hand-made (mostly malformed) files.
struct Raw {
  Bytes b;
  Raw& le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(uint8_t(v >> 8 * i));
    return *this;
  }
  Raw& u8(uint8_t v) { return le(v, 1); }
  Raw& u32(uint32_t v) { return le(v, 4); }
  Raw& u64(uint64_t v) { return le(v, 8); }
  Raw& str(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    b.insert(b.end(), {'G', 'G', 'U', 'F'});
    return u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& info(const std::string& name, const std::vector<uint64_t>& dims, uint32_t type,
            uint64_t offset) {
    str(name).u32(uint32_t(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(type).u64(offset);
  }
  // Pads to 32 and appends `n` data bytes.
  Raw& data(size_t n) {
    while (b.size() % 32) b.push_back(0);
    b.insert(b.end(), n, 0x5a);
    return *this;
  }
};

// A file with one tensor of the given info and `n` data bytes.
Bytes one_tensor(const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset, size_t n,
                 const std::string& name = "w") {
  return Raw().header(1, 0).info(name, dims, type, offset).data(n).b;
}

TEST(GgufFixtures, ParseAsTheDumpsSay) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    Bytes file = kiln_test::read_bytes(kDir + name + ".gguf");
    ASSERT_FALSE(file.empty());
    EXPECT_EQ(dump(parse_gguf(file), file), kiln_test::read_text(kDir + name + ".txt"));
  }
}

TEST(GgufFixtures, WriterReproducesGgufPyBytes) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    Bytes file = kiln_test::read_bytes(kDir + name + ".gguf");
    Gguf g = parse_gguf(file);
    std::vector<GgufTensorToWrite> tensors;
    for (const GgufTensorInfo& t : g.tensors)
      tensors.push_back({t.name, t.dims, t.type, gguf_tensor_data(file, t)});
    Bytes again = write_gguf(g.metadata, tensors, g.version);
    EXPECT_EQ(again, file);
  }
}

TEST(Gguf, TypedGetters) {
  Bytes file = kiln_test::read_bytes(kDir + "all_types.gguf");
  Gguf g = parse_gguf(file);
  EXPECT_EQ(g.get_string("general.architecture"), "llama");
  EXPECT_EQ(g.get_u8("test.u8"), 250);
  EXPECT_EQ(g.get_i8("test.i8"), -128);
  EXPECT_EQ(g.get_u16("test.u16"), 65535);
  EXPECT_EQ(g.get_i16("test.i16"), -300);
  EXPECT_EQ(g.get_u32("test.u32"), 4000000000u);
  EXPECT_EQ(g.get_i32("test.i32"), INT32_MIN);
  EXPECT_EQ(g.get_f32("test.f32"), 1e-5f);
  EXPECT_TRUE(g.get_bool("test.bool_true"));
  EXPECT_FALSE(g.get_bool("test.bool_false"));
  EXPECT_EQ(g.get_u64("test.u64"), UINT64_MAX);
  EXPECT_EQ(g.get_i64("test.i64"), INT64_MIN);
  EXPECT_EQ(g.get_f64("test.f64"), 3.141592653589793);
  EXPECT_EQ(g.get_string_array("test.array_string"),
            (std::vector<std::string>{"a", "", "\xc3\xbc" "ber", "<|im_end|>"}));
  EXPECT_EQ(g.get_array("tokenizer.ggml.token_type", VT::I32).size(), 4u);
  const auto& nested = g.get_array("test.array_nested", VT::Array);
  ASSERT_EQ(nested.size(), 3u);
  EXPECT_EQ(nested[2].elem_type, VT::String);
  EXPECT_EQ(g.tensor("blk.0.attn_q.weight").type, GgmlType::Q4_0);
  EXPECT_EQ(g.find_tensor("nope"), nullptr);
  EXPECT_EQ(g.find("nope"), nullptr);
}

TEST(Gguf, GetterErrorsNameTheKeyAndTypes) {
  Gguf g = parse_gguf(kiln_test::read_bytes(kDir + "all_types.gguf"));
  auto message = [&](auto fn) {
    try {
      fn();
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message([&] { g.get_u32("llama.block_count"); }),
            "gguf: metadata key 'llama.block_count' is missing");
  EXPECT_EQ(message([&] { g.get_u32("test.u8"); }),
            "gguf: metadata key 'test.u8' has type u8, expected u32");
  EXPECT_EQ(message([&] { g.get_string_array("tokenizer.ggml.token_type"); }),
            "gguf: metadata key 'tokenizer.ggml.token_type' is an array of i32, expected an "
            "array of string");
  EXPECT_EQ(message([&] { g.tensor("missing.weight"); }),
            "gguf: tensor 'missing.weight' is missing");
}

TEST(GgufWriter, RoundTripsEveryValueType) {
  std::vector<GgufKv> md = {
      {"general.alignment", GgufValue::of_uint(VT::U32, 64)},
      {"a.u8", GgufValue::of_uint(VT::U8, 7)},
      {"a.i16", GgufValue::of_int(VT::I16, -7)},
      {"a.f32", GgufValue::of_float(VT::F32, 0.1)},
      {"a.f64", GgufValue::of_float(VT::F64, 0.1)},
      {"a.s", GgufValue::of_string(std::string("nul\0byte", 8))},
      {"a.nested",
       GgufValue::of_array(VT::Array, {GgufValue::of_array(VT::Bool, {GgufValue::of_bool(true)}),
                                       GgufValue::of_array(VT::I64, {})})},
  };
  Bytes q8(34 * 2, 3), f16(2 * 3, 9);
  std::vector<GgufTensorToWrite> ts = {{"q", {64}, GgmlType::Q8_0, q8},
                                       {"h", {1, 3}, GgmlType::F16, f16}};
  for (uint32_t version : {2u, 3u}) {
    Bytes file = write_gguf(md, ts, version);
    EXPECT_EQ(file.size() % 64, 0u);
    Gguf g = parse_gguf(file);
    EXPECT_EQ(g.version, version);
    EXPECT_EQ(g.alignment, 64u);
    EXPECT_EQ(g.get_f32("a.f32"), 0.1f);
    EXPECT_EQ(g.get_f64("a.f64"), 0.1);
    EXPECT_EQ(g.get_string("a.s").size(), 8u);
    EXPECT_EQ(g.get_array("a.nested", VT::Array)[1].elem_type, VT::I64);
    EXPECT_EQ(g.tensor("h").offset, 128u);  // the Q8_0 tensor's 68 bytes padded to 64
    std::span<const uint8_t> h = gguf_tensor_data(file, g.tensor("h"));
    EXPECT_EQ(Bytes(h.begin(), h.end()), f16);
    EXPECT_EQ(write_gguf(g.metadata, ts, version), file);
  }
}

TEST(GgufWriter, RefusesInconsistentInput) {
  Bytes four(4, 0);
  auto err = [](const std::vector<GgufKv>& md, const std::vector<GgufTensorToWrite>& ts) {
    try {
      write_gguf(md, ts);
    } catch (const kiln::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const GgufTensorToWrite w1{"w", {1}, GgmlType::F32, four};
  EXPECT_NE(err({}, {{"w", {2}, GgmlType::F32, four}}).find("has 4 bytes of data"),
            std::string::npos);
  EXPECT_NE(err({}, {w1, w1}).find("twice"), std::string::npos);
  EXPECT_NE(err({}, {{"w", {16}, GgmlType::Q4_0, four}}).find("block size 32"), std::string::npos);
  EXPECT_NE(err({{"k", GgufValue::of_uint(VT::U8, 1)}, {"k", GgufValue::of_uint(VT::U8, 1)}}, {})
                .find("twice"),
            std::string::npos);
  EXPECT_NE(err({{"a", GgufValue::of_array(VT::U8, {GgufValue::of_string("x")})}}, {})
                .find("a string value where the array says u8"),
            std::string::npos);
  EXPECT_NE(err({{"k", GgufValue::of_uint(VT::U8, 256)}}, {}).find("'k': 256 does not fit in u8"),
            std::string::npos);
  EXPECT_NE(err({{"k", GgufValue::of_int(VT::I16, -32769)}}, {}).find("-32769 does not fit in i16"),
            std::string::npos);
  EXPECT_EQ(err({{"k", GgufValue::of_int(VT::I32, INT32_MIN)}}, {}), "");
  EXPECT_NE(err({{"general.alignment", GgufValue::of_uint(VT::U32, 24)}}, {}).find("power of two"),
            std::string::npos);
}

TEST(GgufMalformed, EveryTruncationFailsUntilTheDataEnds) {
  Bytes file = kiln_test::read_bytes(kDir + "all_types.gguf");
  Gguf g = parse_gguf(file);
  uint64_t data_end = 0;
  for (const GgufTensorInfo& t : g.tensors) data_end = std::max(data_end, t.file_offset + t.size);
  for (size_t n = 0; n < file.size(); ++n) {
    Bytes prefix(file.begin(), file.begin() + long(n));
    std::string err = error_of(prefix);
    if (n < data_end) {
      ASSERT_EQ(err.rfind("gguf: ", 0), 0u) << "prefix " << n << ": '" << err << "'";
    } else {
      ASSERT_EQ(err, "") << "prefix " << n;
    }
  }
  // The last tensor's data cut short names the tensor, its range and the file size.
  Bytes cut(file.begin(), file.begin() + long(data_end - 1));
  const GgufTensorInfo& last = g.tensors.back();
  EXPECT_EQ(error_of(cut), "gguf: tensor '" + last.name + "' data [" +
                               std::to_string(last.file_offset) + ".." + std::to_string(data_end) +
                               ") runs past the end of the file (" + std::to_string(data_end - 1) +
                               " bytes)");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("k").u32(uint32_t(VT::U32)).b,
                    "metadata key 'k': truncated file: u32 value at byte 37 needs 4 bytes, the "
                    "file has 37");
}

TEST(GgufMalformed, HeaderMagicAndVersion) {
  Bytes file = kiln_test::read_bytes(kDir + "v2.gguf");
  Bytes bad = file;
  bad[0] = 'X';
  EXPECT_GGUF_ERROR(bad, "bad magic 'XGUF'");
  bad = file;
  bad[4] = 1;
  EXPECT_GGUF_ERROR(bad, "version 1 files");
  bad[4] = 4;
  EXPECT_GGUF_ERROR(bad, "unsupported version 4");
  bad[4] = 0, bad[7] = 3;
  EXPECT_GGUF_ERROR(bad, "big-endian");
  EXPECT_GGUF_ERROR((Bytes{'G', 'G'}), "magic at byte 0 needs 4 bytes, the file has 2");
}

TEST(GgufMalformed, CountsBeyondTheFile) {
  EXPECT_GGUF_ERROR(Raw().header(0, uint64_t(1) << 60).b, "metadata pairs");
  EXPECT_GGUF_ERROR(Raw().header(UINT64_MAX, 0).b, "tensors, but the 0 bytes");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("k").u32(uint32_t(VT::Array)).u32(0).u64(1ull << 62).b,
                    "array of 4611686018427387904 u8 values does not fit");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("k").u32(uint32_t(VT::String)).u64(UINT64_MAX).b,
                    "metadata key 'k': string value at byte 37 claims 18446744073709551615 bytes");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).u64(UINT64_MAX - 3).u64(0).b, "metadata pair 0: key");
}

TEST(GgufMalformed, MetadataValues) {
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("k").u32(13).u64(0).b,
                    "metadata key 'k': unknown value type 13");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("k").u32(uint32_t(VT::Bool)).u8(2).u64(0).b,
                    "metadata key 'k': bool value 2");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("").u32(0).u8(0).u64(0).b, "empty key");
  EXPECT_GGUF_ERROR(Raw().header(0, 2).str("k").u32(0).u8(0).str("k").u32(0).u8(0).b,
                    "metadata key 'k': duplicate key");
  EXPECT_GGUF_ERROR(Raw().header(0, 1).str("general.alignment").u32(uint32_t(VT::U64)).u64(32).b,
                    "'general.alignment' has type u64, expected u32");
  EXPECT_GGUF_ERROR(
      Raw().header(0, 1).str("general.alignment").u32(uint32_t(VT::U32)).u32(48).u64(0).b,
                    "'general.alignment' is 48, expected a power of two");
  Raw deep;
  deep.header(0, 1).str("k").u32(uint32_t(VT::Array));
  for (int i = 0; i < 20; ++i) deep.u32(uint32_t(VT::Array)).u64(1);
  deep.u32(0).u64(0);
  EXPECT_GGUF_ERROR(deep.b, "arrays nested more than 8 deep");
}

TEST(GgufMalformed, TensorInfos) {
  const uint32_t f32 = 0, q4_0 = 2;
  EXPECT_GGUF_ERROR(one_tensor({}, f32, 0, 0), "tensor 'w': 0 dims, expected 1 to 4");
  EXPECT_GGUF_ERROR(one_tensor({1, 1, 1, 1, 1}, f32, 0, 4), "tensor 'w': 5 dims");
  EXPECT_GGUF_ERROR(one_tensor({4, 0}, f32, 0, 0), "tensor 'w': dim 1 is 0");
  EXPECT_GGUF_ERROR(one_tensor({uint64_t(1) << 63}, f32, 0, 0),
                    "dim 0 is 9223372036854775808 (negative");
  EXPECT_GGUF_ERROR(one_tensor({1ull << 32, 1ull << 32}, f32, 0, 0),
                    "the product of its dims overflows");
  EXPECT_GGUF_ERROR(one_tensor({1ull << 62}, f32, 0, 0), "its size in bytes overflows");
  EXPECT_GGUF_ERROR(one_tensor({4}, 4, 0, 16), "tensor 'w': unknown ggml type id 4");
  EXPECT_GGUF_ERROR(one_tensor({4}, 1000, 0, 16), "unknown ggml type id 1000");
  EXPECT_GGUF_ERROR(one_tensor({48}, q4_0, 0, 64),
                    "tensor 'w' has a row of 48 elements, not a multiple of Q4_0's block size 32");
  EXPECT_GGUF_ERROR(one_tensor({4}, f32, 16, 64),
                    "data offset 16 is not a multiple of the alignment 32");
  EXPECT_GGUF_ERROR(one_tensor({4}, f32, 32, 16), ") runs past the end of the file");
  EXPECT_GGUF_ERROR(one_tensor({4}, f32, UINT64_MAX - 31, 16), "overflows 64 bits");
  EXPECT_GGUF_ERROR(one_tensor({4}, f32, 8, 16, std::string("bad\nname")), "tensor 'bad\\x0aname'");
  Bytes dup = Raw().header(2, 0).info("w", {4}, f32, 0).info("w", {4}, f32, 32).data(64).b;
  EXPECT_GGUF_ERROR(dup, "duplicate tensor name 'w'");
  Bytes overlap = Raw().header(2, 0).info("a", {16}, f32, 0).info("b", {4}, f32, 32).data(64).b;
  EXPECT_GGUF_ERROR(overlap, "tensors 'a' [");
  EXPECT_GGUF_ERROR(overlap, ") overlap");
  EXPECT_EQ(error_of(Raw().header(2, 0).info("a", {8}, f32, 0).info("b", {4}, f32, 32).data(48).b),
            "");
}

// The real model file, when `make models` has put it in data/models (not committed).
TEST(GgufRealModel, SmolLM2Facts) {
  const std::string path =
      std::string(KILN_FIXTURE_DIR) + "/../../data/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (make models)";
  Bytes file = kiln_test::read_bytes(path);
  Gguf g = parse_gguf(file);
  EXPECT_EQ(g.version, 3u);
  EXPECT_EQ(g.get_string("general.architecture"), "llama");
  EXPECT_EQ(g.get_u32("llama.block_count"), 30u);
  EXPECT_EQ(g.get_u32("llama.embedding_length"), 576u);
  EXPECT_EQ(g.get_u32("llama.attention.head_count"), 9u);
  EXPECT_EQ(g.get_u32("llama.attention.head_count_kv"), 3u);
  EXPECT_EQ(g.get_f32("llama.rope.freq_base"), 100000.0f);
  EXPECT_EQ(g.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(g.get_string_array("tokenizer.ggml.tokens").size(), 49152u);
  EXPECT_EQ(g.get_array("tokenizer.ggml.merges", VT::String).size(), 48900u);
  EXPECT_EQ(g.tensors.size(), 272u);
  std::map<std::string, int> types;
  for (const GgufTensorInfo& t : g.tensors) ++types[ggml_type_upper_name(t.type)];
  EXPECT_EQ(types, (std::map<std::string, int>{{"F32", 61}, {"Q4_1", 210}, {"Q8_0", 1}}));
  const GgufTensorInfo& embd = g.tensor("token_embd.weight");
  EXPECT_EQ(embd.type, GgmlType::Q8_0);
  EXPECT_EQ(embd.dims, (std::vector<uint64_t>{576, 49152}));
  EXPECT_EQ(embd.file_offset, g.data_offset);
  EXPECT_EQ(embd.size, 576u / 32 * 34 * 49152);
  EXPECT_EQ(g.tensor("blk.29.ffn_down.weight").dims, (std::vector<uint64_t>{1536, 576}));
}

}  // namespace

}  // namespace gguf_test
