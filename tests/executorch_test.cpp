// Runs every committed ExecuTorch program (tests/fixtures/pte, tools/gen_pte_fixtures.py) on
// the default device and compares with ExecuTorch's own outputs; API errors; dynamic shapes.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/executorch.h"
#include "kiln/kiln.h"
#include "tests/fixture_reader.h"
#include "tests/fixture_values.h"
#include "tests/model_file_dump.h"

namespace executorch_test {

namespace {

using namespace kiln;
using kiln_test::FixtureArray;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/pte/";

executorch::Program load(const std::string& name) {
  return executorch::Program::load(kiln_test::read_bytes(kDir + name + ".pte"));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_close(const Array& got, const FixtureArray& want, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), Shape(want.shape)) << what;
  ASSERT_EQ(std::string(dtype_name(got.dtype())), want.dtype) << what;
  const std::vector<double> g = got.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.is_float() ? want.floats[i] : double(want.ints[i]);
    if (std::isinf(w)) {
      EXPECT_EQ(g[i], w) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(g[i], w, atol + rtol * std::fabs(w)) << what << " at " << i;
  }
}

TEST(Executorch, EveryProgramMatchesExecuTorch) {
  const auto cases = kiln_test::read_fixture_file(kDir + "programs.txt");
  ASSERT_GE(cases.size(), 40u);
  std::map<std::string, executorch::Program> programs;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.id);
    if (!programs.count(c.op)) programs.emplace(c.op, load(c.op));
    std::vector<Array> inputs;
    for (const auto& in : c.inputs) inputs.push_back(kiln_test::to_array(in.array));
    const std::vector<Array> outs = programs.at(c.op).run(c.params.str("method"), inputs);
    ASSERT_EQ(outs.size(), c.expects.size());
    for (size_t k = 0; k < outs.size(); ++k)
      expect_close(outs[k], c.expects[k], c.rtol, c.atol, c.id + " output " + std::to_string(k));
  }
}

// The GPT-style block was exported with a dynamic sequence length (2..32): the fixtures run
// it at 8, 3 and 17 tokens; each new bucket of lengths (5 and 32 here) is one trace, a
// repeated one none.
TEST(Executorch, DynamicSequenceLengthRunsWithinItsBound) {
  const executorch::Program p = load("gpt_block_dynamic");
  auto tokens = [](int64_t t) { return numpy::zeros({1, t}, int32); };
  EXPECT_EQ(p.run("forward", {tokens(5)})[0].shape(), Shape({1, 5, 16}));
  EXPECT_EQ(p.run("forward", {tokens(32)})[0].shape(), Shape({1, 32, 16}));
  EXPECT_EQ(p.run("forward", {tokens(5)})[0].shape(), Shape({1, 5, 16}));
  EXPECT_EQ(p.traces("forward"), 2);
  EXPECT_EQ(error_of([&] { p.run("forward", {tokens(33)}); }),
            "executorch: forward: input 0: shape (1, 33), expected at most (1, 32)");
}

TEST(Executorch, WrongInputsNameTheMethodAndArgument) {
  const executorch::Program p = load("transpose_cat");
  EXPECT_EQ(p.method_names(), std::vector<std::string>{"forward"});
  const Array a = numpy::zeros({3, 4}), b = numpy::zeros({4, 2});
  EXPECT_EQ(error_of([&] { p.run("forward", {a}); }),
            "executorch: forward: got 1 inputs, the method takes 2");
  EXPECT_EQ(error_of([&] { p.run("forward", {a, numpy::zeros({4, 3})}); }),
            "executorch: forward: input 1: shape (4, 3), expected (4, 2)");
  EXPECT_EQ(error_of([&] { p.run("forward", {a.astype(int32), b}); }),
            "executorch: forward: input 0: dtype int32, expected float32 (the program's float32)");
  EXPECT_EQ(error_of([&] { p.run("backward", {a, b}); }),
            "executorch: no method 'backward' (the program has 'forward')");
}

TEST(Executorch, UnsupportedOperatorsAreNamedAtLoad) {
  // The program's operator table names one operator; rename it in the bytes to one kiln has
  // no rule for (same length, so every offset stays valid).
  std::vector<uint8_t> bytes = kiln_test::read_bytes(kDir + "relu.pte");
  const std::string from = "aten::relu", to = "aten::relx";
  auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  ASSERT_NE(at, bytes.end());
  std::copy(to.begin(), to.end(), at);
  const std::string e = error_of([&] { executorch::Program::load(bytes); });
  EXPECT_NE(e.find("method 'forward' uses operators kiln does not support: aten::relx.out. "
                   "Supported: "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("aten::convolution.out"), std::string::npos) << e;
  const std::vector<std::string> ops = executorch::supported_operators();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_GE(ops.size(), 80u);
}

}  // namespace

}  // namespace executorch_test
