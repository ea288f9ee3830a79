// Checks formats::parse_ptd and executorch::read_ptd on the named data ExecuTorch's exporter
// wrote for the LSTM's external constants (tests/fixtures/pte/lstm.ptd, written by
// tools/gen_pte_fixtures.py): every external tensor of the program is there with the
// formula's values bit for bit, the program runs from it, and malformed files fail cleanly.
#include <gtest/gtest.h>

#include <cstring>

#include "formats/ptd.h"
#include "ir/error.h"
#include "kiln/executorch.h"
#include "kiln/kiln.h"
#include "tests/model_file_dump.h"
#include "tests/pte_formula.h"

namespace ptd_test {

namespace {

using namespace kiln;
using namespace kiln::formats;
using Bytes = std::vector<uint8_t>;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/pte/";

std::string error_of(const Bytes& b) {
  try {
    parse_ptd(b);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

template <typename T>
void put(Bytes& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

TEST(Ptd, HoldsEveryExternalTensorOfTheProgram) {
  const Bytes file = kiln_test::read_bytes(kDir + "lstm.ptd");
  const Ptd ptd = parse_ptd(file);
  const auto wanted = executorch::Program::external_tensors(parse_pte(kiln_test::read_bytes(kDir + "lstm.pte")));
  ASSERT_FALSE(wanted.empty());
  const auto arrays = executorch::read_ptd(file);
  EXPECT_EQ(arrays.size(), wanted.size());
  for (const auto& [name, spec] : wanted) {
    SCOPED_TRACE(name);
    const PtdEntry* e = ptd.find(name);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->has_layout);
    EXPECT_EQ(std::string(pte_scalar_type_name(e->scalar_type)), "float32");
    EXPECT_EQ(Shape(e->sizes.begin(), e->sizes.end()), spec.second);
    // The exporter wrote torch's tensors, which the generator set from the formula.
    const Array a = arrays.at(name);
    EXPECT_EQ(a.shape(), spec.second);
    EXPECT_EQ(a.to_vector<float>(), kiln_test::formula_tensor(name, spec.second, spec.first).to_vector<float>());
  }
}

TEST(Ptd, TheProgramRunsOnItsNamedData) {
  Bytes pte = kiln_test::read_bytes(kDir + "lstm.pte");
  const auto from_file = executorch::Program::load(pte, executorch::read_ptd(kiln_test::read_bytes(kDir + "lstm.ptd")));
  std::map<std::string, Array> formula;
  for (const auto& [name, spec] : executorch::Program::external_tensors(from_file.pte()))
    formula.emplace(name, kiln_test::formula_tensor(name, spec.second, spec.first));
  const auto from_formula = executorch::Program::load(std::move(pte), formula);
  const Array x = numpy::linspace(-1.0, 1.0, 2 * 7 * 8).reshape({2, 7, 8});
  const Array h = numpy::full({2, 2, 24}, 0.25);
  const auto a = from_file.run("forward", {x, h, h});
  const auto b = from_formula.run("forward", {x, h, h});
  ASSERT_EQ(a.size(), 3u);
  for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(a[k].to_vector<float>(), b[k].to_vector<float>());
}

TEST(Ptd, MalformedFilesNameWhatIsWrong) {
  const Bytes good = kiln_test::read_bytes(kDir + "lstm.ptd");
  EXPECT_EQ(error_of(Bytes(good.begin(), good.begin() + 5)), "ptd: file of 5 bytes, expected at least 8");
  Bytes b = good;
  b[7] = '2';
  EXPECT_EQ(error_of(b), "ptd: file identifier is not FT01 (not an ExecuTorch named-data file of this version)");
  b = good;
  b[8] = 'X';
  EXPECT_EQ(error_of(b), "ptd: no FH01 header after the file identifier");
  b = good;
  put<uint32_t>(b, 12, 24);
  EXPECT_EQ(error_of(b), "ptd: header: length 24 < 40");
  b = good;
  put<uint64_t>(b, 24, good.size());  // flatbuffer_size, after its offset 48
  EXPECT_NE(error_of(b).find("ptd: header: flatbuffer_size"), std::string::npos) << error_of(b);
  b = good;
  put<uint64_t>(b, 40, good.size());  // segment data past the end
  EXPECT_NE(error_of(b).find("bytes of segment data at"), std::string::npos) << error_of(b);
  // Segment data that ends early: the last segments no longer fit.
  b = good;
  uint64_t seg_size = 0;
  std::memcpy(&seg_size, good.data() + 40, 8);
  put<uint64_t>(b, 40, seg_size / 2);
  EXPECT_NE(error_of(b).find("ptd: segment "), std::string::npos) << error_of(b);
  // The file cut inside its segment data.
  EXPECT_NE(error_of(Bytes(good.begin(), good.end() - 16)).find("do not fit in the"), std::string::npos);
}

// Every truncation and every single-byte corruption of the header and FlatBuffer either
// parses or throws kiln::Error: nothing reads outside the bytes (the sanitizer build checks).
TEST(Ptd, TruncatedAndCorruptedFilesNeverCrash) {
  const Bytes good = kiln_test::read_bytes(kDir + "lstm.ptd");
  const Ptd ptd = parse_ptd(good);
  int errors = 0;
  for (size_t n = 0; n < good.size(); n += 13) errors += error_of(Bytes(good.begin(), good.begin() + n)) != "(no error)";
  EXPECT_GT(errors, 0);
  for (size_t i = 0; i < ptd.segment_base_offset && i < good.size(); ++i)
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      Bytes b = good;
      b[i] ^= flip;
      error_of(b);
    }
}

}  // namespace

}  // namespace ptd_test
