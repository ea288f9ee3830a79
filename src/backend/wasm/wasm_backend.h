// The `wasm` backend (Emscripten builds only): buffers live in the core's own linear
// memory, and each Kernel becomes a Wasm module that imports that memory (no copies).
#pragma once
#ifdef __EMSCRIPTEN__
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/wasm/wasm_codegen.h"

namespace kiln {

namespace wasm {
class ThreadPool;
}

class WasmBackend : public Backend {
 public:
  // How dispatch enters a kernel: a call_indirect through the core's function table, or a
  // JS trampoline (EM_JS). docs/WASM.md has the measured costs; Table is the default.
  enum class CallMode { Table, Trampoline };

  WasmBackend();
  ~WasmBackend() override;
  const std::string& name() const override;
  void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) override;
  bool can_read_sync() const override { return true; }
  void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  void read_async(int64_t handle, int64_t offset, int64_t bytes,
                  std::function<void(std::vector<uint8_t>)> done) override;
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;

  // quantized_matmul on the SIMD128 kernel (qmatmul_wasm.h), its row groups split over the
  // pool when the call is large enough.
  bool has_quantized_matmul() const override { return true; }
  void quantized_matmul(const QuantMatmulShape& s, const std::vector<int64_t>& inputs, int64_t output) override;
  // decode_attention on the SIMD128 kernel (decode_attention_wasm.h), its kv heads split over
  // the pool when the call is large enough; the LLM's decode steps use it in a one-thread core
  // (it scores only the attended rows, in one call per layer instead of ~6 generic kernels).
  bool has_decode_attention() const override { return true; }
  void decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& inputs, int64_t output) override;
  bool prefers_decode_attention() const override;

  void set_call_mode(CallMode m) { mode_ = m; }
  CallMode call_mode() const { return mode_; }
  // Codegen options for kernels prepared from now on (cached separately per option set).
  // shared_memory always follows the memory the core runs in, and fma is dropped where the
  // engine lacks Relaxed SIMD. By default fma is on where it has it ($KILN_WASM_FMA=0: off).
  void set_options(const wasm::CodegenOptions& o);
  const wasm::CodegenOptions& options() const { return opts_; }
  // Threads a large dispatch is split over, the calling thread included: 1 in a
  // single-threaded core; at most max_threads(), the worker pool of a threaded core plus
  // one (its size is fixed at load: $KILN_NUM_THREADS or Module.kilnThreads, docs/WASM.md).
  int threads() const { return threads_; }
  int max_threads() const { return max_threads_; }
  void set_threads(int n);
  // Dispatches with less work (elements x reduction steps x expression nodes) run on the
  // calling thread only ($KILN_WASM_PARALLEL_MIN_WORK overrides the measured default).
  int64_t parallel_min_work() const { return min_work_; }
  // The threshold while every pool worker sleeps (a multiple of parallel_min_work): waking
  // the pool costs more than a small kernel's split saves (wasm_backend.cpp).
  int64_t cold_parallel_min_work() const;
  // Whether a pool worker is awake (spinning after a job): then parallel_min_work applies.
  bool pool_awake() const;
  void set_parallel_min_work(int64_t w) { min_work_ = w; }
  bool shared_memory() const { return opts_.shared_memory; }
  // Whether this engine validates Relaxed SIMD (f32x4.relaxed_madd), probed at startup.
  bool relaxed_simd() const { return relaxed_simd_; }
  // Counters for tests and benchmarks: dispatches split over the pool, and chunks that pool
  // workers (not the calling thread) ran.
  int64_t split_dispatches() const { return split_dispatches_; }
  int64_t worker_chunks() const { return worker_chunks_.load(); }
  int64_t backend_buffers() const override { return int64_t(buffers_.size()); }
  int64_t cached_kernels() const { return int64_t(cache_.size()); }
  // The address of a buffer in linear memory (for tests and the JS layer).
  uint8_t* data(int64_t handle);

 protected:
  int64_t alloc(int64_t bytes) override;
  void free(int64_t handle) override;

 private:
  int64_t size_of(int64_t handle, const char* op) const;
  std::map<int64_t, int64_t> buffers_;  // address -> bytes
  std::unordered_map<std::string, std::shared_ptr<Executable>> cache_;
  CallMode mode_ = CallMode::Table;
  wasm::CodegenOptions opts_;
  int threads_ = 1, max_threads_ = 1;
  bool relaxed_simd_ = false;
  int64_t min_work_ = 0;
  std::unique_ptr<wasm::ThreadPool> pool_;  // started by the first split dispatch
  int64_t split_dispatches_ = 0;
  std::atomic<int64_t> worker_chunks_{0};
};

}  // namespace kiln
#endif  // __EMSCRIPTEN__
