// The webgpu backend: WGSL from the codegen, and EM_JS calls into the JS runtime that
// Module.kilnGpu holds (js/src/webgpu/runtime.ts). The runtime never throws into C++: each
// call returns -1 on failure and leaves its message for kiln_gpu_last_error, so kiln::Error
// unwinds C++ normally.
#ifdef __EMSCRIPTEN__
#include "backend/webgpu/webgpu_backend.h"

#include <emscripten/emscripten.h>

#include <array>
#include <cstring>

#include "backend/wasm/wasm_codegen.h"
#include "backend/webgpu/wgsl_attention.h"
#include "backend/webgpu/wgsl_uniform_offsets.h"
#include "ir/debug.h"
#include "ir/error.h"

// Sizes travel as doubles: exact up to 2^53, and EM_JS takes no int64 without WASM_BIGINT.
EM_JS(int, kiln_gpu_alloc, (double bytes), { return Module['kilnGpu'].alloc(bytes); });
EM_JS(void, kiln_gpu_free, (int handle), { if (Module['kilnGpu']) Module['kilnGpu'].free(handle); });
EM_JS(int, kiln_gpu_live_buffers, (), { return Module['kilnGpu'] ? Module['kilnGpu'].liveBuffers() : -1; });
EM_JS(int, kiln_gpu_write, (int handle, double offset, const uint8_t* data, double bytes), {
  return Module['kilnGpu'].write(handle, offset, HEAPU8.subarray(data, data + bytes));
});
EM_JS(int, kiln_gpu_copy, (int src, double src_offset, int dst, double dst_offset, double bytes), {
  return Module['kilnGpu'].copy(src, src_offset, dst, dst_offset, bytes);
});
EM_JS(int, kiln_gpu_pipeline, (const char* wgsl, int len, int ninputs), {
  return Module['kilnGpu'].pipeline(UTF8ToString(wgsl, len), ninputs);
});
EM_JS(int, kiln_gpu_dispatch, (int pipeline, const int32_t* inputs, int ninputs, int output, double size,
                               double gx, double gy, double w1, double w2, double w3), {
  // The heap and the handles' range, not a view of them: a view per dispatch was an
  // allocation per kernel (~400 per decode step). dispatch() reads them before it returns.
  return Module['kilnGpu'].dispatch(pipeline, HEAP32, output, size, gx, gy, inputs >> 2, ninputs, w1, w2, w3);
});
// Starts a read; the runtime's promise settles it through kiln_webgpu_read_buffer/_settled.
EM_JS(int, kiln_gpu_read, (int handle, double offset, double bytes, int id), {
  var gpu = Module['kilnGpu'];
  var p = gpu.read(handle, offset, bytes);
  if (!p) return -1;
  p.then(function(data) {
    var dst = Module['_kiln_webgpu_read_buffer'](id, data.length);
    if (dst) HEAPU8.set(data, dst);
    Module['_kiln_webgpu_read_settled'](id, 1);
  }, function(err) {
    var msg = String(err && err.message ? err.message : err);
    var n = lengthBytesUTF8(msg) + 1;
    var dst = Module['_kiln_webgpu_read_buffer'](id, n);
    if (dst) stringToUTF8(msg, dst, n);
    Module['_kiln_webgpu_read_settled'](id, 0);
  });
  return 0;
});
// The blocking read (browsers only): the runtime returns the bytes or null.
EM_JS(int, kiln_gpu_can_read_sync, (), { return Module['kilnGpu'] && Module['kilnGpu'].canReadSync() ? 1 : 0; });
EM_JS(int, kiln_gpu_read_sync, (int handle, double offset, double bytes, uint8_t* out), {
  var data = Module['kilnGpu'].readSync(handle, offset, bytes);
  if (!data) return -1;
  HEAPU8.set(data, out);
  return 0;
});
EM_JS(void, kiln_gpu_last_error, (char* buf, int n), {
  stringToUTF8(Module['kilnGpu'] ? Module['kilnGpu'].lastError : "webgpu: no runtime attached", buf, n);
});

