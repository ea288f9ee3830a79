// The native backend's buffers, its per-kernel compiled variants (one per pattern of
// bounds-checked loads), and dispatch over the thread pool.
#include "backend/native/native_backend.h"
#include "backend/native/decode_attention_x86.h"
#include "backend/native/qmatmul_x86.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "backend/cpu/cpu_interpreter.h"
#include "backend/native/native_codegen.h"
#include "backend/native/native_compiler.h"
#include "backend/native/thread_pool.h"
#include "ir/error.h"

namespace kiln {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// Below this much work (elements x reduction length x expression nodes) a dispatch runs
// on the calling thread. Waking the pool costs ~2.5 us (a 1024-element kernel: 2.8 us on
// one thread, 5 us split over two; bench/native_bench.cpp --sweep on the 2-core dev
// machine, 2026-12); 2^18 keeps that under ~10% of the kernel's time.
int64_t parallel_min_work() {
  static const int64_t v = [] {
    const char* e = std::getenv("KILN_NATIVE_PARALLEL_MIN_WORK");
    return e && *e ? std::atoll(e) : int64_t(1) << 18;
  }();
  return v;
}

// $KILN_NATIVE_PROFILE=1: time every dispatch and print the costliest kernels at exit.
struct Profile {
  struct Entry {
    std::string what;
    double seconds = 0;
    int64_t calls = 0;
  };
  std::mutex mu;
  std::map<std::string, Entry> by_kernel;
  ~Profile() {
    std::vector<Entry> v;
    double total = 0;
    for (auto& [k, e] : by_kernel) v.push_back(e), total += e.seconds;
    std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.seconds > b.seconds; });
    std::fprintf(stderr, "[kiln] native profile: %.3f s in %zu kernels\n", total, v.size());
    for (size_t i = 0; i < v.size() && i < 12; i++)
      std::fprintf(stderr, "%8.3f s %6lld calls  %s\n", v[i].seconds, (long long)v[i].calls, v[i].what.c_str());
  }
};
Profile* profile() {
  static Profile* p = env_flag("KILN_NATIVE_PROFILE") ? new Profile : nullptr;
  return p;
}
struct ProfileAtExit {
  ~ProfileAtExit() { delete profile(); }
} profile_at_exit;
void profile_add(Profile* prof, const std::string& key, const std::string& what, double seconds) {
  std::lock_guard<std::mutex> lock(prof->mu);
  auto& e = prof->by_kernel[key];
  if (e.what.empty()) e.what = what;
  e.seconds += seconds;
  e.calls++;
}

struct NativeExecutable : Executable {
  Kernel kernel;
  std::optional<native::Plan> plan;  // empty: the generator has no rule, use the interpreter
  std::string why_interpreted;
  cpu::Program body;
  std::optional<cpu::Program> epilogue;
  mutable std::mutex mu;
  mutable std::map<std::vector<bool>, native::KernelFn> variants;
};

}  // namespace

NativeBackend::NativeBackend() : HostMemoryBackend(kSlack), pool_(std::make_unique<native::ThreadPool>()) {
  const char* e = std::getenv("KILN_NATIVE_MIN_WORK");
  min_work_ = e && *e ? std::atoll(e) : 256;
}
NativeBackend::~NativeBackend() = default;

const std::string& NativeBackend::name() const {
  static const std::string n = "native";
  return n;
}

std::shared_ptr<Executable> NativeBackend::prepare(const Kernel& kernel) {
  auto exe = std::make_shared<NativeExecutable>();
  exe->kernel = kernel;
  const int64_t work = kernel.size * std::max<int64_t>(1, kernel.reduction ? kernel.reduction->size : 1);
  if (work < min_work_) {
    exe->why_interpreted = "small";
  } else {
    try {
      exe->plan = native::plan_kernel(kernel);
      // Generating once here surfaces a missing rule now rather than at dispatch.
      native::generate_source(*exe->plan, {});
    } catch (const Error& e) {
      if (env_flag("KILN_NATIVE_STRICT")) throw;
      exe->plan.reset();
      exe->why_interpreted = e.what();
    }
  }
  if (!exe->plan) {
    exe->body = cpu::Program::compile(kernel.exp);
    if (kernel.reduction) exe->epilogue = cpu::Program::compile(kernel.reduction->epilogue);
  }
  return exe;
}

