// kiln::llm: a GGUF language model on a kiln device: load, logits of a token sequence, and
// streaming generation through jitted prefill and decode steps over a preallocated KV cache.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/sampler.h"
#include "models/tokenizer.h"
#include "models/transformer.h"

namespace kiln::llm {

struct LoadOptions {
  std::string device;    // empty: the default device
  int64_t n_ctx = 1024;  // KV cache positions (capped at the model's training context)
  // Prompts are padded to a multiple of this many tokens, so prefill compiles once per bucket
  // rather than once per prompt length (padding rows write cache positions that stay masked
  // until decode overwrites them).
  int64_t prefill_bucket = 32;
};

struct GenerateOptions {
  int max_tokens = 128;
  models::SamplerOptions sampling;  // temperature 0: greedy
  bool add_special = true;          // BOS/EOS as the file's add_bos/add_eos say
  bool parse_special = true;        // control tokens written in the prompt are tokens
};

struct GenerateStats {
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double prefill_ms = 0, decode_ms = 0;  // host wall time, logits read back included
  std::string stop_reason;               // "eos", "max_tokens", "context" or "callback"
};

// Called with each generated token's id and the text it completes (may be empty while a UTF-8
// sequence is split); return false to stop.
using TokenCallback = std::function<bool(int32_t id, const std::string& piece)>;

class Model {
 public:
  static Model load(const std::string& path, const LoadOptions& options = {});
  static Model load(std::vector<uint8_t> bytes, const LoadOptions& options = {});

  // Log-softmax inputs: the logits after each of `ids` (a fresh context), float32
  // [ids.size()][n_vocab], in one prefill.
  std::vector<std::vector<float>> logits(const std::vector<int32_t>& ids);

  // A raw completion of `prompt`; returns the generated text (the callback saw it piecewise).
  std::string generate(const std::string& prompt, const GenerateOptions& options,
                       const TokenCallback& on_token = nullptr, GenerateStats* stats = nullptr);
  // The same from token ids.
  std::vector<int32_t> generate_ids(const std::vector<int32_t>& prompt,
                                    const GenerateOptions& options,
                                    const TokenCallback& on_token = nullptr,
                                    GenerateStats* stats = nullptr);

  const models::Tokenizer& tokenizer() const;
  const models::TransformerConfig& config() const;
  const std::string& device() const;
  int64_t n_ctx() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace kiln::llm
