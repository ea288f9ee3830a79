// Embind entry points of kiln::llm for js/src/llm.ts: LlmModel (a loaded GGUF model: tokenizer,
// logits, chat rendering) and LlmGeneration (one generation, one token per call).
#include <emscripten/bind.h>

#include <cstring>

#include "js_values.h"
#include "kiln/llm.h"

namespace kiln::js {
namespace {

using emscripten::typed_memory_view;

// Token ids from a JS array of integers (the wrapper turns typed arrays into arrays).
std::vector<int32_t> ids_of_js(const val& ids) {
  const int n = js_length(ids, "ids");
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int i = 0; i < n; i++) out[size_t(i)] = js_int(ids[i], "ids[" + std::to_string(i) + "]");
  return out;
}

// GenerateOptions from the wrapper's object (camelCase names; absent: the C++ defaults).
llm::GenerateOptions options_of_js(const val& o) {
  llm::GenerateOptions g;
  g.max_tokens = get_int(o, "maxTokens", g.max_tokens);
  g.ignore_eos = get_bool(o, "ignoreEos", g.ignore_eos);
  models::SamplerOptions& s = g.sampling;
  s.temperature = float(get_num(o, "temperature", s.temperature));
  s.top_k = get_int(o, "topK", s.top_k);
  s.top_p = float(get_num(o, "topP", s.top_p));
  s.repetition_penalty = float(get_num(o, "repetitionPenalty", s.repetition_penalty));
  s.repeat_last_n = get_int(o, "repeatLastN", s.repeat_last_n);
  const val seed = o["seed"];
  if (is_set(seed)) {
    const int64_t v = js_int64(seed, "option 'seed'");
    if (v < 0) fail(current_op(), "option 'seed' got ", v, ", expected an integer >= 0");
    s.seed = uint64_t(v);
  }
  g.add_special = get_bool(o, "addSpecial", g.add_special);
  g.parse_special = get_bool(o, "parseSpecial", g.parse_special);
  const val stop = o["stop"];
  if (is_set(stop))
    for (int i = 0, n = js_length(stop, "option 'stop'"); i < n; i++)
      g.stop.push_back(js_string(stop[i], "option 'stop'[" + std::to_string(i) + "]"));
  return g;
}

std::vector<llm::ChatMessage> messages_of_js(const val& messages) {
  std::vector<llm::ChatMessage> out;
  for (int i = 0, n = js_length(messages, "messages"); i < n; i++) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    const val m = messages[i];
    if (m.typeOf().as<std::string>() != "object" || m.isNull())
      fail(current_op(), at, " got ", js_describe(m), ", expected an object { role, content }");
    out.push_back({js_string(m["role"], at + ".role"), js_string(m["content"], at + ".content")});
  }
  return out;
}

val stats_of(const llm::GenerateStats& s) {
  val o = val::object();
  o.set("promptTokens", double(s.prompt_tokens));
  o.set("generatedTokens", double(s.generated_tokens));
  o.set("prefillMs", s.prefill_ms);
  o.set("decodeMs", s.decode_ms);
  o.set("stopReason", s.stop_reason);
  return o;
}

