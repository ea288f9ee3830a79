// Next-token choice from a logits row on the host: greedy, or repetition penalty, top-k,
// temperature, top-p and a seeded draw (llama.cpp's sampler chain order).
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace kiln::models {

// How a token is drawn from a logits row, in llama.cpp's order: the repetition penalty on
// recent tokens, then greedy at temperature <= 0, else top-k, temperature, top-p and a draw
// from a generator seeded with `seed`.
struct SamplerOptions {
  float temperature = 0.0f;        // <= 0: greedy (argmax, lowest id among ties)
  int top_k = 40;                  // <= 0: all tokens
  float top_p = 0.95f;             // >= 1: off
  float repetition_penalty = 1.0f; // 1: off; else llama.cpp's: logit / p if > 0, * p if not
  int repeat_last_n = 64;          // how many recent tokens the penalty sees
  uint64_t seed = 0;

  // Whether the repetition penalty changes any logit.
  bool penalizes() const { return repetition_penalty != 1.0f && repeat_last_n != 0; }
  // Whether the token is the plain argmax of the logits (no penalty, no draw): what a device
  // can compute without the history (the LLM runtime's greedy step).
  bool plain_argmax() const { return temperature <= 0 && !penalizes(); }
};

// Draws tokens from logits rows with SamplerOptions; deterministic for a given seed.
class Sampler {
 public:
  // seeds the generator with options.seed
  explicit Sampler(SamplerOptions options) : options_(options), rng_(options.seed) {}
  // The next token given logits [n_vocab] and the tokens so far (prompt and generated).
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);

 private:
  SamplerOptions options_;
  std::mt19937_64 rng_;
};

// log-softmax of one row in double precision (what tests compare with llama.cpp's logprobs).
std::vector<double> log_softmax_row(std::span<const float> logits);

}  // namespace kiln::models
