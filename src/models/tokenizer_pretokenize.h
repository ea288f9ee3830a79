// The pre-tokenizers of byte-level BPE vocabularies: how text is cut into words before merges,
// by `tokenizer.ggml.pre` name, as llama.cpp's regexes do it (hand-written scanner, no regex).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kiln::models {

// One pass over the words so far: each pass cuts every current word further.
enum class SplitPass {
  IsolateNumbers,  // \p{N}: every number code point becomes a word of its own
  Gpt2Words,       // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
};

// A named pre-tokenizer (llama.cpp's `tokenizer.ggml.pre`): the regex-like passes that split
// text into words before BPE.
struct PreTokenizer {
  std::string name;
  std::vector<SplitPass> passes;
};

// The pre-tokenizer registered under `pre`; kiln::Error naming the known ones otherwise.
const PreTokenizer& find_pre_tokenizer(std::string_view pre);

// The words of `text` in order (UTF-8). Invalid UTF-8 bytes come out as U+FFFD, as in llama.cpp.
std::vector<std::string> pre_tokenize(const PreTokenizer& pre, std::string_view text);

}  // namespace kiln::models
