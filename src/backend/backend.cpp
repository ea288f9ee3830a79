// The device registry, and Buffer's RAII release with the live-buffer counters.
#include "backend/backend.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#ifndef __EMSCRIPTEN__
#include "backend/native/native_backend.h"
#endif
#include "backend/wasm/wasm_backend.h"
#include "backend/peak.h"
#include "ir/error.h"

namespace kiln {

namespace {

// The peak each backend reports (buffer_counts) lives here, not in Backend, so that it can
// be restarted (reset_peak_bytes): a fixed table of (backend, peak) slots, claimed lock-free
// on a backend's first allocation, as Buffer's constructor runs on any thread.
struct PeakSlot {
  std::atomic<const Backend*> backend{nullptr};
  std::atomic<int64_t> peak{0};
};
PeakSlot peak_slots[16];

std::atomic<int64_t>* peak_of(const Backend* b) {
  for (PeakSlot& s : peak_slots) {
    const Backend* k = s.backend.load(std::memory_order_acquire);
    if (k == b) return &s.peak;
    if (k == nullptr && (s.backend.compare_exchange_strong(k, b) || k == b)) return &s.peak;
  }
  return nullptr;  // more backends than slots: buffer_counts falls back to the lifetime peak
}

void raise_peak(std::atomic<int64_t>& peak, int64_t live) {
  int64_t p = peak.load(std::memory_order_relaxed);
  while (live > p && !peak.compare_exchange_weak(p, live)) {
  }
}

}  // namespace

void reset_peak_bytes(const Backend& backend) {
  if (std::atomic<int64_t>* p = peak_of(&backend)) p->store(backend.buffer_counts().bytes);
}

Buffer::Buffer(Backend* backend, int64_t handle, int64_t bytes)
    : backend_(backend), handle_(handle), bytes_(bytes) {
  backend_->live_buffers_.fetch_add(1, std::memory_order_relaxed);
  backend_->allocations_.fetch_add(1, std::memory_order_relaxed);
  int64_t live = backend_->live_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  raise_peak(backend_->peak_bytes_, live);
  if (std::atomic<int64_t>* p = peak_of(backend_)) raise_peak(*p, live);
}

Buffer::~Buffer() {
  backend_->free(handle_);
  backend_->live_buffers_.fetch_sub(1, std::memory_order_relaxed);
  backend_->live_bytes_.fetch_sub(bytes_, std::memory_order_relaxed);
}

void Backend::quantized_matmul(const QuantMatmulShape&, const std::vector<int64_t>&, int64_t) {
  fail("quantized_matmul", "the ", name(), " device has no quantized_matmul routine (cpu, native and wasm have one)");
}

void Backend::decode_attention(const DecodeAttentionShape&, const std::vector<int64_t>&, int64_t) {
  fail("decode_attention", "the ", name(), " device has no decode_attention routine (cpu, native, wasm and webgpu have one)");
}

void Backend::copy(int64_t src, int64_t src_offset, int64_t dst, int64_t dst_offset, int64_t bytes) {
  if (!can_read_sync()) fail(name(), ".copy: the device has no copy of its own and no synchronous reads");
  std::vector<uint8_t> staged(size_t(std::max<int64_t>(bytes, 0)));
  read_sync(src, src_offset, bytes, staged.data());
  write(dst, dst_offset, staged.data(), bytes);
}

BufferCounts Backend::buffer_counts() const {
  BufferCounts c;
  c.buffers = live_buffers_.load();
  c.bytes = live_bytes_.load();
  const std::atomic<int64_t>* p = peak_of(this);
  c.peak_bytes = (p ? *p : peak_bytes_).load();
  c.allocations = allocations_.load();
  return c;
}

namespace {
std::map<std::string, std::unique_ptr<Backend>>& registry() {
  static std::map<std::string, std::unique_ptr<Backend>> r = [] {
    std::map<std::string, std::unique_ptr<Backend>> m;
    m["cpu"] = std::make_unique<CpuBackend>();
#ifdef __EMSCRIPTEN__
    m["wasm"] = std::make_unique<WasmBackend>();  // the core's own memory: web builds only
#else
    m["native"] = std::make_unique<NativeBackend>();  // needs a C++ compiler and dlopen
#endif
    return m;
  }();
  return r;
}
std::string& default_name() {
  static std::string d = "cpu";
  return d;
}
}  // namespace

Backend& get_backend(const std::string& device) {
  auto& r = registry();
  auto it = r.find(device);
  if (it == r.end()) {
    std::string names;
    for (auto& [k, v] : r) names += (names.empty() ? "" : ", ") + k;
    fail("device", "unknown device '", device, "', expected one of: ", names);
  }
  return *it->second;
}

std::vector<std::string> available_devices() {
  std::vector<std::string> out;
  for (auto& [k, v] : registry()) out.push_back(k);
  return out;
}

void register_backend(const std::string& name, std::unique_ptr<Backend> backend) {
  auto& r = registry();
  if (r.count(name)) fail("device", "device '", name, "' is already registered");
  r[name] = std::move(backend);
}

const std::string& default_device() { return default_name(); }

void set_default_device(const std::string& device) {
  get_backend(device);
  default_name() = device;
}

}  // namespace kiln
