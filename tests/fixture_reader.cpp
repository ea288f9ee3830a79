// Parser of the NumPy fixture text format (see tools/gen_numpy_fixtures.py), and the byte
// encodings (float16 included) that the runner needs to build and read kiln arrays.
#include "fixture_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kiln_test {

namespace {

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string t;
  while (is >> t) out.push_back(t);
  return out;
}

[[noreturn]] void bad(const std::string& name, int line, const std::string& what) {
  throw std::runtime_error(name + ":" + std::to_string(line) + ": " + what);
}

int64_t parse_int(const std::string& t, const std::string& name, int line) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(t.c_str(), &end, 10);
  if (errno || end == t.c_str() || *end) bad(name, line, "bad integer '" + t + "'");
  return v;
}

double parse_real(const std::string& t, const std::string& dtype, const std::string& name,
                  int line) {
  char* end = nullptr;
  double v = dtype == "float32" ? static_cast<double>(std::strtof(t.c_str(), &end))
                                : std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end) bad(name, line, "bad number '" + t + "'");
  return v;
}

bool known_dtype(const std::string& d) {
  return d == "bool" || d == "int32" || d == "uint32" || d == "float16" || d == "float32" ||
         d == "float64";
}

// "<dtype> <weak> <dims...> : <values...>"
FixtureArray parse_array(const std::vector<std::string>& tok, size_t first, bool weak_may_be_dash,
                         const std::string& name, int line) {
  if (tok.size() < first + 3) bad(name, line, "array line too short");
  FixtureArray a;
  a.dtype = tok[first];
  if (!known_dtype(a.dtype)) bad(name, line, "unknown dtype '" + a.dtype + "'");
  const std::string& w = tok[first + 1];
  if (w == "-" && weak_may_be_dash)
    a.weak = -1;
  else if (w == "0" || w == "1")
    a.weak = w == "1";
  else
    bad(name, line, "bad weak flag '" + w + "'");
  size_t i = first + 2;
  for (; i < tok.size() && tok[i] != ":"; ++i) a.shape.push_back(parse_int(tok[i], name, line));
  if (i == tok.size()) bad(name, line, "missing ':'");
  for (++i; i < tok.size(); ++i) {
    // A weak scalar is a Python float: its full double value matters (0.1 + float64).
    if (a.is_float())
      a.floats.push_back(parse_real(tok[i], a.weak == 1 ? "float64" : a.dtype, name, line));
    else
      a.ints.push_back(parse_int(tok[i], name, line));
  }
  int64_t n =
      a.is_float() ? static_cast<int64_t>(a.floats.size()) : static_cast<int64_t>(a.ints.size());
  if (n != a.size())
    bad(name, line, "expected " + std::to_string(a.size()) + " values, got " + std::to_string(n));
  return a;
}

}  // namespace

int64_t FixtureArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool FixtureArray::is_float() const {
  return dtype == "float16" || dtype == "float32" || dtype == "float64";
}

int dtype_itemsize(const std::string& d) {
  if (d == "bool") return 1;
  if (d == "float16") return 2;
  if (d == "float64") return 8;
  return 4;
}

std::vector<uint8_t> FixtureArray::bytes() const {
  std::vector<uint8_t> out(static_cast<size_t>(size()) * dtype_itemsize(dtype));
  uint8_t* p = out.data();
  for (int64_t k = 0; k < size(); ++k) {
    if (dtype == "bool") {
      p[k] = ints[k] != 0;
    } else if (dtype == "int32") {
      int32_t v = static_cast<int32_t>(ints[k]);
      std::memcpy(p + 4 * k, &v, 4);
    } else if (dtype == "uint32") {
      uint32_t v = static_cast<uint32_t>(ints[k]);
      std::memcpy(p + 4 * k, &v, 4);
    } else if (dtype == "float16") {
      uint16_t v = half_bits_from_double(floats[k]);
      std::memcpy(p + 2 * k, &v, 2);
    } else if (dtype == "float32") {
      float v = static_cast<float>(floats[k]);
      std::memcpy(p + 4 * k, &v, 4);
    } else {
      double v = floats[k];
      std::memcpy(p + 8 * k, &v, 8);
    }
  }
  return out;
}

const std::vector<std::string>& Params::tokens(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw std::runtime_error("fixture case has no param '" + key + "'");
  return it->second;
}

std::string Params::str(const std::string& key) const {
  const auto& t = tokens(key);
  if (t.size() != 1) throw std::runtime_error("param '" + key + "' should have one token");
  return t[0];
}

int64_t Params::integer(const std::string& key) const { return std::stoll(str(key)); }

int64_t Params::integer(const std::string& key, int64_t fallback) const {
  return has(key) ? integer(key) : fallback;
}

double Params::real(const std::string& key) const { return std::strtod(str(key).c_str(), nullptr); }

std::vector<int64_t> Params::integers(const std::string& key) const {
  std::vector<int64_t> out;
  for (const auto& t : tokens(key)) out.push_back(std::stoll(t));
  return out;
}

std::vector<int> Params::ints(const std::string& key) const {
  std::vector<int> out;
  for (int64_t v : integers(key)) out.push_back(static_cast<int>(v));
  return out;
}

