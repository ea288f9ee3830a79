// The llama.cpp greedy fixtures (tests/fixtures/llm/<model>_greedy.txt, written by
// tools/gen_llm_fixtures.mjs) and the teacher-forced log-probability check the LLM tests share.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/llm.h"

namespace kiln::testing {

// One prompt of a greedy fixture: its ids, and per position llama.cpp's greedy id and its
// top-8 (id, logprob), highest first.
struct GreedyCase {
  std::vector<int32_t> prompt;
  std::vector<int32_t> greedy;
  std::vector<std::vector<std::pair<int32_t, double>>> top;
};

std::vector<GreedyCase> load_greedy(const std::string& name);

// How many leading positions have a top-1/top-2 margin above `margin` in llama.cpp's run:
// there the greedy choice is decided, beyond rounding noise of that size.
size_t decided_prefix(const GreedyCase& c, double margin);

// Stated tolerances (nats) on llama.cpp's top-8 log-probabilities: entries it gives p > 5 %
// (logprob > -3), the others, and the mean over all entries.
struct LogprobTolerance {
  double likely, unlikely, mean;
};

struct LogprobReport {
  double worst = 0, worst_likely = 0, mean = 0;
  int compared = 0, positions = 0, top1_equal = 0, decided = 0, agree = 0;
};

// Teacher-forced along llama.cpp's greedy path for `prompts` (indices into `cases`), the
// first `n_positions` positions of each: every top-8 entry within the tolerances, the mean
// within its bound, and the same top-1 wherever llama.cpp's top-1/top-2 margin exceeds
// `tol.likely` (gtest failures otherwise). Prints and returns the measured numbers.
LogprobReport compare_logprobs(kiln::llm::Model& model, const std::vector<GreedyCase>& cases,
                               const std::vector<size_t>& prompts, size_t n_positions,
                               const LogprobTolerance& tol);

}  // namespace kiln::testing
