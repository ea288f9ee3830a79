// QuantizedWeights: the repacked layout against the PyPI gguf package's dequantization and the
// real SmolLM2 file bit for bit, and the quantized linear layer's fusion, grad and vmap.
#include "models/quantized_weights.h"

#include <gtest/gtest.h>

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
#include "kiln/jit.h"
#include "kiln/transforms.h"
#include "library/numpy.h"

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
  for (const char* t : {"f32", "f16", "q4_0", "q4_1", "q8_0"}) EXPECT_GE(checked[t], 3) << t;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::string kSmolLM2 =
    std::string(KILN_FIXTURE_DIR) + "/../../data/models/SmolLM2-135M-Instruct.Q4_1.gguf";

// Every value of every tensor of the real file (Q4_1 x210, Q8_0 x1, F32 x61) against
// formats::dequantize, itself bit-exact to ggml (GgmlBlocks.*).
TEST(QuantizedWeights, RepackOfSmolLM2IsBitExact) {
  if (!std::filesystem::exists(kSmolLM2)) GTEST_SKIP() << "SmolLM2 is missing (make models)";
  const std::vector<uint8_t> file = read_file(kSmolLM2);
  const kiln::formats::Gguf g = kiln::formats::parse_gguf(file);
  std::map<std::string, int> per_type;
  std::vector<float> ref;
  for (const auto& info : g.tensors) {
    const int64_t cols = int64_t(info.dims[0]);
    const int64_t rows = info.dims.size() > 1 ? int64_t(info.dims[1]) : 1;
    const auto bytes = kiln::formats::gguf_tensor_data(file, info);
    const PackedTensor t = kiln::models::pack_tensor(info.name, info.type, rows, cols, bytes);
    ref.resize(size_t(rows * cols));
    kiln::formats::dequantize(info.type, bytes, rows * cols, ref.data());
    int64_t bad = 0;
    for (int64_t i = 0; i < rows * cols; ++i)
      bad += bits_of(kiln::models::packed_value(t, i / cols, i % cols)) != bits_of(ref[size_t(i)]);
    EXPECT_EQ(bad, 0) << info.name;
    ++per_type[kiln::formats::ggml_type_name(info.type)];
  }
  EXPECT_EQ(per_type, (std::map<std::string, int>{{"f32", 61}, {"q4_1", 210}, {"q8_0", 1}}));
  // One real tensor through the device's expression too.
  const auto& k = g.tensor("blk.0.attn_k.weight");
  const auto bytes = kiln::formats::gguf_tensor_data(file, k);
  const PackedTensor t = kiln::models::pack_tensor(k.name, k.type, 192, 576, bytes);
  const auto dev = kiln::models::dequantize(kiln::models::upload(t)).to_vector<float>();
  ref.resize(dev.size());
  kiln::formats::dequantize(k.type, bytes, int64_t(dev.size()), ref.data());
  int64_t bad = 0;
  for (size_t i = 0; i < dev.size(); ++i) bad += bits_of(dev[i]) != bits_of(ref[i]);
  EXPECT_EQ(bad, 0);
}

TEST(QuantizedWeights, UnsupportedTypesNameTensorAndType) {
  std::vector<uint8_t> bytes(144, 0);
  try {
    kiln::models::pack_tensor("blk.3.ffn_down.weight", GgmlType::Q4_K, 1, 256, bytes);
    FAIL() << "expected an error";
  } catch (const kiln::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'blk.3.ffn_down.weight' has type q4_K"),
              std::string::npos)
        << e.what();
  }
}

// A small q4_1 weight with varied scales, mins and nibbles: rows x 64.
QuantizedWeight small_q4_1(int64_t rows) {
  std::vector<uint8_t> bytes;
  for (int64_t b = 0; b < rows * 2; ++b) {
    const uint16_t d = uint16_t(0x2c00 + 37 * b), m = uint16_t(0xb000 + 11 * b);  // f16 bits
    bytes.insert(bytes.end(), {uint8_t(d), uint8_t(d >> 8), uint8_t(m), uint8_t(m >> 8)});
    for (int j = 0; j < 16; ++j) bytes.push_back(uint8_t((b * 29 + j * 53) & 255));
  }
  return kiln::models::upload(kiln::models::pack_tensor("w", GgmlType::Q4_1, rows, 64, bytes));
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
  const QuantizedWeight w = small_q4_1(rows);
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
