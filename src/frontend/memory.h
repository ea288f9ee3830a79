// Live memory counters (kiln::memory_stats, the JS package's memory()): arrays, and each
// device's buffers as the backend layer counts them, with those the jit's pool keeps for reuse.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

// The counters of one device.
struct DeviceMemoryStats {
  std::string device;
  int64_t buffers = 0;      // live device buffers: arrays' data, jit constants, pooled ones
  int64_t bytes = 0;        // their bytes (as requested; a pooled buffer has its size class)
  int64_t peak_bytes = 0;   // the most bytes live at once since the process started
  int64_t allocations = 0;  // buffers ever allocated (grows while the pools warm up)
  int64_t pooled_buffers = 0, pooled_bytes = 0;  // of `buffers`: free, kept by jit for reuse
  // The buffers the backend's own table holds (-1 where it keeps none, e.g. webgpu, whose
  // table is in JS): equal to `buffers` unless a release went missing below the Buffer layer.
  int64_t backend_buffers = -1;
};

// What memory_stats() returns: live arrays, and the counters of every device.
struct MemoryStats {
  int64_t arrays = 0;  // live array objects (handles share one), tracers included
  std::vector<DeviceMemoryStats> devices;  // every registered device, by name
  // The entry of `device`; kiln::Error for an unknown device.
  const DeviceMemoryStats& device(const std::string& device) const;
  int64_t buffers() const;  // summed over devices
  int64_t bytes() const;
};

// A snapshot of the counters. Cheap (no device is synchronized): call it every step. The
// counters are exact, so a loop that leaks nothing shows the same numbers at every step once
// its caches and pools are warm.
MemoryStats memory_stats();

// Frees the buffers jit's pool keeps for reuse and restarts every device's peak_bytes at the
// bytes live now, so that `memory_stats().device(d).peak_bytes - bytes` after some work is the
// most memory that work held at once (buffers the pool refills during it count as held).
void reset_peak_memory();

}  // namespace kiln
