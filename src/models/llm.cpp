// kiln::llm::Model: the GGUF file parsed and packed onto a device, two jitted steps (all
// logits for scoring; the last row for generation) and the prefill/decode/sampling loop.
#include "models/llm.h"

#include <chrono>
#include <fstream>
#include <iterator>

#include "backend/backend.h"
#include "frontend/jit.h"
#include "library/numpy.h"
#include "models/kv_cache.h"
#include "models/tokenizer_spec_gguf.h"

namespace kiln::llm {

namespace np = kiln::numpy;

namespace {

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
  Fn step_all, step_last;  // jit(transformer_step) without and with the `last` row

  // One step from a fresh or given cache: tokens padded to `padded` entries.
  Tree run(const std::vector<int32_t>& ids, int64_t padded, int64_t start, const Array& cache,
           const int32_t* last) {
    OnDevice on(device);
    std::vector<int32_t> tokens(ids);
    tokens.resize(size_t(padded), 0);
    const Array t = np::array(tokens, {padded});
    const Array s = np::array(std::vector<int32_t>{int32_t(start)}, {});
    if (!last) return step_all({weights.params, Tree(t), Tree(s), Tree(cache)});
    const Array l = np::array(std::vector<int32_t>{*last}, {1});
    return step_last({weights.params, Tree(t), Tree(s), Tree(cache), Tree(l)});
  }
};

Model Model::load(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("llm.load", "cannot open '", path, "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return load(std::move(bytes), options);
}

Model Model::load(std::vector<uint8_t> bytes, const LoadOptions& options) {
  const formats::Gguf gguf = formats::parse_gguf(bytes);
  auto st = std::make_shared<State>();
  st->device = options.device.empty() ? default_device() : options.device;
  st->config = models::config_from_gguf(gguf);
  st->n_ctx = std::min(options.n_ctx, st->config.n_ctx_train);
  st->bucket = std::max<int64_t>(1, options.prefill_bucket);
  if (st->n_ctx < 1) fail("llm.load", "n_ctx is ", options.n_ctx, ", expected at least 1");
  st->tokenizer = std::make_unique<models::Tokenizer>(models::spec_from_gguf(gguf));
  {
    OnDevice on(st->device);
    st->weights = models::load_weights(gguf, bytes, st->config);
  }
  State* s = st.get();  // the steps live inside the state they read
  auto step = [s](const std::vector<Tree>& a) {
    const Array* last = a.size() > 4 ? &a[4].array() : nullptr;
    return models::transformer_step(s->config, s->weights, a[0], a[1].array(), a[2].array(),
                                    a[3].array(), last);
  };
  st->step_all = jit(step);
  st->step_last = jit(step);
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

std::vector<int32_t> Model::generate_ids(const std::vector<int32_t>& prompt,
                                         const GenerateOptions& options,
                                         const TokenCallback& on_token, GenerateStats* stats) {
  State& s = *state_;
  GenerateStats local;
  GenerateStats& st = stats ? *stats : local;
  st = GenerateStats{int64_t(prompt.size()), 0, 0, 0, "max_tokens"};
  const int64_t n = int64_t(prompt.size());
  if (n < 1 || n >= s.n_ctx) fail("llm.generate", n, " prompt tokens, expected 1 to n_ctx - 1 = ", s.n_ctx - 1);
  for (int32_t id : prompt)
    if (id < 0 || id >= s.config.n_vocab) fail("llm.generate", "token id ", id, " is out of range");
  models::Sampler sampler(options.sampling);
  models::StreamDecoder text(*s.tokenizer);
  std::vector<int32_t> history = prompt, generated;
  auto t0 = std::chrono::steady_clock::now();
  Array cache;
  {
    OnDevice on(s.device);
    cache = models::kv_cache_zeros(s.config, s.n_ctx);
  }
  const int64_t padded = std::min((n + s.bucket - 1) / s.bucket * s.bucket, s.n_ctx);
  const int32_t last = int32_t(n - 1);
  Tree out = s.run(prompt, padded, 0, cache, &last);
  models::kv_cache_write(cache, out[1].array(), 0, n);  // the prompt's rows, not the padding
  int64_t pos = n;
  for (int i = 0; i < options.max_tokens; ++i) {
    const std::vector<float> row = out[0].array().to_vector<float>();
    if (i == 0) st.prefill_ms = ms_since(t0), t0 = std::chrono::steady_clock::now();
    const int32_t id = sampler.sample(row, history);
    history.push_back(id);
    generated.push_back(id);
    ++st.generated_tokens;
    if (s.tokenizer->is_end_of_generation(id)) {
      st.stop_reason = "eos";
      break;
    }
    if (on_token && !on_token(id, text.push(id))) {
      st.stop_reason = "callback";
      break;
    }
    if (i + 1 == options.max_tokens) break;
    if (pos >= s.n_ctx) {
      st.stop_reason = "context";
      break;
    }
    const int32_t zero = 0;
    out = s.run({id}, 1, pos, cache, &zero);
    models::kv_cache_write(cache, out[1].array(), pos, 1);
    ++pos;
  }
  st.decode_ms = ms_since(t0);
  return generated;
}

std::string Model::generate(const std::string& prompt, const GenerateOptions& options,
                            const TokenCallback& on_token, GenerateStats* stats) {
  const std::vector<int32_t> ids =
      state_->tokenizer->encode(prompt, options.add_special, options.parse_special);
  std::vector<int32_t> out = generate_ids(ids, options, on_token, stats);
  if (!out.empty() && state_->tokenizer->is_end_of_generation(out.back())) out.pop_back();
  return state_->tokenizer->decode(out);
}

const models::Tokenizer& Model::tokenizer() const { return *state_->tokenizer; }
const models::TransformerConfig& Model::config() const { return state_->config; }
const std::string& Model::device() const { return state_->device; }
int64_t Model::n_ctx() const { return state_->n_ctx; }

}  // namespace kiln::llm
