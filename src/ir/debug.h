// Debug logging and the kernel profiler, shared by the frontend and the backends.
//
// Levels (jax-js's setDebug): 1 compilations (jit programs, backend kernels), 2 generated
// code (WGSL; Wasm module sizes), 3 kernel expressions, 4 jit programs as jaxprs,
// 5 every dispatch. Messages go to stderr (the console under Emscripten) as "[kiln] ...".
// The starting level is KILN_DEBUG (a number), or 3 when KILN_LOG_KERNELS is set (the JS
// package reads KILN_DEBUG itself: a Wasm core's getenv does not see Node's environment).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace kiln {

void set_debug(int level);  // throws on levels outside 0..5
int debug_level();  // the current level, 0 (off) to 5
// Prints "[kiln] <what>" when the level is at least `level`; build `what` only when
// debug_level() >= level (the callers check, so quiet runs format nothing).
void debug_print(const std::string& what);
// Where debug_print's lines go (each with its "[kiln] " and newline); empty = stderr. For
// embedders and tests (a Wasm build cannot redirect its stderr).
void set_debug_sink(std::function<void(const std::string&)> sink);

// A kernel dispatch timed on the host: the kernel's run on cpu/native/wasm, the time to
// encode it on webgpu (the GPU runs it later). Milliseconds on the steady clock of the
// platform (performance.now() under Emscripten).
struct TraceEvent {
  std::string name;
  double start_ms = 0, duration_ms = 0;
};
void start_trace();                  // clears earlier events
std::vector<TraceEvent> stop_trace();  // the events since start_trace, in order
bool tracing();  // whether start_trace() is recording
double trace_clock_ms();  // the profiler's clock, in milliseconds
void add_trace_event(TraceEvent e);  // records e while tracing (backends call it)

}  // namespace kiln
