// Pre-tokenizer passes over code points, each a hand-written scanner equivalent to one regex of
// llama.cpp's pre-tokenizer for the `pre` type (patterns from llama.cpp's llama-vocab.cpp).
#include "models/tokenizer_pretokenize.h"

#include <cstdint>

#include "ir/error.h"
#include "models/unicode_categories.h"

namespace kiln::models {

namespace {

// What the scanners ask about one code point; positions outside the current word read as
// "absent" (no class at all), the way llama.cpp's scanner treats the word's ends.
struct CodepointFlags {
  bool present = false, letter = false, number = false, whitespace = false;
};

CodepointFlags flags_of(uint32_t cp) {
  const CodepointClass cls = codepoint_class(cp);
  return {true, cls == CodepointClass::Letter, cls == CodepointClass::Number,
          is_unicode_whitespace(cp)};
}

// Splits one word [begin, end) into lengths (in code points), appended to `out`.
using WordScanner = void (*)(const std::vector<uint32_t>& cps, size_t begin, size_t end,
                             std::vector<size_t>& out);

void isolate_numbers(const std::vector<uint32_t>& cps, size_t begin, size_t end,
                     std::vector<size_t>& out) {
  size_t run_start = begin;
  for (size_t i = begin; i < end; ++i) {
    if (codepoint_class(cps[i]) != CodepointClass::Number) continue;
    if (i > run_start) out.push_back(i - run_start);
    out.push_back(1);
    run_start = i + 1;
  }
  if (end > run_start) out.push_back(end - run_start);
}

// The contraction alternatives 's|'t|'re|'ve|'m|'ll|'d: their length at `pos`, or 0.
// Case-sensitive, as the GPT-2 pattern is.
size_t contraction_length(const std::vector<uint32_t>& cps, size_t pos, size_t end) {
  if (cps[pos] != '\'' || pos + 1 >= end) return 0;
  const uint32_t next = cps[pos + 1];
  if (next == 's' || next == 't' || next == 'm' || next == 'd') return 2;
  if (pos + 2 >= end) return 0;
  const uint32_t after = cps[pos + 2];
  if ((next == 'r' && after == 'e') || (next == 'v' && after == 'e') ||
      (next == 'l' && after == 'l'))
    return 3;
  return 0;
}

void gpt2_words(const std::vector<uint32_t>& cps, size_t begin, size_t end,
                std::vector<size_t>& out) {
  const auto flags = [&](size_t pos) { return pos < end ? flags_of(cps[pos]) : CodepointFlags{}; };
  const auto is_other = [](const CodepointFlags& f) {
    return f.present && !f.whitespace && !f.letter && !f.number;
  };
  size_t word_start = begin;
  const auto emit_until = [&](size_t stop) {
    if (stop > word_start) out.push_back(stop - word_start);
    word_start = stop;
  };
  size_t pos = begin;
  while (pos < end) {
    if (size_t n = contraction_length(cps, pos, end)) {
      emit_until(pos += n);
      continue;
    }
    // " ?X+" alternatives: an optional leading space, then a run of one class.
    const bool space = cps[pos] == ' ';
    const CodepointFlags head = space ? flags(pos + 1) : flags(pos);
    if (head.letter || head.number || is_other(head)) {
      pos += space ? 1 : 0;
      if (head.letter) {
        while (flags(pos).letter) ++pos;
      } else if (head.number) {
        while (flags(pos).number) ++pos;
      } else {
        while (is_other(flags(pos))) ++pos;
      }
      emit_until(pos);
      continue;
    }
    size_t spaces = 0;
    while (flags(pos + spaces).whitespace) ++spaces;
    if (spaces > 1 && pos + spaces < end) {
      // \s+(?!\S): the run minus its last space, which joins the word that follows.
      emit_until(pos += spaces - 1);
    } else if (spaces > 0) {
      emit_until(pos += spaces);
    } else {
      emit_until(++pos);  // matches nothing: one code point alone
    }
  }
}

WordScanner scanner_of(SplitPass pass) {
  switch (pass) {
    case SplitPass::IsolateNumbers:
      return isolate_numbers;
    case SplitPass::Gpt2Words:
      return gpt2_words;
  }
  return gpt2_words;
}

// The registry. llama.cpp gives "smollm" (and starcoder, refact, command-r, ... which are not
// registered here: their detokenizers differ in space clean-up) the pattern pair
// "\p{N}" then the GPT-2 words pattern.
const std::vector<PreTokenizer>& registry() {
  static const std::vector<PreTokenizer> known = {
      {"smollm", {SplitPass::IsolateNumbers, SplitPass::Gpt2Words}},
  };
  return known;
}

}  // namespace

const PreTokenizer& find_pre_tokenizer(std::string_view pre) {
  std::string names;
  for (const PreTokenizer& p : registry()) {
    if (p.name == pre) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  fail("tokenizer", "unsupported pre-tokenizer (tokenizer.ggml.pre) '", pre,
       "' for a byte-level BPE vocabulary; supported: ", names);
}

std::vector<std::string> pre_tokenize(const PreTokenizer& pre, std::string_view text) {
  const std::vector<uint32_t> cps = decode_utf8_lenient(text);
  std::vector<size_t> lengths = {cps.size()};
  for (SplitPass pass : pre.passes) {
    std::vector<size_t> next;
    next.reserve(lengths.size() * 2);
    size_t start = 0;
    for (size_t length : lengths) {
      scanner_of(pass)(cps, start, start + length, next);
      start += length;
    }
    lengths = std::move(next);
  }
  std::vector<std::string> words;
  words.reserve(lengths.size());
  size_t start = 0;
  for (size_t length : lengths) {
    std::string word;
    for (size_t i = start; i < start + length; ++i) append_utf8(word, cps[i]);
    words.push_back(std::move(word));
    start += length;
  }
  return words;
}

}  // namespace kiln::models
