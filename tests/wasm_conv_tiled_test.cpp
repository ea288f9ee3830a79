// Convolutions, their gradients and batched matmuls through the wasm tiled loop: the kernels
// jit compiles for them (recorded on the cpu device) must be found as contractions, take the
// tiled loop, and give the cpu interpreter's bits for every tile shape and cache block.
#ifdef __EMSCRIPTEN__
#include <gtest/gtest.h>

#include <random>

#include "backend/wasm/wasm_codegen.h"
#include "backend/wasm/wasm_tiled.h"
#include "frontend/array_impl.h"
#include "kiln/kiln.h"
#include "wasm_test_util.h"

namespace wasm_conv_tiled_test {

namespace {

using namespace kiln;
using namespace kiln::wasm_test;
namespace np = kiln::numpy;

// Inputs sized to what each load can reach (index ranges are known to the expression).
std::vector<Bytes> inputs_for(const Kernel& k, std::mt19937& rng) {
  std::vector<int64_t> count(k.inputs.size(), 0);
  auto visit = [&](const AluExp& e) {
    e.visit([&](const AluNode& n) {
      if (n.op == AluOp::Load)
        count[size_t(n.arg)] = std::max(count[size_t(n.arg)], n.src[0].node().vmax + 1);
    });
  };
  visit(k.exp);
  if (k.reduction) visit(k.reduction->epilogue);
  std::vector<Bytes> ins;
  for (size_t i = 0; i < k.inputs.size(); i++) ins.push_back(special_values(k.inputs[i], size_t(count[i]), rng));
  return ins;
}

// The kernels of one warm call of jit(f) on the cpu device.
std::vector<Kernel> kernels_of(const Fn& f, const std::vector<Tree>& args) {
  Fn jf = kiln::jit(f);
  jf(args);
  kiln::frontend::KernelRecorder rec;
  jf(args);
  return rec.kernels();
}

Array rnd(std::vector<int64_t> shape, uint32_t seed) {
  return kiln::random::normal(kiln::random::key(seed), shape);
}

struct ConvCase {
  std::vector<int64_t> x, w, strides, dilation;
  lax::Padding padding;
  int64_t groups;
};

// Forward, then the gradients of a loss through it with respect to input and filter.
Fn conv_loss(const ConvCase& c) {
  return [c](const std::vector<Tree>& a) {
    Array y = lax::conv_general_dilated(a[0].as_array(), a[1].as_array(), c.strides, c.padding, {},
                                        c.dilation, std::nullopt, c.groups);
    return Tree(np::sum(y * y));
  };
}

const ConvCase kConvs[] = {
    {{2, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, std::string("SAME"), 1},     // padded
    {{3, 1, 12, 12}, {8, 1, 5, 5}, {1, 1}, {1, 1}, std::string("VALID"), 1},  // MNIST conv 1
    {{2, 6, 9, 9}, {8, 6, 3, 3}, {1, 1}, {1, 1}, std::string("VALID"), 1},    // 7x7: columns not a multiple of 4
    {{2, 4, 11, 10}, {8, 2, 3, 2}, {2, 1}, {1, 2}, std::string("SAME"), 2},   // strides, dilation, groups
};

TEST(WasmConvTiled, ConvolutionKernelsAreTiledAndBitExact) {
  std::mt19937 rng(21);
  auto& be = wasm_be();
  const wasm::CodegenOptions saved = be.options();
  int tiled_total = 0;
  for (const ConvCase& c : kConvs) {
    set_default_device("cpu");
    std::vector<Tree> args{Tree(rnd(c.x, 1)), Tree(rnd(c.w, 2))};
    auto fwd = kernels_of([&](const std::vector<Tree>& a) {
      return Tree(lax::conv_general_dilated(a[0].as_array(), a[1].as_array(), c.strides, c.padding, {},
                                            c.dilation, std::nullopt, c.groups));
    }, args);
    auto bwd = kernels_of(kiln::grad(conv_loss(c), {0, 1}), args);
    set_default_device("wasm");
    ASSERT_EQ(fwd.size(), 1u);
    EXPECT_TRUE(wasm::compile_kernel(fwd[0]).tiled) << fwd[0].to_string();
    // Default blocks, then small register tiles and cache blocks (many K blocks with A
    // packed per block, several column panels), then no packing of in-place B.
    for (int opt = 0; opt < 3; opt++) {
      wasm::CodegenOptions o;
      if (opt == 1) o.tile_rows = 3, o.tile_vecs = 1, o.tile_panel = 8, o.tile_kblock = 5;
      if (opt == 2) o.tile_pack = -1;
      be.set_options(o);
      for (const Kernel& k : fwd) expect_same(k, inputs_for(k, rng));
      for (const Kernel& k : bwd) {
        if (k.reduction && wasm::compile_kernel(k, o).tiled) tiled_total++;
        expect_same(k, inputs_for(k, rng));
      }
    }
  }
  be.set_options(saved);
  // Each case's filter gradient and input-patch gradient are contractions too.
  EXPECT_GE(tiled_total, 3 * 2 * int(std::size(kConvs)));
}

TEST(WasmConvTiled, BatchedMatmulIsTiledAndBitExact) {
  Unfused unfused;
  std::mt19937 rng(22);
  set_default_device("cpu");
  std::vector<Tree> args{Tree(rnd({3, 9, 12}, 3)), Tree(rnd({3, 12, 16}, 4))};
  auto ks = kernels_of([](const std::vector<Tree>& a) {
    return Tree(np::matmul(a[0].as_array(), a[1].as_array()));
  }, args);
  set_default_device("wasm");
  ASSERT_EQ(ks.size(), 1u);
  auto c = wasm::find_contraction(ks[0]);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->batch, 3);
  EXPECT_EQ(c->m, 9);
  EXPECT_EQ(c->n, 16);
  EXPECT_EQ(c->k, 12);
  EXPECT_TRUE(wasm::a_in_place(*c) && wasm::b_in_place(*c));
  EXPECT_EQ(c->a.cb, 9 * 12);
  EXPECT_EQ(c->b.cb, 12 * 16);
  EXPECT_TRUE(wasm::compile_kernel(ks[0]).tiled);
  expect_same(ks[0], inputs_for(ks[0], rng));
}

// Grouped-query attention in a decode step: per kv head (the batch) 3 query heads (rows), fewer
// than MR, against the cache's keys (B transposed: packed) and values (B in place). The tile
// takes exactly those rows; before, a batch of fewer rows than MR tiled none of them.
TEST(WasmConvTiled, BatchesOfFewerRowsThanATileAreTiledAndBitExact) {
  Unfused unfused;
  std::mt19937 rng(23);
  set_default_device("cpu");
  std::vector<Tree> args{Tree(rnd({3, 3, 64}, 5)), Tree(rnd({40, 3, 64}, 6)), Tree(rnd({3, 3, 40}, 7))};
  auto ks = kernels_of([](const std::vector<Tree>& a) {
    const Array keys = np::transpose(a[1].as_array(), std::vector<int>{1, 2, 0});    // [h, d, c]
    const Array values = np::transpose(a[1].as_array(), std::vector<int>{1, 0, 2});  // [h, c, d]
    return Tree(std::vector<Tree>{Tree(np::matmul(a[0].as_array(), keys)),
                                  Tree(np::matmul(a[2].as_array(), values))});
  }, args);
  set_default_device("wasm");
  ASSERT_EQ(ks.size(), 2u);
  int tiled = 0;
  for (const Kernel& k : ks) {
    auto c = wasm::find_contraction(k);
    ASSERT_TRUE(c.has_value()) << k.to_string();
    EXPECT_EQ(c->batch, 3);
    EXPECT_EQ(c->m, 3);
    const wasm::TileShape t = wasm::fit_tile_to_rows(*c, wasm::TileShape{});
    EXPECT_EQ(t.rows, 3);
    EXPECT_EQ(t.vecs, 2);
    tiled += wasm::compile_kernel(k).tiled;
    expect_same(k, inputs_for(k, rng));
  }
  EXPECT_EQ(tiled, 2);
  // One row (a matvec) and rows enough for a tile keep the tile as it was.
  ContractionShape one;
  one.m = 1, one.n = 64;
  EXPECT_EQ(wasm::fit_tile_to_rows(one, wasm::TileShape{}).rows, 4);
  ContractionShape two;
  two.m = 2, two.n = 12;  // 4 accumulators per row, but 12 columns: 3 vectors in whole tiles
  EXPECT_EQ(wasm::fit_tile_to_rows(two, wasm::TileShape{}).vecs, 3);
}

// A filter gradient (one batch, B packed) is split into one piece per thread: each piece
// packs all of B again. A forward convolution (a batch per image) keeps the finer split.
TEST(WasmConvTiled, OneBatchPackedContractionsSplitPerThread) {
  set_default_device("cpu");
  const ConvCase& c = kConvs[1];  // MNIST conv 1
  std::vector<Tree> args{Tree(rnd(c.x, 1)), Tree(rnd(c.w, 2))};
  auto fwd = kernels_of([&](const std::vector<Tree>& a) {
    return Tree(lax::conv_general_dilated(a[0].as_array(), a[1].as_array(), c.strides, c.padding, {},
                                          c.dilation, std::nullopt, c.groups));
  }, args);
  auto bwd = kernels_of(kiln::grad(conv_loss(c), {1}), args);
  set_default_device("wasm");
  ASSERT_EQ(fwd.size(), 1u);
  const wasm::CompiledKernel f = wasm::compile_kernel(fwd[0]);
  EXPECT_TRUE(f.tiled && !f.split_per_thread);
  int filter_gradients = 0;
  for (const Kernel& k : bwd) {
    auto ct = wasm::find_contraction(k);
    if (!ct || ct->batch != 1) continue;
    const wasm::CompiledKernel ck = wasm::compile_kernel(k);
    EXPECT_TRUE(ck.tiled && ck.split_per_thread) << k.to_string();
    filter_gradients++;
  }
  EXPECT_EQ(filter_gradients, 1);
}

// Columns left over from tiles of 4 NR would take the generic loop: the tile narrows to cover
// them, with more rows (dividing the rows where it can); B's evaluated columns that are not
// a multiple of 4 are padded to one (the ragged last tile).
TEST(WasmConvTiled, TileFitsTheColumns) {
  auto fit = [](int64_t m, int64_t n, bool b_in_place) {
    ContractionShape c;
    c.m = m, c.n = n, c.k = 9;
    c.b.linear = b_in_place, c.b.cj = 1;
    wasm::TileShape t;  // 4 rows x 2 vectors
    t = wasm::fit_tile_to_columns(c, t);
    return std::pair{t.rows, t.vecs};
  };
  EXPECT_EQ(fit(32, 64, false), std::pair(4, 2));   // whole tiles: unchanged
  EXPECT_EQ(fit(32, 100, false), std::pair(8, 1));  // conv 3x3 on 12x12: 100 columns
  EXPECT_EQ(fit(24, 25, false), std::pair(8, 1));   // MNIST conv 1's filter gradient: 25 -> 28
  EXPECT_EQ(fit(30, 100, false), std::pair(6, 1));  // 30 rows: 6 divides them, 8 and 7 do not
  EXPECT_EQ(fit(32, 25, true), std::pair(4, 2));    // in place: not padded, the tail stays generic
}

// The digit analysis on a padded convolution: rows are output channels, columns the output
// pixels, the batch the images; the filter is read in place and the padded window is not.
TEST(WasmConvTiled, ConvolutionAnalysis) {
  set_default_device("cpu");
  std::vector<Tree> args{Tree(rnd({2, 3, 8, 8}, 1)), Tree(rnd({4, 3, 3, 3}, 2))};
  auto ks = kernels_of([](const std::vector<Tree>& a) {
    return Tree(lax::conv(a[0].as_array(), a[1].as_array(), {1, 1}, std::string("SAME")));
  }, args);
  set_default_device("wasm");
  ASSERT_EQ(ks.size(), 1u);
  auto c = analyze_contraction(ks[0]);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->batch, 2);
  EXPECT_EQ(c->m, 4);
  EXPECT_EQ(c->n, 64);
  EXPECT_EQ(c->k, 27);
  EXPECT_TRUE(c->a.linear);  // w[o * 27 + r]
  EXPECT_EQ(c->a.ci, 27);
  EXPECT_EQ(c->a.cr, 1);
  EXPECT_EQ(c->a.cb, 0);
  EXPECT_FALSE(c->b.linear);  // where(in the image, x[...], 0)
  // The same product reduced by max is not a contraction.
  Kernel k = ks[0];
  k.reduction->op = AluOp::Max;
  EXPECT_FALSE(analyze_contraction(k).has_value());
}

}  // namespace
}  // namespace wasm_conv_tiled_test
#endif  // __EMSCRIPTEN__
