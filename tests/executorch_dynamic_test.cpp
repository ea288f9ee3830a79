// Dynamic shapes of ExecuTorch programs (issue 23): the two programs exported with
// torch.export.Dim ranges run at many sizes across their ranges against ExecuTorch's outputs
// (tests/fixtures/pte/dynamic.txt, tools/gen_pte_dynamic_fixtures.py), with traces and jit
// compilations counted: a size seen before compiles nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "backend/native/native_compiler.h"
#include "frontend/call.h"
#include "kiln/executorch.h"
#include "kiln/kiln.h"
#include "tests/fixture_reader.h"
#include "tests/fixture_values.h"
#include "tests/model_file_dump.h"
#include "tests/pte_formula.h"

namespace {

using namespace kiln;

const std::string kDir = std::string(KILN_FIXTURE_DIR) + "/pte/";

executorch::Program load(const std::string& name) {
  std::vector<uint8_t> bytes = kiln_test::read_bytes(kDir + name + ".pte");
  std::map<std::string, Array> data;
  for (const auto& [n, spec] : executorch::Program::external_tensors(formats::parse_pte(bytes)))
    data.emplace(n, kiln_test::formula_tensor(n, spec.second, spec.first));
  return executorch::Program::load(std::move(bytes), data);
}

void expect_matches(const Array& got, const kiln_test::FixtureArray& want, double rtol, double atol) {
  ASSERT_EQ(got.shape(), Shape(want.shape));
  const std::vector<double> g = got.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want.floats[i], atol + rtol * std::fabs(want.floats[i])) << "at " << i;
}

// The decoder's inputs: the written tokens and the formula caches of `cache` positions
// (params formula_inputs 1 2, cache P), as tools/gen_pte_dynamic_fixtures.py made them.
std::vector<Array> decoder_inputs(const kiln_test::FixtureCase& c) {
  const int64_t p = c.params.ints("cache").at(0);
  const Shape cache{2, 1, 2, p, 16};
  return {kiln_test::to_array(c.inputs.at(0).array), kiln_test::formula_tensor("input1", cache),
          kiln_test::formula_tensor("input2", cache)};
}

// Shared objects the native device compiled or read from its disk cache (0 elsewhere).
int64_t native_kernel_loads() {
#ifndef __EMSCRIPTEN__
  const auto s = native::compile_stats();
  return s.compiled + s.disk_hits;
#else
  return 0;
#endif
}

// Runs every `stride`-th case of `program` and its last (to keep make test short) twice: the
// first pass checks the outputs against ExecuTorch's, the second that nothing traces or
// compiles again. Today each new size is one trace and one jit program (size-parameterized
// kernels, docs/ARCHITECTURE.md, would make that one per bucket).
void run_cases(const std::string& program, size_t stride) {
  const executorch::Program p = load(program);
  std::vector<kiln_test::FixtureCase> cases;
  for (const auto& c : kiln_test::read_fixture_file(kDir + "dynamic.txt"))
    if (c.op == program) cases.push_back(c);
  EXPECT_GT(cases.size(), 20u);
  std::vector<kiln_test::FixtureCase> picked;
  for (size_t i = 0; i < cases.size(); ++i)
    if (i % stride == 0 || i + 1 == cases.size()) picked.push_back(cases[i]);
  const size_t compiles0 = frontend::call_compile_count();
  int traces = 0;
  size_t compiles = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& c : picked) {
      SCOPED_TRACE(c.id);
      const bool decoder = c.params.has("cache");
      const std::vector<Array> in =
          decoder ? decoder_inputs(c) : std::vector<Array>{kiln_test::to_array(c.inputs.at(0).array)};
      const int64_t loads0 = native_kernel_loads();
      const std::vector<Array> out = p.run("forward", in);
      const int64_t loads = native_kernel_loads() - loads0;
      if (pass == 1) {
        EXPECT_EQ(loads, 0) << "a size run before loaded native kernels again";
        continue;
      }
      // How much a new size costs today: the native kernels it compiles (or finds on disk).
      std::cout << "[pte dynamic] " << c.id << ": " << loads << " native kernels loaded\n";
      expect_matches(out.at(0), c.expects.at(0), c.rtol, c.atol);
      if (!decoder) continue;
      // The caches come back with the new rows after the input's, which stay as they were.
      const int64_t past = in[1].shape()[3], t = in[0].shape()[1];
      for (size_t k = 1; k <= 2; ++k) {
        ASSERT_EQ(out[k].shape(), Shape({2, 1, 2, past + t, 16}));
        const std::vector<float> got = out[k].to_vector<float>(), had = in[k].to_vector<float>();
        for (int64_t block = 0; block < 4; ++block)  // (layer, head): past rows, then t new ones
          for (int64_t i = 0; i < past * 16; ++i)
            ASSERT_EQ(got[size_t(block * (past + t) * 16 + i)], had[size_t(block * past * 16 + i)]);
      }
    }
    if (pass == 0) {
      traces = p.traces("forward");
      compiles = frontend::call_compile_count() - compiles0;
      EXPECT_EQ(traces, int(picked.size()));
      EXPECT_EQ(compiles, picked.size());
    }
  }
  EXPECT_EQ(p.traces("forward"), traces) << "a size run before traced again";
  EXPECT_EQ(frontend::call_compile_count() - compiles0, compiles) << "a size run before compiled again";
}

// gpt_block_dynamic (tokens 2..32): ExecuTorch's outputs at lengths across the range, both ends
// included. One trace and one jit program per length today; a repeated length reuses them.
TEST(ExecutorchDynamic, BlockMatchesExecuTorchAcrossItsRange) {
  run_cases("gpt_block_dynamic", 6);
}

// gpt2_kv_decoder (tokens 1..16 after a cache of 1..32 positions): decode steps over the whole
// cache range and prefill-like pairs, against ExecuTorch's logits; the caches keep their rows.
TEST(ExecutorchDynamic, KvDecoderMatchesExecuTorchAcrossItsRange) {
  run_cases("gpt2_kv_decoder", 4);
}

}  // namespace
