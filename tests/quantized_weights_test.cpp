// QuantizedWeights: the repacked layout against the PyPI gguf package's dequantization and the
// real SmolLM2 file bit for bit, and the quantized linear layer's fusion, grad and vmap.
#include "models/quantized_weights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "formats/ggml_blocks.h"
#include "formats/gguf.h"
#include "ir/debug.h"
#include "ir/error.h"
#include "ir/file_bytes.h"
#include "kiln/jit.h"
#include "kiln/transforms.h"
#include "library/numpy.h"

namespace quantized_weights_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::Tree;
using kiln::formats::GgmlType;
using kiln::models::PackedTensor;
using kiln::models::QuantizedWeight;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct BlockCase {
  std::string name;
  GgmlType type{};
  int64_t n = 0;
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> bits;
};

// tests/fixtures/ggml_blocks.txt (tools/gen_ggml_block_fixtures.py): case/bytes/values triples.
std::vector<BlockCase> load_block_cases() {
  std::ifstream in(std::string(KILN_FIXTURE_DIR) + "/ggml_blocks.txt");
  EXPECT_TRUE(in);
  std::vector<BlockCase> cases;
  std::string line, bytes_line, values_line, word, type_name;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    BlockCase c;
    std::istringstream(line) >> word >> c.name >> type_name >> c.n;
    for (uint32_t id = 0; id < 64; ++id)
      if (auto* info = kiln::formats::find_ggml_type(id); info && type_name == info->name)
        c.type = info->type;
    std::getline(in, bytes_line);
    std::getline(in, values_line);
    for (size_t i = 6; i + 1 < bytes_line.size(); i += 2)
      c.bytes.push_back(uint8_t(std::stoul(bytes_line.substr(i, 2), nullptr, 16)));
    std::istringstream values(values_line.substr(7));
    while (values >> word) c.bits.push_back(uint32_t(std::stoul(word, nullptr, 16)));
    cases.push_back(std::move(c));
  }
  return cases;
}

// Every fixture case of a packable type, as one row: the host formula and the device's lazy
// dequantization both reproduce the gguf package's values bit for bit.
TEST(QuantizedWeights, RepackIsBitExactAgainstGgufPackage) {
  std::map<std::string, int> checked;
  for (const BlockCase& c : load_block_cases()) {
    if (!kiln::models::can_pack(c.type)) continue;
    const PackedTensor t = kiln::models::pack_tensor(c.name, c.type, 1, c.n, c.bytes);
    const std::vector<float> device =
        kiln::models::dequantize(kiln::models::upload(t)).to_vector<float>();
    int bad = 0;
    for (int64_t i = 0; i < c.n; ++i) {
      const uint32_t host = bits_of(kiln::models::packed_value(t, 0, i));
      const uint32_t dev = bits_of(device[size_t(i)]);
      const uint32_t want = c.bits[size_t(i)];
      // NaN payloads may differ after arithmetic; every fixture NaN is an f32/f16 value.
      if (std::isnan(device[size_t(i)]) && (want & 0x7f800000u) == 0x7f800000u) continue;
      if ((host != want || dev != want) && ++bad <= 3)
        ADD_FAILURE() << c.name << " value " << i << ": host " << std::hex << host << " device "
                      << dev << " expected " << want;
    }
    EXPECT_EQ(bad, 0) << c.name;
    ++checked[kiln::formats::ggml_type_name(c.type)];
  }
  for (const char* t : {"f32", "f16", "q4_0", "q4_1", "q5_0", "q8_0", "q4_K", "q6_K"})
    EXPECT_GE(checked[t], 3) << t;
}

std::vector<uint8_t> read_file(const std::string& path) {
  return kiln::read_file_bytes(path).value_or(std::vector<uint8_t>{});
}

const std::string kModels = std::string(KILN_FIXTURE_DIR) + "/../../data/models/";

