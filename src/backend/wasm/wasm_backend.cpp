// The wasm backend: malloc'd buffers in the core's memory, kernel modules compiled and
// instantiated through EM_JS, cached by their exact key, called through the table, and
// large dispatches split over a pthread pool in threaded builds.
#ifdef __EMSCRIPTEN__
#include "backend/wasm/wasm_backend.h"
#include "backend/wasm/decode_attention_wasm.h"
#include "backend/wasm/qmatmul_wasm.h"

#include <emscripten/emscripten.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/wasm/wasm_thread_pool.h"
#include "ir/alu_op.h"
#include "ir/debug.h"
#include "ir/error.h"

// Compiles and instantiates a kernel module against the core's memory and the builtins
// (function-table indices); returns its id in Module.kilnKernels, or -1 on failure
// (the message is kept for kiln_wasm_last_error).
// Views are made from wasmMemory.buffer each time: under pthreads another thread may have
// grown the memory, and the bytes are copied (slice) since a module is not compiled from
// a shared buffer.
EM_JS(int, kiln_wasm_instantiate, (const uint8_t* bytes, int len, const uint32_t* imports, int nimports), {
  try {
    var buf = wasmMemory.buffer;
    var mod = new WebAssembly.Module(new Uint8Array(buf, bytes, len).slice());
    var imp = new Uint32Array(buf, imports, nimports);
    var env = {memory : wasmMemory};
    for (var i = 0; i < nimports; i++) env['b' + i] = wasmTable.get(imp[i]);
    var inst = new WebAssembly.Instance(mod, {env : env});
    var ks = Module['kilnKernels'] || (Module['kilnKernels'] = []);
    ks.push(inst.exports['k']);
    return ks.length - 1;
  } catch (e) {
    Module['kilnLastError'] = String(e);
    return -1;
  }
});

EM_JS(void, kiln_wasm_last_error, (char* buf, int n), {
  stringToUTF8(Module['kilnLastError'] || "", buf, n);
});

// Puts a kernel into the core's indirect function table (needs -sALLOW_TABLE_GROWTH), so
// that C++ calls it as a function pointer: a plain call_indirect, no JS in between.
EM_JS(int, kiln_wasm_table_insert, (int id), {
  var idx = wasmTable.length;
  wasmTable.grow(1);
  wasmTable.set(idx, Module['kilnKernels'][id]);
  return idx;
});

EM_JS(void, kiln_wasm_trampoline, (int id, uint32_t args, int begin, int end), {
  Module['kilnKernels'][id](args, begin, end);
});

// On a pool worker: every worker has its own JS state and function table, so it compiles
// and instantiates kernel `id` from the bytes the executable keeps in the shared heap the
// first time it runs it (against the same shared memory), then calls it. Returns -1 with
// the worker's kilnLastError set if the module did not compile there.
EM_JS(int, kiln_wasm_worker_call, (int id, const uint8_t* bytes, int len, const uint32_t* imports, int nimports,
                                   uint32_t args, int begin, int end), {
  var ks = Module['kilnKernels'] || (Module['kilnKernels'] = []);
  var k = ks[id];
  if (!k) {
    try {
      var buf = wasmMemory.buffer;
      var mod = new WebAssembly.Module(new Uint8Array(buf, bytes, len).slice());
      var imp = new Uint32Array(buf, imports, nimports);
      var env = {memory : wasmMemory};
      for (var i = 0; i < nimports; i++) env['b' + i] = wasmTable.get(imp[i]);
      k = ks[id] = new WebAssembly.Instance(mod, {env : env}).exports['k'];
    } catch (e) {
      Module['kilnLastError'] = String(e);
      return -1;
    }
  }
  k(args, begin, end);
  return 0;
});

