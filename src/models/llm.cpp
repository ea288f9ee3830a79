// kiln::llm::Model: the GGUF file parsed and packed onto a device, jitted steps (all logits for
// scoring; the last row for sampling; the last row and its argmax for greedy generation) and
// the prefill/decode/sampling loop.
#include "models/llm.h"

#include <chrono>
#include <cmath>
#include <optional>

#include "backend/backend.h"
#include "frontend/jit.h"
#include "ir/file_bytes.h"
#include "library/numpy.h"
#include "models/kv_cache.h"
#include "models/stop_strings.h"
#include "models/tokenizer_spec_gguf.h"

namespace kiln::llm {

namespace np = kiln::numpy;

namespace {

// The step's new keys and values, one pair per layer (transformer_step's second output: a
// decode step's pair, or a prefill's stacked [2, T, ...], whose halves are views at offsets).
std::vector<models::LayerRows> layer_rows(const Tree& rows) {
  std::vector<models::LayerRows> out;
  for (const Tree& t : rows.list()) {
    if (t.is_list()) {
      out.push_back({t[size_t(0)].array(), t[size_t(1)].array()});
      continue;
    }
    const Array& kv = t.array();
    out.push_back({np::index(kv, {int64_t(0)}), np::index(kv, {int64_t(1)})});
  }
  return out;
}

struct OnDevice {
  std::string saved = default_device();
  explicit OnDevice(const std::string& d) { set_default_device(d); }
  ~OnDevice() { set_default_device(saved); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct Model::State {
  std::string device;
  int64_t n_ctx = 0, bucket = 32;
  models::TransformerConfig config;
  models::TransformerWeights weights;
  std::unique_ptr<models::Tokenizer> tokenizer;
  // jit(transformer_step) without and with the `last` row, and with the `last` row and its
  // argmax (greedy generation reads back the int32 token id, not the n_vocab logits); [1]:
  // the same at start 0, where no cache position is visible, so the step does not read the
  // cache (transformer_step's empty_cache: a prefill skips n_ctx masked scores per query).
  Fn step_all[2], step_last[2], step_greedy[2];

  // One step from a fresh or given cache: tokens padded to `padded` entries. Greedy:
  // List{logits, new rows, token id int32 [1]}.
  Tree run(const std::vector<int32_t>& ids, int64_t padded, int64_t start, const Array& cache,
           const int32_t* last, bool greedy = false) {
    OnDevice on(device);
    std::vector<int32_t> tokens(ids);
    tokens.resize(size_t(padded), 0);
    const Array t = np::array(tokens, {padded});
    if (!last) return step_all[start == 0]({weights.params, Tree(t), Tree(position(start)), Tree(cache)});
    return run_on(t, start, cache, *last, greedy);
  }

  // The same with the tokens as a device array: a greedy decode step's token (int32 [1]) as
  // the previous step computed it, not read back yet (Generation::speculate).
  Tree run_on(const Array& tokens, int64_t start, const Array& cache, int32_t last, bool greedy) {
    OnDevice on(device);
    const Array l = np::array(std::vector<int32_t>{last}, {1});
    const Fn& step = (greedy ? step_greedy : step_last)[start == 0];
    return step({weights.params, Tree(tokens), Tree(position(start)), Tree(cache), Tree(l)});
  }

  static Array position(int64_t start) { return np::array(std::vector<int32_t>{int32_t(start)}, {}); }
};

Model Model::load(const std::string& path, const LoadOptions& options) {
  std::optional<std::vector<uint8_t>> bytes = read_file_bytes(path);
  if (!bytes) fail("llm.load", "cannot read '", path, "'");
  return load(std::move(*bytes), options);
}

Model Model::load(std::vector<uint8_t> bytes, const LoadOptions& options) {
  // Errors of the parsers and loaders below name llm.load first ("llm.load: gguf: bad magic").
  return with_name("llm.load", [&] { return load_bytes(std::move(bytes), options); });
}

Model Model::load_bytes(std::vector<uint8_t> bytes, const LoadOptions& options) {
  const formats::Gguf gguf = formats::parse_gguf(bytes);
  auto st = std::make_shared<State>();
  st->device = options.device.empty() ? default_device() : options.device;
  st->config = models::config_from_gguf(gguf);
  st->config.fused_decode_attention = options.fused_attention;
  st->n_ctx = std::min(options.n_ctx, st->config.n_ctx_train);
  st->bucket = std::max<int64_t>(1, options.prefill_bucket);
  if (st->n_ctx < 1) fail("llm.load", "n_ctx is ", options.n_ctx, ", expected at least 1");
  st->tokenizer = std::make_unique<models::Tokenizer>(models::spec_from_gguf(gguf));
  {
    OnDevice on(st->device);
    st->weights = models::load_weights(gguf, bytes, st->config);
  }
  State* s = st.get();  // the steps live inside the state they read
  for (bool empty : {false, true}) {
    auto step = [s, empty](const std::vector<Tree>& a) {
      const Array* last = a.size() > 4 ? &a[4].array() : nullptr;
      return models::transformer_step(s->config, s->weights, a[0], a[1].array(), a[2].array(),
                                      a[3].array(), last, empty);
    };
    st->step_all[empty] = jit(step);
    st->step_last[empty] = jit(step);
    // The argmax's ties go to the lowest id (numpy::argmax, as JAX's), as the host sampler's
    // greedy choice (std::max_element): the device picks the token the host would.
    st->step_greedy[empty] = jit([step](const std::vector<Tree>& a) {
      const Tree out = step(a);
      return Tree(Tree::List{out[0], out[1], Tree(np::argmax(out[0].array(), -1))});
    });
  }
  Model m;
  m.state_ = std::move(st);
  return m;
}

std::vector<std::vector<float>> Model::logits(const std::vector<int32_t>& ids) {
  State& s = *state_;
  const int64_t n = int64_t(ids.size());
  if (n < 1 || n > s.n_ctx) fail("llm.logits", ids.size(), " tokens, expected 1 to n_ctx ", s.n_ctx);
  for (int32_t id : ids)
    if (id < 0 || id >= s.config.n_vocab) fail("llm.logits", "token id ", id, " is out of range");
  const int64_t padded = (n + s.bucket - 1) / s.bucket * s.bucket;
  Array cache;
  {
    OnDevice on(s.device);
    cache = models::kv_cache_zeros(s.config, s.n_ctx);
  }
  const Tree out = s.run(ids, padded, 0, cache, nullptr);  // no later step: the cache stays
  const std::vector<float> all = out[0].array().to_vector<float>();
  std::vector<std::vector<float>> rows(static_cast<size_t>(n));
  const size_t V = size_t(s.config.n_vocab);
  for (size_t i = 0; i < size_t(n); ++i)
    rows[i].assign(all.begin() + std::ptrdiff_t(i * V), all.begin() + std::ptrdiff_t((i + 1) * V));
  return rows;
}

// Options that would make generation meaningless (or sampling divide by zero) fail before
// anything runs.
void check_options(const GenerateOptions& o, const char* op) {
  const models::SamplerOptions& s = o.sampling;
  if (o.max_tokens < 1) fail(op, "maxTokens is ", o.max_tokens, ", expected at least 1");
  if (!std::isfinite(s.temperature) || s.temperature < 0)
    fail(op, "temperature is ", s.temperature, ", expected a finite number >= 0");
  if (s.top_k < 0) fail(op, "topK is ", s.top_k, ", expected >= 0 (0: all tokens)");
  if (!(s.top_p > 0 && s.top_p <= 1)) fail(op, "topP is ", s.top_p, ", expected in (0, 1]");
  if (!std::isfinite(s.repetition_penalty) || s.repetition_penalty <= 0)
    fail(op, "repetitionPenalty is ", s.repetition_penalty, ", expected a finite number > 0");
  models::StopStrings(o.stop, op);  // empty stop strings
}

struct Generation::Impl {
  std::shared_ptr<Model::State> model;
  int max_tokens;
  models::Sampler sampler;
  models::StreamDecoder text;
  models::StopStrings stops;
  std::vector<int32_t> history;  // prompt and generated ids (the repetition penalty's window)
  Tree out;                      // the pending step: [logits, its new keys/values]
  int64_t pos;                   // the cache position of the next token
  Array cache;                   // written in place after each step (kv_cache_write)
  bool greedy = false;           // the steps compute the token too (out[2])
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  bool ignore_eos = false;
  // Greedy decoding on a device that runs asynchronously (webgpu): the step after `out`,
  // dispatched with out's token as the device computed it, before the host has read it, so
  // the device runs it while the host reads the token, detokenizes and records the step
  // after. Dropped if that token ends the generation (see speculate()).
  Tree ahead = {};
};

Generation Model::start_ids(const std::vector<int32_t>& prompt, const GenerateOptions& options) {
  State& s = *state_;
  check_options(options);
  const int64_t n = int64_t(prompt.size());
  if (n < 1 || n >= s.n_ctx) fail("llm.generate", n, " prompt tokens, expected 1 to n_ctx - 1 = ", s.n_ctx - 1);
  for (int32_t id : prompt)
    if (id < 0 || id >= s.config.n_vocab) fail("llm.generate", "token id ", id, " is out of range");
  Generation g;
  g.stats_.prompt_tokens = n;
  g.impl_ = std::make_shared<Generation::Impl>(Generation::Impl{
      state_, options.max_tokens, models::Sampler(options.sampling), models::StreamDecoder(*s.tokenizer),
      models::StopStrings(options.stop, "llm.generate"), prompt, Tree(), n, Array()});
  g.impl_->ignore_eos = options.ignore_eos;
  // Greedy with no repetition penalty (which needs the history on the host) picks the argmax,
  // which the step then computes on the device.
  g.impl_->greedy = !options.greedy_on_host && options.sampling.plain_argmax();
  Array cache;
  {
    OnDevice on(s.device);
    cache = models::kv_cache_zeros(s.config, s.n_ctx);
  }
  const int64_t padded = std::min((n + s.bucket - 1) / s.bucket * s.bucket, s.n_ctx);
  const int32_t last = int32_t(n - 1);
  g.impl_->out = s.run(prompt, padded, 0, cache, &last, g.impl_->greedy);
  models::kv_cache_write(cache, layer_rows(g.impl_->out[1]), 0, n);  // the prompt's rows, not the padding
  g.impl_->cache = cache;
  return g;
}

Generation Model::start(const std::string& prompt, const GenerateOptions& options) {
  return start_ids(state_->tokenizer->encode(prompt, options.add_special, options.parse_special), options);
}

std::string Model::render_chat(const std::vector<ChatMessage>& messages) const {
  if (messages.empty()) fail("llm.chat", "got no messages, expected at least one");
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& r = messages[i].role;
    if (r != "system" && r != "user" && r != "assistant")
      fail("llm.chat", "message ", i, " has role '", r, "', expected system, user or assistant");
  }
  return models::render_chat(models::chat_template_for(*state_->tokenizer), messages, true);
}

Generation Model::start_chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options) {
  check_options(options, "llm.chat");
  return start(render_chat(messages), options);
}

const Array& Generation::pending_logits() const {
  if (done_) fail("llm.generate", "the generation has ended (", stats_.stop_reason, ")");
  return impl_->out[0].array();
}

bool Generation::greedy() const { return impl_ && impl_->greedy; }

const Array& Generation::pending_token() const {
  if (done_) fail("llm.generate", "the generation has ended (", stats_.stop_reason, ")");
  if (!impl_->greedy) fail("llm.generate", "the generation samples on the host: no token is computed on the device");
  return impl_->out[2].array();
}

std::string Generation::next() {
  if (greedy()) return next_token(pending_token().to_vector<int32_t>().at(0));  // 4 bytes read
  const std::vector<float> row = pending_logits().to_vector<float>();
  return next(row);
}

std::string Generation::next(std::span<const float> logits) {
  if (done_) fail("llm.generate", "the generation has ended (", stats_.stop_reason, ")");
  Impl& g = *impl_;
  if (int64_t(logits.size()) != g.model->config.n_vocab)
    fail("llm.generate", "got ", logits.size(), " logits, expected n_vocab = ", g.model->config.n_vocab);
  return advance(g.sampler.sample(logits, g.history));
}

std::string Generation::next_token(int32_t id) {
  if (done_) fail("llm.generate", "the generation has ended (", stats_.stop_reason, ")");
  if (!impl_->greedy) fail("llm.generate", "the generation samples on the host: pass the logits row");
  if (id < 0 || id >= impl_->model->config.n_vocab)
    fail("llm.generate", "token id ", id, " is out of range [0, ", impl_->model->config.n_vocab, ")");
  return advance(id);
}

std::string Generation::advance(int32_t id) {
  Impl& g = *impl_;
  Model::State& s = *g.model;
  if (tokens_.empty()) stats_.prefill_ms = ms_since(g.t0), g.t0 = std::chrono::steady_clock::now();
  g.history.push_back(id);
  tokens_.push_back(id);
  ++stats_.generated_tokens;
  std::string piece;
  if (!g.ignore_eos && s.tokenizer->is_end_of_generation(id)) {
    stats_.stop_reason = "eos";
  } else {
    piece = g.stops.push(g.text.push(id));
    if (g.stops.stopped()) stats_.stop_reason = "stop";
    else if (stats_.generated_tokens == g.max_tokens) stats_.stop_reason = "max_tokens";
    else if (g.pos >= s.n_ctx) stats_.stop_reason = "context";
  }
  if (!stats_.stop_reason.empty()) {
    // The end: a UTF-8 sequence still split, then text held back for a stop string.
    piece += g.stops.push(g.text.flush());
    piece += g.stops.flush();
    stop(stats_.stop_reason);
    return piece;
  }
  if (g.ahead.is_none()) {
    const int32_t zero = 0;
    g.out = s.run({id}, 1, g.pos, g.cache, &zero, g.greedy);
    models::kv_cache_write(g.cache, layer_rows(g.out[1]), g.pos, 1);
  } else {
    g.out = std::move(g.ahead);  // already dispatched with this very token
    g.ahead = Tree();
  }
  ++g.pos;
  speculate();
  return piece;
}

void Generation::speculate() {
  Impl& g = *impl_;
  Model::State& s = *g.model;
  // Only where advance() would run the step whatever out's token is: no token limit or full
  // context first (an end of text or a stop string drops it).
  if (!g.greedy || !get_backend(s.device).runs_asynchronously() || stats_.generated_tokens + 1 >= g.max_tokens ||
      g.pos >= s.n_ctx)
    return;
  g.ahead = s.run_on(g.out[2].array(), g.pos, g.cache, 0, true);
  models::kv_cache_write(g.cache, layer_rows(g.ahead[1]), g.pos, 1);
}

void Generation::stop(const std::string& reason) {
  if (done_) return;
  done_ = true;
  stats_.stop_reason = reason;
  stats_.decode_ms = tokens_.empty() ? 0 : ms_since(impl_->t0);
  impl_->out = Tree();  // the KV cache is freed now, not when the Generation is
  impl_->ahead = Tree();
  impl_->cache = Array();
}

std::vector<int32_t> Model::generate_ids(const std::vector<int32_t>& prompt,
                                         const GenerateOptions& options,
                                         const TokenCallback& on_token, GenerateStats* stats) {
  Generation g = start_ids(prompt, options);
  while (!g.done()) {
    const std::string piece = g.next();
    const bool eog = state_->tokenizer->is_end_of_generation(g.last_token());
    if (on_token && (!eog || !piece.empty()) && !on_token(g.last_token(), piece)) g.stop("callback");
  }
  if (stats) *stats = g.stats();
  return g.tokens();
}

std::string Model::generate(const std::string& prompt, const GenerateOptions& options,
                            const TokenCallback& on_token, GenerateStats* stats) {
  const std::vector<int32_t> ids =
      state_->tokenizer->encode(prompt, options.add_special, options.parse_special);
  std::string out;
  const TokenCallback collect = [&](int32_t id, const std::string& piece) {
    out += piece;
    return on_token ? on_token(id, piece) : true;
  };
  generate_ids(ids, options, collect, stats);
  return out;
}

std::string Model::chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                        const TokenCallback& on_token, GenerateStats* stats) {
  return generate(render_chat(messages), options, on_token, stats);
}

const models::Tokenizer& Model::tokenizer() const { return *state_->tokenizer; }
const models::TransformerConfig& Model::config() const { return state_->config; }
const std::string& Model::device() const { return state_->device; }
int64_t Model::n_ctx() const { return state_->n_ctx; }

}  // namespace kiln::llm