// One generation: the JS iterator reads pending() (asynchronously on webgpu), feeds the bytes
// back and yields the piece, so the page's event loop runs between tokens. A greedy
// generation's pending() is the token id the step computed (4 bytes read), else the logits.
struct LlmGeneration {
  llm::Generation g;
  bool done() const { return g.done(); }
  val pending() const {
    try {
      return from_array(g.greedy() ? g.pending_token() : g.pending_logits());
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  // What pending() held, as a Uint8Array (little-endian, as readBytes gives it): the int32
  // token id when greedy, else the float32 logits row.
  val feed(const val& bytes) {
    try {
      OpName op("llm.generate");
      const std::vector<uint8_t> b = bytes_of_js(bytes, "logits");
      if (g.greedy()) {
        if (b.size() != 4) fail("llm.generate", "got ", b.size(), " bytes, expected one int32 token id");
        int32_t id;
        std::memcpy(&id, b.data(), 4);
        return js_text(g.next_token(id));
      }
      if (b.size() % 4) fail("llm.generate", "got ", b.size(), " bytes of logits, expected float32");
      std::vector<float> row(b.size() / 4);
      std::memcpy(row.data(), b.data(), b.size());
      return js_text(g.next(row));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  void stop(const std::string& reason) { g.stop(reason); }
  int last_token() const { return g.last_token(); }
  val stats() const { return stats_of(g.stats()); }
};

struct LlmModel {
  llm::Model m;

  val encode(const val& text, const val& add_special, const val& parse_special) const {
    try {
      OpName op("tokenizer.encode");
      const std::vector<int32_t> ids = m.tokenizer().encode(
          js_string(text, "text"), js_bool(add_special, "addSpecial"), js_bool(parse_special, "parseSpecial"));
      return val::global("Int32Array").new_(typed_memory_view(ids.size(), ids.data()));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  val decode(const val& ids, const val& render_special) const {
    try {
      OpName op("tokenizer.decode");
      const std::vector<int32_t> v = ids_of_js(ids);
      for (int32_t id : v)
        if (id < 0 || id >= m.tokenizer().vocab_size())
          fail("tokenizer.decode", "token id ", id, " is out of range [0, ", m.tokenizer().vocab_size(), ")");
      return js_text(m.tokenizer().decode(v, js_bool(render_special, "renderSpecial")));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  // float32 [ids.length * n_vocab] (row i: the logits after ids[0..i]).
  val logits(const val& ids) {
    try {
      OpName op("llm.logits");
      const auto rows = m.logits(ids_of_js(ids));
      const size_t V = rows.empty() ? 0 : rows[0].size();
      val out = val::global("Float32Array").new_(double(rows.size() * V));
      for (size_t i = 0; i < rows.size(); ++i)
        out.call<void>("set", val(typed_memory_view(V, rows[i].data())), double(i * V));
      return out;
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  val start(const val& prompt, const val& options) {
    try {
      OpName op("llm.generate");
      return val(LlmGeneration{m.start(js_string(prompt, "prompt"), options_of_js(options))});
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  val start_chat(const val& messages, const val& options) {
    try {
      OpName op("llm.chat");
      return val(LlmGeneration{m.start_chat(messages_of_js(messages), options_of_js(options))});
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  val render_chat(const val& messages) const {
    try {
      OpName op("llm.chat");
      return val(m.render_chat(messages_of_js(messages)));
    } catch (const std::exception& e) {
      return js_error(e);
    }
  }
  val info() const {
    const auto& c = m.config();
    const auto& t = m.tokenizer().spec();
    val o = val::object();
    o.set("device", m.device());
    o.set("architecture", c.arch);
    o.set("nCtx", double(m.n_ctx()));
    o.set("nVocab", double(c.n_vocab));
    o.set("nLayer", double(c.n_layer));
    o.set("nEmbd", double(c.n_embd));
    o.set("bosId", t.bos_id);
    o.set("eosId", t.eos_id);
    o.set("addBos", t.add_bos);
    return o;
  }
};

// The model from GGUF bytes, or an Error. options: { device, nCtx, prefillBucket, fusedAttention }.
val llm_load(const val& bytes, const val& options) {
  try {
    OpName op("llm.load");
    llm::LoadOptions o;
    o.device = get_str(options, "device", o.device);
    o.n_ctx = get_int(options, "nCtx", int(o.n_ctx));
    o.prefill_bucket = get_int(options, "prefillBucket", int(o.prefill_bucket));
    if (o.prefill_bucket < 1) fail("llm.load", "prefillBucket is ", o.prefill_bucket, ", expected at least 1");
    o.fused_attention = get_bool(options, "fusedAttention", o.fused_attention);
    return val(LlmModel{llm::Model::load(bytes_of_js(bytes, "the model"), o)});
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// Checks generate options now (generate() throws at once; the prefill waits for next()).
val llm_check_options(const std::string& op, const val& options) {
  try {
    OpName name(op);
    llm::check_options(options_of_js(options), op.c_str());
    return val::undefined();
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

}  // namespace
}  // namespace kiln::js

EMSCRIPTEN_BINDINGS(kiln_llm) {
  using namespace emscripten;
  using namespace kiln::js;
  class_<LlmGeneration>("LlmGeneration")
      .function("done", &LlmGeneration::done)
      .function("pending", &LlmGeneration::pending)
      .function("feed", &LlmGeneration::feed)
      .function("stop", &LlmGeneration::stop)
      .function("lastToken", &LlmGeneration::last_token)
      .function("stats", &LlmGeneration::stats);
  class_<LlmModel>("LlmModel")
      .function("encode", &LlmModel::encode)
      .function("decode", &LlmModel::decode)
      .function("logits", &LlmModel::logits)
      .function("start", &LlmModel::start)
      .function("startChat", &LlmModel::start_chat)
      .function("renderChat", &LlmModel::render_chat)
      .function("info", &LlmModel::info);
  function("llmLoad", &llm_load);
  function("llmCheckOptions", &llm_check_options);
}
