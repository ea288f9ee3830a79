// The native backend: each Kernel becomes C++ compiled by the system compiler (cached by
// hash) and runs on a thread pool; host memory like the cpu backend. Not under Emscripten.
#pragma once
#include <memory>

#include "backend/host_memory.h"

namespace kiln {

namespace native {
class ThreadPool;
}

class NativeBackend : public HostMemoryBackend {
 public:
  NativeBackend();
  ~NativeBackend() override;
  const std::string& name() const override;
  // Plans the kernel; C++ is generated and compiled at its first dispatch, when the input
  // sizes (which decide which loads need bounds checks) are known.
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;
  // Kernels that ran on the interpreter because the generator has no rule for an op
  // (an error instead when $KILN_NATIVE_STRICT=1).
  int64_t interpreted_kernels() const { return interpreted_; }
  // Kernels with less work than this (output elements x reduction length) run on the
  // interpreter: compiling costs ~70 ms, more than such a kernel ever saves when it runs a
  // few times. $KILN_NATIVE_MIN_WORK, default 256; 0 compiles every kernel.
  int64_t min_work() const { return min_work_; }
  void set_min_work(int64_t w) { min_work_ = w; }

  // Zeros on both sides of every buffer's data: loads of padded views that stray this far
  // outside read 0 (the interpreter's out-of-range value) without a bounds check. 2 KiB
  // covers the MNIST CNN's SAME padding (e.g. -58 floats for 5x5 on 28x28).
  static constexpr int64_t kSlack = 2048;

 protected:
  // quantized_matmul: the AVX2 kernel where the CPU has it, else SSE2 (qmatmul_x86.h), its
  // row groups split over the pool as a kernel's items are.
  QuantMatvecFn quantized_matvec() const override;
  // Prefill: a kernel that unpacks each weight group once for every prompt row: AVX512-VNNI or
  // AVX-VNNI where the CPU has them, else AVX2, all on the definition's int16 activations
  // unless $KILN_NATIVE_PREFILL_INT8=1 (qmatmul_x86.h).
  QuantRowsKernel quantized_matmul_rows() const override;
  GroupSplitter quantized_splitter(const QuantMatmulShape& s, void** ctx) override;
  // decode_attention: the AVX2 kernels where the CPU has it (decode_attention_x86.h), several
  // rows' split over the pool.
  DecodeAttentionFn decode_attention_kernel() const override;
  void prefill_attention(const DecodeAttentionShape& s, const float* q, const float* keys, const float* values,
                         const float* k, const float* v, int32_t start, float* out) override;

 public:
  // With the AVX2 kernel decode steps use decode_attention ($KILN_NATIVE_DECODE_ATTENTION=0:
  // the unfused kernels, for a before/after in one binary), and so do prefill steps
  // ($KILN_NATIVE_PREFILL_ATTENTION=0: the unfused kernels; =avx2: the AVX2 kernel where
  // the CPU has AVX-512 too).
  bool prefers_decode_attention() const override;
  bool prefers_prefill_attention() const override;

 private:
  int64_t interpreted_ = 0;
  int64_t min_work_;
  std::unique_ptr<native::ThreadPool> pool_;
};

}  // namespace kiln
