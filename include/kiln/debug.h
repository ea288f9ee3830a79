// Public: the debug level (kiln::set_debug, jax-js's setDebug) and the kernel profiler
// (kiln::start_trace / stop_trace, jax-js's profiler.startTrace / stopTrace).
#pragma once
#include "ir/debug.h"
