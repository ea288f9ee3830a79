// The cpu backend: kernel dispatch through the interpreter (buffers: backend/host_memory).
#include "backend/cpu/cpu_backend.h"

#include "backend/cpu/cpu_interpreter.h"
#include "ir/error.h"

namespace kiln {

namespace {
struct CpuExecutable : Executable {
  Kernel kernel;
  cpu::Program body;
  std::optional<cpu::Program> epilogue;
};
}  // namespace

const std::string& CpuBackend::name() const {
  static const std::string n = "cpu";
  return n;
}

std::shared_ptr<Executable> CpuBackend::prepare(const Kernel& kernel) {
  auto exe = std::make_shared<CpuExecutable>();
  exe->kernel = kernel;
  exe->body = cpu::Program::compile(kernel.exp);
  if (kernel.reduction) exe->epilogue = cpu::Program::compile(kernel.reduction->epilogue);
  return exe;
}

void CpuBackend::dispatch(const Executable& e, const std::vector<int64_t>& inputs, int64_t output) {
  const auto& exe = static_cast<const CpuExecutable&>(e);
  const Kernel& k = exe.kernel;
  if (inputs.size() != k.inputs.size())
    fail("cpu.dispatch", "got ", inputs.size(), " inputs, expected ", k.inputs.size());
  std::vector<cpu::BufferView> views;
  for (size_t i = 0; i < inputs.size(); i++) {
    auto& b = buffer(inputs[i]);
    views.push_back({b.data(), k.inputs[i], int64_t(b.size()) / itemsize(k.inputs[i])});
  }
  auto& ob = buffer(output);
  DType odt = k.out_dtype();
  if (int64_t(ob.size()) < k.size * itemsize(odt))
    fail("cpu.dispatch", "output buffer of ", ob.size(), " bytes is too small for ", k.size, " ", dtype_name(odt));
  cpu::run_kernel(k, exe.body, exe.epilogue ? &*exe.epilogue : nullptr, views,
                  {ob.data(), odt, k.size});
}

}  // namespace kiln
