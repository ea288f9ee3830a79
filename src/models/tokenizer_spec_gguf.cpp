// spec_from_gguf: GGUF tokenizer.* metadata into a TokenizerSpec (keys as llama.cpp's
// llama-vocab reads them; optional ones default as it does).
#include "models/tokenizer_spec_gguf.h"

#include <optional>

namespace kiln::models {

namespace {

using formats::Gguf;
using formats::GgufValue;
using formats::GgufValueType;

// An integer metadata value of any integer type (files write ids as u32 or i32).
std::optional<int64_t> find_integer(const Gguf& g, std::string_view key) {
  const GgufValue* v = g.find(key);
  if (!v) return std::nullopt;
  switch (v->type) {
    case GgufValueType::U8: case GgufValueType::U16: case GgufValueType::U32:
    case GgufValueType::U64: return int64_t(v->uint);
    case GgufValueType::I8: case GgufValueType::I16: case GgufValueType::I32:
    case GgufValueType::I64: return v->sint;
    default: return std::nullopt;
  }
}

int32_t id_or(const Gguf& g, std::string_view key, int32_t fallback) {
  std::optional<int64_t> v = find_integer(g, key);
  return v ? int32_t(*v) : fallback;
}

bool bool_or(const Gguf& g, std::string_view key, bool fallback) {
  const GgufValue* v = g.find(key);
  return v && v->type == GgufValueType::Bool ? v->boolean : fallback;
}

}  // namespace

TokenizerSpec spec_from_gguf(const Gguf& g) {
  TokenizerSpec s;
  s.model = g.get_string("tokenizer.ggml.model");
  if (g.find("tokenizer.ggml.pre")) s.pre = g.get_string("tokenizer.ggml.pre");
  s.tokens = g.get_string_array("tokenizer.ggml.tokens");
  if (g.find("tokenizer.ggml.scores"))
    for (const GgufValue& v : g.get_array("tokenizer.ggml.scores", GgufValueType::F32))
      s.scores.push_back(float(v.real));
  if (g.find("tokenizer.ggml.token_type"))
    for (const GgufValue& v : g.get_array("tokenizer.ggml.token_type", GgufValueType::I32))
      s.token_types.push_back(int32_t(v.sint));
  if (g.find("tokenizer.ggml.merges")) s.merges = g.get_string_array("tokenizer.ggml.merges");
  s.bos_id = id_or(g, "tokenizer.ggml.bos_token_id", -1);
  s.eos_id = id_or(g, "tokenizer.ggml.eos_token_id", -1);
  s.unk_id = id_or(g, "tokenizer.ggml.unknown_token_id", -1);
  s.pad_id = id_or(g, "tokenizer.ggml.padding_token_id", -1);
  // llama.cpp adds BOS by default for SentencePiece vocabularies, not for byte-level BPE.
  s.add_bos = bool_or(g, "tokenizer.ggml.add_bos_token", s.model == "llama");
  s.add_eos = bool_or(g, "tokenizer.ggml.add_eos_token", false);
  s.add_space_prefix = bool_or(g, "tokenizer.ggml.add_space_prefix", s.model == "llama");
  if (g.find("tokenizer.chat_template")) s.chat_template = g.get_string("tokenizer.chat_template");
  return s;
}

}  // namespace kiln::models