// Whether the core runs in a shared memory (a -pthread link in an engine with
// SharedArrayBuffer), and how many threads it may use: the pool's idle workers plus this one.
EM_JS(int, kiln_wasm_memory_is_shared, (), {
  return typeof SharedArrayBuffer != 'undefined' && wasmMemory.buffer instanceof SharedArrayBuffer ? 1 : 0;
});
EM_JS(int, kiln_wasm_pool_threads, (), {
  var idle = typeof PThread != 'undefined' ? PThread.unusedWorkers.length : 0;
  var want = typeof kilnThreadCount == 'function' ? kilnThreadCount() : 1;
  return Math.max(1, Math.min(want, idle + 1));
});
// $KILN_WASM_PARALLEL_MIN_WORK under Node (Emscripten's getenv does not see process.env); -1 if unset.
EM_JS(double, kiln_wasm_env_min_work, (), {
  var v = typeof process == 'object' && process.env ? process.env['KILN_WASM_PARALLEL_MIN_WORK'] : undefined;
  return v ? Number(v) : -1;
});

// Whether the engine validates Relaxed SIMD: a module whose one function is
// f32x4.relaxed_madd(v128.const 0, v128.const 0, v128.const 0). Chrome ships it from 114;
// Node 20 (V8 11.3) only under --experimental-wasm-relaxed-simd, Node 22 by default.
EM_JS(int, kiln_wasm_relaxed_simd, (), {
  var z = [0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  var body = [0x00].concat(z, z, z, [0xfd, 0x85, 0x02, 0x0b]);
  var bytes = [0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0,
               10, body.length + 2, 1, body.length].concat(body);
  try {
    return WebAssembly.validate(new Uint8Array(bytes)) ? 1 : 0;
  } catch (e) {
    return 0;
  }
});
// $KILN_WASM_FMA (Node's environment, or globalThis.KILN_WASM_FMA in a page): "0" keeps
// kernels off FMA even where the engine has it.
EM_JS(int, kiln_wasm_env_fma_off, (), {
  var v = typeof process == 'object' && process.env ? process.env['KILN_WASM_FMA'] : undefined;
  if (v === undefined && typeof globalThis != 'undefined') v = globalThis['KILN_WASM_FMA'];
  return v !== undefined && String(v) === '0' ? 1 : 0;
});
// $KILN_WASM_DECODE_ATTENTION (Node's environment, or globalThis.KILN_WASM_DECODE_ATTENTION in a
// page): "0" keeps the LLM's decode steps on the unfused attention kernels (a before/after).
EM_JS(int, kiln_wasm_env_decode_attention_off, (), {
  var v = typeof process == 'object' && process.env ? process.env['KILN_WASM_DECODE_ATTENTION'] : undefined;
  if (v === undefined && typeof globalThis != 'undefined') v = globalThis['KILN_WASM_DECODE_ATTENTION'];
  return v !== undefined && String(v) === '0' ? 1 : 0;
});

namespace kiln {

namespace {

// The builtins kernels import: the same functions the cpu interpreter calls, so results
// match it bit for bit (f64 libm, rounded once to the op's dtype by the kernel).
double b_exp(double x) { return std::exp(x); }
double b_exp2(double x) { return std::exp2(x); }
double b_expm1(double x) { return std::expm1(x); }
double b_log(double x) { return std::log(x); }
double b_log2(double x) { return std::log2(x); }
double b_log1p(double x) { return std::log1p(x); }
double b_sin(double x) { return std::sin(x); }
double b_cos(double x) { return std::cos(x); }
double b_tan(double x) { return std::tan(x); }
double b_asin(double x) { return std::asin(x); }
double b_acos(double x) { return std::acos(x); }
double b_atan(double x) { return std::atan(x); }
double b_sinh(double x) { return std::sinh(x); }
double b_cosh(double x) { return std::cosh(x); }
double b_tanh(double x) { return std::tanh(x); }
double b_asinh(double x) { return std::asinh(x); }
double b_acosh(double x) { return std::acosh(x); }
double b_atanh(double x) { return std::atanh(x); }
double b_erf(double x) { return std::erf(x); }
double b_pow(double a, double b) { return std::pow(a, b); }
double b_atan2(double a, double b) { return std::atan2(a, b); }
double b_floordiv(double a, double b) {
  return alu_eval(AluOp::Idiv, DType::Float64, DType::Float64, a, b);
}
double b_floormod(double a, double b) {
  return alu_eval(AluOp::Mod, DType::Float64, DType::Float64, a, b);
}
int32_t b_ipow_i32(int32_t a, int32_t b) {
  return int32_t(alu_eval(AluOp::Pow, DType::Int32, DType::Int32, a, b));
}
uint32_t b_ipow_u32(uint32_t a, uint32_t b) {
  return uint32_t(alu_eval(AluOp::Pow, DType::Uint32, DType::Uint32, a, b));
}
float b_half_to_float(int32_t bits) { return half_to_float(uint16_t(bits)); }
int32_t b_float_to_half(float f) { return float_to_half(f); }
float b_round_half(float f) { return half_to_float(float_to_half(f)); }
// Scratch for packed operand panels: one buffer per worker slot of a dispatch (so a dispatch
// split across pthread workers packs into disjoint memory), never shrunk. The dispatching
// thread grows every slot a dispatch may use before it starts (reserve_scratch), while the
// workers are idle: which worker first runs a chunk depends on timing, and growing there made
// the heap's size depend on it too. b_scratch still grows as a fallback for direct calls.
std::vector<std::vector<float>> g_scratch_slots(1);
thread_local size_t t_scratch_slot = 0;

void reserve_scratch(int slots, uint32_t bytes) {
  if (g_scratch_slots.size() < size_t(slots)) g_scratch_slots.resize(size_t(slots));
  for (int i = 0; i < slots; i++)
    if (g_scratch_slots[size_t(i)].size() * 4 < bytes) g_scratch_slots[size_t(i)].resize((bytes + 3) / 4);
}

uint32_t b_scratch(uint32_t bytes) {
  auto& buf = g_scratch_slots[t_scratch_slot];
  if (buf.size() * 4 < bytes) buf.resize((bytes + 3) / 4);
  return uint32_t(reinterpret_cast<uintptr_t>(buf.data()));
}

uint32_t builtin_table_index(wasm::Builtin b) {
  using B = wasm::Builtin;
  // Function pointers are indices into the core's function table in wasm32.
  auto ix = [](auto* fn) { return uint32_t(reinterpret_cast<uintptr_t>(fn)); };
  switch (b) {
    case B::Exp: return ix(b_exp);
    case B::Exp2: return ix(b_exp2);
    case B::Expm1: return ix(b_expm1);
    case B::Log: return ix(b_log);
    case B::Log2: return ix(b_log2);
    case B::Log1p: return ix(b_log1p);
    case B::Sin: return ix(b_sin);
    case B::Cos: return ix(b_cos);
    case B::Tan: return ix(b_tan);
    case B::Asin: return ix(b_asin);
    case B::Acos: return ix(b_acos);
    case B::Atan: return ix(b_atan);
    case B::Sinh: return ix(b_sinh);
    case B::Cosh: return ix(b_cosh);
    case B::Tanh: return ix(b_tanh);
    case B::Asinh: return ix(b_asinh);
    case B::Acosh: return ix(b_acosh);
    case B::Atanh: return ix(b_atanh);
    case B::Erf: return ix(b_erf);
    case B::Pow: return ix(b_pow);
    case B::Atan2: return ix(b_atan2);
    case B::FloorDiv: return ix(b_floordiv);
    case B::FloorMod: return ix(b_floormod);
    case B::IPowI32: return ix(b_ipow_i32);
    case B::IPowU32: return ix(b_ipow_u32);
    case B::HalfToFloat: return ix(b_half_to_float);
    case B::FloatToHalf: return ix(b_float_to_half);
    case B::RoundHalf: return ix(b_round_half);
    case B::Scratch: return ix(b_scratch);
    case B::Count: break;
  }
  fail("wasm", "unknown builtin");
}

using KernelFn = void (*)(uint32_t args, int32_t begin, int32_t end);

struct WasmExecutable : Executable {
  int id = -1;          // index in Module.kilnKernels (trampoline calls)
  KernelFn fn = nullptr;  // the same function through the core's table
  int64_t size = 0;
  std::vector<DType> inputs;
  DType out_dtype = DType::Float32;
  // For pool workers, which instantiate the module themselves (kiln_wasm_worker_call).
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> imports;
  int64_t grain = 1;  // split points are multiples of this (CompiledKernel::grain)
  bool split_per_thread = false;  // CompiledKernel::split_per_thread
  int64_t work = 0;   // elements x reduction steps x expression nodes
  uint32_t scratch_bytes = 0;  // per thread (CompiledKernel::scratch_bytes)
};

// The default of WasmBackend::parallel_min_work. x + 1 over n float32 (work 4n), 1 vs 2
// threads (WasmThreads.DISABLED_SplitSweep, 2-core dev machine, Node 20, 2026-12-03):
// work 2^16 0.9x, 2^18 1.5x, 2^20 1.8x; below 2^16 waking the pool costs more than it saves.
constexpr int64_t kDefaultParallelMinWork = int64_t(1) << 17;
// How much more work a dispatch needs to be split when every worker of the pool sleeps (no
// dispatch in the last ~0.2 ms of spinning, ThreadPool::awake): the sweep above ran
// back-to-back dispatches, which find the workers spinning; a sleeping pool first pays a
// futex wake-up per worker (tens of µs under Node), and each split then keeps the workers
// spinning on a core for ~0.2 ms. A small program (an LSTM step, one token of a KV-cache
// decoder: a few kernels of 2^17-2^20 work among tiny ones) paid both on every call for no
// gain (bench/results/call_cost.md); at 8x, only kernels of 2^20 work and more wake the pool.
constexpr int64_t kColdPoolFactor = 8;

}  // namespace

WasmBackend::WasmBackend() {
  opts_.shared_memory = kiln_wasm_memory_is_shared() != 0;
  relaxed_simd_ = kiln_wasm_relaxed_simd() != 0;
  opts_.fma = relaxed_simd_ && !kiln_wasm_env_fma_off();
  if (opts_.shared_memory) max_threads_ = threads_ = kiln_wasm_pool_threads();
  double w = kiln_wasm_env_min_work();
  min_work_ = w >= 0 ? int64_t(w) : kDefaultParallelMinWork;
}

WasmBackend::~WasmBackend() = default;

bool WasmBackend::pool_awake() const { return pool_ && pool_->awake(); }

int64_t WasmBackend::cold_parallel_min_work() const {
  return min_work_ > INT64_MAX / kColdPoolFactor ? INT64_MAX : min_work_ * kColdPoolFactor;
}

void WasmBackend::set_options(const wasm::CodegenOptions& o) {
  bool shared = opts_.shared_memory;
  opts_ = o;
  opts_.shared_memory = shared;
  opts_.fma = o.fma && relaxed_simd_;  // a module with relaxed_madd would not compile here
}

void WasmBackend::set_threads(int n) {
  if (n < 1 || n > max_threads_)
    fail("wasm.set_threads", "got ", n, " threads, expected 1 to ", max_threads_,
         max_threads_ == 1 ? " (a single-threaded core)" : " (the worker pool of this core, plus one)");
  threads_ = n;
}

const std::string& WasmBackend::name() const {
  static const std::string n = "wasm";
  return n;
}

int64_t WasmBackend::alloc(int64_t bytes) {
  // 16-byte aligned so that SIMD loads of float32 rows start aligned. Not zeroed: every
  // allocation is written whole before it is read (a kernel's output, an array's data), and
  // clearing a 16 MB output cost as much as the elementwise kernel that then overwrote it.
  // Beyond size_t (a 32-bit Wasm heap), the size would wrap to a small allocation that the
  // kernels writing the whole buffer would then overrun.
  if (bytes < 0 || uint64_t(bytes) > uint64_t(SIZE_MAX) - 16) fail("wasm.alloc", "out of memory allocating ", bytes, " bytes");
  size_t n = size_t((std::max<int64_t>(bytes, 1) + 15) / 16 * 16);
  void* p = std::aligned_alloc(16, n);
  if (!p) fail("wasm.alloc", "out of memory allocating ", bytes, " bytes");
  int64_t h = int64_t(reinterpret_cast<uintptr_t>(p));
  buffers_[h] = bytes;
  return h;
}

void WasmBackend::free(int64_t handle) {
  if (buffers_.erase(handle)) std::free(reinterpret_cast<void*>(uintptr_t(handle)));
}

int64_t WasmBackend::size_of(int64_t handle, const char* op) const {
  auto it = buffers_.find(handle);
  if (it == buffers_.end()) fail(op, "buffer ", handle, " does not exist");
  return it->second;
}

uint8_t* WasmBackend::data(int64_t handle) {
  size_of(handle, "wasm.data");
  return reinterpret_cast<uint8_t*>(uintptr_t(handle));
}

void WasmBackend::write(int64_t handle, int64_t offset, const void* src, int64_t bytes) {
  int64_t n = size_of(handle, "wasm.write");
  if (offset < 0 || bytes < 0 || offset + bytes > n)
    fail("wasm.write", "range [", offset, ", ", offset + bytes, ") is outside a buffer of ", n, " bytes");
  if (bytes) std::memcpy(data(handle) + offset, src, size_t(bytes));
}

void WasmBackend::read_sync(int64_t handle, int64_t offset, int64_t bytes, void* out) {
  int64_t n = size_of(handle, "wasm.read");
  if (offset < 0 || bytes < 0 || offset + bytes > n)
    fail("wasm.read", "range [", offset, ", ", offset + bytes, ") is outside a buffer of ", n, " bytes");
  if (bytes) std::memcpy(out, data(handle) + offset, size_t(bytes));
}

void WasmBackend::read_async(int64_t handle, int64_t offset, int64_t bytes,
                             std::function<void(std::vector<uint8_t>)> done) {
  std::vector<uint8_t> out(size_t(std::max<int64_t>(bytes, 0)));
  read_sync(handle, offset, bytes, out.data());
  done(std::move(out));
}

std::shared_ptr<Executable> WasmBackend::prepare(const Kernel& kernel) {
  std::string key = wasm::kernel_key(kernel, opts_);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  wasm::CompiledKernel ck = wasm::compile_kernel(kernel, opts_);
  if (debug_level() >= 1)
    debug_print("wasm: compiled a kernel of " + std::to_string(kernel.size) + " outputs (" +
                (ck.tiled ? "tiled" : ck.simd_loop ? "simd" : "scalar") + " loop" +
                (debug_level() >= 2 ? ", " + std::to_string(ck.bytes.size()) + " bytes of Wasm" : "") + ")");
  std::vector<uint32_t> imports;
  for (wasm::Builtin b : ck.imports) imports.push_back(builtin_table_index(b));
  auto exe = std::make_shared<WasmExecutable>();
  exe->id = kiln_wasm_instantiate(ck.bytes.data(), int(ck.bytes.size()), imports.data(), int(imports.size()));
  if (exe->id < 0) {
    char msg[512];
    kiln_wasm_last_error(msg, sizeof msg);
    fail("wasm.prepare", "the kernel module did not compile (", msg, ") for ", kernel.to_string());
  }
  exe->fn = reinterpret_cast<KernelFn>(uintptr_t(kiln_wasm_table_insert(exe->id)));
  exe->size = kernel.size;
  exe->inputs = kernel.inputs;
  exe->out_dtype = kernel.out_dtype();
  exe->grain = std::max<int64_t>(1, ck.grain);
  exe->split_per_thread = ck.split_per_thread;
  exe->scratch_bytes = ck.scratch_bytes;
  const int64_t nodes = kernel.exp.node_count() + (kernel.reduction ? kernel.reduction->epilogue.node_count() : 0);
  exe->work = kernel.size * (kernel.reduction ? std::max<int64_t>(1, kernel.reduction->size) : 1) * nodes;
  if (max_threads_ > 1) {
    exe->bytes = std::move(ck.bytes);
    exe->imports = std::move(imports);
  }
  cache_[key] = exe;
  return exe;
}

void WasmBackend::dispatch(const Executable& e, const std::vector<int64_t>& inputs, int64_t output) {
  const auto& exe = static_cast<const WasmExecutable&>(e);
  if (inputs.size() != exe.inputs.size())
    fail("wasm.dispatch", "got ", inputs.size(), " inputs, expected ", exe.inputs.size());
  int64_t obytes = size_of(output, "wasm.dispatch");
  if (obytes < exe.size * itemsize(exe.out_dtype))
    fail("wasm.dispatch", "output buffer of ", obytes, " bytes is too small for ", exe.size, " ",
         dtype_name(exe.out_dtype));
  // The args table the kernel reads: [out, (ptr, count)*]. Small kernels keep it on the stack.
  uint32_t small[17];
  std::vector<uint32_t> big;
  uint32_t* args = small;
  size_t words = 1 + 2 * inputs.size();
  if (words > 17) {
    big.resize(words);
    args = big.data();
  }
  args[0] = uint32_t(output);
  for (size_t i = 0; i < inputs.size(); i++) {
    int64_t bytes = size_of(inputs[i], "wasm.dispatch");
    args[1 + 2 * i] = uint32_t(inputs[i]);
    args[2 + 2 * i] = uint32_t(bytes / itemsize(exe.inputs[i]));
  }
  uint32_t a = uint32_t(reinterpret_cast<uintptr_t>(args));
  auto on_this_thread = [&](int64_t b, int64_t e) {
    t_scratch_slot = 0;
    if (mode_ == CallMode::Table) exe.fn(a, int32_t(b), int32_t(e));
    else kiln_wasm_trampoline(exe.id, a, int32_t(b), int32_t(e));
  };
  const int64_t grains = (exe.size + exe.grain - 1) / exe.grain;
  if (threads_ <= 1 || exe.work < (pool_awake() ? min_work_ : cold_parallel_min_work()) || grains < 2 ||
      exe.bytes.empty()) {
    reserve_scratch(1, exe.scratch_bytes);
    on_this_thread(0, exe.size);
    return;
  }
  // Chunks of whole grains, about 4 per thread: the shared counter then evens out a thread
  // that starts late (waking, compiling the module) or runs slowly on a loaded machine. A
  // kernel whose every piece packs B again gets one piece per thread instead.
  const int64_t per_thread = (grains + threads_ - 1) / threads_;
  const int64_t chunk =
      (exe.split_per_thread ? per_thread : std::max<int64_t>(1, grains / (4 * int64_t(threads_)))) * exe.grain;
  if (!pool_) pool_ = std::make_unique<wasm::ThreadPool>(max_threads_);
  split_dispatches_++;
  reserve_scratch(threads_, exe.scratch_bytes);
  pool_->parallel_for(exe.size, chunk, threads_, [&](int64_t b, int64_t e, int worker) {
    if (worker == 0) return on_this_thread(b, e);
    worker_chunks_.fetch_add(1, std::memory_order_relaxed);
    t_scratch_slot = size_t(worker);
    if (kiln_wasm_worker_call(exe.id, exe.bytes.data(), int(exe.bytes.size()), exe.imports.data(),
                              int(exe.imports.size()), a, int32_t(b), int32_t(e)) != 0) {
      char msg[512];
      kiln_wasm_last_error(msg, sizeof msg);  // this worker's message
      fail("wasm.dispatch", "a pool worker could not instantiate the kernel module (", msg, ")");
    }
  });
}

void WasmBackend::quantized_matmul(const QuantMatmulShape& s, const std::vector<int64_t>& in, int64_t output) {
  uint8_t* ptrs[5];
  int64_t bytes[5];
  for (int i = 0; i < 5; ++i) {
    const int64_t h = i < 4 ? in[size_t(i)] : output;
    bytes[i] = size_of(h, "wasm.quantized_matmul");
    ptrs[i] = data(h);
  }
  const QuantMatmulArgs a = quantized_matmul_args(s, ptrs, bytes, name());
  // The row groups split over the pool as a kernel's range is (same thresholds); the kernel
  // is the core's own code, so workers call it directly.
  GroupSplitter split = nullptr;
  const int64_t groups = quant_groups(s.rows);
  if (threads_ > 1 && groups >= 2 && s.m * s.rows * s.k >= (pool_awake() ? min_work_ : cold_parallel_min_work())) {
    if (!pool_) pool_ = std::make_unique<wasm::ThreadPool>(max_threads_);
    split_dispatches_++;
    split = [](void* be, int64_t n, void (*fn)(void*, int64_t, int64_t), void* fn_ctx) {
      auto* w = static_cast<WasmBackend*>(be);
      const int64_t chunk = std::max<int64_t>(1, n / (4 * int64_t(w->threads_)));
      w->pool_->parallel_for(n, chunk, w->threads_, [&](int64_t b, int64_t e, int) { fn(fn_ctx, b, e); });
    };
  }
  run_quantized_matmul(s, a, &wasm::quantized_matvec_simd128, split, this, &wasm::quantized_matvec2_simd128);
}

// One thread only: with two, SmolLM2's decode took 1.24-1.35x the unfused kernels' wall time
// in Node (alternated, quiet Xeon, 2026-12-08; less CPU time, the same with the routine's kv-head
// split off): the pool's workers, idle through the routine's calls, sleep, and a sleeping
// pool is woken only for kernels above the cold threshold, so the matvecs after it ran on one
// thread. The unfused kernels keep the workers busy.
bool WasmBackend::prefers_decode_attention() const {
  static const bool on = kiln_wasm_env_decode_attention_off() == 0;
  return on && threads_ <= 1;
}

void WasmBackend::decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& in, int64_t output) {
  const float* f[6];
  int64_t bytes[7];
  for (int i = 0; i < 7; ++i) {
    const int64_t h = i < 6 ? in[size_t(i)] : output;
    bytes[i] = size_of(h, "wasm.decode_attention");
    if (i < 6) f[i] = reinterpret_cast<const float*>(data(h)) + s.offset[i];
  }
  check_decode_attention_buffers(s, bytes, name());
  const int32_t start = *reinterpret_cast<const int32_t*>(f[5]);
  float* out = reinterpret_cast<float*>(data(output));
  // Work: the attended rows' multiply-adds (scores and weighted values) per query head.
  const int64_t end = std::clamp<int64_t>(start, 0, s.n_ctx), rows = end - decode_attention_begin(s, end);
  const int64_t work = 2 * s.heads * s.head_dim * (rows + 1);
  if (threads_ <= 1 || s.kv_heads < 2 || s.head_dim % 8 != 0 ||
      work < (pool_awake() ? min_work_ : cold_parallel_min_work()))
    return wasm::decode_attention_simd128(s, f[0], f[1], f[2], f[3], f[4], start, out);
  // One kv head (and its query heads) per chunk: the workers run the core's own kernel.
  if (!pool_) pool_ = std::make_unique<wasm::ThreadPool>(max_threads_);
  split_dispatches_++;
  pool_->parallel_for(s.kv_heads, 1, threads_, [&](int64_t b, int64_t e, int) {
    wasm::decode_attention_simd128_heads(s, f[0], f[1], f[2], f[3], f[4], start, out, b, e);
  });
}

}  // namespace kiln
#endif  // __EMSCRIPTEN__