bool Params::is_none(const std::string& key) const {
  const auto& t = tokens(key);
  return t.size() == 1 && t[0] == "none";
}

std::vector<FixtureCase> parse_fixtures(std::istream& in, const std::string& name) {
  std::vector<FixtureCase> cases;
  std::optional<FixtureCase> cur;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty() || text[0] == '#') continue;
    auto tok = split_ws(text);
    const std::string& kw = tok[0];
    if (kw == "case") {
      if (cur) bad(name, line, "'case' before 'end'");
      if (tok.size() != 3) bad(name, line, "expected 'case <id> <op>'");
      cur.emplace();
      cur->id = tok[1];
      cur->op = tok[2];
      cur->line = line;
      continue;
    }
    if (!cur) bad(name, line, "'" + kw + "' outside a case");
    if (kw == "param") {
      if (tok.size() < 2) bad(name, line, "param without a key");
      cur->params.set(tok[1], std::vector<std::string>(tok.begin() + 2, tok.end()));
    } else if (kw == "input") {
      FixtureInput inp;
      inp.array = parse_array(tok, 1, false, name, line);
      inp.weak = inp.array.weak == 1;
      cur->inputs.push_back(std::move(inp));
    } else if (kw == "view") {
      if (cur->inputs.empty()) bad(name, line, "view before any input");
      if (tok.size() < 2) bad(name, line, "view without a kind");
      cur->inputs.back().views.push_back(
          {tok[1], std::vector<std::string>(tok.begin() + 2, tok.end())});
    } else if (kw == "expect") {
      cur->expects.push_back(parse_array(tok, 1, true, name, line));
    } else if (kw == "expect_error") {
      auto pos = text.find(' ');
      cur->error = pos == std::string::npos ? std::string() : text.substr(pos + 1);
    } else if (kw == "tol") {
      if (tok.size() != 3) bad(name, line, "expected 'tol <rtol> <atol>'");
      cur->rtol = std::strtod(tok[1].c_str(), nullptr);
      cur->atol = std::strtod(tok[2].c_str(), nullptr);
    } else if (kw == "end") {
      if (cur->expects.empty() && !cur->error)
        bad(name, line, "case " + cur->id + " expects nothing");
      cases.push_back(std::move(*cur));
      cur.reset();
    } else {
      bad(name, line, "unknown keyword '" + kw + "'");
    }
  }
  if (cur) bad(name, line, "missing 'end' for case " + cur->id);
  return cases;
}

std::vector<FixtureCase> read_fixture_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open fixture file " + path);
  return parse_fixtures(f, path);
}

uint16_t half_bits_from_double(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  uint16_t sign = static_cast<uint16_t>((b >> 48) & 0x8000);
  int exp = static_cast<int>((b >> 52) & 0x7ff);
  uint64_t mant = b & ((uint64_t{1} << 52) - 1);
  if (exp == 0x7ff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp == 0) return sign;  // double subnormals are far below half's range
  int e = exp - 1023;
  if (e > 15) return sign | 0x7c00;
  uint64_t full = mant | (uint64_t{1} << 52);
  // Half keeps 11 significant bits: 10 for normals; fewer below 2^-14.
  int shift = 42 + (e < -14 ? -14 - e : 0);
  if (shift > 53) return sign;  // below half the smallest subnormal
  uint64_t m = full >> shift;
  uint64_t rem = full & ((uint64_t{1} << shift) - 1);
  uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (m & 1))) ++m;
  if (e < -14) return sign | static_cast<uint16_t>(m);  // m == 0x400 is the smallest normal
  if (m == 0x800) {                                     // mantissa overflow: next binade
    m = 0x400;
    ++e;
    if (e > 15) return sign | 0x7c00;
  }
  return sign | static_cast<uint16_t>((e + 15) << 10) | static_cast<uint16_t>(m & 0x3ff);
}

double double_from_half_bits(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int exp = (h >> 10) & 0x1f;
  int m = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(m, -24);
  if (exp == 31) return m ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(m + 1024, exp - 25);
}

std::vector<double> decode_as_doubles(const std::vector<uint8_t>& bytes, const std::string& dtype) {
  size_t isz = static_cast<size_t>(dtype_itemsize(dtype));
  std::vector<double> out(bytes.size() / isz);
  const uint8_t* p = bytes.data();
  for (size_t k = 0; k < out.size(); ++k) {
    if (dtype == "bool") {
      out[k] = p[k];
    } else if (dtype == "int32") {
      int32_t v;
      std::memcpy(&v, p + 4 * k, 4);
      out[k] = v;
    } else if (dtype == "uint32") {
      uint32_t v;
      std::memcpy(&v, p + 4 * k, 4);
      out[k] = v;
    } else if (dtype == "float16") {
      uint16_t v;
      std::memcpy(&v, p + 2 * k, 2);
      out[k] = double_from_half_bits(v);
    } else if (dtype == "float32") {
      float v;
      std::memcpy(&v, p + 4 * k, 4);
      out[k] = v;
    } else {
      std::memcpy(&out[k], p + 8 * k, 8);
    }
  }
  return out;
}

}  // namespace kiln_test
