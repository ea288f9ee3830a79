// Backend: the device interface the frontend lowers to. Backends see Kernels and
// buffers only, never Arrays or primitives.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/decode_attention.h"
#include "backend/quantized_matmul.h"
#include "ir/kernel.h"

namespace kiln {

class Backend;

// A compiled kernel, owned by the backend that prepared it.
class Executable {
 public:
  virtual ~Executable() = default;
};

// Device memory with RAII: freed on its backend when the last reference goes. The
// constructor and destructor count it on its backend (Backend::buffer_counts), so no buffer
// escapes the counters.
class Buffer {
 public:
  Buffer(Backend* backend, int64_t handle, int64_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Backend& backend() const { return *backend_; }
  int64_t handle() const { return handle_; }
  int64_t bytes() const { return bytes_; }

 private:
  Backend* backend_;
  int64_t handle_;
  int64_t bytes_;
};
using BufferRef = std::shared_ptr<Buffer>;

// A backend's live Buffers (kiln::memory_stats): their number and bytes now, the most bytes
// ever live at once, and how many were ever allocated.
struct BufferCounts {
  int64_t buffers = 0, bytes = 0, peak_bytes = 0, allocations = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  // Whether kernels on this device can compute in `d` (WGSL has no 64-bit floats): library
  // functions that widen internally pick another formula where it cannot.
  virtual bool supports(DType) const { return true; }
  // Buffers one kernel may read besides its output: fusion stops below it (webgpu: the
  // device's storage-buffer bindings per shader stage, 10 in Chrome, minus the output's).
  virtual size_t max_kernel_inputs() const { return SIZE_MAX; }

  // A new buffer's contents are unspecified until written (the jit's pool reuses buffers, and
  // the wasm device does not clear them): callers write it whole before anything reads it.
  BufferRef allocate(int64_t bytes) {
    return std::make_shared<Buffer>(this, alloc(bytes), bytes);
  }
  BufferCounts buffer_counts() const;
  // The buffers this backend's own table holds, or -1 where it keeps none it can count. It
  // equals buffer_counts().buffers unless a free went missing below the Buffer layer.
  virtual int64_t backend_buffers() const { return -1; }
  virtual void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) = 0;
  // Copies `bytes` from one buffer to another on the device, in order with the dispatches
  // before and after it (a KV cache row written from a step's output). The default goes
  // through the host and needs synchronous reads; webgpu copies on the GPU.
  virtual void copy(int64_t src, int64_t src_offset, int64_t dst, int64_t dst_offset, int64_t bytes);
  // Synchronous reads exist only where the device allows them.
  virtual bool can_read_sync() const = 0;
  virtual void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) = 0;
  // Asynchronous reads always exist; `done` runs when the data is ready.
  virtual void read_async(int64_t handle, int64_t offset, int64_t bytes,
                          std::function<void(std::vector<uint8_t>)> done) = 0;
  // The same with an error path, for devices whose reads can fail after they started (webgpu:
  // device lost, a kernel that did not compile); exactly one of the two callbacks runs.
  virtual void read_async_checked(int64_t handle, int64_t offset, int64_t bytes,
                                  std::function<void(std::vector<uint8_t>)> done,
                                  std::function<void(std::string)> failed) {
    (void)failed;
    read_async(handle, offset, bytes, std::move(done));
  }

  // Whether a buffer still has device memory behind it: false for buffers of a webgpu device
  // that was lost and replaced. Pools of buffers drop such buffers instead of reusing them.
  virtual bool buffer_live(int64_t handle) const {
    (void)handle;
    return true;
  }

