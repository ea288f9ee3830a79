// Runs the bad-input tables (bad_input.h) and keeps them complete: a parser lists the free
// functions that the public headers (include/kiln/*.h and the headers they include) declare,
// and the test fails when one has no row, so a new public function needs a bad-input row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "bad_input.h"

#ifndef KILN_FIXTURE_DIR
#error "KILN_FIXTURE_DIR must name the tests/fixtures directory"
#endif

namespace bad_input {

namespace np = kiln::numpy;
using kiln::Array;

void expect_true(bool cond, const std::string& what) {
  if (!cond) throw std::logic_error("wrong result: " + what);
}

bool same_values(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i]) ? !std::isnan(got[i]) : got[i] != want[i]) return false;
  }
  return true;
}

std::vector<double> values(const Array& a) { return a.astype(kiln::float64).to_vector<double>(); }

std::vector<Row> all_rows() {
  std::vector<Row> all;
  for (auto part : {numpy_rows(), numpy_more_rows(), library_rows(), api_rows()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

namespace {

// Arrays that exist before every bad call: realized data of each dtype, a lazy expression
// never read before, a view and NaN/Inf data. They must read back unchanged after each row.
struct Sentinels {
  Array f = np::array(std::vector<float>{0, 1.5f, -2, 3}, {2, 2});
  Array i = np::array(std::vector<int32_t>{7, -8, 9}, {3});
  Array u = np::array(std::vector<uint32_t>{1, 4000000000u}, {2});
  Array b = np::array(std::vector<bool>{true, false}, {2});
  Array d = np::array(std::vector<double>{1e300, -0.0}, {2});
  Array special = np::array(std::vector<float>{NAN, INFINITY, -INFINITY}, {3});
  Array lazy = f * 2 + 1;
  Array view = np::transpose(f);

  std::string check() const {
    std::ostringstream err;
    auto want = [&](const char* name, const Array& a, const std::vector<double>& v) {
      if (!same_values(values(a), v)) err << name << " changed; ";
    };
    want("f", f, {0, 1.5, -2, 3});
    want("i", i, {7, -8, 9});
    want("u", u, {1, 4000000000.0});
    want("b", b, {1, 0});
    want("d", d, {1e300, -0.0});
    want("special", special, {NAN, INFINITY, -INFINITY});
    want("lazy", lazy, {1, 4, -3, 7});
    want("view", view, {0, -2, 1.5, 3});
    if (f.dtype() != kiln::float32 || f.shape() != kiln::Shape{2, 2}) err << "f's aval changed; ";
    return err.str();
  }
};

// Live arrays and device buffers; the jit pool's free buffers are left out (a failed trace
// may warm the pool, which is reuse, not a leak).
std::string counters() {
  kiln::MemoryStats s = kiln::memory_stats();
  std::ostringstream os;
  os << "arrays " << s.arrays;
  for (auto& d : s.devices) os << ", " << d.device << " buffers " << d.buffers - d.pooled_buffers << " bytes " << d.bytes - d.pooled_bytes;
  return os.str();
}

std::string run_one(const Row& r) {
  try {
    r.call();
  } catch (const kiln::Error& e) {
    std::string what = e.what();
    if (r.expect.empty()) return "threw on a valid input: " + what;
    for (auto& p : r.expect)
      if (what.find(p) == std::string::npos) return "message '" + what + "' lacks '" + p + "'";
    return "";
  } catch (const std::exception& e) {
    return std::string("threw a non-kiln exception: ") + e.what();
  } catch (...) {
    return "threw something that is not a std::exception";
  }
  return r.expect.empty() ? "" : "nothing was thrown";
}

}  // namespace

std::vector<std::string> run_rows(const std::vector<Row>& rows) {
  std::vector<std::string> failures;
  Sentinels s;
  s.lazy.eval();  // realized once, so that its buffer counts in `before`
  s.check();
  for (size_t k = 0; k < rows.size(); k++) {
    const std::string before = counters();
    std::string why = run_one(rows[k]);
    std::string broken = s.check();
    std::string after = counters();
    if (!broken.empty()) why += (why.empty() ? "" : "; ") + std::string("sentinels: ") + broken;
    if (after != before) why += std::string(why.empty() ? "" : "; ") + "counters " + before + " -> " + after;
    if (!why.empty()) failures.push_back(rows[k].fn + " (row " + std::to_string(k) + "): " + why);
  }
  return failures;
}

namespace {

// The headers that the public ones include: include/kiln/x.h includes "dir/y.h" from src.
std::vector<std::string> public_headers() {
  const std::string root = std::string(KILN_FIXTURE_DIR) + "/../..";
  const char* names[] = {"array", "debug", "fft", "io", "jit", "lax", "linalg", "memory",
                         "nn", "numpy", "optax", "random", "transforms"};
  std::vector<std::string> out;
  std::regex inc("#include \"([a-z]+/[a-z_]+\\.h)\"");
  for (const char* n : names) {
    std::ifstream in(root + "/include/kiln/" + n + ".h");
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, inc) && m[1].str().rfind("kiln/", 0) != 0) out.push_back(root + "/src/" + m[1].str());
    }
  }
  return out;
}

std::string strip_comments(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') i++;
      out += '\n';
    } else if (s.compare(i, 2, "/*") == 0) {
      i = s.find("*/", i);
      if (i == std::string::npos) break;
      i++;
    } else if (s[i] == '#') {  // preprocessor lines
      while (i < s.size() && s[i] != '\n') i++;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The name a declaration at namespace scope declares, if it is a function: the first
// identifier followed by '(' outside template brackets (operators by their symbol).
std::string function_name(const std::string& decl) {
  static const std::regex skip("^\\s*(using|typedef|extern|friend|struct|class|enum|template\\s+(class|struct))\\b");
  if (std::regex_search(decl, skip)) return "";
  std::smatch m;
  static const std::regex op("\\boperator\\s*([^\\s(]+)\\s*\\(");
  if (std::regex_search(decl, m, op)) return "operator" + m[1].str();
  int angle = 0;
  for (size_t i = 0; i < decl.size(); i++) {
    char c = decl[i];
    if (c == '<') angle++;
    if (c == '>') angle--;
    if (c != '(') continue;
    size_t e = i;
    while (e > 0 && decl[e - 1] == ' ') e--;
    size_t b = e;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(decl[b - 1])) || decl[b - 1] == '_')) b--;
    std::string id = decl.substr(b, e - b);
    if (angle == 0 && !id.empty() && id != "requires" && id != "decltype" && id != "noexcept") return id;
    // Skip a parenthesized requires-clause or template argument.
    int depth = 0;
    for (; i < decl.size(); i++) {
      if (decl[i] == '(') depth++;
      if (decl[i] == ')' && --depth == 0) break;
    }
  }
  return "";
}

