// The `webgpu` backend (Emscripten builds only): Kernels become WGSL (wgsl_codegen), and every
// device call goes to the JS runtime (js/src/webgpu/runtime.ts) that owns GPUDevice and GPUBuffers.
#pragma once
#ifdef __EMSCRIPTEN__
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "backend/blocking_read.h"
#include "backend/webgpu/wgsl_codegen.h"

namespace kiln {

// Nothing here blocks but read_blocking: alloc/write/dispatch only record work in the runtime
// (which batches dispatches into one command encoder and submits on readback), and reads are
// asynchronous, except the slow blocking reads a browser allows (dataSync, while_loop).
// Buffer handles are the runtime's integers; no GPU object crosses into C++.
class WebGpuBackend : public Backend, public BlockingReader {
 public:
  explicit WebGpuBackend(const webgpu::WgslParams& params) : params_(params) {}
  ~WebGpuBackend() override;
  const std::string& name() const override;
  bool supports(DType d) const override { return d != DType::Float64; }
  size_t max_kernel_inputs() const override { return size_t(std::max(1, params_.max_storage_buffers - 1)); }
  void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) override;
  void copy(int64_t src, int64_t src_offset, int64_t dst, int64_t dst_offset, int64_t bytes) override;
  bool can_read_sync() const override { return false; }
  void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  // Where the JS runtime has a blocking path (a browser's OffscreenCanvas with a webgpu
  // context); not in Node.js with Dawn.
  bool can_read_blocking() const override;
  void read_blocking(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  void read_async(int64_t handle, int64_t offset, int64_t bytes,
                  std::function<void(std::vector<uint8_t>)> done) override;
  // A read that can fail (device lost, a kernel's WGSL that did not compile, out of memory):
  // exactly one of `done` and `failed` runs, later, from the runtime's promise.
  void read_async_checked(int64_t handle, int64_t offset, int64_t bytes,
                          std::function<void(std::vector<uint8_t>)> done,
                          std::function<void(std::string)> failed) override;
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;

  const webgpu::WgslParams& params() const { return params_; }
  // A new GPUDevice replaced one that was lost (init("webgpu") again): handles below
  // `first_handle` were the old device's, so they are no longer live; cached kernels are
  // prepared again on their next dispatch, and reads still pending fail.
  void reset(const webgpu::WgslParams& params, int64_t first_handle);
  bool buffer_live(int64_t handle) const override { return handle >= first_handle_; }
  int64_t cached_kernels() const { return int64_t(cache_.size()); }
  int64_t backend_buffers() const override;  // the runtime's handle table (JS)
  bool reuses_buffers_by_age() const override { return true; }  // bind groups (runtime.ts)
  bool prefers_fewer_kernels() const override { return true; }
  bool recomputes_preludes() const override { return true; }
  bool prefers_contiguous_weight_rows() const override { return true; }
  bool runs_asynchronously() const override { return true; }
  // One WGSL kernel (wgsl_attention.h) instead of the unfused attention's six.
  bool has_decode_attention() const override { return true; }
  void decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& inputs, int64_t output) override;

  // Called back by the runtime (through exported C functions) when a read settles.
  uint8_t* read_buffer(int id, int64_t bytes);
  void read_settled(int id, bool ok);

 protected:
  int64_t alloc(int64_t bytes) override;
  void free(int64_t handle) override;

 private:
  struct PendingRead {
    std::vector<uint8_t> data;
    std::function<void(std::vector<uint8_t>)> done;
    std::function<void(std::string)> failed;
  };
  webgpu::WgslParams params_;
  std::unordered_map<std::string, std::shared_ptr<Executable>> cache_;
  std::map<int, PendingRead> reads_;
  // decode_attention's partial and merge pipelines by what their WGSL text depends on (the
  // shape, the scale's bits, the operands' offsets but the keys', the values' relative to the
  // keys'), and the device generation they were made for. A model has one or two entries.
  using AttentionKey = std::array<int64_t, 11>;
  struct AttentionPipelines {
    int partial = -1, merge = -1, generation = -1;
  };
  std::map<AttentionKey, AttentionPipelines> attention_pipelines_;
  int next_read_ = 1;
  int generation_ = 0;        // devices replaced so far
  int64_t first_handle_ = 0;  // the current device's first buffer handle
  std::vector<int32_t> dispatch_handles_;  // dispatch()'s handle list, reused
};

}  // namespace kiln
#endif  // __EMSCRIPTEN__
