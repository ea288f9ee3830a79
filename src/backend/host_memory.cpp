// Host-memory buffers of the cpu and native backends (backend/host_memory.h).
#include "backend/host_memory.h"

#include <cstring>
#include <new>

#include "ir/error.h"

namespace kiln {

int64_t HostMemoryBackend::alloc(int64_t bytes) {
  Storage s;
  s.slack = slack_;
  try {
    s.bytes.assign(size_t(bytes + 2 * slack_), 0);
  } catch (const std::bad_alloc&) {
    // Not std::bad_alloc: the caller gets kiln's error type, and nothing is registered.
    fail(name(), "out of memory allocating ", bytes, " bytes");
  }
  int64_t h = next_handle_++;
  buffers_.emplace(h, std::move(s));
  return h;
}

void HostMemoryBackend::free(int64_t handle) { buffers_.erase(handle); }

HostMemoryBackend::Storage& HostMemoryBackend::buffer(int64_t handle) {
  auto it = buffers_.find(handle);
  if (it == buffers_.end()) fail(name(), "buffer ", handle, " does not exist");
  return it->second;
}

void HostMemoryBackend::quantized_matmul(const QuantMatmulShape& s, const std::vector<int64_t>& in, int64_t output) {
  uint8_t* data[5];
  int64_t bytes[5];
  for (int i = 0; i < 5; ++i) {
    Storage& b = buffer(i < 4 ? in[size_t(i)] : output);
    data[i] = b.data(), bytes[i] = b.size();
  }
  const QuantMatmulArgs a = quantized_matmul_args(s, data, bytes, name());
  void* ctx = nullptr;
  GroupSplitter split = quantized_splitter(s, &ctx);
  run_quantized_matmul(s, a, quantized_matvec(), split, ctx, nullptr, quantized_matmul_rows());
}

void HostMemoryBackend::decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& in,
                                         int64_t output) {
  uint8_t* data[7];
  int64_t bytes[7];
  for (int i = 0; i < 7; ++i) {
    Storage& b = buffer(i < 6 ? in[size_t(i)] : output);
    data[i] = b.data(), bytes[i] = b.size();
  }
  check_decode_attention_buffers(s, bytes, name());
  auto f = [&](int i) { return reinterpret_cast<const float*>(data[i]) + s.offset[i]; };
  const int32_t start = reinterpret_cast<const int32_t*>(data[5])[s.offset[5]];
  float* out = reinterpret_cast<float*>(data[6]);
  if (s.rows == 1) return decode_attention_kernel()(s, f(0), f(1), f(2), f(3), f(4), start, out);
  prefill_attention(s, f(0), f(1), f(2), f(3), f(4), start, out);
}

void HostMemoryBackend::write(int64_t handle, int64_t offset, const void* data, int64_t bytes) {
  auto& b = buffer(handle);
  if (offset < 0 || offset + bytes > b.size())
    fail(name() + ".write", "range [", offset, ", ", offset + bytes, ") is outside a buffer of ", b.size(), " bytes");
  if (bytes) std::memcpy(b.data() + offset, data, size_t(bytes));
}

void HostMemoryBackend::read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) {
  auto& b = buffer(handle);
  if (offset < 0 || offset + bytes > b.size())
    fail(name() + ".read", "range [", offset, ", ", offset + bytes, ") is outside a buffer of ", b.size(), " bytes");
  if (bytes) std::memcpy(out, b.data() + offset, size_t(bytes));
}

void HostMemoryBackend::read_async(int64_t handle, int64_t offset, int64_t bytes,
                                   std::function<void(std::vector<uint8_t>)> done) {
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  read_sync(handle, offset, bytes, out.data());
  done(std::move(out));
}

}  // namespace kiln
