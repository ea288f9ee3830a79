// Bench-only Emscripten entry: builds the kiln cases of bench/wasm/bench.mjs (jitted matmul,
// elementwise chain, conv2d on the wasm device) and runs one call per kb_run, timed from JS.
#include <emscripten/emscripten.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "backend/backend.h"
#include "backend/wasm/wasm_backend.h"
#include "backend/wasm/wasm_tiled.h"
#include "frontend/array_impl.h"
#include "kiln/kiln.h"
#include "library/lax.h"

using namespace kiln;
namespace np = kiln::numpy;

namespace {

struct Case {
  std::function<Array()> run;
  int kernels = 0, tiled = 0, simd = 0;
};
std::vector<Case> cases;

Array random_array(const Shape& s, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed * 2654435761u + 1;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(x >> 8) / float(1 << 24) - 0.5f;
  }
  return np::array(v, s);
}

int add_case(std::function<Array()> run) {
  Case c;
  c.run = std::move(run);
  {
    frontend::KernelRecorder rec;
    c.run().eval();
    for (const Kernel& k : rec.kernels()) {
      c.kernels++;
      wasm::CompiledKernel ck = wasm::compile_kernel(k, static_cast<WasmBackend&>(get_backend("wasm")).options());
      c.tiled += ck.tiled;
      c.simd += ck.simd_loop;
    }
  }
  cases.push_back(std::move(c));
  return int(cases.size() - 1);
}

}  // namespace

extern "C" {

EMSCRIPTEN_KEEPALIVE void kb_init() { set_default_device("wasm"); }
// The wasm backend's thread count (the pool plus the calling thread), and its split dispatches.
EMSCRIPTEN_KEEPALIVE int kb_threads() { return static_cast<WasmBackend&>(get_backend("wasm")).threads(); }
// 1 when tiled contractions use Relaxed-SIMD FMA (the engine has it).
EMSCRIPTEN_KEEPALIVE int kb_fma() { return static_cast<WasmBackend&>(get_backend("wasm")).options().fma; }
EMSCRIPTEN_KEEPALIVE double kb_split_dispatches() {
  return double(static_cast<WasmBackend&>(get_backend("wasm")).split_dispatches());
}

EMSCRIPTEN_KEEPALIVE void kb_set_options(int simd, int tile, int fma, int rows, int vecs, int panel, int kblock,
                                          int pack) {
  wasm::CodegenOptions o;
  o.simd = simd, o.tile = tile, o.fma = fma, o.tile_rows = rows, o.tile_vecs = vecs;
  o.tile_panel = panel, o.tile_kblock = kblock, o.tile_pack = pack;
  static_cast<WasmBackend&>(get_backend("wasm")).set_options(o);
}

EMSCRIPTEN_KEEPALIVE int kb_matmul(int n) {
  Array a = random_array({n, n}, 1), b = random_array({n, n}, 2);
  ArrayFn f = jit(ArrayFn([b](const Array& x) { return np::matmul(x, b); }));
  return add_case([f, a] { return f(a); });
}

// The chain: max(x * 1.5 + 0.5, 0) * x - 0.25 (5 ops, one fused kernel).
EMSCRIPTEN_KEEPALIVE int kb_chain(int n) {
  Array x = random_array({n}, 3);
  ArrayFn f = jit(ArrayFn([](const Array& v) { return np::maximum(v * 1.5f + 0.5f, 0.0f) * v - 0.25f; }));
  return add_case([f, x] { return f(x); });
}

// NCHW input, OIHW weights, stride 1, SAME padding.
EMSCRIPTEN_KEEPALIVE int kb_conv(int batch, int cin, int cout, int hw, int k) {
  Array x = random_array({batch, cin, hw, hw}, 4), w = random_array({cout, cin, k, k}, 5);
  ArrayFn f = jit(ArrayFn([w](const Array& v) { return lax::conv(v, w, {1, 1}, std::string("SAME")); }));
  return add_case([f, x] { return f(x); });
}

EMSCRIPTEN_KEEPALIVE void kb_run(int id) { cases[size_t(id)].run().eval(); }
EMSCRIPTEN_KEEPALIVE int kb_kernels(int id) { return cases[size_t(id)].kernels; }
EMSCRIPTEN_KEEPALIVE int kb_tiled(int id) { return cases[size_t(id)].tiled; }
EMSCRIPTEN_KEEPALIVE int kb_simd(int id) { return cases[size_t(id)].simd; }
// The sum of the result's elements (to check that peers compute the same thing).
EMSCRIPTEN_KEEPALIVE double kb_checksum(int id) {
  std::vector<float> v = cases[size_t(id)].run().to_vector<float>();
  double s = 0;
  for (float f : v) s += f;
  return s;
}
}
