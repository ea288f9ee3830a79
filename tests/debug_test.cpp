// The debug level (set_debug, jax-js's setDebug) and the kernel profiler (start_trace /
// stop_trace): what each level prints, and that dispatches become trace events only while
// tracing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace debug_test {

using kiln::Array;
using kiln::Fn;
using kiln::Tree;
namespace np = kiln::numpy;

namespace {

// Restores the level a test changed (others run in the same process).
struct DebugLevel {
  int saved = kiln::debug_level();
  ~DebugLevel() { kiln::set_debug(saved); }
};

// What debug_print writes while f runs.
std::string log_of(const std::function<void()>& f) {
  std::string out;
  kiln::set_debug_sink([&](const std::string& line) { out += line; });
  f();
  kiln::set_debug_sink(nullptr);
  return out;
}

Fn scaled_tanh() {
  return kiln::jit([](const std::vector<Tree>& a) { return Tree(np::tanh(a[0].as_array()) * 3.0f); });
}

}  // namespace

TEST(Debug, RejectsLevelsOutsideZeroToFive) {
  DebugLevel keep;
  EXPECT_THROW(kiln::set_debug(6), kiln::Error);
  EXPECT_THROW(kiln::set_debug(-1), kiln::Error);
  kiln::set_debug(5);
  EXPECT_EQ(kiln::debug_level(), 5);
}

TEST(Debug, LevelsPrintCompilesProgramsAndDispatches) {
  DebugLevel keep;
  Array x = np::array(std::vector<float>{0.5f, -1.0f, 2.0f}, {3});
  kiln::set_debug(0);
  EXPECT_EQ(log_of([&] { scaled_tanh()({x}).as_array().eval(); }), "");
  kiln::set_debug(1);
  std::string one = log_of([&] { scaled_tanh()({x}).as_array().eval(); });
  EXPECT_NE(one.find("[kiln] jit: compiled"), std::string::npos) << one;
  EXPECT_EQ(one.find("jit program:"), std::string::npos) << one;
  kiln::set_debug(4);
  std::string four = log_of([&] { scaled_tanh()({x}).as_array().eval(); });
  EXPECT_NE(four.find("jit program: { lambda"), std::string::npos) << four;
  EXPECT_NE(four.find("jit kernels:"), std::string::npos) << four;
  EXPECT_EQ(four.find("dispatch of"), std::string::npos) << four;
  kiln::set_debug(5);
  std::string five = log_of([&] { (x + 1.0f).eval(); });
  EXPECT_NE(five.find(": dispatch of 3 outputs"), std::string::npos) << five;
}

TEST(Profiler, TracesDispatchesOnlyWhileOn) {
  Array x = np::array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  kiln::start_trace();
  np::sum(x * 2.0f, {1}).eval();
  std::vector<kiln::TraceEvent> ev = kiln::stop_trace();
  ASSERT_GE(ev.size(), 1u);
  const kiln::TraceEvent& last = ev.back();
  EXPECT_NE(last.name.find("kernel [2 x 3]"), std::string::npos) << last.name;
  EXPECT_GE(last.duration_ms, 0.0);
  EXPECT_GT(last.start_ms, 0.0);
  (x + 1.0f).eval();
  EXPECT_TRUE(kiln::stop_trace().empty());  // nothing recorded once stopped
}

}  // namespace debug_test
