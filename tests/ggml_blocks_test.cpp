// GgmlBlocks: kiln::formats::dequantize against tests/fixtures/ggml_blocks.txt (the PyPI gguf
// package's dequantization, tools/gen_ggml_block_fixtures.py) bit for bit, the type table, errors.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "formats/ggml_blocks.h"
#include "ir/error.h"

namespace ggml_blocks_test {

namespace {

using kiln::formats::dequantize;
using kiln::formats::GgmlType;

struct BlockCase {
  std::string name;
  GgmlType type{};
  int64_t n = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> bits;  // expected float32 values, as IEEE bits
};

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

GgmlType type_named(const std::string& name) {
  for (uint32_t id = 0; id < 64; ++id) {
    const auto* info = kiln::formats::find_ggml_type(id);
    if (info && name == info->name) return info->type;
  }
  ADD_FAILURE() << "fixture names an unknown ggml type " << name;
  return GgmlType::F32;
}

std::vector<uint8_t> parse_hex_bytes(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uint8_t(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

// Reads the fixture's `case` / `bytes` / `values` line triples.
std::vector<BlockCase> load_cases() {
  std::ifstream in(std::string(KILN_FIXTURE_DIR) + "/ggml_blocks.txt");
  EXPECT_TRUE(in) << "tests/fixtures/ggml_blocks.txt is missing";
  std::vector<BlockCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream head(line);
    std::string tag, type_name;
    BlockCase c;
    head >> tag >> c.name >> type_name >> c.n;
    EXPECT_EQ(tag, "case");
    c.type = type_named(type_name);
    std::string bytes_line, values_line, word;
    std::getline(in, bytes_line);
    std::getline(in, values_line);
    EXPECT_EQ(bytes_line.rfind("bytes ", 0), 0u) << c.name;
    c.bytes = parse_hex_bytes(bytes_line.substr(6));
    std::istringstream values(values_line);
    values >> word;
    EXPECT_EQ(word, "values") << c.name;
    while (values >> word) c.bits.push_back(uint32_t(std::stoul(word, nullptr, 16)));
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(GgmlBlocks, BitExactAgainstGgufPackage) {
  const auto cases = load_cases();
  ASSERT_GT(cases.size(), 100u);
  std::map<std::string, int> per_type;
  for (const auto& c : cases) {
    ASSERT_EQ(int64_t(c.bits.size()), c.n) << c.name;
    std::vector<float> out(size_t(c.n), -123.0f);
    dequantize(c.type, c.bytes, c.n, out.data());
    int mismatches = 0;
    for (int64_t i = 0; i < c.n; ++i) {
      const uint32_t got = bits_of(out[size_t(i)]);
      if (got != c.bits[size_t(i)] && ++mismatches <= 3)
        ADD_FAILURE() << c.name << " value " << i << ": got bits " << std::hex << got
                      << ", expected " << c.bits[size_t(i)];
    }
    EXPECT_EQ(mismatches, 0) << c.name;
    ++per_type[kiln::formats::ggml_type_name(c.type)];
  }
  // Every type with a decoder is covered by the fixture, real model blocks included.
  for (const char* t : {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K",
                        "q3_K", "q4_K", "q5_K", "q6_K"})
    EXPECT_GE(per_type[t], 3) << t;
  int real = 0;
  for (const auto& c : cases) real += c.name.rfind("real_", 0) == 0;
  EXPECT_GE(real, 30);
}

TEST(GgmlBlocks, WholeTensorIsItsBlocksInOrder) {
  // Two fixture cases of one type decoded as one buffer give both cases' values in order.
  const auto cases = load_cases();
  const BlockCase* a = nullptr;
  const BlockCase* b = nullptr;
  for (const auto& c : cases) {
    if (c.type != GgmlType::Q4_K) continue;
    (a ? b : a) = &c;
    if (b) break;
  }
  ASSERT_TRUE(a && b);
  std::vector<uint8_t> bytes = a->bytes;
  bytes.insert(bytes.end(), b->bytes.begin(), b->bytes.end());
  std::vector<float> out(size_t(a->n + b->n));
  dequantize(GgmlType::Q4_K, bytes, a->n + b->n, out.data());
  EXPECT_EQ(bits_of(out[0]), a->bits[0]);
  EXPECT_EQ(bits_of(out[size_t(a->n)]), b->bits[0]);
  EXPECT_EQ(bits_of(out.back()), b->bits.back());
}

TEST(GgmlBlocks, TypeTable) {
  using kiln::formats::find_ggml_type;
  ASSERT_NE(find_ggml_type(12), nullptr);
  EXPECT_STREQ(find_ggml_type(12)->name, "q4_K");
  EXPECT_EQ(find_ggml_type(12)->block_size, 256);
  EXPECT_EQ(find_ggml_type(12)->block_bytes, 144);
  EXPECT_EQ(find_ggml_type(30)->block_bytes, 2);  // bf16
  EXPECT_EQ(find_ggml_type(4), nullptr);          // Q4_2, removed from ggml
  EXPECT_EQ(find_ggml_type(1000), nullptr);
  EXPECT_EQ(kiln::formats::ggml_bytes_for(GgmlType::Q8_0, 64), 68);
  EXPECT_EQ(kiln::formats::ggml_type_name(GgmlType(4)), "type 4");
  EXPECT_THROW(kiln::formats::ggml_type_info(GgmlType(4)), kiln::Error);
  EXPECT_THROW(kiln::formats::ggml_bytes_for(GgmlType::Q4_0, 33), kiln::Error);
  EXPECT_THROW(kiln::formats::ggml_bytes_for(GgmlType::Q4_0, -32), kiln::Error);
  EXPECT_THROW(kiln::formats::ggml_bytes_for(GgmlType::F64, int64_t(1) << 62), kiln::Error);
}

// The error's message, or "" when `fn` does not throw kiln::Error.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

TEST(GgmlBlocks, Errors) {
  std::vector<uint8_t> bytes(18 * 2, 0);
  std::vector<float> out(64, 7.0f);
  auto deq = [&](GgmlType t, size_t n_bytes, int64_t n) {
    return error_of([&] { dequantize(t, std::span(bytes.data(), n_bytes), n, out.data()); });
  };
  EXPECT_EQ(deq(GgmlType::Q4_0, 36, 64), "");
  EXPECT_EQ(deq(GgmlType::Q4_0, 35, 64),
            "dequantize: q4_0: got 35 bytes for 64 values, expected 36");
  EXPECT_EQ(deq(GgmlType::Q4_0, 36, 48),
            "dequantize: q4_0: 48 values is not a whole number of 32-value blocks");
  EXPECT_NE(deq(GgmlType::Q4_0, 0, -32).find("expected a count >= 0"), std::string::npos);
  EXPECT_EQ(deq(GgmlType(5), 36, 64), "dequantize: unknown ggml type id 5");
  EXPECT_NE(deq(GgmlType::Q8_K, 36, 64).find("no decoder for ggml type q8_K"), std::string::npos);
  EXPECT_NE(deq(GgmlType::IQ2_XXS, 36, 64).find("no decoder"), std::string::npos);
  // A failed call writes nothing.
  std::fill(out.begin(), out.end(), 7.0f);
  EXPECT_NE(deq(GgmlType::Q4_1, 36, 64), "");
  for (float v : out) ASSERT_EQ(v, 7.0f);
  EXPECT_EQ(deq(GgmlType::F32, 0, 0), "");  // nothing to do is fine
  EXPECT_FALSE(kiln::formats::can_dequantize(GgmlType::Q8_1));
  EXPECT_TRUE(kiln::formats::can_dequantize(GgmlType::Q6_K));
}

}  // namespace

}  // namespace ggml_blocks_test
