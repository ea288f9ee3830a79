// The two merge algorithms behind kiln's tokenizers: byte-level BPE (GPT-2 style, merges by
// rank) and SentencePiece BPE (merges by score, bytes as <0xNN> fallback), and GPT-2's byte map.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::models {

// Token text -> id. A text listed twice maps to its last id, as in llama.cpp.
using TokenIndex = std::unordered_map<std::string, int32_t>;

// "left right" (the merge as GGUF spells it) -> rank (its position in tokenizer.ggml.merges).
using MergeRanks = std::unordered_map<std::string, int32_t>;

// GPT-2's reversible map from bytes to printable code points (so that vocabularies hold no
// raw control or space bytes): bytes '!'..'~', '¡'..'¬', '®'..'ÿ' map to themselves, the
// other 68 to U+0100.. in byte order.
std::string byte_level_encode(std::string_view bytes);
// The inverse; a code point outside the map is copied as its UTF-8.
std::string byte_level_decode(std::string_view text);

// Merges one pre-tokenized word (already byte-level encoded) by merge rank, lowest first and
// leftmost among equals, and appends the ids of the resulting pieces. A piece that is not a
// token falls back to its single bytes that are tokens (others are dropped, as in llama.cpp).
void byte_level_bpe(std::string_view word, const MergeRanks& ranks, const TokenIndex& index,
                    std::vector<int32_t>& out);

// SentencePiece BPE over `text` (spaces already escaped to U+2581): starting from code points,
// merges the adjacent pair whose concatenation is the token of highest score (leftmost among
// equals) until none is a token, then appends the pieces' ids; a piece that is not a token
// is spelled with its bytes' <0xNN> tokens (`byte_tokens`, -1 where the vocabulary lacks one).
void sentencepiece_bpe(std::string_view text, const TokenIndex& index,
                       const std::vector<float>& scores,
                       const std::array<int32_t, 256>& byte_tokens, std::vector<int32_t>& out);

}  // namespace kiln::models
