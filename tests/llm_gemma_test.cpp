// LlmGemma: Gemma 3 270M Q4_K_M (gemma3 architecture: sliding-window layers, QK-norm, post-norms,
// GeGLU, NEOX RoPE) on kiln against llama.cpp (tests/fixtures/llm/gemma3_greedy.txt).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "backend/backend.h"
#include "kiln/llm.h"
#include "llm_oracle.h"

namespace llm_gemma_test {

namespace {

using kiln::llm::Model;
using kiln::testing::decided_prefix;
using kiln::testing::load_greedy;

const std::string kGemma =
    std::string(KILN_FIXTURE_DIR) + "/../../data/models/gemma-3-270m-q4_k_m.gguf";

#define SKIP_WITHOUT_GEMMA_OR_ON_CPU()                                                       \
  if (!std::filesystem::exists(kGemma)) GTEST_SKIP() << "Gemma 3 is missing (make models)"; \
  if (kiln::default_device() == "cpu") GTEST_SKIP() << "minutes per prompt on the interpreter"

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Model& gemma() {
  static Model m = Model::load(kGemma, {"", 128, 16});
  return m;
}

// Stated tolerances (nats): SmolLM2's (tests/llm_test.cpp says why kiln and llama.cpp differ at
// all: 8-bit activations in llama.cpp's dot products, f16 KV cache), plus 1 % of positions
// allowed to be near-ties. Measured on native over 10 prompts x 64 positions (5120 entries,
// 2026-12-05): mean |dlogprob| 0.118, every p > 5 % entry within 0.75 but one: prompt 2
// position 23 ("elif n ==" then '1' at -0.17 vs '2' at -1.92 in llama.cpp; kiln -0.85 vs
// -0.58). Rounding kiln's matmul inputs to 8 bits per 32/256-value block as llama.cpp does
// (an experiment, not kept) moves that position by 0.55 nats and does not lower the mean
// (prompt 2: 0.23 vs 0.18); rounding q, k, v to f16 or GELU through f16 moves it by < 0.01.
// Gemma's activations span a wider range than SmolLM2's (norm weights up to 300), so llama.cpp's
// per-block rounding is coarser there and a rare near-tie can flip.
constexpr kiln::testing::LogprobTolerance kTolerance{0.75, 2.0, 0.12, 0.01};

// The config llama.cpp derives from the file: 18 layers, every 6th global (5, 11, 17), the
// others sliding over 512 positions with RoPE base 10000 (the file's 1e6 is the global one).
TEST(LlmGemma, ConfigFollowsLlamaCppRules) {
  SKIP_WITHOUT_GEMMA_OR_ON_CPU();
  const auto& c = gemma().config();
  EXPECT_EQ(c.arch, "gemma3");
  ASSERT_EQ(c.sliding_layer.size(), size_t(c.n_layer));
  for (int64_t l = 0; l < c.n_layer; ++l) EXPECT_EQ(c.sliding_layer[size_t(l)], l % 6 != 5) << l;
  EXPECT_EQ(c.sliding_window, 512);
  EXPECT_EQ(c.rope_base_sliding, 10000.0f);
  EXPECT_EQ(c.rope_base, 1e6f);
  EXPECT_EQ(c.embedding_scale, std::sqrt(float(c.n_embd)));
  EXPECT_EQ(c.rope, kiln::models::RopeStyle::Halves);
  EXPECT_EQ(c.activation, kiln::models::FfnActivation::GeluTanh);
  EXPECT_TRUE(c.qk_norm && c.post_norms);
}

// Short enough for the wasm run in `make test`: prompt 0's first 8 positions teacher-forced
// (one 16-token prefill), then free-running greedy generation of 6 tokens of prompt 9, whose
// first 5 llama.cpp decides by a margin above the tolerance (a prefill and 5 decodes).
TEST(LlmGemma, LogprobsAndGreedyPrefixMatchLlamaCpp) {
  SKIP_WITHOUT_GEMMA_OR_ON_CPU();
  const auto cases = load_greedy("gemma3_greedy.txt");
  ASSERT_EQ(cases.size(), 10u);
  auto t0 = std::chrono::steady_clock::now();
  kiln::testing::compare_logprobs(gemma(), cases, {0}, 8, kTolerance);
  const double scored = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto& c = cases[9];
  kiln::llm::GenerateOptions opt;
  opt.max_tokens = 6;
  const auto got = gemma().generate_ids(c.prompt, opt);
  size_t same = 0;
  while (same < got.size() && got[same] == c.greedy[same]) ++same;
  const size_t decided = decided_prefix(c, kTolerance.likely);
  EXPECT_GE(decided, 5u);  // the fixture's, so that this check means something
  EXPECT_GE(same, std::min(decided, got.size()));
  std::printf("greedy: %zu of %zu tokens equal llama.cpp's (%zu decided by margin); %.1f s scoring, "
              "%.1f s generating on %s\n",
              same, got.size(), decided, scored, seconds_since(t0), gemma().device().c_str());
}

// All 10 prompts x 64 positions teacher-forced (native ctest only: LlmSlow).
TEST(LlmSlow, Gemma3LogprobsMatchLlamaCppOnTenPrompts) {
  SKIP_WITHOUT_GEMMA_OR_ON_CPU();
  const auto cases = load_greedy("gemma3_greedy.txt");
  ASSERT_EQ(cases.size(), 10u);
  kiln::testing::compare_logprobs(gemma(), cases, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 64, kTolerance);
}

// Free-running greedy generation, 24 tokens per prompt (decode computes all 262144 logits per
// token, so 64 would take minutes per prompt): at least the margin-decided prefix equals
// llama.cpp's.
TEST(LlmSlow, Gemma3FreeRunningGreedyOnTenPrompts) {
  SKIP_WITHOUT_GEMMA_OR_ON_CPU();
  const auto cases = load_greedy("gemma3_greedy.txt");
  size_t total = 0, total_decided = 0;
  for (size_t p = 0; p < cases.size(); ++p) {
    const auto& c = cases[p];
    const size_t decided = decided_prefix(c, kTolerance.likely);
    kiln::llm::GenerateOptions opt;
    opt.max_tokens = 24;
    const auto got = gemma().generate_ids(c.prompt, opt);
    size_t same = 0;
    while (same < got.size() && got[same] == c.greedy[same]) ++same;
    EXPECT_GE(same, std::min(decided, got.size())) << "prompt " << p;
    std::printf("prompt %zu: %zu of %zu greedy tokens equal llama.cpp's (%zu decided by margin)\n", p,
                same, got.size(), decided);
    total += same, total_decided += decided;
  }
  std::printf("free-running greedy: %zu leading tokens equal over 10 prompts (%zu decided)\n", total,
              total_decided);
}

}  // namespace

}  // namespace llm_gemma_test
