// Strict JSON subset parser (formats::parse_json): recursive descent with a depth cap, every
// read checked against the end of the text, escapes decoded to UTF-8.
#include "formats/json.h"

#include <set>

#include "ir/error.h"

namespace kiln::formats {

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

const char* json_kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::Object: return "object";
    case JsonValue::Kind::Array: return "array";
    case JsonValue::Kind::String: return "string";
    case JsonValue::Kind::Integer: return "integer";
  }
  return "?";
}

namespace {

constexpr int kMaxDepth = 64;

struct Parser {
  std::string_view s;
  const char* op;
  size_t pos = 0;

  template <typename... Args>
  [[noreturn]] void error(Args&&... args) const {
    fail(op, "JSON header at byte ", pos, ": ", std::forward<Args>(args)...);
  }
  void skip_space() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
      ++pos;
  }
  char peek() {
    if (pos >= s.size()) error("unexpected end of the header");
    return s[pos];
  }
  void expect(char c) {
    if (peek() != c) error("expected '", c, "', got ", describe(s[pos]));
    ++pos;
  }
  static std::string describe(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
    return "byte " + std::to_string(int(u));
  }

  JsonValue value(int depth);
  JsonValue object(int depth);
  JsonValue array(int depth);
  JsonValue integer();
  std::string string();
  uint32_t hex4();
};

JsonValue Parser::value(int depth) {
  if (depth > kMaxDepth) error("nested more than ", kMaxDepth, " deep");
  skip_space();
  char c = peek();
  if (c == '{') return object(depth);
  if (c == '[') return array(depth);
  if (c == '"') {
    JsonValue v;
    v.kind = JsonValue::Kind::String;
    v.str = string();
    return v;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return integer();
  error("expected an object, array, string or integer, got ", describe(c));
}

JsonValue Parser::object(int depth) {
  JsonValue v;
  v.kind = JsonValue::Kind::Object;
  expect('{');
  skip_space();
  if (peek() == '}') {
    ++pos;
    return v;
  }
  std::set<std::string, std::less<>> seen;  // a set: headers can hold thousands of tensors
  while (true) {
    skip_space();
    if (peek() != '"') error("expected a string key, got ", describe(s[pos]));
    size_t key_pos = pos;
    std::string key = string();
    if (!seen.insert(key).second) {
      pos = key_pos;
      error("duplicate key \"", key.substr(0, 100), "\"");
    }
    skip_space();
    expect(':');
    JsonValue member = value(depth + 1);
    v.members.push_back({std::move(key), std::move(member)});
    skip_space();
    if (peek() == '}') {
      ++pos;
      return v;
    }
    expect(',');
  }
}

JsonValue Parser::array(int depth) {
  JsonValue v;
  v.kind = JsonValue::Kind::Array;
  expect('[');
  skip_space();
  if (peek() == ']') {
    ++pos;
    return v;
  }
  while (true) {
    v.items.push_back(value(depth + 1));
    skip_space();
    if (peek() == ']') {
      ++pos;
      return v;
    }
    expect(',');
  }
}

JsonValue Parser::integer() {
  JsonValue v;
  v.kind = JsonValue::Kind::Integer;
  bool negative = false;
  if (s[pos] == '-') {
    negative = true;
    ++pos;
  }
  if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') error("expected a digit after '-'");
  if (s[pos] == '0' && pos + 1 < s.size() && s[pos + 1] >= '0' && s[pos + 1] <= '9')
    error("a number with a leading zero");
  // Accumulate as a negative number: -2^63 fits, 2^63 does not.
  int64_t acc = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    int digit = s[pos] - '0';
    if (acc < (INT64_MIN + digit) / 10) error("integer does not fit in 64 bits");
    acc = acc * 10 - digit;
    ++pos;
  }
  if (pos < s.size() && (s[pos] == '.' || s[pos] == 'e' || s[pos] == 'E'))
    error("a non-integer number (only integers are expected here)");
  if (!negative && acc == INT64_MIN) error("integer does not fit in 64 bits");
  v.integer = negative ? acc : -acc;
  return v;
}

uint32_t Parser::hex4() {
  if (s.size() - pos < 4) error("truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s[pos++];
    int d = c >= '0' && c <= '9' ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) error("bad hex digit ", describe(c), " in a \\u escape");
    v = v << 4 | uint32_t(d);
  }
  return v;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | cp >> 6);
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | cp >> 12);
    out += char(0x80 | (cp >> 6 & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | cp >> 18);
    out += char(0x80 | (cp >> 12 & 0x3F));
    out += char(0x80 | (cp >> 6 & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

std::string Parser::string() {
  expect('"');
  std::string out;
  while (true) {
    if (pos >= s.size()) error("unterminated string");
    char c = s[pos++];
    if (c == '"') return out;
    if (static_cast<unsigned char>(c) < 0x20) {
      --pos;
      error("control character ", int(c), " inside a string");
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos >= s.size()) error("unterminated escape");
    char e = s[pos++];
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = hex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF) error("unpaired low surrogate in a \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (s.size() - pos < 2 || s[pos] != '\\' || s[pos + 1] != 'u')
            error("high surrogate without a low one in a \\u escape");
          pos += 2;
          uint32_t lo = hex4();
          if (lo < 0xDC00 || lo > 0xDFFF) error("high surrogate without a low one");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(out, cp);
        break;
      }
      default:
        --pos;
        error("unknown escape \\", describe(e));
    }
  }
}

}  // namespace

JsonValue parse_json(std::string_view text, const char* op) {
  Parser p{text, op};
  JsonValue v = p.value(0);
  p.skip_space();
  if (p.pos != text.size())
    p.error("unexpected ", Parser::describe(text[p.pos]), " after the value");
  return v;
}

}  // namespace kiln::formats
