// The cpu backend's buffers (host vectors) and its kernel dispatch through the interpreter.
#include "backend/cpu/cpu_backend.h"

#include <cstring>

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

int64_t CpuBackend::alloc(int64_t bytes) {
  int64_t h = next_handle_++;
  buffers_[h].assign(size_t(bytes), 0);
  return h;
}

void CpuBackend::free(int64_t handle) { buffers_.erase(handle); }

std::vector<uint8_t>& CpuBackend::buffer(int64_t handle) {
  auto it = buffers_.find(handle);
  if (it == buffers_.end()) fail("cpu", "buffer ", handle, " does not exist");
  return it->second;
}

void CpuBackend::write(int64_t handle, int64_t offset, const void* data, int64_t bytes) {
  auto& b = buffer(handle);
  if (offset < 0 || offset + bytes > int64_t(b.size()))
    fail("cpu.write", "range [", offset, ", ", offset + bytes, ") is outside a buffer of ", b.size(), " bytes");
  if (bytes) std::memcpy(b.data() + offset, data, size_t(bytes));
}

void CpuBackend::read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) {
  auto& b = buffer(handle);
  if (offset < 0 || offset + bytes > int64_t(b.size()))
    fail("cpu.read", "range [", offset, ", ", offset + bytes, ") is outside a buffer of ", b.size(), " bytes");
  if (bytes) std::memcpy(out, b.data() + offset, size_t(bytes));
}

void CpuBackend::read_async(int64_t handle, int64_t offset, int64_t bytes,
                            std::function<void(std::vector<uint8_t>)> done) {
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  read_sync(handle, offset, bytes, out.data());
  done(std::move(out));
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