// Every value of every tensor of a real file against formats::dequantize (itself bit-exact to
// ggml, GgmlBlocks.*) through the host formula, a chunk of rows at a time (Gemma's embedding
// alone is 168M values); then `on_device` tensors through the device's expression too.
// Returns the number of tensors per type.
std::map<std::string, int> check_every_tensor(const std::string& path,
                                              const std::vector<std::string>& on_device) {
  const std::vector<uint8_t> file = read_file(path);
  const kiln::formats::Gguf g = kiln::formats::parse_gguf(file);
  std::map<std::string, int> per_type;
  std::vector<float> ref;
  for (const auto& info : g.tensors) {
    const int64_t cols = int64_t(info.dims[0]);
    const int64_t rows = info.dims.size() > 1 ? int64_t(info.dims[1]) : 1;
    const auto bytes = kiln::formats::gguf_tensor_data(file, info);
    const PackedTensor t = kiln::models::pack_tensor(info.name, info.type, rows, cols, bytes);
    const int64_t row_bytes = int64_t(bytes.size()) / rows, chunk = std::max<int64_t>(1, (1 << 20) / cols);
    int64_t bad = 0;
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t n = std::min(chunk, rows - r0);
      ref.resize(size_t(n * cols));
      kiln::formats::dequantize(info.type, bytes.subspan(size_t(r0 * row_bytes), size_t(n * row_bytes)),
                                n * cols, ref.data());
      for (int64_t i = 0; i < n * cols; ++i)
        bad += bits_of(kiln::models::packed_value(t, r0 + i / cols, i % cols)) != bits_of(ref[size_t(i)]);
    }
    EXPECT_EQ(bad, 0) << info.name;
    ++per_type[kiln::formats::ggml_type_name(info.type)];
    if (std::find(on_device.begin(), on_device.end(), info.name) == on_device.end()) continue;
    const auto dev = kiln::models::dequantize(kiln::models::upload(t)).to_vector<float>();
    ref.resize(dev.size());
    kiln::formats::dequantize(info.type, bytes, int64_t(dev.size()), ref.data());
    bad = 0;
    for (size_t i = 0; i < dev.size(); ++i) bad += bits_of(dev[i]) != bits_of(ref[i]);
    EXPECT_EQ(bad, 0) << info.name << " on the device";
  }
  return per_type;
}

TEST(QuantizedWeights, RepackOfSmolLM2IsBitExact) {
  const std::string path = kModels + "SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "SmolLM2 is missing (make models)";
  EXPECT_EQ(check_every_tensor(path, {"blk.0.attn_k.weight"}),
            (std::map<std::string, int>{{"f32", 61}, {"q4_1", 210}, {"q8_0", 1}}));
}

// Gemma 3 270M Q4_K_M: rows of 640 values are not whole 256-value K blocks, so those matrices
// are q5_0/q8_0 and only the 1024- and 2048-wide ones q4_K/q6_K. One tensor of each quantized
// type also goes through the device.
TEST(QuantizedWeights, RepackOfGemma3IsBitExact) {
  const std::string path = kModels + "gemma-3-270m-q4_k_m.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "Gemma 3 is missing (make models)";
  const auto per_type = check_every_tensor(
      path, {"blk.0.attn_q.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight",
             "blk.0.ffn_down.weight", "blk.2.ffn_down.weight"});
  EXPECT_EQ(per_type, (std::map<std::string, int>{
                          {"f32", 109}, {"q5_0", 81}, {"q8_0", 10}, {"q4_K", 27}, {"q6_K", 9}}));
}

TEST(QuantizedWeights, UnsupportedTypesNameTensorAndType) {
  std::vector<uint8_t> bytes(144, 0);
  try {
    kiln::models::pack_tensor("blk.3.ffn_down.weight", GgmlType::Q5_K, 1, 256, bytes);
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'blk.3.ffn_down.weight' has type q5_K"),
              std::string::npos)
        << e.what();
  }
}

// A small q4_1 tensor with varied scales, mins and nibbles (`seed` varies them): rows x 64.
PackedTensor packed_q4_1(int64_t rows, int seed = 0) {
  std::vector<uint8_t> bytes;
  for (int64_t b = seed; b < seed + rows * 2; ++b) {
    const uint16_t d = uint16_t(0x2c00 + 37 * b), m = uint16_t(0xb000 + 11 * b);  // f16 bits
    bytes.insert(bytes.end(), {uint8_t(d), uint8_t(d >> 8), uint8_t(m), uint8_t(m >> 8)});
    for (int j = 0; j < 16; ++j) bytes.push_back(uint8_t((b * 29 + j * 53) & 255));
  }
  return kiln::models::pack_tensor("w", GgmlType::Q4_1, rows, 64, bytes);
}
QuantizedWeight small_q4_1(int64_t rows) { return kiln::models::upload(packed_q4_1(rows)); }

