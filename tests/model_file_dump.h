// Helpers shared by the GGUF and safetensors tests: file reading, and the pieces of the text
// dump that tools/gen_gguf_fixtures.py writes (its docstring has the format).
#pragma once
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "ir/file_bytes.h"

namespace kiln_test {

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  return kiln::read_file_bytes(path).value_or(std::vector<uint8_t>{});
}

inline std::string read_text(const std::string& path) {
  std::vector<uint8_t> b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

// FNV-1a, 64 bits, as 16 hex digits: the dumps' summary of a tensor's bytes.
inline std::string fnv1a64(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// A string in double quotes, bytes outside printable ASCII (and " \) as \xHH.
inline std::string dump_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += char(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

template <typename T>
std::string join(const std::vector<T>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}

}  // namespace kiln_test
