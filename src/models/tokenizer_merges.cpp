// Byte-level BPE and SentencePiece BPE merge loops over a doubly linked list of symbols with a
// priority queue of candidate pairs; stale pairs are skipped when popped, as in llama.cpp.
#include "models/tokenizer_merges.h"

#include <algorithm>
#include <queue>

#include "ir/error.h"
#include "models/unicode_categories.h"

namespace kiln::models {

namespace {

// byte -> code point of GPT-2's map.
const std::array<uint32_t, 256>& byte_to_codepoint() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next_free = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? b : next_free++;
    }
    return t;
  }();
  return table;
}

// A piece of the text being merged; n == 0 marks a symbol merged into its left neighbour.
struct Symbol {
  int prev, next;
  size_t offset, n;
};

// Cuts `text` into symbols of one UTF-8 sequence each (by the lead byte, clipped at the end).
std::vector<Symbol> symbols_of(std::string_view text) {
  std::vector<Symbol> symbols;
  size_t offset = 0;
  while (offset < text.size()) {
    const size_t n =
        std::min(text.size() - offset, utf8_sequence_length(static_cast<uint8_t>(text[offset])));
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, offset + n == text.size() ? -1 : index + 1, offset, n});
    offset += n;
  }
  return symbols;
}

// A candidate merge of two adjacent symbols; `size` detects pairs gone stale.
struct Bigram {
  int left, right;
  double priority;  // larger merges first
  size_t size;
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
  }
};

using BigramQueue = std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder>;

// Runs the merge loop: `priority_of(left, right, priority)` says whether the pair may merge.
template <typename PriorityOf>
void merge_symbols(std::string_view text, std::vector<Symbol>& symbols, PriorityOf priority_of) {
  BigramQueue queue;
  const auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    double priority = 0;
    if (priority_of(text.substr(l.offset, l.n), text.substr(r.offset, r.n), priority))
      queue.push({left, right, priority, l.n + r.n});
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Bigram top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    if (left.n == 0 || right.n == 0 || left.n + right.n != top.size) continue;
    left.n += right.n;
    right.n = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    try_add(left.prev, top.left);
    try_add(top.left, left.next);
  }
}

int32_t find_token(const TokenIndex& index, std::string_view text) {
  auto it = index.find(std::string(text));
  return it == index.end() ? -1 : it->second;
}

}  // namespace

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) append_utf8(out, byte_to_codepoint()[static_cast<uint8_t>(c)]);
  return out;
}

std::string byte_level_decode(std::string_view text) {
  static const std::unordered_map<uint32_t, uint8_t> codepoint_to_byte = [] {
    std::unordered_map<uint32_t, uint8_t> m;
    for (uint32_t b = 0; b < 256; ++b) m[byte_to_codepoint()[b]] = static_cast<uint8_t>(b);
    return m;
  }();
  std::string out;
  out.reserve(text.size());
  for (uint32_t cp : decode_utf8_lenient(text)) {
    auto it = codepoint_to_byte.find(cp);
    if (it != codepoint_to_byte.end()) {
      out += static_cast<char>(it->second);
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

void byte_level_bpe(std::string_view word, const MergeRanks& ranks, const TokenIndex& index,
                    std::vector<int32_t>& out) {
  std::vector<Symbol> symbols = symbols_of(word);
  std::string key;
  merge_symbols(word, symbols, [&](std::string_view l, std::string_view r, double& priority) {
    key.assign(l).append(" ").append(r);
    auto it = ranks.find(key);
    if (it == ranks.end()) return false;
    priority = -static_cast<double>(it->second);  // lowest rank first
    return true;
  });
  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = word.substr(symbols[i].offset, symbols[i].n);
    const int32_t id = find_token(index, piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_id = find_token(index, std::string_view(&c, 1));
      if (byte_id >= 0) out.push_back(byte_id);
    }
  }
}

void sentencepiece_bpe(std::string_view text, const TokenIndex& index,
                       const std::vector<float>& scores,
                       const std::array<int32_t, 256>& byte_tokens, std::vector<int32_t>& out) {
  std::vector<Symbol> symbols = symbols_of(text);
  std::string joined;
  merge_symbols(text, symbols, [&](std::string_view l, std::string_view r, double& priority) {
    joined.assign(l).append(r);
    const int32_t id = find_token(index, joined);
    if (id < 0) return false;
    priority = static_cast<size_t>(id) < scores.size() ? scores[id] : 0.0f;
    return true;
  });
  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = text.substr(symbols[i].offset, symbols[i].n);
    const int32_t id = find_token(index, piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_id = byte_tokens[static_cast<uint8_t>(c)];
      if (byte_id < 0)
        fail("tokenizer", "byte 0x", std::hex, static_cast<int>(static_cast<uint8_t>(c)),
             " is not in the vocabulary (no <0xNN> token and no single-byte token)");
      out.push_back(byte_id);
    }
  }
}

}  // namespace kiln::models
