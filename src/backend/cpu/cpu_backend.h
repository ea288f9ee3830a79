// The cpu backend: a reference interpreter that evaluates Kernels exactly (each op is
// rounded to its dtype, as alu_eval defines). It is the oracle for every other backend.
#pragma once
#include <map>
#include <vector>

#include "backend/backend.h"

namespace kiln {

class CpuBackend : public Backend {
 public:
  const std::string& name() const override;
  void write(int64_t handle, int64_t offset, const void* data, int64_t bytes) override;
  bool can_read_sync() const override { return true; }
  void read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) override;
  void read_async(int64_t handle, int64_t offset, int64_t bytes,
                  std::function<void(std::vector<uint8_t>)> done) override;
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;
  int64_t live_buffers() const { return int64_t(buffers_.size()); }

 protected:
  int64_t alloc(int64_t bytes) override;
  void free(int64_t handle) override;

 private:
  std::vector<uint8_t>& buffer(int64_t handle);
  std::map<int64_t, std::vector<uint8_t>> buffers_;
  int64_t next_handle_ = 1;
};

}  // namespace kiln