// Sibling projections merged at load time (the LLM's q/k/v, gate/up): the merged tensor holds
// each part's rows in order, its rows interleave in other groups than the parts' (5, 3 and 8
// rows: G = 5, 3, 8; merged 16: G = 16), and its matvec's slices are the parts' matvecs bit for
// bit, since each output row is still its own sum over the same columns in the same order.
TEST(QuantizedWeights, MergedRowsMatchTheirPartsBitForBit) {
  const std::vector<int64_t> rows{5, 3, 8};
  std::vector<PackedTensor> parts, copies;
  for (size_t i = 0; i < rows.size(); ++i) parts.push_back(packed_q4_1(rows[i], int(7 * i)));
  copies = parts;
  const PackedTensor merged = kiln::models::concat_rows("qkv", std::move(parts));
  ASSERT_EQ(merged.rows, 16);
  for (const PackedTensor& p : parts) EXPECT_TRUE(p.words.empty() && p.scales.empty()) << "freed";
  const QuantizedWeight w = kiln::models::upload(merged);
  for (int64_t m : {1, 3}) {
    const Array x = np::sin(np::arange(m * 64, kiln::DType::Float32) * 0.37f).reshape({m, 64});
    const auto all = kiln::models::quantized_linear(x, w).to_vector<float>();
    int64_t start = 0;
    for (const PackedTensor& p : copies) {
      for (int64_t r = 0; r < p.rows; ++r)
        for (int64_t c = 0; c < 64; c += 9)
          EXPECT_EQ(kiln::models::packed_value(merged, start + r, c), kiln::models::packed_value(p, r, c));
      const auto one = kiln::models::quantized_linear(x, kiln::models::upload(p)).to_vector<float>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t r = 0; r < p.rows; ++r)
          EXPECT_EQ(all[size_t(i * 16 + start + r)], one[size_t(i * p.rows + r)]) << "m=" << m << " row " << start + r;
      start += p.rows;
    }
  }
}

// Random blocks of `type` (rows x cols values) whose f16 scale fields are finite: every code
// and sub-block scale occurs, and no NaN hides a wrong value.
PackedTensor random_blocks(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  const auto& info = kiln::formats::ggml_type_info(type);
  std::vector<uint8_t> bytes(size_t(rows * cols / info.block_size * info.block_bytes));
  for (uint8_t& b : bytes) b = uint8_t((seed = seed * 1664525u + 1013904223u) >> 24);
  // Where each type keeps its f16 d (and dmin): ggml's block structs.
  const std::vector<int> halves = type == GgmlType::Q6_K                              ? std::vector<int>{208}
                                  : type == GgmlType::Q4_1 || type == GgmlType::Q4_K ? std::vector<int>{0, 2}
                                                                                       : std::vector<int>{0};
  for (size_t b = 0; b < bytes.size(); b += size_t(info.block_bytes))
    for (int at : halves) bytes[b + size_t(at) + 1] = uint8_t(0x20 + (bytes[b + size_t(at) + 1] & 0x1f));  // |d| in [2^-7, 2^-6)
  return kiln::models::pack_tensor("w", type, rows, cols, bytes);
}

// The row-contiguous layout (webgpu's) holds the same values as the 16-row interleave (the
// CPU devices'), and every kernel that reads it sums them in the same order: dequantize,
// dequantize_rows and quantized_linear are equal bit for bit, for every packed type.
TEST(QuantizedWeights, BothRowLayoutsGiveTheSameBits) {
  using kiln::models::RowLayout;
  for (GgmlType type : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const std::string name = kiln::formats::ggml_type_name(type);
    const PackedTensor t = random_blocks(type, 48, 512, 11u + uint32_t(type));
    const QuantizedWeight inter = kiln::models::upload(t, RowLayout::Interleaved);
    const QuantizedWeight rows = kiln::models::upload(t, RowLayout::Contiguous);
    const Array q = rows.parts["q"].array();
    EXPECT_EQ(q.shape(), (kiln::Shape{48, q.shape(1), 1})) << name;
    EXPECT_EQ(inter.parts["q"].array().shape(2), 16) << name;
    auto same = [&](const Array& a, const Array& b, const std::string& what) {
      const auto va = a.to_vector<float>(), vb = b.to_vector<float>();
      ASSERT_EQ(va.size(), vb.size()) << name << " " << what;
      int64_t bad = 0;
      for (size_t i = 0; i < va.size(); ++i) bad += bits_of(va[i]) != bits_of(vb[i]);
      EXPECT_EQ(bad, 0) << name << " " << what;
    };
    same(kiln::models::dequantize(inter), kiln::models::dequantize(rows), "dequantize");
    const Array ids = np::array(std::vector<int32_t>{47, 0, 17}, {3});
    same(kiln::models::dequantize_rows(inter, ids), kiln::models::dequantize_rows(rows, ids), "rows");
    for (int64_t m : {1, 3}) {
      const Array x = np::sin(np::arange(m * 512, kiln::DType::Float32) * 0.37f).reshape({m, 512});
      same(kiln::models::quantized_linear(x, inter), kiln::models::quantized_linear(x, rows), "linear");
    }
    const auto values = kiln::models::dequantize(rows).to_vector<float>();
    for (int64_t r : {0, 31, 47})
      for (int64_t c : {0, 255, 511})
        EXPECT_EQ(bits_of(values[size_t(r * 512 + c)]), bits_of(kiln::models::packed_value(t, r, c)))
            << name << " (" << r << ", " << c << ")";
  }
}

