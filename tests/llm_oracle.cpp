// Reading llama.cpp's greedy fixtures and comparing a kiln model's log-probabilities with them.
#include "llm_oracle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kiln::testing {

std::vector<GreedyCase> load_greedy(const std::string& name) {
  std::ifstream in(std::string(KILN_FIXTURE_DIR) + "/llm/" + name);
  EXPECT_TRUE(in) << name;
  std::vector<GreedyCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("prompt ", 0) == 0) {
      cases.emplace_back();
      std::istringstream ids(line.substr(line.rfind('\t') + 1));
      for (int32_t id; ids >> id;) cases.back().prompt.push_back(id);
      continue;
    }
    std::istringstream row(line);
    int index, position;
    int32_t greedy;
    row >> index >> position >> greedy;
    cases.back().greedy.push_back(greedy);
    cases.back().top.emplace_back();
    for (std::string pair; row >> pair;)
      cases.back().top.back().emplace_back(std::stoi(pair), std::stod(pair.substr(pair.find(':') + 1)));
  }
  return cases;
}

size_t decided_prefix(const GreedyCase& c, double margin) {
  size_t n = 0;
  while (n < c.top.size() && c.top[n].size() > 1 && c.top[n][0].second - c.top[n][1].second > margin) ++n;
  return n;
}

LogprobReport compare_logprobs(kiln::llm::Model& model, const std::vector<GreedyCase>& cases,
                               const std::vector<size_t>& prompts, size_t n_positions,
                               const LogprobTolerance& tol) {
  LogprobReport r;
  double total = 0;
  for (size_t p : prompts) {
    const GreedyCase& c = cases.at(p);
    std::vector<int32_t> ids = c.prompt;
    const size_t n = std::min(n_positions, c.greedy.size());
    ids.insert(ids.end(), c.greedy.begin(), c.greedy.begin() + std::ptrdiff_t(n - 1));
    const auto logits = model.logits(ids);
    for (size_t k = 0; k < n; ++k) {
      const auto lp = kiln::models::log_softmax_row(logits[c.prompt.size() - 1 + k]);
      const auto& top = c.top[k];
      bool near_tie = false;
      for (const auto& [id, want] : top) {
        const double err = std::abs(lp[size_t(id)] - want);
        r.worst = std::max(r.worst, err);
        total += err;
        ++r.compared;
        if (want > -3.0) r.worst_likely = std::max(r.worst_likely, err);
        near_tie |= want > -3.0 && err > tol.likely;
        EXPECT_LE(err, tol.unlikely) << "prompt " << p << " pos " << k << " id " << id << " llama.cpp " << want;
      }
      const int32_t mine = int32_t(std::max_element(lp.begin(), lp.end()) - lp.begin());
      ++r.positions;
      r.top1_equal += mine == top[0].first;
      if (top.size() > 1 && top[0].second - top[1].second > tol.likely) {
        ++r.decided;
        r.agree += mine == top[0].first;
        near_tie |= mine != top[0].first;
      }
      if (!near_tie) continue;
      ++r.near_ties;
      std::printf("near-tie: prompt %zu pos %zu: llama.cpp top-1 %d (%.4f), top-2 %d (%.4f); kiln %.4f, %.4f, "
                  "top-1 %d\n", p, k, top[0].first, top[0].second, top[1].first, top[1].second,
                  lp[size_t(top[0].first)], lp[size_t(top[1].first)], mine);
    }
  }
  r.mean = total / std::max(1, r.compared);
  EXPECT_LE(r.mean, tol.mean);
  EXPECT_LE(r.near_ties, int(tol.near_tie_share * r.positions))
      << "positions beyond " << tol.likely << " nats or with another decided top-1 (printed above)";
  std::printf("%d positions: max |dlogprob| %.4f (%.4f where p > 5%%), mean %.4f over %d top-8 "
              "entries; top-1 equal at %d of %d positions, at %d of %d with margin > %.2f; %d near-ties (%s)\n",
              r.positions, r.worst, r.worst_likely, r.mean, r.compared, r.top1_equal, r.positions,
              r.agree, r.decided, tol.likely, r.near_ties, model.device().c_str());
  return r;
}

}  // namespace kiln::testing
