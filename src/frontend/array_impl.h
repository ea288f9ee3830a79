// ArrayImpl: what an Array handle points to. Every array is an expression over input
// buffers seen through a ShapeTracker; a realized array is a plain load of one buffer.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "frontend/array.h"
#include "ir/view.h"

namespace kiln::frontend {

// An array's type without its data: what shape and dtype rules compute.
struct Aval {
  Shape shape;
  DType dtype;
  bool weak = false;
  int64_t size() const { return prod(shape); }
  std::string str() const;  // "float32[2,3]"
};

struct Tracer;  // frontend/trace.h

// Counts live ArrayImpls for kiln::memory_stats. A member of ArrayImpl, so every way one is
// made (make_shared, copies) counts without each caller remembering to.
struct LiveArrayCounter {
  LiveArrayCounter();
  LiveArrayCounter(const LiveArrayCounter&);
  LiveArrayCounter& operator=(const LiveArrayCounter&) { return *this; }
  ~LiveArrayCounter();
  static int64_t live();
};

struct ArrayImpl {
  LiveArrayCounter counter;
  Aval aval;
  // Set when the array is a value inside a transformation (jvp, vmap, ...): it then has an
  // aval and device but no data, and the fields below are unused.
  std::shared_ptr<Tracer> tracer;
  std::string device;
  // The element at flat index i of st's bottom view is `exp` with gidx = i. Loads in exp
  // read `inputs` by position.
  AluExp exp;
  std::vector<BufferRef> inputs;
  ShapeTracker st;

  const Shape& shape() const { return aval.shape; }
  DType dtype() const { return aval.dtype; }
  bool is_realized() const;  // a contiguous load of inputs[0]
  // Realizes into a buffer on the device (dispatching one kernel if needed).
  void realize();
  const BufferRef& buffer();  // realizes, then returns the buffer
};

using ImplRef = std::shared_ptr<ArrayImpl>;

// `x` as (buffer, element offset): realized arrays and row-major views into a buffer (program
// outputs packed into one buffer) are read in place; anything else is realized (offset 0).
std::pair<BufferRef, int64_t> buffer_and_offset(const Array& x);

// Builds arrays.
ImplRef make_from_buffer(const Aval& aval, const std::string& device, BufferRef buf);
ImplRef make_from_exp(const Aval& aval, const std::string& device, AluExp exp,
                      std::vector<BufferRef> inputs);
ImplRef make_constant(const Aval& aval, const std::string& device, double value);
ImplRef with_view(const ImplRef& a, const Aval& aval, ShapeTracker st);

// Collects the inputs of a kernel under construction, deduplicating buffers.
struct KernelInputs {
  std::vector<BufferRef> buffers;
  int add(const BufferRef& b);
};

// The value of `a` at per-axis logical indices `idxs`, with its loads renumbered into
// `ins`. Masked (padded) positions read as zero.
AluExp expr_at(const ArrayImpl& a, const std::vector<AluExp>& idxs, KernelInputs& ins);

// Runs `k` on the device and returns the output buffer.
BufferRef run_kernel(const std::string& device, const Kernel& k, const std::vector<BufferRef>& ins);

// Records every kernel dispatched on this thread while alive (innermost recorder wins):
// tests count kernels with it and the docs print them. KILN_LOG_KERNELS=1 in the
// environment also prints each kernel to stderr.
class KernelRecorder {
 public:
  KernelRecorder();
  ~KernelRecorder();
  KernelRecorder(const KernelRecorder&) = delete;
  KernelRecorder& operator=(const KernelRecorder&) = delete;
  const std::vector<Kernel>& kernels() const { return kernels_; }
  void record(const Kernel& k) { kernels_.push_back(k); }
  // The innermost recorder on this thread, or null (for code that dispatches kernels
  // without run_kernel, such as jit's compiled programs).
  static KernelRecorder* current();

 private:
  KernelRecorder* prev_;
  std::vector<Kernel> kernels_;
};

// The index variable of an n-element output.
AluExp gidx_var(int64_t n);
AluExp ridx_var(int64_t n);

}  // namespace kiln::frontend
