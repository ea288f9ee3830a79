// Tokenizer: spec validation, special-token matching, encode (byte-level BPE or SentencePiece
// per fragment) and decode, following llama.cpp's tokenizer behaviour for GGUF vocabularies.
#include "models/tokenizer.h"

#include <algorithm>
#include <cstdio>

#include "ir/error.h"
#include "models/unicode_categories.h"

namespace kiln::models {

namespace {

// U+2581 (LOWER ONE EIGHTH BLOCK): SentencePiece's visible space.
constexpr std::string_view kSentencePieceSpace = "\xE2\x96\x81";

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (char c : text) {
    if (c == ' ') {
      out += kSentencePieceSpace;
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, kSentencePieceSpace.size()) == kSentencePieceSpace) {
      out += ' ';
      i += kSentencePieceSpace.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// Spellings of end-of-turn, end-of-generation and fill-in-the-middle tokens that llama.cpp
// treats as control tokens whatever type the file gives them (Gemma 3's "</s>" is
// user-defined there): they match in text only with parse_special and decode to nothing.
// Those marked `ends` also end generation (llama.cpp's EOG set, with the eos token).
struct ControlSpelling {
  std::string_view text;
  bool ends;
};
// clang-format off
constexpr ControlSpelling kControlSpellings[] = {
    {"<|eot_id|>", true}, {"<|im_end|>", true}, {"<|end|>", true}, {"<end_of_turn>", true},
    {"<|endoftext|>", true}, {"<|end_of_text|>", true}, {"<EOT>", true}, {"_<EOT>", true},
    {"[EOT]", true}, {"[EOS]", true}, {"<end_of_utterance>", true}, {"<|eom_id|>", true},
    {"</s>", true}, {"<|return|>", true}, {"<|call|>", true}, {"<|flush|>", true},
    {"<|calls|>", true}, {"<eos>", true}, {"<turn|>", true}, {"<|tool_response>", true},
    // fill-in-the-middle: prefix, suffix, middle (control only), pad, repo, file separator
    {"<|fim_prefix|>", false}, {"<fim-prefix>", false}, {"<fim_prefix>", false},
    {"<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", false}, {"<PRE>", false},
    {"<|code_prefix|>", false}, {"<|prefix|>", false},
    {"<|fim_suffix|>", false}, {"<fim-suffix>", false}, {"<fim_suffix>", false},
    {"<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>", false}, {"<SUF>", false},
    {"<|code_suffix|>", false}, {"<|suffix|>", false},
    {"<|fim_middle|>", false}, {"<fim-middle>", false}, {"<fim_middle>", false},
    {"<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>", false}, {"<MID>", false},
    {"<|code_middle|>", false}, {"<|middle|>", false},
    {"<|fim_pad|>", true}, {"<fim-pad>", true}, {"<fim_pad>", true}, {"<PAD>", true},
    {"[PAD]", true}, {"<|fim_repo|>", true}, {"<|repo_name|>", true}, {"<fim-repo>", true},
    {"<REPO>", true}, {"<reponame>", true}, {"<|file_sep|>", true},
};
// clang-format on

void check_sizes(const TokenizerSpec& spec) {
  if (spec.tokens.empty()) fail("tokenizer", "the vocabulary (tokenizer.ggml.tokens) is empty");
  const size_t n = spec.tokens.size();
  if (!spec.scores.empty() && spec.scores.size() != n)
    fail("tokenizer", "tokenizer.ggml.scores has ", spec.scores.size(),
         " entries, expected one per token (", n, ")");
  if (!spec.token_types.empty() && spec.token_types.size() != n)
    fail("tokenizer", "tokenizer.ggml.token_type has ", spec.token_types.size(),
         " entries, expected one per token (", n, ")");
  for (size_t i = 0; i < spec.token_types.size(); ++i)
    if (spec.token_types[i] < 0 || spec.token_types[i] > 6)
      fail("tokenizer", "token ", i, " has type ", spec.token_types[i],
           ", expected 0..6 (tokenizer.ggml.token_type)");
}

}  // namespace

Tokenizer::Tokenizer(TokenizerSpec spec) : spec_(std::move(spec)) {
  if (spec_.model == "gpt2") {
    byte_level_ = true;
    pre_ = &find_pre_tokenizer(spec_.pre);
  } else if (spec_.model != "llama") {
    fail("tokenizer", "unsupported tokenizer model '", spec_.model,
         "' (tokenizer.ggml.model); supported: gpt2 (byte-level BPE), llama (SentencePiece)");
  }
  check_sizes(spec_);
  check_id(spec_.bos_id, "bos");
  check_id(spec_.eos_id, "eos");
  check_id(spec_.unk_id, "unknown");
  check_id(spec_.pad_id, "padding");
  if (spec_.add_bos && spec_.bos_id < 0)
    fail("tokenizer", "add_bos is set but the vocabulary has no bos token id");
  if (spec_.add_eos && spec_.eos_id < 0)
    fail("tokenizer", "add_eos is set but the vocabulary has no eos token id");

  // llama.cpp renames empty tokens (which no text could produce) to "[EMPTY_<id>]".
  for (size_t i = 0; i < spec_.tokens.size(); ++i)
    if (spec_.tokens[i].empty()) spec_.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";
  index_.reserve(spec_.tokens.size());
  for (size_t i = 0; i < spec_.tokens.size(); ++i)
    index_[spec_.tokens[i]] = static_cast<int32_t>(i);

  if (byte_level_) {
    rank_merges();
  } else {
    find_byte_tokens();
  }
  classify_tokens();
}

// The merges' ranks; each merge must name two tokens.
void Tokenizer::rank_merges() {
  if (spec_.merges.empty())
    fail("tokenizer",
         "a gpt2 (byte-level BPE) vocabulary needs tokenizer.ggml.merges; it has none");
  ranks_.reserve(spec_.merges.size());
  for (size_t rank = 0; rank < spec_.merges.size(); ++rank) {
    const std::string& merge = spec_.merges[rank];
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos)
      fail("tokenizer", "merge ", rank, " '", merge, "' is not two tokens separated by a space");
    for (std::string_view part :
         {std::string_view(merge).substr(0, space), std::string_view(merge).substr(space + 1)})
      if (find_token(part) < 0)
        fail("tokenizer", "merge ", rank, " '", merge, "' names '", part,
             "', which is not a token");
    ranks_.emplace(merge, static_cast<int32_t>(rank));  // the first listing of a pair wins
  }
}

// SentencePiece's byte fallback: <0xNN>, else the byte itself as a token, else none (-1).
void Tokenizer::find_byte_tokens() {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const char raw = static_cast<char>(b);
    int32_t id = find_token(name);
    byte_tokens_[b] = id >= 0 ? id : find_token(std::string_view(&raw, 1));
  }
}

