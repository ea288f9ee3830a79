// Lenient UTF-8 decoding, letter/number lookup in the generated range table, White_Space.
// The tokenizers' pre-tokenizer scanner (tokenizer_pretokenize.cpp) is built on these.
#include "models/unicode_categories.h"

#include <algorithm>

namespace kiln::models {

CodepointClass codepoint_class(uint32_t cp) {
  const CodepointRange* end = kCategoryRanges + kCategoryRangeCount;
  const CodepointRange* it =
      std::upper_bound(kCategoryRanges, end, cp,
                       [](uint32_t value, const CodepointRange& r) { return value < r.first; });
  if (it == kCategoryRanges) return CodepointClass::Other;
  --it;
  return cp <= it->last ? it->cls : CodepointClass::Other;
}

bool is_unicode_whitespace(uint32_t cp) {
  if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0) return true;
  if (cp < 0x1680) return false;
  return cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {

bool is_continuation(std::string_view text, size_t at) {
  return at < text.size() && (static_cast<uint8_t>(text[at]) & 0xC0) == 0x80;
}

// One code point at `offset` (advanced past it), or false when the bytes there are not a
// complete sequence. Overlong forms and surrogates pass, as in llama.cpp's decoder.
bool decode_one(std::string_view text, size_t& offset, uint32_t& cp) {
  const auto b = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<uint8_t>(text[offset + k]));
  };
  const uint32_t lead = b(0);
  if (!(lead & 0x80)) {
    cp = lead;
    offset += 1;
    return true;
  }
  if (!(lead & 0x40)) return false;
  size_t length = !(lead & 0x20) ? 2 : !(lead & 0x10) ? 3 : !(lead & 0x08) ? 4 : 0;
  if (length == 0) return false;
  for (size_t k = 1; k < length; ++k)
    if (!is_continuation(text, offset + k)) return false;
  static constexpr uint32_t kLeadMask[5] = {0, 0, 0x1F, 0x0F, 0x07};
  cp = lead & kLeadMask[length];
  for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (b(k) & 0x3F);
  offset += length;
  return true;
}

}  // namespace

std::vector<uint32_t> decode_utf8_lenient(std::string_view text) {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) {
    uint32_t cp = 0;
    if (decode_one(text, offset, cp)) {
      cps.push_back(cp);
    } else {
      cps.push_back(0xFFFD);
      ++offset;
    }
  }
  return cps;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t complete_utf8_prefix(std::string_view bytes) {
  // Look back at most 3 bytes for the lead byte of the last sequence.
  const size_t n = bytes.size();
  for (size_t back = 1; back <= std::min<size_t>(n, 4); ++back) {
    const auto byte = static_cast<uint8_t>(bytes[n - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte: keep looking for the lead
    if (byte < 0xC0) return n;            // ASCII ends a sequence
    const size_t needed = utf8_sequence_length(byte);
    return back >= needed ? n : n - back;
  }
  return n;  // only continuation bytes (invalid): pass them through, nothing will complete them
}

}  // namespace kiln::models
