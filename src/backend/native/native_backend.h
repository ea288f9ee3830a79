// The native backend: each Kernel becomes C++ compiled by the system compiler (cached by
// hash) and runs on a thread pool; host memory like the cpu backend. Not under Emscripten.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "backend/backend.h"

namespace kiln {

namespace native {
class ThreadPool;
}

class NativeBackend : public Backend {
 public:
  NativeBackend();
  ~NativeBackend() override;
  const std::string& name() const override;
  void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) override;
  bool can_read_sync() const override { return true; }
  void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  void read_async(int64_t handle, int64_t offset, int64_t bytes,
                  std::function<void(std::vector<uint8_t>)> done) override;
  // Plans the kernel; C++ is generated and compiled at its first dispatch, when the input
  // sizes (which decide which loads need bounds checks) are known.
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;
  int64_t live_buffers() const { return int64_t(buffers_.size()); }
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
  int64_t alloc(int64_t bytes) override;
  void free(int64_t handle) override;

 private:
  struct Storage {
    std::vector<uint8_t> bytes;  // kSlack + size + kSlack
    uint8_t* data() { return bytes.data() + kSlack; }
    int64_t size() const { return int64_t(bytes.size()) - 2 * kSlack; }
  };
  Storage& buffer(int64_t handle);
  std::map<int64_t, Storage> buffers_;
  int64_t next_handle_ = 1;
  int64_t interpreted_ = 0;
  int64_t min_work_;
  std::unique_ptr<native::ThreadPool> pool_;
};

}  // namespace kiln