// Token types as llama.cpp uses them, the end-of-generation set, and the specials to match
// in text.
void Tokenizer::classify_tokens() {
  types_.resize(spec_.tokens.size(), TokenType::Normal);
  for (size_t i = 0; i < spec_.token_types.size(); ++i)
    types_[i] = static_cast<TokenType>(spec_.token_types[i]);
  for (const ControlSpelling& spelling : kControlSpellings) {
    const int32_t id = find_token(spelling.text);
    if (id < 0) continue;
    types_[id] = TokenType::Control;
    if (spelling.ends) end_of_generation_.push_back(id);
  }
  if (spec_.eos_id >= 0) end_of_generation_.push_back(spec_.eos_id);
  for (size_t i = 0; i < spec_.tokens.size(); ++i) {
    const TokenType type = types_[i];
    if (type == TokenType::Control || type == TokenType::Unknown || type == TokenType::UserDefined)
      specials_.push_back({static_cast<int32_t>(i), type != TokenType::UserDefined});
  }
  // Longest first, so that "<end_of_turn>" is not cut by a shorter token inside it.
  std::stable_sort(specials_.begin(), specials_.end(),
                   [&](const SpecialToken& a, const SpecialToken& b) {
                     return spec_.tokens[a.id].size() > spec_.tokens[b.id].size();
                   });
}

void Tokenizer::check_id(int32_t id, const char* what) const {
  if (id < -1 || id >= vocab_size())
    fail("tokenizer", what, " token id ", id, " is out of range for a vocabulary of ", vocab_size(),
         " tokens");
}

TokenType Tokenizer::token_type(int32_t id) const {
  if (id < 0 || id >= vocab_size())
    fail("tokenizer", "token id ", id, " is out of range for a vocabulary of ", vocab_size(),
         " tokens");
  return types_[id];
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
  return std::find(end_of_generation_.begin(), end_of_generation_.end(), id) !=
         end_of_generation_.end();
}

