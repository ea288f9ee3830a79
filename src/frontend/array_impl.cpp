// ArrayImpl: lazy expressions, their realization into buffers, and expression lookup
// through views.
#include "frontend/array_impl.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "backend/dispatch.h"
#include "ir/debug.h"

namespace kiln::frontend {

namespace {
std::atomic<int64_t> live_arrays{0};
}
LiveArrayCounter::LiveArrayCounter() { live_arrays.fetch_add(1, std::memory_order_relaxed); }
LiveArrayCounter::LiveArrayCounter(const LiveArrayCounter&) {
  live_arrays.fetch_add(1, std::memory_order_relaxed);
}
LiveArrayCounter::~LiveArrayCounter() { live_arrays.fetch_sub(1, std::memory_order_relaxed); }
int64_t LiveArrayCounter::live() { return live_arrays.load(); }

std::string Aval::str() const {
  std::ostringstream os;
  os << dtype_name(dtype) << "[";
  for (size_t i = 0; i < shape.size(); i++) os << (i ? "," : "") << shape[i];
  os << "]";
  return os.str();
}

AluExp gidx_var(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, std::max<int64_t>(n - 1, 0)); }
AluExp ridx_var(int64_t n) { return AluExp::var(VarId::Ridx, DType::Int32, std::max<int64_t>(n - 1, 0)); }

bool ArrayImpl::is_realized() const {
  if (tracer) return false;
  return exp.op() == AluOp::Load && exp.src(0).op() == AluOp::Var &&
         exp.src(0).node().arg == int(VarId::Gidx) && st.is_contiguous() &&
         inputs.size() == 1 && inputs[0]->bytes() >= aval.size() * itemsize(aval.dtype);
}

int KernelInputs::add(const BufferRef& b) {
  for (size_t i = 0; i < buffers.size(); i++)
    if (buffers[i] == b) return int(i);
  buffers.push_back(b);
  return int(buffers.size() - 1);
}

AluExp expr_at(const ArrayImpl& a, const std::vector<AluExp>& idxs, KernelInputs& ins) {
  auto [flat, valid] = a.st.to_index(idxs);
  std::vector<int> map;
  for (auto& b : a.inputs) map.push_back(ins.add(b));
  AluExp e = a.exp.remap_loads([&](int i) { return map[size_t(i)]; }).substitute(VarId::Gidx, flat);
  return AluExp::where(valid, e, AluExp::constant(e.dtype(), 0));
}

namespace {
thread_local KernelRecorder* current_recorder = nullptr;
}  // namespace

KernelRecorder::KernelRecorder() : prev_(current_recorder) { current_recorder = this; }
KernelRecorder::~KernelRecorder() { current_recorder = prev_; }
KernelRecorder* KernelRecorder::current() { return current_recorder; }

BufferRef run_kernel(const std::string& device, const Kernel& k, const std::vector<BufferRef>& ins) {
  Backend& be = get_backend(device);
  BufferRef out = be.allocate(std::max<int64_t>(k.size, 1) * itemsize(k.out_dtype()));
  if (k.size == 0) return out;
  if (current_recorder) current_recorder->record(k);
  if (debug_level() >= 3) debug_print(device + ": " + k.to_string());
  std::vector<int64_t> handles;
  for (auto& b : ins) handles.push_back(b->handle());
  auto exe = be.prepare(k);
  dispatch_kernel(be, *exe, k, handles, out->handle());
  return out;
}

void ArrayImpl::realize() {
  if (tracer)
    throw Error("cannot read the value of a traced array inside jvp/vmap/grad (shape " +
                aval.str() + "): its value is not known while the function is transformed; "
                "use only array operations on it, or compute the value outside the transformation");
  if (is_realized()) return;
  int64_t n = aval.size();
  KernelInputs ins;
  Kernel k;
  k.size = n;
  AluExp e = expr_at(*this, unravel(gidx_var(n), aval.shape), ins);
  k.exp = AluExp::cast(aval.dtype, e);
  k.inputs.assign(ins.buffers.size(), DType::Float32);
  // Input dtypes come from the loads that read them.
  k.exp.visit([&](const AluNode& node) {
    if (node.op == AluOp::Load) k.inputs[size_t(node.arg)] = node.dtype;
  });
  BufferRef out = run_kernel(device, k, ins.buffers);
  exp = AluExp::load(aval.dtype, 0, gidx_var(n));
  inputs = {out};
  st = ShapeTracker::contiguous(aval.shape);
}

const BufferRef& ArrayImpl::buffer() {
  realize();
  return inputs[0];
}

std::pair<BufferRef, int64_t> buffer_and_offset(const Array& x) {
  const auto& a = x.impl();
  const auto& views = a->st.views();
  if (a->inputs.size() == 1 && views.size() == 1 && !views[0].mask && a->exp.op() == AluOp::Load &&
      a->exp.src(0).op() == AluOp::Var && a->exp.src(0).node().arg == int(VarId::Gidx) &&
      View::has_contiguous_strides(a->aval.shape, views[0].strides) &&
      a->inputs[0]->bytes() >= (views[0].offset + a->aval.size()) * itemsize(a->aval.dtype))
    return {a->inputs[0], views[0].offset};
  return {a->buffer(), 0};
}

ImplRef make_from_buffer(const Aval& aval, const std::string& device, BufferRef buf) {
  auto a = std::make_shared<ArrayImpl>();
  a->aval = aval;
  a->device = device;
  a->exp = AluExp::load(aval.dtype, 0, gidx_var(aval.size()));
  a->inputs = {std::move(buf)};
  a->st = ShapeTracker::contiguous(aval.shape);
  return a;
}

ImplRef make_from_exp(const Aval& aval, const std::string& device, AluExp exp,
                      std::vector<BufferRef> inputs) {
  auto a = std::make_shared<ArrayImpl>();
  a->aval = aval;
  a->device = device;
  a->exp = std::move(exp);
  a->inputs = std::move(inputs);
  a->st = ShapeTracker::contiguous(aval.shape);
  return a;
}

ImplRef make_constant(const Aval& aval, const std::string& device, double value) {
  return make_from_exp(aval, device, AluExp::constant(aval.dtype, value), {});
}

ImplRef with_view(const ImplRef& a, const Aval& aval, ShapeTracker st) {
  auto b = std::make_shared<ArrayImpl>(*a);
  b->aval = aval;
  b->st = std::move(st);
  return b;
}

}  // namespace kiln::frontend