void NativeBackend::dispatch(const Executable& e, const std::vector<int64_t>& inputs, int64_t output) {
  const auto& exe = static_cast<const NativeExecutable&>(e);
  const Kernel& k = exe.kernel;
  if (inputs.size() != k.inputs.size())
    fail("native.dispatch", "got ", inputs.size(), " inputs, expected ", k.inputs.size());
  std::vector<void*> bufs;
  std::vector<int64_t> counts;
  for (size_t i = 0; i < inputs.size(); i++) {
    auto& b = buffer(inputs[i]);
    bufs.push_back(b.data());
    counts.push_back(int64_t(b.size()) / itemsize(k.inputs[i]));
  }
  auto& ob = buffer(output);
  const DType odt = k.out_dtype();
  if (int64_t(ob.size()) < k.size * itemsize(odt))
    fail("native.dispatch", "output buffer of ", ob.size(), " bytes is too small for ", k.size, " ",
         dtype_name(odt));
  if (!exe.plan) {
    if (exe.why_interpreted != "small") interpreted_++;
    std::vector<cpu::BufferView> views;
    for (size_t i = 0; i < inputs.size(); i++)
      views.push_back({static_cast<uint8_t*>(bufs[i]), k.inputs[i], counts[i]});
    cpu::run_kernel(k, exe.body, exe.epilogue ? &*exe.epilogue : nullptr, views, {ob.data(), odt, k.size});
    return;
  }
  bufs.push_back(ob.data());
  const native::Plan& plan = *exe.plan;
  std::vector<bool> guards = native::load_guards(plan, counts, kSlack);
  native::KernelFn fn;
  {
    std::lock_guard<std::mutex> lock(exe.mu);
    auto it = exe.variants.find(guards);
    if (it == exe.variants.end())
      it = exe.variants.emplace(guards, native::load_kernel(native::generate_source(plan, guards))).first;
    fn = it->second;
  }
  Profile* prof = profile();
  auto t0 = std::chrono::steady_clock::now();
  void* const* bp = bufs.data();
  const int64_t* cp = counts.data();
  if (pool_->size() > 1 && plan.items > 1 && plan.items * plan.work_per_item >= parallel_min_work()) {
    pool_->parallel_for(plan.items, [&](int64_t b, int64_t en) { fn(bp, cp, b, en); });
  } else {
    fn(bp, cp, 0, plan.items);
  }
  if (prof) {
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string key = k.to_string();
    profile_add(prof, key, plan.schedule.str() + "\n" + key, dt);
  }
}

QuantMatvecFn NativeBackend::quantized_matvec() const { return native::best_quantized_matvec(); }
QuantRowsKernel NativeBackend::quantized_matmul_rows() const { return native::best_quantized_matmul_rows(); }

DecodeAttentionFn NativeBackend::decode_attention_kernel() const {
  const DecodeAttentionFn fn = native::best_decode_attention();
  return fn ? fn : &decode_attention_reference;
}

bool NativeBackend::prefers_decode_attention() const {
  static const bool on = [] {
    const char* env = std::getenv("KILN_NATIVE_DECODE_ATTENTION");
    return native::best_decode_attention() != nullptr && !(env && std::string(env) == "0");
  }();
  return on;
}

void NativeBackend::prefill_attention(const DecodeAttentionShape& s, const float* q, const float* keys,
                                      const float* values, const float* k, const float* v, int32_t start,
                                      float* out) {
  const native::PrefillAttentionFn fn = native::best_prefill_attention();
  if (!fn) return decode_attention_reference(s, q, keys, values, k, v, start, out);
  // Split where there are threads and the scores' multiply-adds (about rows x (start + rows / 2)
  // x heads x head_dim) are enough work.
  const int64_t work = s.rows * (std::clamp<int64_t>(start, 0, s.n_ctx) + s.rows / 2) * s.heads * s.head_dim;
  GroupSplitter split = nullptr;
  if (pool_->size() > 1 && work >= parallel_min_work())
    split = [](void* pool, int64_t groups, void (*fn)(void*, int64_t, int64_t), void* fn_ctx) {
      static_cast<native::ThreadPool*>(pool)->parallel_for(groups, [&](int64_t b, int64_t e) { fn(fn_ctx, b, e); });
    };
  Profile* prof = profile();
  const auto t0 = std::chrono::steady_clock::now();
  fn(s, q, keys, values, k, v, start, out, split, pool_.get());
  if (prof) {
    const std::string key = "decode_attention rows=" + std::to_string(s.rows) + " heads=" + std::to_string(s.heads) +
                            "/" + std::to_string(s.kv_heads) + " head_dim=" + std::to_string(s.head_dim) +
                            " window=" + std::to_string(s.window);
    profile_add(prof, key, "routine " + key, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
}

bool NativeBackend::prefers_prefill_attention() const {
  static const bool on = [] {
    const char* env = std::getenv("KILN_NATIVE_PREFILL_ATTENTION");
    return native::best_decode_attention() != nullptr && !(env && std::string(env) == "0");
  }();
  return on;
}

GroupSplitter NativeBackend::quantized_splitter(const QuantMatmulShape& s, void** ctx) {
  *ctx = pool_.get();
  if (pool_->size() < 2 || quant_groups(s.rows) < 2 || s.m * s.rows * s.k < parallel_min_work()) return nullptr;
  return [](void* pool, int64_t groups, void (*fn)(void*, int64_t, int64_t), void* fn_ctx) {
    static_cast<native::ThreadPool*>(pool)->parallel_for(groups, [&](int64_t b, int64_t e) { fn(fn_ctx, b, e); });
  };
}

}  // namespace kiln