int32_t Tokenizer::find_token(std::string_view text) const {
  auto it = index_.find(std::string(text));
  return it == index_.end() ? -1 : it->second;
}

// Cuts the text at every occurrence of each special token in turn (longest tokens first), the
// way llama.cpp partitions it: a later token is only looked for in what is still raw text.
std::vector<Tokenizer::Fragment> Tokenizer::split_specials(std::string_view text,
                                                           bool parse_special) const {
  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back({-1, text});
  for (const SpecialToken& special : specials_) {
    if (special.needs_parse_special && !parse_special) continue;
    const std::string_view special_text = spec_.tokens[special.id];
    if (special_text.size() > text.size()) continue;
    std::vector<Fragment> next;
    bool found = false;
    for (const Fragment& fragment : fragments) {
      if (fragment.token >= 0) {
        next.push_back(fragment);
        continue;
      }
      std::string_view rest = fragment.text;
      for (size_t at; (at = rest.find(special_text)) != std::string_view::npos;) {
        found = true;
        if (at > 0) next.push_back({-1, rest.substr(0, at)});
        next.push_back({special.id, {}});
        rest = rest.substr(at + special_text.size());
      }
      if (!rest.empty()) next.push_back({-1, rest});
    }
    if (found) fragments = std::move(next);
  }
  return fragments;
}

void Tokenizer::encode_text(std::string_view text, bool prev_was_special,
                            std::vector<int32_t>& out) const {
  if (byte_level_) {
    for (const std::string& word : pre_tokenize(*pre_, text))
      byte_level_bpe(byte_level_encode(word), ranks_, index_, out);
    return;
  }
  // SentencePiece: a space before text that starts the input or follows a special token, when
  // the vocabulary asks for it (add_space_prefix); then spaces become U+2581.
  std::string prefixed = spec_.add_space_prefix && prev_was_special ? " " : "";
  prefixed += text;
  sentencepiece_bpe(escape_spaces(prefixed), index_, spec_.scores, byte_tokens_, out);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && spec_.add_bos) out.push_back(spec_.bos_id);
  bool prev_was_special = true;
  for (const Fragment& fragment : split_specials(text, parse_special)) {
    if (fragment.token >= 0) {
      out.push_back(fragment.token);
      prev_was_special = true;
    } else {
      encode_text(fragment.text, prev_was_special, out);
      prev_was_special = false;
    }
  }
  if (add_special && spec_.add_eos) out.push_back(spec_.eos_id);
  return out;
}

std::string Tokenizer::token_bytes(int32_t id, bool render_special) const {
  const TokenType type = token_type(id);  // checks the range
  const std::string& text = spec_.tokens[id];
  switch (type) {
    case TokenType::Control:
    case TokenType::Unknown:
      return render_special ? text : std::string();
    case TokenType::UserDefined:
      return text;
    case TokenType::Unused:
      return {};
    case TokenType::Byte:
      if (!byte_level_) {
        unsigned value = 0;
        if (text.size() == 6 && std::sscanf(text.c_str(), "<0x%02X>", &value) == 1)
          return std::string(1, static_cast<char>(value));
        fail("tokenizer", "byte token ", id, " '", text, "' is not spelled <0xNN>");
      }
      return byte_level_decode(text);
    default:
      return byte_level_ ? byte_level_decode(text) : unescape_spaces(text);
  }
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  StreamDecoder stream(*this, render_special);
  std::string out;
  for (int32_t id : ids) out += stream.push(id);
  return out + stream.flush();
}

std::string StreamDecoder::push(int32_t id) {
  std::string piece = tokenizer_.token_bytes(id, render_special_);
  if (first_piece_) {
    // A space-prefixing SentencePiece vocabulary added the first space itself: drop it. As
    // in llama.cpp's detokenizer, only the first token's piece is looked at (after a BOS,
    // whose piece is empty, the space stays).
    const TokenizerSpec& spec = tokenizer_.spec();
    if (spec.model == "llama" && spec.add_space_prefix && !piece.empty() && piece[0] == ' ')
      piece.erase(0, 1);
    first_piece_ = false;
  }
  pending_ += piece;
  const size_t complete = complete_utf8_prefix(pending_);
  std::string ready = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return ready;
}

std::string StreamDecoder::flush() {
  std::string rest = std::move(pending_);
  pending_.clear();
  return rest;
}

}  // namespace kiln::models
