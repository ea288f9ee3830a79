// Runs the ONNX backend node tests (Debian's libonnx-testdata: model.onnx with
// test_data_set_*/input_*.pb and output_*.pb) through kiln::onnx on the cpu device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "backend/backend.h"
#include "tests/onnx_test_util.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>

// Emscripten's getenv does not see Node's environment, so ask process.env directly.
EM_JS(int, kiln_onnx_test_env, (const char* name, char* buf, int n), {
  var v = typeof process != 'undefined' ? process.env[UTF8ToString(name)] : undefined;
  if (v === undefined) return 0;
  stringToUTF8(v, buf, n);
  return 1;
});
#endif

namespace onnx_node_tests_test {

namespace {

namespace fs = std::filesystem;

// An environment variable, or "" when unset (under Node too).
std::string env(const char* name) {
#ifdef __EMSCRIPTEN__
  char buf[4096];
  return kiln_onnx_test_env(name, buf, sizeof buf) ? std::string(buf) : std::string();
#else
  const char* v = std::getenv(name);
  return v ? v : "";
#endif
}

// Where Debian's libonnx-testdata (installed by `make setup`) puts the node tests;
// KILN_ONNX_NODE_TESTS overrides it.
std::string node_test_dir() {
  const std::string dir = env("KILN_ONNX_NODE_TESTS");
  return dir.empty() ? "/usr/share/libonnx-testdata/data/node" : dir;
}

enum class Outcome { Pass, Fail, Error, Unsupported };
const char* const kOutcomeNames[] = {"pass", "fail", "error", "unsupported"};

struct Result {
  std::string test, op;
  Outcome outcome = Outcome::Pass;
  std::string detail;
};

// The op a test checks: its single node's op type; for the composite (expanded, function)
// tests, the known op whose name, lowercased without underscores, the test name starts with.
std::string op_of(const std::string& test, const kiln::formats::OnnxModel& m, const std::set<std::string>& ops) {
  if (m.graph.nodes.size() == 1) return m.graph.nodes[0].op_type;
  std::string flat;
  for (char ch : test.substr(5)) if (ch != '_') flat += ch;
  std::string best;
  for (const std::string& op : ops) {
    std::string key;
    for (char ch : op) key += char(std::tolower(ch));
    if (flat.rfind(key, 0) == 0 && key.size() > best.size()) best = op;
  }
  return best.empty() ? (m.graph.nodes.empty() ? "?" : m.graph.nodes[0].op_type) : best;
}

// Loads the model and runs every data set. Load-time refusals are "unsupported"; other
// kiln::Errors "error"; any other exception escapes (a crash fails the whole test).
Result run_one(const fs::path& dir) {
  Result r{dir.filename().string(), "", Outcome::Pass, ""};
  const std::vector<uint8_t> bytes = kiln_test::read_bytes((dir / "model.onnx").string());
  kiln::onnx::Model model;
  try {
    model = kiln::onnx::Model::load(bytes);
  } catch (const kiln::Error& e) {
    return {r.test, "", Outcome::Unsupported, e.what()};
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  try {
    for (const fs::path& set : sets) {
      std::map<std::string, kiln::Array> feeds;
      for (size_t i = 0; i < model.input_names().size(); ++i)
        feeds[model.input_names()[i]] = kiln_test::read_tensor_pb((set / ("input_" + std::to_string(i) + ".pb")).string());
      const auto outs = model.run(feeds);
      for (size_t j = 0; j < model.output_names().size(); ++j) {
        const kiln::Array want = kiln_test::read_tensor_pb((set / ("output_" + std::to_string(j) + ".pb")).string());
        const std::string diff = kiln_test::allclose_mismatch(outs.at(model.output_names()[j]), want);
        if (!diff.empty())
          return {r.test, "", Outcome::Fail, set.filename().string() + " output " + std::to_string(j) + ": " + diff};
      }
    }
  } catch (const kiln::Error& e) {
    return {r.test, "", Outcome::Error, e.what()};
  }
  return r;
}

std::set<std::string> read_lines(const std::string& path) {
  std::set<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(line);
  return out;
}

// bench/results/onnx_node_tests.md's table: per op, how many tests pass, fail, error or are
// unsupported, then the totals and every non-passing test with its reason.
void write_table(const std::string& path, const std::vector<Result>& results) {
  std::map<std::string, std::array<int, 4>> by_op;
  std::array<int, 4> total{};
  for (const Result& r : results) ++by_op[r.op][size_t(r.outcome)], ++total[size_t(r.outcome)];
  std::ofstream out(path);
  out << "| op | pass | fail | error | unsupported |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& [op, n] : by_op)
    out << "| " << op << " | " << n[0] << " | " << n[1] << " | " << n[2] << " | " << n[3] << " |\n";
  out << "| **total (" << results.size() << ")** | **" << total[0] << "** | **" << total[1] << "** | **" << total[2]
      << "** | **" << total[3] << "** |\n\n";
  for (const Result& r : results) {
    if (r.outcome == Outcome::Pass) continue;
    std::string d = r.detail.substr(0, 220);
    std::replace(d.begin(), d.end(), '|', '/');
    std::replace(d.begin(), d.end(), '\n', ' ');
    out << "- `" << r.test << "` " << kOutcomeNames[size_t(r.outcome)] << ": " << d << "\n";
  }
}

// The suite runs on the cpu interpreter (the oracle; no kernel compilation, so all 932
// tests take about a second); KILN_ONNX_NODE_DEVICE picks another device for a report.
class OnDevice {
 public:
  OnDevice() : saved_(kiln::default_device()) {
    const std::string d = env("KILN_ONNX_NODE_DEVICE");
    kiln::set_default_device(d.empty() ? "cpu" : d);
  }
  ~OnDevice() { kiln::set_default_device(saved_); }

 private:
  std::string saved_;
};

// Every node test runs; the test fails on a crash (any exception but kiln::Error) and on a
// test in tests/fixtures/onnx_node_tests/expected_pass.txt that no longer passes, so
// coverage only grows. KILN_ONNX_NODE_TABLE=<file> writes the per-op table and
// KILN_ONNX_NODE_PASS_LIST=<file> the list of passing tests (to update the expected list).
TEST(OnnxNodeTests, ExpectedPassesStillPass) {
  const OnDevice on_device;
  const std::string root = node_test_dir();
  ASSERT_TRUE(fs::is_directory(root)) << root << " is missing: `make setup` installs libonnx-testdata";
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<Result> results;
  std::set<std::string> single_ops;
  for (const fs::path& d : dirs) {
    results.push_back(run_one(d));
    const std::vector<uint8_t> bytes = kiln_test::read_bytes((d / "model.onnx").string());
    const kiln::formats::OnnxModel m = kiln::formats::parse_onnx_model(bytes);
    if (m.graph.nodes.size() == 1) single_ops.insert(m.graph.nodes[0].op_type);
  }
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::vector<uint8_t> bytes = kiln_test::read_bytes((dirs[i] / "model.onnx").string());
    results[i].op = op_of(results[i].test, kiln::formats::parse_onnx_model(bytes), single_ops);
  }
  if (const std::string table = env("KILN_ONNX_NODE_TABLE"); !table.empty()) write_table(table, results);
  if (const std::string list = env("KILN_ONNX_NODE_PASS_LIST"); !list.empty()) {
    std::ofstream out(list);
    out << "# ONNX node tests that pass on the " << kiln::default_device()
        << " device (tests/onnx_node_tests_test.cpp); one a line.\n";
    for (const Result& r : results)
      if (r.outcome == Outcome::Pass) out << r.test << "\n";
  }
  const std::set<std::string> expected = read_lines(std::string(KILN_FIXTURE_DIR) + "/onnx_node_tests/expected_pass.txt");
  ASSERT_FALSE(expected.empty());
  int passed = 0;
  for (const Result& r : results) {
    passed += r.outcome == Outcome::Pass;
    if (expected.count(r.test) && r.outcome != Outcome::Pass)
      ADD_FAILURE() << r.test << " is in the expected-pass list but gave " << kOutcomeNames[size_t(r.outcome)] << ": "
                    << r.detail;
  }
  std::cout << "[onnx node tests] " << passed << " of " << results.size() << " pass on " << kiln::default_device()
            << " (expected at least " << expected.size() << ")\n";
}

}  // namespace

}  // namespace onnx_node_tests_test
