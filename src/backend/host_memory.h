// Buffers in host memory, shared by the backends whose kernels run on this machine's CPU
// (cpu: the interpreter; native: compiled C++). Each buffer may carry zeroed slack on both
// sides of its data, so generated loads that stray a little out of range read 0.
#pragma once
#include <map>
#include <vector>

#include "backend/backend.h"

namespace kiln {

class HostMemoryBackend : public Backend {
 public:
  explicit HostMemoryBackend(int64_t slack = 0) : slack_(slack) {}
  void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) override;
  bool can_read_sync() const override { return true; }
  void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  void read_async(int64_t handle, int64_t offset, int64_t bytes,
                  std::function<void(std::vector<uint8_t>)> done) override;
  int64_t backend_buffers() const override { return int64_t(buffers_.size()); }
  bool has_quantized_matmul() const override { return true; }
  // Runs quantized_matvec() over the output groups, split by split_groups.
  void quantized_matmul(const QuantMatmulShape& s, const std::vector<int64_t>& inputs, int64_t output) override;
  // decode_attention_kernel() (the reference here; native: its AVX2 kernel where the CPU has
  // it, which the LLM runtime's decode steps then use: prefers_decode_attention).
  bool has_decode_attention() const override { return true; }
  bool has_prefill_attention() const override { return true; }
  void decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& inputs, int64_t output) override;

 protected:
  int64_t alloc(int64_t bytes) override;
  void free(int64_t handle) override;

  struct Storage {
    std::vector<uint8_t> bytes;  // slack + size + slack
    int64_t slack = 0;
    uint8_t* data() { return bytes.data() + slack; }
    int64_t size() const { return int64_t(bytes.size()) - 2 * slack; }
  };
  // The device's quantized matvec kernel (cpu: the reference) and how it splits the output
  // row groups over threads (cpu: none, nullptr).
  virtual QuantMatvecFn quantized_matvec() const { return &quantized_matvec_reference; }
  // The device's decode_attention kernel for one query row (cpu: the reference), and its run
  // of several rows (a prefill; cpu: the reference on the calling thread).
  virtual DecodeAttentionFn decode_attention_kernel() const { return &decode_attention_reference; }
  virtual void prefill_attention(const DecodeAttentionShape& s, const float* q, const float* keys,
                                 const float* values, const float* k, const float* v, int32_t start, float* out) {
    decode_attention_reference(s, q, keys, values, k, v, start, out);
  }
  // Its kernel for several activation rows at once (prefill) and the activation rounding that
  // kernel reads, or no kernel: the matvec per row.
  virtual QuantRowsKernel quantized_matmul_rows() const { return {}; }
  virtual GroupSplitter quantized_splitter(const QuantMatmulShape&, void** ctx) {
    *ctx = nullptr;
    return nullptr;
  }
  // The buffer behind a handle; a kiln::Error naming this backend when there is none.
  Storage& buffer(int64_t handle);

 private:
  std::map<int64_t, Storage> buffers_;
  int64_t next_handle_ = 1;
  int64_t slack_;
};

}  // namespace kiln
