// Embind entry points for devices that appear at run time and for asynchronous reads:
// enableWebGpu (registers the webgpu backend once JS holds a GPUDevice), readAsync, realize;
// the debug level and profiler (setDebug, startTrace, stopTrace); and the memory counters.
#include <emscripten/bind.h>
#include <malloc.h>

#include "backend/backend.h"
#include "backend/webgpu/webgpu_backend.h"
#include "frontend/array_impl.h"
#include "kiln/memory.h"
#include "js_values.h"

namespace kiln::js {
namespace {

// Registers `webgpu` with the codegen limits the runtime read from the device: an object
// {workgroup, maxGroupsX, ..., firstHandle}. Module.kilnGpu must hold the runtime before any
// kernel runs. Called again with a new runtime after a device loss: resets the backend.
val enable_webgpu(const val& limits) {
  try {
    webgpu::WgslParams p;
    p.workgroup = get_int(limits, "workgroup", p.workgroup);
    p.max_groups_x = get_int(limits, "maxGroupsX", p.max_groups_x);
    p.workgroup_storage = get_int(limits, "workgroupStorage", p.workgroup_storage);
    p.max_invocations = get_int(limits, "maxInvocations", p.max_invocations);
    p.max_storage_buffers = get_int(limits, "maxStorageBuffers", p.max_storage_buffers);
    p.tree_max_outputs = get_int(limits, "treeMaxOutputs", int(p.tree_max_outputs));
    // staging: 0 single, 1 prefetch, 2 double (webgpu::WgslStaging).
    const int staging = get_int(limits, "staging", int(p.staging));
    if (staging < 0 || staging > 2) fail("webgpu", "staging ", staging, " is invalid, expected 0, 1 or 2");
    p.staging = webgpu::WgslStaging(staging);
    p.band_rows = get_int(limits, "bandRows", p.band_rows);
    p.row_lanes = get_int(limits, "rowLanes", p.row_lanes);
    if (p.row_lanes < 0 || (p.row_lanes & (p.row_lanes - 1)) != 0)
      fail("webgpu", "rowLanes ", p.row_lanes, " is invalid, expected 0 or a power of two");
    p.row_outputs = get_int(limits, "rowOutputs", p.row_outputs);
    p.vec4_loads = get_int(limits, "vec4Loads", p.vec4_loads ? 1 : 0) != 0;
    if (p.row_outputs < 0 || p.row_outputs > 16 || (p.row_outputs & (p.row_outputs - 1)) != 0)
      fail("webgpu", "rowOutputs ", p.row_outputs, " is invalid, expected 0 (the rule), 1, 2, 4, 8 or 16");
    // tiles: [[bm, bn, bk, tm, tn], ...], largest first (a per-device override of the defaults).
    if (js_is_array(limits["tiles"])) {
      p.tiles.clear();
      const int count = limits["tiles"]["length"].as<int>();
      for (int i = 0; i < count; i++) {
        val t = limits["tiles"][i];
        webgpu::WgslTile tile{t[0].as<int>(), t[1].as<int>(), t[2].as<int>(), t[3].as<int>(), t[4].as<int>()};
        webgpu::check_tile(tile);
        p.tiles.push_back(tile);
      }
    }
    const int first_handle = get_int(limits, "firstHandle", 1);
    for (auto& d : available_devices())
      if (d == "webgpu") {
        static_cast<WebGpuBackend&>(get_backend("webgpu")).reset(p, first_handle);
        return val(true);
      }
    auto backend = std::make_unique<WebGpuBackend>(p);
    backend->reset(p, first_handle);
    register_backend("webgpu", std::move(backend));
    return val(true);
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// Reads the elements of `h` (C order) on any device: `done` gets a Uint8Array or an Error,
// now (cpu, wasm) or when the device's read settles (webgpu). Returns an Error when the read
// cannot start (e.g. computing the array failed); the handle may be deleted right after.
val read_async(const Handle& h, val done) {
  try {
    const BufferRef& buf = h.a.impl()->buffer();
    int64_t bytes = h.a.size() * itemsize(h.a.dtype());
    buf->backend().read_async_checked(
        buf->handle(), 0, bytes,
        [done, buf](std::vector<uint8_t> data) {
          done(js_class(JsClass::Uint8Array).new_(emscripten::typed_memory_view(data.size(), data.data())));
        },
        [done](std::string msg) { done(js_error(msg)); });
    return val::undefined();
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// Computes `h` into a buffer on its device (dispatching, not waiting): blockUntilReady.
val realize(const Handle& h) {
  try {
    h.a.eval();
    return val::undefined();
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// setDebug(level): an Error for levels outside 0..5.
val set_debug(int level) {
  try {
    kiln::set_debug(level);
    return val::undefined();
  } catch (const std::exception& e) {
    return js_error(e);
  }
}

// The profiler's events since startTrace: [{name, start, duration}] in milliseconds of
// performance.now().
val stop_trace() {
  val out = val::array();
  for (const TraceEvent& e : kiln::stop_trace()) {
    val ev = val::object();
    ev.set("name", e.name);
    ev.set("start", e.start_ms);
    ev.set("duration", e.duration_ms);
    out.call<void>("push", ev);
  }
  return out;
}

// kiln::memory_stats as {arrays, heapBytes, heapUsedBytes, devices: {name: {...}}}:
// heapBytes is the core's linear memory (it only grows), heapUsedBytes what malloc has handed
// out of it (the wasm device's buffers, and every C++ object).
val memory_stats() {
  const MemoryStats s = kiln::memory_stats();
  val out = val::object();
  out.set("arrays", double(s.arrays));
  out.set("heapBytes", double(__builtin_wasm_memory_size(0)) * 65536.0);
  out.set("heapUsedBytes", double(mallinfo().uordblks));
  val devices = val::object();
  for (const DeviceMemoryStats& d : s.devices) {
    val o = val::object();
    o.set("buffers", double(d.buffers));
    o.set("bytes", double(d.bytes));
    o.set("peakBytes", double(d.peak_bytes));
    o.set("allocations", double(d.allocations));
    o.set("pooledBuffers", double(d.pooled_buffers));
    o.set("pooledBytes", double(d.pooled_bytes));
    o.set("backendBuffers", double(d.backend_buffers));
    devices.set(d.device, o);
  }
  out.set("devices", devices);
  return out;
}

}  // namespace
}  // namespace kiln::js

EMSCRIPTEN_BINDINGS(kiln_debug) {
  emscripten::function("setDebug", &kiln::js::set_debug);
  emscripten::function("startTrace", &kiln::start_trace);
  emscripten::function("stopTrace", &kiln::js::stop_trace);
  emscripten::function("memoryStats", &kiln::js::memory_stats);
  emscripten::function("resetPeakMemory", &kiln::reset_peak_memory);
}

EMSCRIPTEN_BINDINGS(kiln_devices) {
  emscripten::function("enableWebGpu", &kiln::js::enable_webgpu);
  emscripten::function("readAsync", &kiln::js::read_async);
  emscripten::function("realize", &kiln::js::realize);
}
