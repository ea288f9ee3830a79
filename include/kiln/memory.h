// Public: live memory counters, kiln::memory_stats() (arrays; per device: buffers, bytes, peak,
// jit-pooled buffers), for finding leaks; the JS package's memory() reads the same counters.
#pragma once
#include "frontend/memory.h"
