#include "ir/debug.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "ir/error.h"
#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#endif

namespace kiln {

namespace {

int initial_level() {
  if (const char* v = std::getenv("KILN_DEBUG"); v && *v) return std::atoi(v);
  const char* k = std::getenv("KILN_LOG_KERNELS");
  return k && *k && std::string(k) != "0" ? 3 : 0;
}

std::atomic<int> level{initial_level()};
std::atomic<bool> trace_on{false};
std::mutex trace_mu;
std::vector<TraceEvent> events;
std::mutex sink_mu;
std::function<void(const std::string&)> sink;

}  // namespace

void set_debug(int l) {
  if (l < 0 || l > 5) fail("set_debug", "got level ", l, ", expected 0 (off) to 5");
  level = l;
}

int debug_level() { return level.load(std::memory_order_relaxed); }

void debug_print(const std::string& what) {
  std::string line = "[kiln] " + what + (!what.empty() && what.back() == '\n' ? "" : "\n");
  std::lock_guard<std::mutex> lock(sink_mu);
  if (sink)
    sink(line);
  else
    std::fputs(line.c_str(), stderr);
}

void set_debug_sink(std::function<void(const std::string&)> s) {
  std::lock_guard<std::mutex> lock(sink_mu);
  sink = std::move(s);
}

void start_trace() {
  std::lock_guard<std::mutex> lock(trace_mu);
  events.clear();
  trace_on = true;
}

std::vector<TraceEvent> stop_trace() {
  std::lock_guard<std::mutex> lock(trace_mu);
  trace_on = false;
  std::vector<TraceEvent> out;
  out.swap(events);  // leaves the list empty, not moved-from
  return out;
}

bool tracing() { return trace_on.load(std::memory_order_relaxed); }

double trace_clock_ms() {
#ifdef __EMSCRIPTEN__
  return emscripten_get_now();
#else
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

void add_trace_event(TraceEvent e) {
  std::lock_guard<std::mutex> lock(trace_mu);
  if (trace_on) events.push_back(std::move(e));
}

}  // namespace kiln
