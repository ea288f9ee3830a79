// ONNX external data and data-dependent Loops against onnxruntime (tools/gen_onnx_fixtures.py):
// a model saved with save_as_external_data loaded from its path and from bytes with its file
// given by location; the checks of external records (range, length, location); Loops whose
// bodies compute their conditions, with carried values and scan outputs, stopping at the trip
// count, early, after one step and before any.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kiln/jit.h"
#include "kiln/numpy.h"
#include "tests/onnx_test_util.h"
#include "tests/error_of.h"

namespace onnx_external_loop_test {

namespace {

namespace np = kiln::numpy;
using kiln::Array;
using kiln::formats::OnnxTensor;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/onnx/";

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

void expect_external_model_matches(const kiln::onnx::Model& m) {
  const Array x = kiln_test::read_tensor_pb(kDir + "external.in0_0.pb");
  const Array want = kiln_test::read_tensor_pb(kDir + "external.out0_0.pb");
  EXPECT_EQ(kiln_test::allclose_mismatch(m.run({{"x", x}}).at("y"), want, 1e-5, 1e-6), "");
  EXPECT_EQ(kiln_test::allclose_mismatch(m.call({x})[0], want, 1e-5, 1e-6), "");
}

TEST(OnnxExternalData, LoadFromThePathReadsTheModelsDirectory) {
  expect_external_model_matches(kiln::onnx::Model::load_file(kDir + "external.onnx"));
}

TEST(OnnxExternalData, LoadFromBytesTakesTheFilesByLocation) {
  const std::vector<uint8_t> model = kiln_test::read_bytes(kDir + "external.onnx");
  const std::vector<uint8_t> data = kiln_test::read_bytes(kDir + "external.bin");
  EXPECT_EQ(kiln::onnx::Model::external_files(model), std::vector<std::string>{"external.bin"});
  expect_external_model_matches(kiln::onnx::Model::load(model, {{"external.bin", data}}));
  // Not given, given under another name, or cut short: each error names the tensor and the file.
  std::string e = error_of([&] { kiln::onnx::Model::load(model); });
  EXPECT_HAS(e, "tensor 'w': its external data file 'external.bin' was not given");
  e = error_of([&] { kiln::onnx::Model::load(model, {{"other.bin", data}}); });
  EXPECT_HAS(e, "(external files given: 'other.bin')");
  const std::vector<uint8_t> cut(data.begin(), data.end() - 8);
  e = error_of([&] { kiln::onnx::Model::load(model, {{"external.bin", cut}}); });
  EXPECT_HAS(e, "(external file 'external.bin'): offset");
  EXPECT_HAS(e, "runs past the end of the file (112 bytes)");
}

TEST(OnnxExternalData, LoadFromAPathWithoutItsDataFileNamesBoth) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "kiln_onnx_external_test";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kDir + "external.onnx", dir / "external.onnx",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(dir / "external.bin");
  const std::string e = error_of([&] { kiln::onnx::Model::load_file((dir / "external.onnx").string()); });
  EXPECT_HAS(e, "tensor 'w': its external data file 'external.bin' cannot be read from the model's directory");
  EXPECT_HAS(error_of([&] { kiln::onnx::Model::load_file((dir / "missing.onnx").string()); }),
             "cannot read the model file");
  std::filesystem::remove_all(dir);
}

OnnxTensor external_tensor(std::vector<kiln::formats::OnnxStringPair> records) {
  OnnxTensor t;
  t.name = "w";
  t.dims = {2, 3};
  t.data_type = int32_t(kiln::formats::OnnxDataType::Float);
  t.external = true;
  t.external_data = std::move(records);
  return t;
}

TEST(OnnxExternalData, RecordsAreCheckedBeforeAnyFileIsRead) {
  using kiln::formats::onnx_external_ref;
  auto ref_error = [](std::vector<kiln::formats::OnnxStringPair> records) {
    return error_of([&] { onnx_external_ref(external_tensor(std::move(records))); });
  };
  EXPECT_HAS(ref_error({{"location", "/etc/weights.bin"}}), "tensor 'w': external data location '/etc/weights.bin' is an absolute path");
  EXPECT_HAS(ref_error({{"location", "C:\\w.bin"}}), "starts with a drive letter");
  EXPECT_HAS(ref_error({{"location", "data/../../w.bin"}}), "has a '..' part");
  EXPECT_HAS(ref_error({{"location", "./"}}), "names no file");
  EXPECT_HAS(ref_error({{"offset", "4"}}), "external_data has no location");
  EXPECT_HAS(ref_error({{"location", "w.bin"}, {"offset", "-4"}}), "offset is '-4', expected a decimal integer");
  EXPECT_HAS(ref_error({{"location", "w.bin"}, {"length", "12x"}}), "length is '12x'");
  const auto ref = onnx_external_ref(external_tensor(
      {{"location", ".\\sub\\.\\w.bin"}, {"offset", "8"}, {"length", "24"}, {"checksum", "ab"}, {"future_key", "1"}}));
  EXPECT_EQ(ref.location, "sub/w.bin");
  EXPECT_EQ(ref.offset, 8u);
  EXPECT_TRUE(ref.has_length);
  EXPECT_EQ(ref.checksum, "ab");

  const OnnxTensor t = external_tensor({});
  const std::vector<uint8_t> file(40);
  auto data_error = [&](uint64_t offset, std::optional<uint64_t> length) {
    kiln::formats::OnnxExternalRef r{"w.bin", offset, length.has_value(), length.value_or(0), ""};
    return error_of([&] { kiln::formats::onnx_external_data(t, r, file); });
  };
  EXPECT_EQ(kiln::formats::onnx_external_data(t, {"w.bin", 16, true, 24, ""}, file).size(), 24u);
  EXPECT_EQ(kiln::formats::onnx_external_data(t, {"w.bin", 16, false, 0, ""}, file).size(), 24u);  // to the end
  EXPECT_HAS(data_error(41, std::nullopt), "tensor 'w' (external file 'w.bin'): offset 41 is past the end of the file (40 bytes)");
  EXPECT_HAS(data_error(20, 24), "offset 20 + length 24 runs past the end");
  EXPECT_HAS(data_error(0, 20), "length 20 bytes does not hold its 6 elements of 4 bytes (FLOAT)");
  EXPECT_HAS(data_error(0, std::nullopt), "length 40 bytes does not hold its 6 elements");
}

std::vector<Array> read_case(const std::string& kind, int k, int n) {
  std::vector<Array> out;
  for (int i = 0; i < n; ++i)
    out.push_back(kiln_test::read_tensor_pb(kDir + "loop_while." + kind + std::to_string(k) + "_" + std::to_string(i) + ".pb"));
  return out;
}

TEST(OnnxLoop, ConditionComputedInTheBodyMatchesOnnxruntime) {
  const kiln::onnx::Model m = kiln::onnx::Model::load(kiln_test::read_bytes(kDir + "loop_while.onnx"));
  // Cases: stop at the trip count, stop early, stop after one step, no step (go false), M = 0.
  for (int k = 0; k < 5; ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    const std::vector<Array> ins = read_case("in", k, 3), want = read_case("out", k, 8);
    const auto run = m.run({{"M", ins[0]}, {"go", ins[1]}, {"x", ins[2]}});
    const std::vector<Array> called = m.call(ins);
    for (size_t j = 0; j < want.size(); ++j) {
      SCOPED_TRACE("output " + m.output_names()[j]);
      EXPECT_EQ(kiln_test::allclose_mismatch(run.at(m.output_names()[j]), want[j], 1e-5, 1e-5), "");
      EXPECT_EQ(kiln_test::allclose_mismatch(called[j], want[j], 1e-5, 1e-5), "");
    }
  }
}

TEST(OnnxLoop, DataDependentScanOutputsRefuseATrace) {
  const kiln::onnx::Model m = kiln::onnx::Model::load(kiln_test::read_bytes(kDir + "loop_while.onnx"));
  const std::vector<Array> ins = read_case("in", 0, 3);
  const kiln::Fn jitted = kiln::jit(m.function());
  const std::string e = error_of([&] { jitted({kiln::Tree(kiln::Tree::List{ins[0], ins[1], ins[2]})}); });
  EXPECT_HAS(e, "node 'bounded' (Loop, opset 13): its body computes the condition and it has scan outputs");
  EXPECT_HAS(e, "runs eagerly");
}

}  // namespace

}  // namespace onnx_external_loop_test
