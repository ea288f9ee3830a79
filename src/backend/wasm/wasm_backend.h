// The `wasm` backend (Emscripten builds only): buffers live in the core's own linear
// memory, and each Kernel becomes a Wasm module that imports that memory (no copies).
#pragma once
#ifdef __EMSCRIPTEN__
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/wasm/wasm_codegen.h"

namespace kiln {

class WasmBackend : public Backend {
 public:
  // How dispatch enters a kernel: a call_indirect through the core's function table, or a
  // JS trampoline (EM_JS). docs/WASM.md has the measured costs; Table is the default.
  enum class CallMode { Table, Trampoline };

  const std::string& name() const override;
  void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) override;
  bool can_read_sync() const override { return true; }
  void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  void read_async(int64_t handle, int64_t offset, int64_t bytes,
                  std::function<void(std::vector<uint8_t>)> done) override;
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;

  void set_call_mode(CallMode m) { mode_ = m; }
  CallMode call_mode() const { return mode_; }
  // Codegen options for kernels prepared from now on (cached separately per option set).
  void set_options(const wasm::CodegenOptions& o) { opts_ = o; }
  const wasm::CodegenOptions& options() const { return opts_; }
  int64_t live_buffers() const { return int64_t(buffers_.size()); }
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
};

}  // namespace kiln
#endif  // __EMSCRIPTEN__
