// The cpu backend: a reference interpreter that evaluates Kernels exactly (each op is
// rounded to its dtype, as alu_eval defines). It is the oracle for every other backend.
#pragma once
#include "backend/host_memory.h"

namespace kiln {

class CpuBackend : public HostMemoryBackend {
 public:
  const std::string& name() const override;
  std::shared_ptr<Executable> prepare(const Kernel& kernel) override;
  void dispatch(const Executable& exe, const std::vector<int64_t>& inputs, int64_t output) override;
};

}  // namespace kiln
