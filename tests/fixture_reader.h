// Reader for the NumPy reference fixtures written by tools/gen_numpy_fixtures.py (the
// format is documented at the top of that script); plain structs, no kiln or gtest needed.
#pragma once
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln_test {

// One array of a fixture: `input` or `expect` line.
struct FixtureArray {
  std::string dtype;           // "bool", "int32", "uint32", "float16", "float32", "float64"
  int weak = -1;               // 0/1, or -1 where the fixture does not check it ("-")
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<double> floats;  // values of float dtypes (float32 parsed with strtof)
  std::vector<int64_t> ints;   // values of int and bool dtypes
  int64_t size() const;
  bool is_float() const;
  // Raw little-endian C-order bytes in `dtype` (float16 as IEEE half bits).
  std::vector<uint8_t> bytes() const;
};

struct FixtureView {
  std::string kind;  // transpose, index, flip, pad, broadcast_to
  std::vector<std::string> args;
};

struct FixtureInput {
  FixtureArray array;
  bool weak = false;  // a Python scalar: kiln::Array(double) or kiln::Array(int)
  std::vector<FixtureView> views;
};

// `param` lines: key -> tokens.
class Params {
 public:
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::vector<std::string>& tokens(const std::string& key) const;  // throws if absent
  std::string str(const std::string& key) const;                         // the one token
  int64_t integer(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback) const;
  double real(const std::string& key) const;
  std::vector<int64_t> integers(const std::string& key) const;
  std::vector<int> ints(const std::string& key) const;
  bool is_none(const std::string& key) const;  // the single token "none"
  void set(const std::string& key, std::vector<std::string> tokens) {
    values_[key] = std::move(tokens);
  }
  const std::map<std::string, std::vector<std::string>>& all() const { return values_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

struct FixtureCase {
  std::string id, op;
  int line = 0;  // of the `case` line
  Params params;
  std::vector<FixtureInput> inputs;
  std::vector<FixtureArray> expects;
  std::optional<std::string> error;  // expect_error text: '|'-separated alternatives
  double rtol = 0, atol = 0;
};

// Parses a whole fixture stream; throws std::runtime_error naming the line on bad input.
std::vector<FixtureCase> parse_fixtures(std::istream& in, const std::string& name);
std::vector<FixtureCase> read_fixture_file(const std::string& path);

// IEEE half conversions (round to nearest even).
uint16_t half_bits_from_double(double v);
double double_from_half_bits(uint16_t h);
// Decodes raw little-endian elements of `dtype` into doubles (every dtype).
std::vector<double> decode_as_doubles(const std::vector<uint8_t>& bytes, const std::string& dtype);
int dtype_itemsize(const std::string& dtype);

}  // namespace kiln_test