namespace kiln {

namespace {

WebGpuBackend* g_backend = nullptr;  // the registered one, for the exported callbacks

struct WebGpuExecutable : Executable {
  webgpu::WgslKernel wgsl;
  webgpu::WgslParams params;  // those the WGSL was generated for (the grid depends on them)
  int64_t size = 0;
  size_t ninputs = 0;
  // The uniform's words after the size: the load offsets lifted out of the WGSL text.
  std::array<int64_t, webgpu::kUniformWords> words{};
  // The runtime's pipeline, for the device of `generation`: jit programs keep executables
  // across a device loss, and dispatch creates the pipeline again on the new device.
  mutable int pipeline = -1;
  mutable int generation = 0;
  // Storage bindings after the output: the inputs, then the vec4 views of some of them.
  int bindings() const { return int(ninputs + wgsl.vec4_inputs.size()); }
};

[[noreturn]] void fail_runtime(const char* op) {
  char msg[4096];
  kiln_gpu_last_error(msg, sizeof msg);
  fail(op, msg);
}

}  // namespace

WebGpuBackend::~WebGpuBackend() {
  if (g_backend == this) g_backend = nullptr;
}

const std::string& WebGpuBackend::name() const {
  static const std::string n = "webgpu";
  return n;
}

int64_t WebGpuBackend::alloc(int64_t bytes) {
  g_backend = this;
  int h = kiln_gpu_alloc(double(bytes));
  if (h < 0) fail_runtime("webgpu.alloc");
  return h;
}

void WebGpuBackend::free(int64_t handle) { kiln_gpu_free(int(handle)); }

int64_t WebGpuBackend::backend_buffers() const { return kiln_gpu_live_buffers(); }

void WebGpuBackend::write(int64_t handle, int64_t offset, const void* data, int64_t bytes) {
  if (kiln_gpu_write(int(handle), double(offset), static_cast<const uint8_t*>(data), double(bytes)) < 0)
    fail_runtime("webgpu.write");
}

void WebGpuBackend::copy(int64_t src, int64_t src_offset, int64_t dst, int64_t dst_offset, int64_t bytes) {
  if (kiln_gpu_copy(int(src), double(src_offset), int(dst), double(dst_offset), double(bytes)) < 0)
    fail_runtime("webgpu.copy");
}

void WebGpuBackend::read_sync(int64_t, int64_t, int64_t, void*) {
  fail("webgpu.read", "the webgpu device has no synchronous reads, expected an asynchronous read");
}

bool WebGpuBackend::can_read_blocking() const { return kiln_gpu_can_read_sync() != 0; }

void WebGpuBackend::read_blocking(int64_t handle, int64_t offset, int64_t bytes, void* out) {
  g_backend = this;
  if (kiln_gpu_read_sync(int(handle), double(offset), double(bytes), static_cast<uint8_t*>(out)) < 0)
    fail_runtime("webgpu.read");
}

void WebGpuBackend::read_async(int64_t handle, int64_t offset, int64_t bytes,
                               std::function<void(std::vector<uint8_t>)> done) {
  // Without an error path the failure cannot reach the caller; kiln::Array::bytes_async's
  // future then never becomes ready, so C++ callers that need errors pass `failed`.
  read_async_checked(handle, offset, bytes, std::move(done), [](std::string) {});
}

void WebGpuBackend::read_async_checked(int64_t handle, int64_t offset, int64_t bytes,
                                       std::function<void(std::vector<uint8_t>)> done,
                                       std::function<void(std::string)> failed) {
  g_backend = this;
  int id = next_read_++;
  reads_[id] = PendingRead{{}, std::move(done), std::move(failed)};
  if (kiln_gpu_read(int(handle), double(offset), double(bytes), id) < 0) {
    reads_.erase(id);
    fail_runtime("webgpu.read");
  }
}

uint8_t* WebGpuBackend::read_buffer(int id, int64_t bytes) {
  auto it = reads_.find(id);
  if (it == reads_.end()) return nullptr;
  it->second.data.resize(size_t(bytes));
  return it->second.data.data();
}

void WebGpuBackend::read_settled(int id, bool ok) {
  auto it = reads_.find(id);
  if (it == reads_.end()) return;
  PendingRead r = std::move(it->second);
  reads_.erase(it);
  if (ok) {
    r.done(std::move(r.data));
  } else {
    std::string msg(r.data.begin(), r.data.end());
    if (!msg.empty() && msg.back() == '\0') msg.pop_back();
    r.failed(msg);
  }
}

void WebGpuBackend::reset(const webgpu::WgslParams& params, int64_t first_handle) {
  params_ = params;
  first_handle_ = first_handle;
  generation_++;
  cache_.clear();
  // Reads of the lost device: its runtime rejects them, but none may be left waiting.
  std::map<int, PendingRead> pending;
  pending.swap(reads_);
  for (auto& [id, r] : pending)
    r.failed("webgpu.read: the webgpu device was lost and replaced before this read finished");
}

std::shared_ptr<Executable> WebGpuBackend::prepare(const Kernel& kernel) {
  // Same key as the wasm backend's cache (the kernel's exact DAG, dtypes and size); the JS
  // runtime dedups pipelines again by WGSL text, which leaves the size out.
  std::string key = wasm::kernel_key(kernel, wasm::CodegenOptions{});
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  auto exe = std::make_shared<WebGpuExecutable>();
  exe->wgsl = webgpu::generate_wgsl(kernel, params_);
  // Tiled contractions that differ only in where they read a buffer (a prefill's attention
  // reads each layer's rows of the one KV cache) share a text once the offsets are uniform
  // words, so the runtime creates one pipeline for all layers instead of one each: SmolLM2's
  // first call compiled 109 pipelines, 59 of them per-layer copies of two attention kernels.
  // Only tiles: their loads are staged once per tile, so a word costs nothing, while the
  // reductions' 128-bit loads need offsets known to be multiples of 4 (wgsl_vec_loads.h).
  if (exe->wgsl.strategy == webgpu::WgslStrategy::Tiled) {
    webgpu::LiftedOffsets lifted = webgpu::lift_load_offsets(kernel);
    if (lifted.count > 0) {
      webgpu::WgslKernel w = webgpu::generate_wgsl(lifted.kernel, params_);
      if (w.strategy == webgpu::WgslStrategy::Tiled) {
        exe->wgsl = std::move(w);
        exe->words = lifted.words;
      }
    }
  }
  if (debug_level() >= 1) {
    static const char* names[] = {"elementwise", "serial reduction", "tree reduction", "tiled contraction"};
    debug_print("webgpu: compiled a kernel of " + std::to_string(kernel.size) + " outputs (" +
                names[int(exe->wgsl.strategy)] + ")" + (debug_level() >= 2 ? ":\n" + exe->wgsl.wgsl : ""));
  }
  exe->params = params_;
  exe->generation = generation_;
  exe->size = kernel.size;
  exe->ninputs = kernel.inputs.size();
  exe->pipeline = kiln_gpu_pipeline(exe->wgsl.wgsl.data(), int(exe->wgsl.wgsl.size()), exe->bindings());
  if (exe->pipeline < 0) fail_runtime("webgpu.prepare");
  cache_[key] = exe;
  return exe;
}

void WebGpuBackend::dispatch(const Executable& e, const std::vector<int64_t>& inputs, int64_t output) {
  const auto& exe = static_cast<const WebGpuExecutable&>(e);
  if (inputs.size() != exe.ninputs)
    fail("webgpu.dispatch", "got ", inputs.size(), " input buffers, expected ", exe.ninputs);
  if (exe.generation != generation_) {
    exe.pipeline = kiln_gpu_pipeline(exe.wgsl.wgsl.data(), int(exe.wgsl.wgsl.size()), exe.bindings());
    if (exe.pipeline < 0) fail_runtime("webgpu.prepare");
    exe.generation = generation_;
  }
  std::vector<int32_t>& ins = dispatch_handles_;  // kept: a decode step dispatches ~470 kernels
  ins.assign(inputs.begin(), inputs.end());
  for (int a : exe.wgsl.vec4_inputs) ins.push_back(int32_t(inputs[size_t(a)]));  // their vec4 views
  webgpu::Grid g = webgpu::dispatch_grid(exe.wgsl, exe.size, exe.params);
  if (kiln_gpu_dispatch(exe.pipeline, ins.data(), int(ins.size()), int(output), double(exe.size), double(g.x),
                        double(g.y), double(exe.words[0]), double(exe.words[1]), double(exe.words[2])) < 0)
    fail_runtime("webgpu.dispatch");
}

void WebGpuBackend::decode_attention(const DecodeAttentionShape& s, const std::vector<int64_t>& inputs,
                                     int64_t output) {
  if (inputs.size() != size_t(kDecodeAttentionOperands))
    fail("decode_attention", "got ", inputs.size(), " operands, expected ", kDecodeAttentionOperands);
  if (s.offset[1] < 0 || s.offset[1] > int64_t(0xffffffff))
    fail("decode_attention", "the keys' offset ", s.offset[1], " does not fit the uniform's 32 bits");
  // The offsets other than the keys' are constants of the text, the same in every layer of a
  // model: one pipeline per window kind and shape. Kept by what the text depends on, so the
  // text is not built per layer and step (host time); the key is plain numbers, so finding
  // it allocates nothing (it runs per layer and decode step).
  const AttentionKey key = {s.heads, s.kv_heads, s.head_dim, s.n_ctx, s.window, int64_t(float_bits(s.scale)),
                            s.offset[0], s.offset[2] - s.offset[1], s.offset[3], s.offset[4], s.offset[5]};
  AttentionPipelines& p = attention_pipelines_[key];
  if (p.generation != generation_) {
    const std::string partial = webgpu::decode_attention_partial_wgsl(s), merge = webgpu::decode_attention_merge_wgsl(s);
    if (debug_level() >= 1)
      debug_print("webgpu: compiled a decode_attention kernel pair" +
                  (debug_level() >= 2 ? ":\n" + partial + "\n" + merge : std::string()));
    p.partial = kiln_gpu_pipeline(partial.data(), int(partial.size()), kDecodeAttentionOperands);
    p.merge = p.partial < 0 ? -1 : kiln_gpu_pipeline(merge.data(), int(merge.size()), 2);
    if (p.merge < 0) {
      attention_pipelines_.erase(key);
      fail_runtime("webgpu.prepare");
    }
    p.generation = generation_;
  }
  // The partials live for this call only: freed while the step is still being recorded, the
  // runtime hands the same buffer to this layer again next step (its pool), so the steady
  // state creates no buffer and keeps its bind groups. The host pays two calls into the
  // runtime (a pool lookup each). A buffer kept here instead would be a device buffer that no
  // Buffer counts (memory()'s numBackendBuffers equals numBuffers only without one), would
  // need freeing on a device loss and on release_pooled_buffers, and would save no GPU work.
  const int64_t part = alloc(webgpu::decode_attention_partial_floats(s) * 4);
  std::vector<int32_t>& ins = dispatch_handles_;
  ins.assign(inputs.begin(), inputs.end());
  int rc = kiln_gpu_dispatch(p.partial, ins.data(), int(ins.size()), int(part), double(s.offset[1]),
                             double(webgpu::decode_attention_chunks(s)), double(s.kv_heads), 0.0, 0.0, 0.0);
  if (rc >= 0) {
    ins.assign({int32_t(part), int32_t(inputs[5])});
    rc = kiln_gpu_dispatch(p.merge, ins.data(), int(ins.size()), int(output), 0.0, double(s.heads), 1.0, 0.0,
                           0.0, 0.0);
  }
  free(part);
  if (rc < 0) fail_runtime("webgpu.dispatch");
}

}  // namespace kiln

// Called by kiln_gpu_read's promise: a buffer for the bytes (or the error text), then the outcome.
extern "C" EMSCRIPTEN_KEEPALIVE uint8_t* kiln_webgpu_read_buffer(int id, int bytes) {
  return kiln::g_backend ? kiln::g_backend->read_buffer(id, bytes) : nullptr;
}
extern "C" EMSCRIPTEN_KEEPALIVE void kiln_webgpu_read_settled(int id, int ok) {
  if (kiln::g_backend) kiln::g_backend->read_settled(id, ok != 0);
}
#endif  // __EMSCRIPTEN__