// Free functions of namespace kiln (qualified below it: "numpy::add", "grad") declared in
// `file`; bodies of classes and inline functions are skipped.
void declared_functions(const std::string& file, std::set<std::string>& out) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = strip_comments(ss.str());
  std::vector<std::string> ns;
  std::vector<size_t> opened;  // components each `namespace a::b {` pushed
  std::string stmt;
  static const std::regex nsre("^\\s*namespace\\s+([\\w:]+)\\s*$");
  auto qualified = [&](const std::string& name) {
    std::string q;
    for (auto& n : ns) q += n + "::";
    q += name;
    return q.rfind("kiln::", 0) == 0 ? q.substr(6) : "";
  };
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (c == '{') {
      std::smatch m;
      if (std::regex_match(stmt, m, nsre)) {
        std::string n = m[1].str();
        for (size_t p; (p = n.find("::")) != std::string::npos;) {
          ns.push_back(n.substr(0, p));
          n = n.substr(p + 2);
        }
        ns.push_back(n);
        const std::string full = m[1].str();
        opened.push_back(std::count(full.begin(), full.end(), ':') / 2 + 1);
        stmt.clear();
        continue;
      }
      std::string name = function_name(stmt);
      bool is_type = std::regex_search(stmt, std::regex("^\\s*(template\\s*<[^>]*>\\s*)?(struct|class|enum|union)\\b"));
      if (!name.empty() && !is_type && !qualified(name).empty()) out.insert(qualified(name));
      for (int depth = 0; i < s.size(); i++) {  // skip the body
        if (s[i] == '{') depth++;
        if (s[i] == '}' && --depth == 0) break;
      }
      stmt.clear();
    } else if (c == '}') {
      // The end of a namespace: pop the components of the last `namespace a::b`.
      if (!opened.empty()) {
        ns.resize(ns.size() - opened.back());
        opened.pop_back();
      }
      stmt.clear();
    } else if (c == ';') {
      std::string name = function_name(stmt);
      if (!name.empty() && !qualified(name).empty()) out.insert(qualified(name));
      stmt.clear();
    } else {
      stmt += c == '\n' ? ' ' : c;
    }
  }
}

}  // namespace

