// kiln::formats::parse_json: a small strict JSON parser for file headers (safetensors):
// objects, arrays, strings with escapes and integers; no floats, true/false or null.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::formats {

struct JsonMember;

struct JsonValue {
  enum class Kind { Object, Array, String, Integer };
  Kind kind = Kind::Object;
  int64_t integer = 0;
  std::string str;  // UTF-8, escapes decoded
  std::vector<JsonValue> items;     // Array
  std::vector<JsonMember> members;  // Object, in text order

  // The member `key` of an object, or nullptr.
  const JsonValue* find(std::string_view key) const;
};

// A struct, not std::pair: pair's traits need JsonValue complete inside its own definition.
struct JsonMember {
  std::string key;
  JsonValue value;
};

const char* json_kind_name(JsonValue::Kind kind);  // "object", "array", "string", "integer"

// Parses one JSON value (whitespace around it allowed, nothing else after it). Integers must
// fit in int64; duplicate object keys, unpaired surrogates, control characters in strings,
// nesting over 64 deep and every construct outside the subset above are errors:
// kiln::Error("<op>: JSON header at byte N: ...").
JsonValue parse_json(std::string_view text, const char* op);

}  // namespace kiln::formats