  // Whether pools should hand this device's free buffers out by age (oldest first) rather than
  // the last one given back: true where binding costs depend on buffer identity (webgpu caches
  // bind groups by the buffers bound), so that each call of a program gets the same buffers.
  virtual bool reuses_buffers_by_age() const { return false; }
  // Whether a dispatch costs more than recomputing a small vector expression in every block
  // of a matvec's output rows (webgpu: host encoding plus a GPU launch per kernel). jit then
  // reads such a vector inside the matvec instead of materializing it (jit_fusion.cpp); the
  // CPU devices keep the buffer, whose loads their SIMD matvec loops stream (wasm decode was
  // ~25 % slower with the expression in the loop).
  virtual bool prefers_fewer_kernels() const { return false; }
  // Whether prepare() takes kernels with a prelude (Kernel::prelude: a small full reduction
  // the kernel recomputes per workgroup instead of reading another kernel's buffer).
  virtual bool recomputes_preludes() const { return false; }
  // Whether packed quantized weights should keep each row's words contiguous (webgpu: a lane
  // of a matvec reads its own row's neighbouring words as one 128-bit load) rather than
  // interleave 16 rows (the CPU devices: their SIMD lanes are neighbouring rows).
  virtual bool prefers_contiguous_weight_rows() const { return false; }
  // Whether dispatch returns before the device has run the kernel (webgpu: it is recorded,
  // and the GPU runs it after the submit). A caller can then record its next piece of work
  // while the device runs the last (the LLM's greedy decode dispatches the next step before
  // reading the token); on the CPU devices the kernel has run when dispatch returns.
  virtual bool runs_asynchronously() const { return false; }

  virtual std::shared_ptr<Executable> prepare(const Kernel& kernel) = 0;
  // Runs a prepared kernel: inputs in Load-arg order, one output of kernel.size elements.
  virtual void dispatch(const Executable& exe, const std::vector<int64_t>& inputs,
                        int64_t output) = 0;

  // Routines: building blocks run on whole buffers outside the fused kernels (DESIGN.md,
  // decision 2). quantized_matmul (quantized_matmul.h) reads x, codes, d and mins (in that
  // order, each row-major from offset 0) and writes out [m, rows]; it exists on the devices
  // whose kernels run on the CPU (cpu: the reference; native and wasm: SIMD kernels).
  virtual bool has_quantized_matmul() const { return false; }
  virtual void quantized_matmul(const QuantMatmulShape& s, const std::vector<int64_t>& inputs, int64_t output);
  // decode_attention (decode_attention.h) reads its 6 operands at the shape's offsets in the
  // buffers `inputs` and writes out [rows, heads, head_dim]: the C++ reference on cpu, AVX2
  // (and AVX-512) kernels on native, a SIMD128 kernel on wasm (one row), WGSL kernels on
  // webgpu (one row; where it replaces the 6 kernels of the unfused attention). has_decode_attention: for one query row (a decode step);
  // has_prefill_attention: for several too (a prefill chunk).
  virtual bool has_decode_attention() const { return false; }
  virtual bool has_prefill_attention() const { return false; }
  virtual void decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& inputs, int64_t output);
  // Whether a decode step should run its attention as decode_attention by default (native
  // with AVX2: one pass over the cache rows in place of kernels that score every cache row
  // with a gather per SIMD lane). webgpu's use of it is the caller's option instead.
  virtual bool prefers_decode_attention() const { return false; }
  // The same for a prefill step's several query rows (native with AVX2: one pass over the keys
  // each block of rows attends, where the unfused kernels score every masked pair too).
  virtual bool prefers_prefill_attention() const { return false; }

 protected:
  friend class Buffer;
  virtual int64_t alloc(int64_t bytes) = 0;
  virtual void free(int64_t handle) = 0;

 private:
  // Atomic: buffers may be released on another thread (a read's callback, a pool worker).
  std::atomic<int64_t> live_buffers_{0}, live_bytes_{0}, peak_bytes_{0}, allocations_{0};
};

// The registry of devices by name ("cpu", "native" or "wasm", and "webgpu" once the JS
// runtime has a GPUDevice).
Backend& get_backend(const std::string& device);
// Adds a device found at run time (webgpu after init); replaces none that exists.
void register_backend(const std::string& name, std::unique_ptr<Backend> backend);
std::vector<std::string> available_devices();
const std::string& default_device();
void set_default_device(const std::string& device);  // throws on unknown devices

}  // namespace kiln