std::set<std::string> public_functions() {
  std::set<std::string> out;
  for (auto& h : public_headers()) declared_functions(h, out);
  return out;
}

}  // namespace bad_input

namespace {

namespace np = kiln::numpy;
using kiln::Array;

TEST(BadInput, HeaderParserFindsTheFunctions) {
  // The parser must see the declarations it guards, or every later check would pass vacuously.
  std::set<std::string> fns = bad_input::public_functions();
  for (const char* f : {"numpy::add", "numpy::arange", "numpy::einsum", "lax::conv_general_dilated",
                        "linalg::svd", "numpy::fft::rfft", "nn::dot_product_attention",
                        "random::multivariate_normal", "optax::adam", "grad", "jit", "tree_map",
                        "memory_stats", "set_debug", "io::read_idx", "operator+", "shape_str"})
    EXPECT_TRUE(fns.count(f)) << f << " not found among " << fns.size() << " functions";
  EXPECT_FALSE(fns.count("numpy::detail::cast"));  // not a public header
  EXPECT_GT(fns.size(), 300u);
}

TEST(BadInput, EveryPublicFunctionHasARow) {
  std::set<std::string> rows;
  for (auto& r : bad_input::all_rows()) rows.insert(r.fn);
  std::string missing, unknown;
  std::set<std::string> fns = bad_input::public_functions();
  for (auto& f : fns)
    if (!rows.count(f)) missing += " " + f;
  for (auto& r : rows)
    if (!fns.count(r)) unknown += " " + r;
  EXPECT_EQ(missing, "") << "public functions without a bad-input row";
  EXPECT_EQ(unknown, "") << "rows naming no public function (misspelled?)";
}

void expect_no_failures(const std::vector<bad_input::Row>& rows) {
  auto failures = bad_input::run_rows(rows);
  ::testing::Test::RecordProperty("rows", int(rows.size()));
  std::printf("[ BadInput ] %zu rows, %zu failed\n", rows.size(), failures.size());
  std::string all;
  for (auto& f : failures) all += "\n  " + f;
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << rows.size() << " rows failed:" << all;
}

TEST(BadInput, Numpy) { expect_no_failures(bad_input::numpy_rows()); }
TEST(BadInput, NumpyMore) { expect_no_failures(bad_input::numpy_more_rows()); }
TEST(BadInput, Library) { expect_no_failures(bad_input::library_rows()); }
TEST(BadInput, Api) { expect_no_failures(bad_input::api_rows()); }

// The harness must be able to fail: a row that throws nothing, one with the wrong message,
// one that throws another exception type, and a valid one that keeps a buffer alive.
TEST(BadInput, HarnessCatchesBrokenRows) {
  using bad_input::err;
  EXPECT_EQ(bad_input::run_rows({err("numpy::add", [] { np::add(Array(1.0), Array(2.0)); })}).size(), 1u);
  EXPECT_EQ(bad_input::run_rows({err("numpy::add", [] { np::sum(Array(1.0), 3); })}).size(), 1u);
  EXPECT_EQ(bad_input::run_rows({err("numpy::add", [] { throw std::runtime_error("add"); })}).size(), 1u);
  static std::vector<Array> kept;
  EXPECT_EQ(bad_input::run_rows({bad_input::ok_row("numpy::add", [] { kept.push_back(np::ones({3}).eval()); })}).size(), 1u);
  kept.clear();
}

}  // namespace
