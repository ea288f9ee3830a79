// Prints a digest of the Wasm module that compile_kernel emits for each of a broad set of
// kernels and codegen options, so a refactoring of the wasm code generator can show that it
// emits the same bytes: run it before and after, and diff the outputs.
//
// The kernels: matmuls of many shapes (ragged rows and columns, one row, packed sizes) with
// no epilogue, bias, bias + relu and tanh, factors swapped, B transposed, A and B evaluated
// (relu of a load); and what jit fuses on the cpu device for dense layers, batched matmuls,
// and four convolutions with both of their gradients. The options: tile shapes, cache
// blocks, packing forced on and off, FMA, shared memory (the threaded core's modules).
// A dispatch's split over threads does not change the module, so it is not an option here.
//
// Build and run (native, after `cmake --build --preset native --target kiln`):
//   g++ -std=c++20 -O2 -Isrc -Iinclude tools/wasm_module_digest.cpp build/native/libkiln.a
//     -lpthread -o build/native/wasm_module_digest
//   ./build/native/wasm_module_digest > digest.txt
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/wasm/wasm_codegen.h"
#include "backend/wasm/wasm_tiled.h"
#include "frontend/array_impl.h"
#include "kiln/kiln.h"

using namespace kiln;
namespace np = kiln::numpy;

