// kiln::llm: a GGUF language model on a kiln device: load, logits of a token sequence, and
// streaming generation through jitted prefill and decode steps over a preallocated KV cache.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/chat_template.h"
#include "models/sampler.h"
#include "models/tokenizer.h"
#include "models/transformer.h"

namespace kiln::llm {

// Options of Model::load.
struct LoadOptions {
  std::string device;    // empty: the default device
  int64_t n_ctx = 1024;  // KV cache positions (capped at the model's training context)
  // Prompts are padded to a multiple of this many tokens, so prefill compiles once per bucket
  // rather than once per prompt length (padding rows write cache positions that stay masked
  // until decode overwrites them).
  int64_t prefill_bucket = 32;
  // Decode steps run each layer's attention as the decode_attention routine where the device
  // has one (webgpu: a partial and a merge kernel instead of six). Off by default: the first
  // routine kernel (one workgroup per head) decoded 3.4x slower than the six kernels on an
  // H100; the split-K kernel that replaced it is 1.11x on SmolLM2's shape but 0.96x on a
  // Llama-3.2-1B shape there (bench/results/llm.md, H100 2026-12-07 22:40).
  bool fused_attention = false;
};

using models::ChatMessage;

// Options of generation: length, sampling, special tokens and stop strings.
struct GenerateOptions {
  int max_tokens = 128;
  models::SamplerOptions sampling;  // temperature 0: greedy
  bool add_special = true;          // BOS/EOS as the file's add_bos/add_eos say
  bool parse_special = true;        // control tokens written in the prompt are tokens
  // Generation ends before the first of these strings in the generated text (which then
  // does not contain it); streamed text that might begin one is held back until it cannot.
  std::vector<std::string> stop;
  // An end-of-generation token does not end generation (it is fed back like any other), so a
  // speed benchmark decodes exactly max_tokens whatever the model says (bench/llm).
  bool ignore_eos = false;
  // Greedy generation reads back each step's logits row and picks the argmax on the host, as
  // sampling does, instead of the token id the step computes on the device (a benchmark's
  // before/after of the device argmax; the tokens are the same).
  bool greedy_on_host = false;
};

// What a generation did: token counts, host times and why it stopped.
struct GenerateStats {
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double prefill_ms = 0, decode_ms = 0;  // host wall time, logits read back included
  // "eos", "max_tokens", "context", "stop" (a stop string), "callback", or the reason given
  // to Generation::stop.
  std::string stop_reason;
};

// Called with each generated token's id and the text it completes (may be empty while a UTF-8
// sequence is split or text is held back for a stop string; the end-of-generation token is
// passed only when text held back comes with it); return false to stop.
using TokenCallback = std::function<bool(int32_t id, const std::string& piece)>;

// kiln::Error naming `op` for options that cannot generate (max_tokens < 1, a negative or NaN
// temperature, top_p outside (0, 1], an empty stop string, ...); Model::start runs it first.
void check_options(const GenerateOptions& options, const char* op = "llm.generate");

class Model;

// One generation, a token at a time: a caller that must not block for the whole generation
// (the JS package's async iterator) calls next() per token and can stop in between.
// Model::start dispatches the prompt's prefill; each next() reads the pending logits, samples
// a token, and dispatches its decode step unless generation ends with it. A greedy generation
// (temperature 0, no repetition penalty) computes the argmax in the step on the device, and
// next() reads back only that int32 token id. Keeps the model's state alive. The callback API
// (Model::generate) is a loop over this.
class Generation {
 public:
  // Move-only: the state of one generation has one owner.
  Generation(Generation&&) = default;
  Generation& operator=(Generation&&) = default;
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  bool done() const { return done_; }  // the generation has ended
  // The text this token released (see TokenCallback); when it ends the generation, also
  // everything still held back. kiln::Error once done().
  std::string next();
  // The same with the pending logits row read by the caller (e.g. asynchronously on a device
  // without synchronous reads): float32 [n_vocab].
  std::string next(std::span<const float> logits);
  // The token read by the caller (e.g. asynchronously) from pending_token(); kiln::Error
  // unless greedy(), or for an id outside the vocabulary.
  std::string next_token(int32_t id);
  // The logits the next token is drawn from: float32 [1, n_vocab], maybe not computed yet
  // (a greedy generation computes them too, and reads them back only when asked).
  const Array& pending_logits() const;
  // Whether the steps compute the next token on the device (temperature 0, no repetition
  // penalty): then pending_token() is it.
  bool greedy() const;
  // The argmax of pending_logits() (lowest id among ties, as the host sampler's greedy
  // choice): int32 [1], maybe not computed yet. kiln::Error unless greedy().
  const Array& pending_token() const;
  // Ends the generation now (stats().stop_reason = reason); the held-back text is dropped.
  void stop(const std::string& reason);
  int32_t last_token() const { return tokens_.empty() ? -1 : tokens_.back(); }
  // Generated ids, the end-of-generation token included.
  const std::vector<int32_t>& tokens() const { return tokens_; }
  const GenerateStats& stats() const { return stats_; }

 private:
  friend class Model;
  Generation() = default;
  std::string advance(int32_t id);  // records the chosen token and dispatches its step
  void speculate();  // greedy on an asynchronous device: dispatches the step after (Impl::ahead)
  struct Impl;
  std::shared_ptr<Impl> impl_;
  std::vector<int32_t> tokens_;
  GenerateStats stats_;
  bool done_ = false;
};

// A GGUF language model on a kiln device: weights, tokenizer, chat template and a KV cache,
// with prefill and decode steps compiled by jit. Example:
//   auto model = llm::Model::load("SmolLM2-135M-Instruct-Q4_1.gguf", {.device = "native"});
//   llm::GenerateOptions options;
//   options.max_tokens = 32;
//   std::string reply = model.chat({{"user", "What is 2 + 2?"}}, options);
class Model {
 public:
  // Loads a GGUF file (a path, or its bytes): kiln::Error("llm: ...") for an architecture or
  // weight type kiln does not implement, or a malformed file.
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
  // The assistant's reply to `messages` (the file's chat template, the assistant turn opened).
  std::string chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                   const TokenCallback& on_token = nullptr, GenerateStats* stats = nullptr);

  // Step-wise generation (see Generation): from text, token ids, or chat messages.
  Generation start(const std::string& prompt, const GenerateOptions& options);
  Generation start_ids(const std::vector<int32_t>& prompt, const GenerateOptions& options);
  Generation start_chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options);
  // The prompt text of `messages` under the file's chat template (no BOS; special tokens
  // written out), as start_chat encodes it.
  std::string render_chat(const std::vector<ChatMessage>& messages) const;

  const models::Tokenizer& tokenizer() const;  // the file's tokenizer
  const models::TransformerConfig& config() const;  // the file's hyperparameters
  const std::string& device() const;  // where the weights and the cache live
  int64_t n_ctx() const;  // KV cache positions

  struct State;  // opaque: defined in llm.cpp (a Generation holds it too)

 private:
  static Model load_bytes(std::vector<uint8_t> bytes, const LoadOptions& options);
  std::shared_ptr<State> state_;
};

}  // namespace kiln::llm
