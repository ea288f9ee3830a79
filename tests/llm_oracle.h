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
// (logprob > -3), the others, and the mean over all entries; and the share of positions that
// may be near-ties (a p > 5 % entry beyond `likely` but within `unlikely`, or another top-1
// despite llama.cpp's margin above `likely`), floored: 0 allows none.
struct LogprobTolerance {
  double likely, unlikely, mean;
  double near_tie_share = 0;
};

struct LogprobReport {
  double worst = 0, worst_likely = 0, mean = 0;
  int compared = 0, positions = 0, top1_equal = 0, decided = 0, agree = 0, near_ties = 0;
};

// Teacher-forced along llama.cpp's greedy path for `prompts` (indices into `cases`), the
// first `n_positions` positions of each: every top-8 entry within `unlikely`, the mean within
// its bound, and apart from the allowed near-ties every p > 5 % entry within `likely` and the
// same top-1 wherever llama.cpp's top-1/top-2 margin exceeds `likely` (gtest failures
// otherwise). Prints each near-tie and the measured numbers, and returns them.
LogprobReport compare_logprobs(kiln::llm::Model& model, const std::vector<GreedyCase>& cases,
                               const std::vector<size_t>& prompts, size_t n_positions,
                               const LogprobTolerance& tol);

}  // namespace kiln::testing
