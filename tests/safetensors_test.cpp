// Checks formats::parse_safetensors (and its JSON parser): the files PyPI safetensors wrote
// (tools/gen_gguf_fixtures.py) parse as their dumps say; malformed files fail naming the part.
#include <gtest/gtest.h>

#include "formats/json.h"
#include "formats/safetensors.h"
#include "ir/error.h"
#include "tests/model_file_dump.h"

namespace safetensors_test {

namespace {

using namespace kiln::formats;
using Bytes = std::vector<uint8_t>;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/safetensors/";

std::string dump(const Safetensors& st, std::span<const uint8_t> file) {
  std::string out = "header_size " + std::to_string(st.header_size) + "\n";
  for (const auto& [k, v] : st.metadata) out += "meta " + k + " " + kiln_test::dump_quote(v) + "\n";
  for (const SafetensorsTensor& t : st.tensors) {
    std::string shape = kiln_test::join(t.shape, ",");
    out += "tensor " + t.name + " " + safetensors_dtype_name(t.dtype) + " shape " +
           (shape.empty() ? "-" : shape) + " offsets " + std::to_string(t.begin) + " " +
           std::to_string(t.end) + " fnv " +
           kiln_test::fnv1a64(safetensors_tensor_data(file, t)) + "\n";
  }
  return out;
}

// A file with header `json` (as given) followed by `data` bytes.
Bytes file_of(const std::string& json, size_t data = 0) {
  Bytes b;
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(uint64_t(json.size()) >> 8 * i));
  b.insert(b.end(), json.begin(), json.end());
  b.insert(b.end(), data, 0x11);
  return b;
}

std::string error_of(const Bytes& b) {
  try {
    parse_safetensors(b);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ST_ERROR(bytes, part)                                                   \
  do {                                                                                 \
    std::string err_ = error_of(bytes);                                                \
    EXPECT_EQ(err_.rfind("safetensors: ", 0), 0u) << "no safetensors error: '" << err_ << "'"; \
    EXPECT_NE(err_.find(part), std::string::npos) << err_;                            \
  } while (0)

TEST(SafetensorsFixtures, ParseAsTheDumpsSay) {
  for (const char* name : {"basic", "no_metadata", "bf16"}) {
    SCOPED_TRACE(name);
    Bytes file = kiln_test::read_bytes(kDir + name + ".safetensors");
    ASSERT_FALSE(file.empty());
    EXPECT_EQ(dump(parse_safetensors(file), file), kiln_test::read_text(kDir + name + ".txt"));
  }
}

TEST(SafetensorsFixtures, LookupAndSizes) {
  Bytes file = kiln_test::read_bytes(kDir + "basic.safetensors");
  Safetensors st = parse_safetensors(file);
  const SafetensorsTensor& e = st.tensor("embed.weight");
  EXPECT_EQ(e.dtype, SafetensorsDtype::F32);
  EXPECT_EQ(e.size(), 3u * 4 * safetensors_dtype_size(e.dtype));
  EXPECT_EQ(e.file_offset, st.data_offset + e.begin);
  EXPECT_EQ(st.data_offset, 8 + st.header_size);
  EXPECT_EQ(st.find_tensor("__metadata__"), nullptr);
  EXPECT_EQ(st.tensor("empty").size(), 0u);
  try {
    st.tensor("nope");
    ADD_FAILURE() << "no error";
  } catch (const kiln::Error& err) {
    EXPECT_STREQ(err.what(), "safetensors: tensor 'nope' is missing");
  }
}

TEST(SafetensorsMalformed, EveryTruncationFails) {
  Bytes file = kiln_test::read_bytes(kDir + "basic.safetensors");
  for (size_t n = 0; n < file.size(); ++n) {
    std::string err = error_of(Bytes(file.begin(), file.begin() + long(n)));
    ASSERT_EQ(err.rfind("safetensors: ", 0), 0u) << "prefix " << n << ": '" << err << "'";
  }
  EXPECT_ST_ERROR(Bytes(file.begin(), file.end() - 1),
                  "tensor 'mask' data_offsets [123, 126) run past the end of the data section "
                  "(125 bytes)");
}

TEST(SafetensorsMalformed, HeaderLength) {
  EXPECT_ST_ERROR(Bytes(7, 0), "truncated file: the header length needs 8 bytes, the file has 7");
  Bytes big = file_of("{}");
  big[0] = 0xff;
  EXPECT_ST_ERROR(big, "header length 255 runs past the end of the file (10 bytes)");
  big[6] = 1;
  EXPECT_ST_ERROR(big, "over the 100 MB limit");
  EXPECT_ST_ERROR(file_of(" {}"), "does not start with '{'");
  EXPECT_EQ(error_of(file_of("{}   ")), "");  // the writer pads headers with spaces
}

TEST(SafetensorsMalformed, Json) {
  EXPECT_ST_ERROR(file_of("{"), "JSON header at byte 1: unexpected end of the header");
  EXPECT_ST_ERROR(file_of("{} x"), "unexpected 'x' after the value");
  EXPECT_ST_ERROR(file_of("{\"a\": 1.5}"), "a non-integer number");
  EXPECT_ST_ERROR(file_of("{\"a\": true}"), "expected an object, array, string or integer");
  EXPECT_ST_ERROR(file_of("{\"a\": 1, \"a\": 2}"), "JSON header at byte 9: duplicate key \"a\"");
  EXPECT_ST_ERROR(file_of("{\"a\\q\": 1}"), "unknown escape \\'q'");
  EXPECT_ST_ERROR(file_of("{\"a\nb\": 1}"), "control character 10 inside a string");
  EXPECT_ST_ERROR(file_of("{\"\\ud800\": 1}"), "high surrogate without a low one");
  EXPECT_ST_ERROR(file_of("{\"a\": 99999999999999999999}"), "does not fit in 64 bits");
  EXPECT_ST_ERROR(file_of("{\"a\": 012}"), "leading zero");
  EXPECT_ST_ERROR(file_of(std::string(100, '[')), "does not start with '{'");
  EXPECT_ST_ERROR(file_of("{\"a\":" + std::string(100, '[')), "nested more than 64 deep");
  JsonValue v =
      parse_json(R"({"s": "\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t", "n": -9223372036854775808})", "t");
  EXPECT_EQ(v.find("s")->str, "\xc3\xa9\xf0\x9f\x98\x80\"\\/\b\f\n\r\t");
  EXPECT_EQ(v.find("n")->integer, INT64_MIN);
}

TEST(SafetensorsMalformed, Entries) {
  auto one = [](const std::string& entry, size_t data = 16) {
    return file_of("{\"w\": " + entry + "}", data);
  };
  EXPECT_ST_ERROR(one("[]"), "tensor 'w': its entry is a JSON array, expected an object");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [4]})"), "tensor 'w': no \"data_offsets\"");
  EXPECT_ST_ERROR(one(R"({"dtype": 1, "shape": [4], "data_offsets": [0, 16]})"),
                  "tensor 'w': \"dtype\" is a JSON integer, expected a JSON string");
  EXPECT_ST_ERROR(one(R"({"dtype": "Q4", "shape": [4], "data_offsets": [0, 16]})"),
                  "tensor 'w': unknown dtype 'Q4'");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]})"),
                  "shape entries must be integers >= 0");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "x": 1})"),
                  "unexpected field 'x'");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [16, 0]})"),
                  "data_offsets must be [begin, end] with 0 <= begin <= end");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0]})"),
                  "data_offsets must be");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 16]})"),
                  "tensor 'w': data_offsets [0, 16) hold 16 bytes, its shape and dtype F32 "
                  "need 12");
  EXPECT_ST_ERROR(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [8, 24]})"),
                  "tensor 'w' data_offsets [8, 24) run past the end of the data section "
                  "(16 bytes)");
  EXPECT_ST_ERROR(
      one(R"({"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]})"),
                  "the size of its shape overflows");
  EXPECT_ST_ERROR(file_of(R"({"a": {"dtype": "I8", "shape": [8], "data_offsets": [0, 8]},
                              "b": {"dtype": "I8", "shape": [8], "data_offsets": [4, 12]}})", 16),
                  "tensors 'a' [0, 8) and 'b' [4, 12) overlap");
  EXPECT_ST_ERROR(file_of(R"({"__metadata__": {"k": 1}})"), "__metadata__ 'k' is a JSON integer");
  EXPECT_ST_ERROR(file_of(R"({"__metadata__": []})"), "__metadata__ is a JSON array");
  // Zero-size tensors may share an offset; a scalar has shape [].
  const std::string zero_sized = R"({
      "a": {"dtype": "BOOL", "shape": [0], "data_offsets": [4, 4]},
      "b": {"dtype": "I32", "shape": [], "data_offsets": [0, 4]},
      "c": {"dtype": "U8", "shape": [0, 2], "data_offsets": [4, 4]}})";
  EXPECT_EQ(error_of(file_of(zero_sized, 4)), "");
}

}  // namespace

}  // namespace safetensors_test
