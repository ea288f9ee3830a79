// kiln::memory_stats (frontend/memory.h): reads the backends' buffer counters, the jit pool's
// free lists and the live-array counter. Lives in the frontend because the pool and arrays do.
#include "frontend/memory.h"

#include "backend/backend.h"
#include "backend/peak.h"
#include "frontend/array_impl.h"
#include "frontend/jit_program.h"
#include "ir/error.h"

namespace kiln {

const DeviceMemoryStats& MemoryStats::device(const std::string& name) const {
  for (const DeviceMemoryStats& d : devices)
    if (d.device == name) return d;
  fail("memory_stats", "no device '", name, "'");
}

int64_t MemoryStats::buffers() const {
  int64_t n = 0;
  for (const DeviceMemoryStats& d : devices) n += d.buffers;
  return n;
}

int64_t MemoryStats::bytes() const {
  int64_t n = 0;
  for (const DeviceMemoryStats& d : devices) n += d.bytes;
  return n;
}

MemoryStats memory_stats() {
  MemoryStats s;
  s.arrays = frontend::LiveArrayCounter::live();
  for (const std::string& name : available_devices()) {
    const Backend& be = get_backend(name);
    BufferCounts c = be.buffer_counts();
    frontend::PooledBuffers p = frontend::pooled_buffers(be);
    DeviceMemoryStats d;
    d.device = name;
    d.buffers = c.buffers;
    d.bytes = c.bytes;
    d.peak_bytes = c.peak_bytes;
    d.allocations = c.allocations;
    d.pooled_buffers = p.buffers;
    d.pooled_bytes = p.bytes;
    d.backend_buffers = be.backend_buffers();
    s.devices.push_back(std::move(d));
  }
  return s;
}

void reset_peak_memory() {
  frontend::release_pooled_buffers();
  for (const std::string& name : available_devices()) reset_peak_bytes(get_backend(name));
}

}  // namespace kiln