namespace {

struct NamedKernel {
  std::string name;
  Kernel kernel;
};

struct NamedOptions {
  std::string name;
  wasm::CodegenOptions options;
};

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

enum class Factor { Load, Transposed, Relu };

// sum_r A[i, r] * B[r, j] over an m x n output with an epilogue: 0 none, 1 + bias, 2 relu of
// that, 3 tanh of that. A transposed B is read as w[j, r]; a relu factor is max(load, 0), which
// the tiled loop evaluates into scratch.
Kernel matmul(int64_t m, int64_t kk, int64_t n, int epilogue, bool swap, Factor fa, Factor fb) {
  AluExp g = AluExp::var(VarId::Gidx, DType::Int32, m * n - 1);
  AluExp r = AluExp::var(VarId::Ridx, DType::Int32, kk - 1);
  AluExp i = g / n, j = g % n;
  const AluExp zero = AluExp::constant(DType::Float32, 0);
  AluExp a = AluExp::load(DType::Float32, 0, i * kk + r);
  AluExp b = AluExp::load(DType::Float32, 1, fb == Factor::Transposed ? j * kk + r : r * n + j);
  if (fa == Factor::Relu) a = AluExp::binary(AluOp::Max, a, zero);
  if (fb == Factor::Relu) b = AluExp::binary(AluOp::Max, b, zero);
  Kernel k;
  k.size = m * n;
  k.inputs = {DType::Float32, DType::Float32, DType::Float32};
  k.exp = swap ? AluExp::binary(AluOp::Mul, b, a) : AluExp::binary(AluOp::Mul, a, b);
  AluExp acc = AluExp::var(VarId::Acc, DType::Float32, 0);
  AluExp epi = acc;
  if (epilogue >= 1) epi = AluExp::binary(AluOp::Add, acc, AluExp::load(DType::Float32, 2, j));
  if (epilogue == 2) epi = AluExp::binary(AluOp::Max, epi, zero);
  if (epilogue == 3) epi = AluExp::unary(AluOp::Tanh, epi);
  k.reduction = Reduction{AluOp::Add, kk, epi};
  return k;
}

void add_matmuls(std::vector<NamedKernel>& out) {
  struct Shape {
    int64_t m, k, n;
  };
  const Shape shapes[] = {{8, 16, 8},  {13, 7, 24},  {33, 65, 40},  {5, 3, 4},      {1, 1, 4},
                          {9, 100, 12}, {7, 5, 30},  {64, 64, 64},  {37, 300, 532}, {16, 257, 260}};
  const char* factor_names[] = {"load", "transposed", "relu"};
  for (const Shape& s : shapes)
    for (int epi = 0; epi < 4; epi++)
      for (bool swap : {false, true})
        for (Factor fa : {Factor::Load, Factor::Relu})
          for (Factor fb : {Factor::Load, Factor::Transposed, Factor::Relu}) {
            // The full cross product on the small shapes; the packed sizes with plain factors
            // and with each evaluated factor once.
            if (s.m * s.n > 4096 && (swap || epi % 2 == 1)) continue;
            std::string name = "matmul " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                               std::to_string(s.n) + " epi" + std::to_string(epi) + (swap ? " swap" : "") +
                               " A=" + factor_names[int(fa)] + " B=" + factor_names[int(fb)];
            out.push_back({name, matmul(s.m, s.k, s.n, epi, swap, fa, fb)});
          }
}

// The kernels of one warm call of jit(f) on the cpu device.
std::vector<Kernel> kernels_of(const Fn& f, const std::vector<Tree>& args) {
  Fn jf = kiln::jit(f);
  jf(args);
  frontend::KernelRecorder rec;
  jf(args);
  return rec.kernels();
}

Array rnd(const std::vector<int64_t>& shape, uint32_t seed) {
  return kiln::random::normal(kiln::random::key(seed), shape);
}

void add_recorded(std::vector<NamedKernel>& out, const std::string& name, const Fn& f,
                  const std::vector<Tree>& args) {
  std::vector<Kernel> ks = kernels_of(f, args);
  for (size_t i = 0; i < ks.size(); i++) out.push_back({name + " #" + std::to_string(i), ks[i]});
}

void add_jit_kernels(std::vector<NamedKernel>& out) {
  set_default_device("cpu");
  for (auto [m, k, n] : {std::tuple{32, 48, 20}, std::tuple{128, 300, 260}}) {
    std::vector<Tree> args{Tree(rnd({m, k}, 1)), Tree(rnd({k, n}, 2)), Tree(rnd({n}, 3))};
    std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    add_recorded(out, "dense relu(x @ w + b) " + shape, [](const std::vector<Tree>& a) {
      return Tree(np::maximum(np::matmul(a[0].as_array(), a[1].as_array()) + a[2].as_array(), 0.0f));
    }, args);
    // Its gradients: x^T @ dy and dy @ w^T, with the relu mask fused into a factor.
    add_recorded(out, "dense grad " + shape, kiln::grad([](const std::vector<Tree>& a) {
      Array y = np::maximum(np::matmul(a[0].as_array(), a[1].as_array()) + a[2].as_array(), 0.0f);
      return Tree(np::sum(y * y));
    }, {0, 1, 2}), args);
  }
  for (auto [b, m, k, n] : {std::tuple{3, 9, 12, 16}, std::tuple{4, 17, 33, 30}}) {
    std::vector<Tree> args{Tree(rnd({b, m, k}, 4)), Tree(rnd({b, k, n}, 5))};
    std::string shape = std::to_string(b) + "x" + std::to_string(m) + "x" + std::to_string(k) + "x" +
                        std::to_string(n);
    add_recorded(out, "batched matmul " + shape, [](const std::vector<Tree>& a) {
      return Tree(np::matmul(a[0].as_array(), a[1].as_array()));
    }, args);
  }
  struct ConvCase {
    std::vector<int64_t> x, w, strides, dilation;
    lax::Padding padding;
    int64_t groups;
    bool bias_relu;
  };
  const ConvCase convs[] = {
      {{2, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, std::string("SAME"), 1, false},     // padded
      {{3, 1, 12, 12}, {8, 1, 5, 5}, {1, 1}, {1, 1}, std::string("VALID"), 1, true},   // MNIST conv 1
      {{2, 6, 9, 9}, {8, 6, 3, 3}, {1, 1}, {1, 1}, std::string("VALID"), 1, true},     // 7x7 columns
      {{2, 4, 11, 10}, {8, 2, 3, 2}, {2, 1}, {1, 2}, std::string("SAME"), 2, false},   // strided, grouped
      {{2, 16, 20, 20}, {32, 16, 3, 3}, {1, 1}, {1, 1}, std::string("SAME"), 1, true}, // packed sizes
  };
  for (size_t ci = 0; ci < std::size(convs); ci++) {
    const ConvCase& c = convs[ci];
    const int64_t out_channels = c.w[0];
    std::vector<Tree> args{Tree(rnd(c.x, 6)), Tree(rnd(c.w, 7)), Tree(rnd({out_channels, 1, 1}, 8))};
    auto forward = [c](const std::vector<Tree>& a) {
      Array y = lax::conv_general_dilated(a[0].as_array(), a[1].as_array(), c.strides, c.padding, {},
                                          c.dilation, std::nullopt, c.groups);
      return c.bias_relu ? np::maximum(y + a[2].as_array(), 0.0f) : y;
    };
    const std::string name = "conv" + std::to_string(ci);
    add_recorded(out, name + " forward", [forward](const std::vector<Tree>& a) { return Tree(forward(a)); },
                 args);
    // Both gradients (input and filter) of a loss through it.
    add_recorded(out, name + " grad", kiln::grad([forward](const std::vector<Tree>& a) {
      Array y = forward(a);
      return Tree(np::sum(y * y));
    }, {0, 1}), args);
  }
}

std::vector<NamedOptions> option_sets() {
  std::vector<NamedOptions> out;
  auto add = [&](const std::string& name, auto&& set) {
    wasm::CodegenOptions o;
    set(o);
    out.push_back({name, o});
  };
  add("default", [](auto&) {});
  add("fma", [](auto& o) { o.fma = true; });
  add("shared", [](auto& o) { o.shared_memory = true; });
  add("fma shared", [](auto& o) { o.fma = true, o.shared_memory = true; });
  add("no pack", [](auto& o) { o.tile_pack = -1; });
  add("pack", [](auto& o) { o.tile_pack = 1; });
  add("fma pack", [](auto& o) { o.fma = true, o.tile_pack = 1; });
  add("blocks 8x16", [](auto& o) { o.tile_panel = 8, o.tile_kblock = 16; });
  add("blocks 8x16 pack", [](auto& o) { o.tile_panel = 8, o.tile_kblock = 16, o.tile_pack = 1; });
  add("tile 1x1", [](auto& o) { o.tile_rows = 1, o.tile_vecs = 1; });
  add("tile 3x3", [](auto& o) { o.tile_rows = 3, o.tile_vecs = 3; });
  add("tile 6x2 fma", [](auto& o) { o.tile_rows = 6, o.tile_vecs = 2, o.fma = true; });
  add("tile 2x1 blocks 8x16", [](auto& o) { o.tile_rows = 2, o.tile_vecs = 1, o.tile_panel = 8, o.tile_kblock = 16; });
  add("tile 3x1 blocks 8x5 pack", [](auto& o) {
    o.tile_rows = 3, o.tile_vecs = 1, o.tile_panel = 8, o.tile_kblock = 5, o.tile_pack = 1;
  });
  add("no tile", [](auto& o) { o.tile = false; });
  return out;
}

}  // namespace

int main() {
  std::vector<NamedKernel> kernels;
  add_matmuls(kernels);
  add_jit_kernels(kernels);
  const std::vector<NamedOptions> options = option_sets();
  uint64_t all = 1469598103934665603ull;
  int modules = 0, tiled = 0, packed_a = 0, evaluated_b = 0;
  for (const NamedKernel& nk : kernels) {
    auto ct = wasm::find_contraction(nk.kernel);
    if (ct && !wasm::a_in_place(*ct)) packed_a++;
    if (ct && !wasm::b_in_place(*ct)) evaluated_b++;
    for (const NamedOptions& no : options) {
      wasm::CompiledKernel ck = wasm::compile_kernel(nk.kernel, no.options);
      const uint64_t h = fnv1a(ck.bytes);
      std::printf("%016llx %6zu bytes tiled=%d grain=%lld imports=%zu  %s | %s\n", (unsigned long long)h,
                  ck.bytes.size(), int(ck.tiled), (long long)ck.grain, ck.imports.size(), nk.name.c_str(),
                  no.name.c_str());
      all = (all ^ h) * 1099511628211ull;
      modules++;
      tiled += ck.tiled;
    }
  }
  std::printf("# %zu kernels (%d contractions with A evaluated into scratch, %d with B not in place)"
              " x %zu option sets = %d modules, %d tiled; digest of all %016llx\n",
              kernels.size(), packed_a, evaluated_b, options.size(), modules, tiled, (unsigned long long)all);
}