TEST(QuantizedWeights, MergingRefusesMismatchedParts) {
  std::vector<PackedTensor> parts{packed_q4_1(2), packed_q4_1(2)};
  parts[1].type = GgmlType::Q4_0;
  parts[1].name = "v";
  try {
    kiln::models::concat_rows("qkv", std::move(parts));
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'v' (q4_0"), std::string::npos) << e.what();
  }
  try {
    kiln::models::concat_rows("qkv", {});
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no parts"), std::string::npos) << e.what();
  }
}

TEST(QuantizedWeights, LinearEqualsMatmulWithTheDequantizedMatrix) {
  const QuantizedWeight w = small_q4_1(5);
  const Array x = np::sin(np::arange(3 * 64, kiln::DType::Float32) * 0.37f).reshape({3, 64});
  const auto got = kiln::models::quantized_linear(x, w).to_vector<float>();
  const auto want = np::matmul(x, kiln::models::dequantize(w).T()).to_vector<float>();
  ASSERT_EQ(got.size(), 15u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
}

// The gradient in x is W's rows summed by the cotangent: checked against central differences.
TEST(QuantizedWeights, GradInXMatchesFiniteDifferences) {
  const QuantizedWeight w = small_q4_1(4);
  auto loss = [&](const Array& x) {
    return np::sum(np::tanh(kiln::models::quantized_linear(x, w)));
  };
  const Array x = np::cos(np::arange(2 * 64, kiln::DType::Float32) * 0.11f).reshape({2, 64}) * 0.1f;
  const auto g = kiln::grad(kiln::ArrayFn(loss))(x).to_vector<float>();
  const auto xv = x.to_vector<float>();
  for (int i : {0, 7, 63, 64, 100, 127}) {
    const float h = 1e-2f;
    auto at = [&](float delta) {
      std::vector<float> v = xv;
      v[size_t(i)] += delta;
      return loss(np::array(v, {2, 64})).item();
    };
    EXPECT_NEAR(g[size_t(i)], (at(h) - at(-h)) / (2 * h), 2e-2 * (1 + std::abs(g[size_t(i)])))
        << i;
  }
}

TEST(QuantizedWeights, VmapMatchesALoop) {
  const QuantizedWeight w = small_q4_1(3);
  const Array xs = np::sin(np::arange(4 * 2 * 64, kiln::DType::Float32) * 0.05f).reshape({4, 2, 64});
  auto f = [&](const Array& x) { return kiln::models::quantized_linear(x, w); };
  const auto batched = kiln::vmap(kiln::ArrayFn(f))(xs).to_vector<float>();
  std::vector<float> looped;
  for (int64_t b = 0; b < 4; ++b) {
    const auto one = f(xs[b]).to_vector<float>();
    looped.insert(looped.end(), one.begin(), one.end());
  }
  ASSERT_EQ(batched.size(), looped.size());
  for (size_t i = 0; i < looped.size(); ++i) EXPECT_NEAR(batched[i], looped[i], 1e-5f) << i;
}

// No kernel of a quantized linear writes the f32 weight matrix: every kernel's output is
// smaller than it, eagerly and under jit (KILN_DEBUG level 3 logs each kernel).
TEST(QuantizedWeights, DequantizationIsFusedIntoTheContraction) {
  const int64_t rows = 48;
  // The float path (the IntDot layout of the CPU devices is quantized_matmul, a routine).
  const QuantizedWeight w = kiln::models::upload(packed_q4_1(rows), kiln::models::RowLayout::Interleaved);
  for (int64_t m : {1, 3}) {
    const Array x = np::ones({m, 64});
    std::vector<std::string> lines;
    kiln::set_debug_sink([&](const std::string& s) { lines.push_back(s); });
    kiln::set_debug(3);
    kiln::models::quantized_linear(x, w).eval();
    kiln::Fn jitted = kiln::jit([&](const std::vector<Tree>& a) {
      QuantizedWeight wa = w;
      wa.parts = a[1];
      return Tree(kiln::models::quantized_linear(a[0].array(), wa));
    });
    jitted({Tree(x), w.parts}).array().eval();
    kiln::set_debug(0);
    kiln::set_debug_sink(nullptr);
    int kernels = 0, contractions = 0;
    for (const std::string& s : lines)
      for (size_t at = s.find("Kernel(size="); at != std::string::npos;
           at = s.find("Kernel(size=", at + 1)) {
        ++kernels;
        const int64_t size = std::stoll(s.substr(at + 12));
        EXPECT_LT(size, rows * 64) << s;
        contractions += size == m * rows;
      }
    EXPECT_GE(contractions, 2) << "m=" << m;  // one eager, one jitted
  }
}

}  // namespace

}  // namespace quantized_weights_test
