// kiln::models::Tokenizer: the LLM tokenizers of GGUF files (byte-level BPE "gpt2" and
// SentencePiece "llama"), built from a plain TokenizerSpec, matching llama.cpp's token ids.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/tokenizer_merges.h"
#include "models/tokenizer_pretokenize.h"

namespace kiln::models {

// The tokenizer.* metadata of a GGUF file, as plain values (the GGUF reader fills it).
struct TokenizerSpec {
  std::string model;  // tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama" (SentencePiece)
  std::string pre;    // tokenizer.ggml.pre, e.g. "smollm", "default"
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens
  std::vector<float> scores;         // tokenizer.ggml.scores (may be empty)
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type (may be empty: all normal)
  std::vector<std::string> merges;   // tokenizer.ggml.merges ("a b"), BPE only
  int32_t bos_id = -1, eos_id = -1, unk_id = -1, pad_id = -1;
  bool add_bos = false, add_eos = false, add_space_prefix = false;
  std::string chat_template;  // tokenizer.chat_template
};

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6
};

// A GGUF model's tokenizer, llama.cpp's token ids exactly: byte-level BPE (gpt2 vocabularies,
// SmolLM2) or SentencePiece-style BPE (Gemma), with special tokens and BOS/EOS handling.
class Tokenizer {
 public:
  // Validates the spec (model and pre types, sizes, ids, merges) and builds the lookups;
  // kiln::Error naming `tokenizer` on anything wrong.
  explicit Tokenizer(TokenizerSpec spec);

  // Token ids of `text`. add_special adds BOS/EOS where the spec's add_bos/add_eos say so.
  // parse_special matches control tokens written in the text (e.g. "<|im_start|>");
  // user-defined tokens are always matched, as in llama.cpp.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes of one token: byte tokens give their byte, BPE tokens their unmapped bytes,
  // SentencePiece tokens their text with U+2581 as space. Control and unknown tokens give
  // their text when render_special, else nothing. May end inside a UTF-8 sequence.
  std::string token_bytes(int32_t id, bool render_special = false) const;

  // The text of `ids`: pieces joined; a space-prefixing vocabulary drops one leading space of
  // the first token's piece.
  std::string decode(const std::vector<int32_t>& ids, bool render_special = false) const;

  const TokenizerSpec& spec() const { return spec_; }  // what the GGUF file says
  // The number of tokens.
  int32_t vocab_size() const { return static_cast<int32_t>(spec_.tokens.size()); }
  // The type the tokenizer uses: the file's, except that end-of-turn/end-of-generation/FIM
  // spellings ("</s>", "<|im_end|>", ...) are Control, as llama.cpp makes them.
  TokenType token_type(int32_t id) const;
  // Whether generation stops at `id`: eos, and end-of-turn/end-of-text tokens found by their
  // spelling (SmolLM2: <|endoftext|>, <|im_end|>, <reponame>; Gemma 3: <eos>,
  // <end_of_turn>, </s>), as llama.cpp's end-of-generation set.
  bool is_end_of_generation(int32_t id) const;
  // The id of the token spelled exactly `text`, or -1.
  int32_t find_token(std::string_view text) const;

 private:
  struct Fragment {
    int32_t token;          // >= 0: a special token matched in the text
    std::string_view text;  // otherwise: raw text
  };
  struct SpecialToken {
    int32_t id;  // an id, not a view of the text, so that copies of the Tokenizer stay valid
    bool needs_parse_special;  // control/unknown: only when parse_special; user-defined: always
  };

  void check_id(int32_t id, const char* what) const;
  void rank_merges();
  void find_byte_tokens();
  void classify_tokens();
  std::vector<Fragment> split_specials(std::string_view text, bool parse_special) const;
  void encode_text(std::string_view text, bool prev_was_special, std::vector<int32_t>& out) const;

  TokenizerSpec spec_;
  bool byte_level_ = false;  // gpt2; otherwise SentencePiece
  const PreTokenizer* pre_ = nullptr;
  std::vector<TokenType> types_;
  std::vector<int32_t> end_of_generation_;
  TokenIndex index_;
  MergeRanks ranks_;
  std::array<int32_t, 256> byte_tokens_{};
  std::vector<SpecialToken> specials_;  // longest text first
};

// Turns a stream of token ids into text pieces that are whole UTF-8: bytes of a character split
// over tokens are held back until it completes (for streaming generation output).
class StreamDecoder {
 public:
  // Keeps a reference to `tokenizer`, which must outlive the decoder.
  explicit StreamDecoder(const Tokenizer& tokenizer, bool render_special = false)
      : tokenizer_(tokenizer), render_special_(render_special) {}
  // The text that became complete with this token (may be empty).
  std::string push(int32_t id);
  // Whatever is held back (an incomplete sequence at the end of the stream), as is.
  std::string flush();

 private:
  const Tokenizer& tokenizer_;
  bool render_special_;
  bool first_piece_ = true;
  std::string pending_;
};

}  // namespace kiln::models
