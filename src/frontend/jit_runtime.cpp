// Running a compiled Program: bind argument buffers, dispatch the prepared kernels in order,
// and recycle temporaries through a size-class buffer pool so steady-state calls allocate
// nothing on the device.
#include <algorithm>
#include <map>
#include <mutex>

#include "frontend/control.h"
#include "frontend/routine.h"
#include "frontend/jit_program.h"
#include "backend/dispatch.h"
#include "ir/debug.h"

namespace kiln::frontend {

namespace {

// Free buffers by (backend, size class). Size classes are powers of two from 256 bytes, so
// a buffer fits every request of its class; at most kMaxPooledBytes per pool are kept.
class BufferPool {
 public:
  BufferRef take(Backend& be, int64_t bytes) {
    int64_t cls = size_class(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& v = free_[{&be, cls}];
      while (!v.empty()) {
        // The last one given back (warm in cache), or by age where the device asks for it: the
        // oldest free buffer depends only on which are free, not on the order they came back,
        // so each call of a program binds the same buffers (webgpu's bind groups stay cached).
        auto it = be.reuses_buffers_by_age() ? std::min_element(v.begin(), v.end(), older) : v.end() - 1;
        BufferRef b = std::move(*it);
        v.erase(it);
        pooled_ -= cls;
        if (be.buffer_live(b->handle())) return b;  // else its device was lost: drop it
      }
    }
    return be.allocate(cls);
  }
  void give(BufferRef b) {
    if (!b || b.use_count() != 1) return;  // still referenced elsewhere: not ours to reuse
    if (!b->backend().buffer_live(b->handle())) return;
    int64_t cls = b->bytes();
    if (cls != size_class(cls)) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (pooled_ + cls > kMaxPooledBytes) return;
    pooled_ += cls;
    free_[{&b->backend(), cls}].push_back(std::move(b));
  }
  void clear() {
    std::map<std::pair<const Backend*, int64_t>, std::vector<BufferRef>> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop.swap(free_);
      pooled_ = 0;
    }
  }  // freed here, outside the lock
  PooledBuffers counts(const Backend& be) {
    PooledBuffers c;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, v] : free_)
      if (key.first == &be) {
        c.buffers += int64_t(v.size());
        c.bytes += int64_t(v.size()) * key.second;
      }
    return c;
  }

 private:
  static constexpr int64_t kMaxPooledBytes = int64_t(256) << 20;
  static bool older(const BufferRef& a, const BufferRef& b) { return a->handle() < b->handle(); }
  static int64_t size_class(int64_t bytes) {
    int64_t c = 256;
    while (c < bytes) c <<= 1;
    return c;
  }
  std::mutex mu_;
  std::map<std::pair<const Backend*, int64_t>, std::vector<BufferRef>> free_;
  int64_t pooled_ = 0;
};

BufferPool& pool() {
  static BufferPool* p = new BufferPool();  // never destroyed: backends outlive it
  return *p;
}

// Runs a loop or branch on the buffers of its operand slots (control_run.cpp: the bodies'
// own compiled programs, in a C++ loop) and binds each result's buffer to its slot.
void run_control_step(const Program& p, const ProgramStep& st, std::vector<BufferRef>& bufs) {
  std::vector<Aval> avals = st.control->in_avals();
  std::vector<Array> args;
  for (size_t i = 0; i < st.ins.size(); i++) args.push_back(Array(make_from_buffer(avals[i], p.device, bufs[size_t(st.ins[i])])));
  std::vector<Array> r = run_control(*st.control, args);
  for (size_t i = 0; i < r.size(); i++) bufs[size_t(st.outs[i])] = r[i].impl()->buffer();
}

}  // namespace

PooledBuffers pooled_buffers(const Backend& be) { return pool().counts(be); }

void release_pooled_buffers() { pool().clear(); }

// How deep in programs this thread runs: a program run by a control step of another (a
// loop body, a checkpoint's recomputation) returns its outputs into that program's slots.
static thread_local int program_depth = 0;

std::vector<Array> run_program(const Program& p, const std::vector<BufferRef>& args) {
  Backend& be = get_backend(p.device);
  struct Depth {
    bool nested = program_depth++ > 0;
    ~Depth() { program_depth--; }
  } depth;
  std::vector<BufferRef> bufs(p.slots.size());
  for (size_t s = 0; s < p.slots.size(); s++) {
    const Slot& sl = p.slots[s];
    if (sl.kind == SlotKind::Input) bufs[s] = args[size_t(sl.input)];
    else if (sl.kind == SlotKind::Const) bufs[s] = sl.constant;
  }
  // Buffers that leave the call inside the returned arrays are freed with them, not given
  // back, so they are allocated outright: taking them from the pool would drain it by one
  // buffer per call whenever earlier work left spares of their size (counters not flat).
  // Except in a nested program: its outputs are temporaries of the program that runs it,
  // given back to the pool at their last use there, so they must come from it too, or each
  // control step would add its outputs to the pool without ever taking any (a jitted
  // gradient of checkpointed layers then held every layer's buffers in the pool at once).
  std::vector<bool> escapes(p.slots.size(), false);
  for (const ProgramOutput& o : p.outs)
    for (int s : o.srcs) escapes[size_t(s)] = true;
  KernelRecorder* rec = KernelRecorder::current();
  std::vector<int64_t> handles;
  for (const ProgramStep& st : p.steps) {
    if (st.control) {
      run_control_step(p, st, bufs);
      for (int s : st.free_after) pool().give(std::move(bufs[size_t(s)]));
      continue;
    }
    BufferRef& out = bufs[size_t(st.out)];
    const int64_t bytes = p.slots[size_t(st.out)].bytes;
    if (!out) out = escapes[size_t(st.out)] && !depth.nested ? be.allocate(bytes) : pool().take(be, bytes);
    if (st.routine) {
      std::vector<BufferRef> ins;
      for (int s : st.ins) ins.push_back(bufs[size_t(s)]);
      run_routine(*st.routine, p.device, ins, out);
    } else if (st.exe) {
      handles.clear();
      for (int s : st.ins) handles.push_back(bufs[size_t(s)]->handle());
      if (rec) rec->record(st.kernel);
      dispatch_kernel(be, *st.exe, st.kernel, handles, out->handle());
    }
    for (int s : st.free_after) pool().give(std::move(bufs[size_t(s)]));
  }
  std::vector<Array> outs;
  outs.reserve(p.outs.size());
  for (const ProgramOutput& o : p.outs) {
    auto a = std::make_shared<ArrayImpl>();
    a->aval = o.aval;
    a->device = p.device;
    a->exp = o.exp;
    for (int s : o.srcs) a->inputs.push_back(bufs[size_t(s)]);
    a->st = o.st;
    outs.push_back(Array(std::move(a)));
  }
  return outs;
}

}  // namespace kiln::frontend
