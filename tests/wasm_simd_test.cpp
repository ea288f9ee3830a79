// The SIMD128 loop and the register-tiled contractions of the wasm backend, bit for bit
// against the cpu interpreter, and checks that the kernels meant to vectorize do.
#ifdef __EMSCRIPTEN__
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "backend/wasm/wasm_codegen.h"
#include "backend/wasm/wasm_tiled.h"
#include "wasm_test_util.h"

namespace wasm_simd_test {

namespace {

using namespace kiln;
using namespace kiln::wasm_test;

// Index patterns views produce, over an output of n = rows x cols elements.
AluExp view_index(int pattern, const AluExp& g, int64_t rows, int64_t cols) {
  switch (pattern) {
    case 0: return g;                                    // contiguous
    case 1: return g / cols;                             // broadcast along rows (a column)
    case 2: return g % cols;                             // broadcast along columns (a row)
    case 3: return g * 2 + AluExp::idx(1);               // strided
    case 4: return AluExp::idx(rows * cols - 1) - g;     // flipped
    case 5: return (g % cols) * rows + g / cols;         // transposed
    case 6: return g + AluExp::idx(-3);                  // shifted: reads 0 before the start
    case 7: return (g / 2) % cols + (g / (2 * cols)) * cols;  // pairs (a pooling window's owner)
    case 8: return g + AluExp::idx(1) - (g % 2) * 2;    // neighbours swapped (RoPE's pairs)
    default: return AluExp::idx(rows * cols - 1) - g / 2;  // flipped pairs
  }
}

TEST(WasmSimd, ViewPatternsOnEveryVectorDtype) {
  std::mt19937 rng(11);
  int vectorized = 0, total = 0;
  for (auto [rows, cols] : {std::pair{1, 4}, std::pair{3, 16}, std::pair{7, 9}, std::pair{16, 64}, std::pair{5, 3}}) {
    const int64_t n = int64_t(rows) * cols;
    for (DType dt : {DType::Float32, DType::Int32, DType::Uint32, DType::Bool, DType::Float16, DType::Float64}) {
      for (int pa = 0; pa < 10; pa++) {
        int pb = (pa * 3 + 1) % 10;
        AluExp g = gidx(n);
        Kernel k;
        k.size = n;
        k.inputs = {dt, dt};
        AluExp a = AluExp::load(dt, 0, view_index(pa, g, rows, cols));
        AluExp b = AluExp::load(dt, 1, view_index(pb, g, rows, cols));
        AluOp op = dt == DType::Bool ? AluOp::Xor : is_float(dt) ? AluOp::Max : AluOp::Sub;
        k.exp = AluExp::binary(op, AluExp::binary(AluOp::Add == op ? AluOp::Mul : op, a, b),
                               dt == DType::Bool ? a : AluExp::binary(AluOp::Mul, a, b));
        bool simd = wasm::compile_kernel(k).simd_loop;
        vectorized += simd;
        total++;
        // float32/int32/uint32 outputs of at least 4 elements take the SIMD loop.
        if (n >= 4 && (dt == DType::Float32 || dt == DType::Int32 || dt == DType::Uint32))
          EXPECT_TRUE(simd) << k.to_string();
        expect_same(k, {special_values(dt, size_t(2 * n + 2), rng), special_values(dt, size_t(n), rng)});
      }
    }
  }
  EXPECT_GT(vectorized, total / 3);
}

// Contiguous loads skip their per-block bounds check when the dispatch's buffers cover the
// loads' whole index range; a buffer shorter than that must still read 0 past its end.
TEST(WasmSimd, ContiguousLoadsFromShortBuffersReadZero) {
  std::mt19937 rng(13);
  const int64_t n = 203;
  AluExp g = gidx(n);
  Kernel k;
  k.size = n;
  k.inputs = {DType::Float32, DType::Float32};
  AluExp a = AluExp::load(DType::Float32, 0, g), b = AluExp::load(DType::Float32, 1, g + AluExp::idx(5));
  k.exp = AluExp::binary(AluOp::Add, AluExp::binary(AluOp::Mul, a, a), b);
  ASSERT_TRUE(wasm::compile_kernel(k).simd_loop);
  for (int64_t short_a : {int64_t(0), int64_t(1), int64_t(100)})
    for (int64_t short_b : {int64_t(0), int64_t(6), int64_t(150)})
      expect_same(k, {special_values(DType::Float32, size_t(n - short_a), rng),
                      special_values(DType::Float32, size_t(n + 5 - short_b), rng)});
}

// Larger random pointwise kernels than the scalar test, so that blocks and tails both run.
TEST(WasmSimd, RandomPointwiseKernels) {
  std::mt19937 rng(12);
  int vectorized = 0;
  for (int t = 0; t < 200; t++) {
    RandomKernel rk{rng, int64_t(4 + rng() % 200), {}};
    DType dt = kAll[rng() % 6];
    AluExp g = gidx(rk.n);
    Kernel k;
    k.size = rk.n;
    k.exp = rk.expr(dt, 1 + int(rng() % 4), g, nullptr);
    k.inputs = rk.inputs;
    vectorized += wasm::compile_kernel(k).simd_loop;
    expect_same(k, inputs_for(k.inputs, rng, size_t(rk.n) * 3));
  }
  EXPECT_GT(vectorized, 40);  // measured 2026-12-03: about a third of them
}

// A bias gradient's sum over images and pixels (channels c of [b, c, p]: index
// (r / p) c p + g p + r % p) and a pooling window's count (a stride-2 gather) take the SIMD
// loop: their index is one per step plus the lane's stride, computed once for 4 outputs.
TEST(WasmSimd, StridedGatherReductionsVectorize) {
  std::mt19937 rng(14);
  const int64_t b = 5, c = 12, p = 22;
  AluExp g = gidx(c), r = AluExp::var(VarId::Ridx, DType::Int32, b * p - 1);
  Kernel bias;
  bias.size = c;
  bias.inputs = {DType::Float32};
  bias.exp = AluExp::load(DType::Float32, 0, (r / p) * (c * p) + g * p + r % p);
  bias.reduction = Reduction{AluOp::Add, b * p, AluExp::var(VarId::Acc, DType::Float32, 0)};
  EXPECT_TRUE(wasm::compile_kernel(bias).simd_loop);
  expect_same(bias, inputs_for(bias.inputs, rng, size_t(b * c * p)));

  const int64_t n = 4 * 9;  // windows of 2 over rows of 2 n
  AluExp gw = gidx(n), rw = AluExp::var(VarId::Ridx, DType::Int32, 1);
  Kernel count;
  count.size = n;
  count.inputs = {DType::Float32, DType::Float32};
  AluExp hit = AluExp::binary(AluOp::CmpEq, AluExp::load(DType::Float32, 0, gw * 2 + rw),
                              AluExp::load(DType::Float32, 1, gw));
  count.exp = AluExp::where(hit, AluExp::constant(DType::Float32, 1), AluExp::constant(DType::Float32, 0));
  AluExp acc = AluExp::var(VarId::Acc, DType::Float32, 0);
  count.reduction = Reduction{AluOp::Add, 2, AluExp::binary(AluOp::Div, AluExp::load(DType::Float32, 1, gw), acc)};
  EXPECT_TRUE(wasm::compile_kernel(count).simd_loop);
  expect_same(count, inputs_for(count.inputs, rng, size_t(2 * n)));
}

TEST(WasmSimd, RandomReductions) {
  std::mt19937 rng(13);
  const AluOp ops[] = {AluOp::Add, AluOp::Mul, AluOp::Max, AluOp::Min};
  int vectorized = 0;
  for (int t = 0; t < 150; t++) {
    RandomKernel rk{rng, int64_t(4 * (1 + rng() % 20) + rng() % 3), {}};
    int64_t rsize = int64_t(rng() % 20);
    DType dt = kAll[1 + rng() % 5];
    AluExp g = gidx(rk.n), r = AluExp::var(VarId::Ridx, DType::Int32, std::max<int64_t>(rsize - 1, 0));
    Kernel k;
    k.size = rk.n;
    // Reductions whose term reads contiguous or broadcast rows (the kind that vectorizes).
    AluExp term = AluExp::load(dt, 0, r * rk.n + g);
    rk.inputs.push_back(dt);
    if (rng() % 2) term = AluExp::binary(AluOp::Mul, term, rk.expr(dt, 1, g, &r));
    k.exp = term;
    AluExp acc = AluExp::var(VarId::Acc, dt, 0);
    AluExp epi = rng() % 2 ? acc : AluExp::binary(AluOp::Add, acc, rk.leaf(dt, g, nullptr));
    k.reduction = Reduction{ops[rng() % 4], rsize, epi};
    k.inputs = rk.inputs;
    vectorized += wasm::compile_kernel(k).simd_loop;
    expect_same(k, inputs_for(k.inputs, rng, size_t(rk.n * std::max<int64_t>(rsize, 1)) * 2));
  }
  EXPECT_GT(vectorized, 20);
}

TEST(WasmSimd, TiledMatmulIsBitExact) {
  std::mt19937 rng(14);
  auto& be = wasm_be();
  const wasm::CodegenOptions saved = be.options();
  // Register tiles; cache blocks (partial sums through the output) of 8 columns x 16 steps
  // (blocked 1), the same with B packed into scratch (2), and packing with the default blocks,
  // which these sizes leave as one block with a partial strip tail (3).
  for (auto [rows, vecs, blocked] : {std::tuple{4, 2, 0}, std::tuple{1, 1, 0}, std::tuple{3, 3, 0},
                                     std::tuple{6, 2, 0}, std::tuple{4, 4, 0}, std::tuple{4, 2, 1},
                                     std::tuple{2, 1, 1}, std::tuple{4, 2, 2}, std::tuple{3, 1, 2},
                                     std::tuple{4, 2, 3}}) {
    wasm::CodegenOptions o;
    o.tile_rows = rows;
    o.tile_vecs = vecs;
    if (blocked == 1 || blocked == 2) o.tile_panel = 8, o.tile_kblock = 16;
    o.tile_pack = blocked >= 2 ? 1 : -1;
    be.set_options(o);
    for (auto [m, kk, n] : {std::tuple{8, 16, 8}, std::tuple{13, 7, 24}, std::tuple{33, 65, 40},
                            std::tuple{5, 3, 4}, std::tuple{1, 1, 4}, std::tuple{9, 100, 12}}) {
      for (int epi = 0; epi < 4; epi++) {
        Kernel k = matmul(m, kk, n, epi, epi % 2 == 1);
        // One row is a plain vector (no rows to split off), and fewer than 4 NR columns make
        // no whole tile: both take the SIMD loop.
        EXPECT_EQ(wasm::compile_kernel(k, o).tiled, m > 1 && n >= 4 * vecs) << m << "x" << kk << "x" << n;
        expect_same(k, matmul_inputs(m, kk, n, rng));
      }
    }
  }
  be.set_options(saved);
}

// Packing and its cache blocks where they are chosen by size (B larger than 256 x 256), with
// K and N not multiples of the blocks (a partial last K block and a partial last panel).
TEST(WasmSimd, PackedMatmulAtDefaultSizeIsBitExact) {
  std::mt19937 rng(17);
  for (auto [m, kk, n] : {std::tuple{37, 300, 532}, std::tuple{16, 257, 260}}) {
    Kernel k = matmul(m, kk, n, 2);
    auto c = wasm::find_contraction(k);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(wasm::pack_pays(*c));
    EXPECT_TRUE(wasm::compile_kernel(k).tiled);
    expect_same(k, matmul_inputs(m, kk, n, rng));
  }
}

TEST(WasmSimd, ContractionAnalysis) {
  auto c = wasm::find_contraction(matmul(6, 5, 8, 0));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->m, 6);
  EXPECT_EQ(c->n, 8);
  EXPECT_EQ(c->k, 5);
  EXPECT_EQ(c->batch, 1);
  EXPECT_TRUE(c->a.linear && c->b.linear);
  EXPECT_EQ(c->a.ci, 5);  // a[i * 5 + r]
  EXPECT_EQ(c->a.cr, 1);
  EXPECT_EQ(c->b.cj, 1);  // b[r * 8 + j]
  EXPECT_EQ(c->b.cr, 8);
  EXPECT_EQ(c->a.hi, 29);
  EXPECT_EQ(c->b.hi, 39);
  // A transposed right operand (b[j * K + r]) is not read in place: it is gathered into
  // scratch, and the tiled loop stays bit-exact.
  Kernel t = matmul(6, 5, 8, 0);
  AluExp g = gidx(48), r = AluExp::var(VarId::Ridx, DType::Int32, 4);
  t.exp = AluExp::binary(AluOp::Mul, AluExp::load(DType::Float32, 0, (g / 8) * 5 + r),
                         AluExp::load(DType::Float32, 1, (g % 8) * 5 + r));
  auto ct = wasm::find_contraction(t);
  ASSERT_TRUE(ct.has_value());
  EXPECT_TRUE(wasm::a_in_place(*ct));
  EXPECT_FALSE(wasm::b_in_place(*ct));
  EXPECT_EQ(ct->b.cj, 5);
  EXPECT_TRUE(wasm::compile_kernel(t).tiled);
  std::mt19937 rng(15);
  expect_same(t, matmul_inputs(6, 5, 8, rng));
  // Fewer than 4 columns: not even one f32x4.
  EXPECT_FALSE(wasm::find_contraction(matmul(4, 4, 3, 0)).has_value());
}

// A right operand shorter than the indices reach must read 0 there, as on the cpu: the
// tile loop is skipped at run time and the bounds-checked loops do the work.
TEST(WasmSimd, TiledMatmulWithShortOperandReadsZero) {
  std::mt19937 rng(16);
  Kernel k = matmul(8, 9, 16, 1);
  EXPECT_TRUE(wasm::compile_kernel(k).tiled);
  expect_same(k, matmul_inputs(8, 9, 16, rng, 5));
  // The same with packing on: the pack loop must be skipped too (it reads B unchecked).
  auto& be = wasm_be();
  const wasm::CodegenOptions saved = be.options();
  wasm::CodegenOptions o;
  o.tile_pack = 1;
  be.set_options(o);
  expect_same(k, matmul_inputs(8, 9, 16, rng, 5));
  be.set_options(saved);
}

// A weight-only quantized matvec as models/quantized_weights.cpp builds it: 4-bit codes packed
// 8 per uint32 word, rows interleaved by 16, a scale and a min per 32 codes. The SIMD loop
// unrolls its reduction by 32 (the period of ridx // 8, ridx % 8 and ridx // 32) and shifts
// all lanes by one count; the sums stay bit for bit the cpu's (same order of additions).
// With a reduction size that 32 does not divide, it is not unrolled, and still exact. Loads
// inside the loop whose index is in bounds for the whole dispatch are plain loads with the
// copy's constant in the memarg offset.
Kernel packed_matvec(int64_t n, int64_t k, AluOp red) {
  AluExp g = gidx(n), r = AluExp::var(VarId::Ridx, DType::Int32, k - 1);
  AluExp word = AluExp::load(DType::Uint32, 1, (g / 16) * (k / 8 * 16) + g % 16 + (r / 8) * 16);
  AluExp count = AluExp::cast(DType::Uint32, (r % 8) * 4);
  AluExp code = AluExp::binary(AluOp::And, AluExp::binary(AluOp::Shr, word, count),
                               AluExp::constant(DType::Uint32, 15));
  AluExp block = (g / 16) * ((k + 31) / 32 * 16) + g % 16 + (r / 32) * 16;
  AluExp scale = AluExp::load(DType::Float32, 2, block), min = AluExp::load(DType::Float32, 3, block);
  AluExp w = AluExp::binary(AluOp::Add, AluExp::binary(AluOp::Mul, AluExp::cast(DType::Float32, code), scale), min);
  Kernel kern;
  kern.size = n;
  kern.inputs = {DType::Float32, DType::Uint32, DType::Float32, DType::Float32};
  kern.exp = AluExp::binary(AluOp::Mul, AluExp::load(DType::Float32, 0, r), w);
  kern.reduction = Reduction{red, k, AluExp::var(VarId::Acc, DType::Float32, 0)};
  return kern;
}

TEST(WasmSimd, PackedNibbleMatvecUnrollsAndIsBitExact) {
  std::mt19937 rng(21);
  for (auto [n, k, red, unroll] : {std::tuple{64, 96, AluOp::Add, 32}, std::tuple{48, 64, AluOp::Max, 32},
                                   std::tuple{32, 72, AluOp::Add, 1}}) {
    Kernel kern = packed_matvec(n, k, red);
    wasm::CompiledKernel ck = wasm::compile_kernel(kern);
    EXPECT_TRUE(ck.simd_loop);
    EXPECT_EQ(ck.reduction_unroll, unroll) << "n " << n << ", k " << k;
    const size_t blocks = size_t(n) * size_t((k + 31) / 32);
    std::vector<Bytes> ins = {special_values(DType::Float32, size_t(k), rng),
                              special_values(DType::Uint32, size_t(n * k / 8), rng),
                              special_values(DType::Float32, blocks, rng), special_values(DType::Float32, blocks, rng)};
    expect_same(kern, ins);
    // A short activation row: its loads are then bounds-checked (reading 0), not offset.
    ins[0].resize(ins[0].size() - 5 * 4);
    expect_same(kern, ins);
  }
}

// An in-bounds uniform load in the reduction loop is read where it is used (the unrolled
// matvec's activations): here idx[r] both as a scalar index of another load (checked: it may
// fall outside y) and splatted into a vector (the cast), and a[r * n + g] contiguous.
TEST(WasmSimd, InBoundsUniformLoadsAreReadWhereUsed) {
  std::mt19937 rng(5);
  const int64_t n = 16, k = 40;
  AluExp g = gidx(n), r = AluExp::var(VarId::Ridx, DType::Int32, k - 1);
  AluExp ix = AluExp::load(DType::Int32, 1, r);
  AluExp prod = AluExp::binary(AluOp::Mul, AluExp::load(DType::Float32, 0, r * n + g), AluExp::load(DType::Float32, 2, ix));
  Kernel kern;
  kern.size = n;
  kern.inputs = {DType::Float32, DType::Int32, DType::Float32};
  kern.exp = AluExp::binary(AluOp::Add, prod, AluExp::cast(DType::Float32, ix));
  kern.reduction = Reduction{AluOp::Add, k, AluExp::var(VarId::Acc, DType::Float32, 0)};
  EXPECT_TRUE(wasm::compile_kernel(kern).simd_loop);
  std::vector<Bytes> ins = {special_values(DType::Float32, size_t(n * k), rng), special_values(DType::Int32, size_t(k), rng),
                            special_values(DType::Float32, 8, rng)};
  expect_same(kern, ins);
  ins[1].resize(ins[1].size() - 3 * 4);  // a short idx: its loads are checked (reading 0)
  expect_same(kern, ins);
}


// Register blocking (wasm_simd_groups.cpp): a long reduction over enough outputs advances
// 4 blocks of 4 outputs per step, each in its own accumulator and in ridx order, so every
// output has the cpu's bits. n = 55 leaves one block of 4 to the one-block loop and 3
// outputs to the scalar tail; the 2-row product's blocks of 16 cross a row (its activation
// load differs between the groups), the 1-row one shares the activation among them.
Kernel blocked_product(int64_t rows, int64_t n, int64_t k, bool strided_b, AluOp red) {
  AluExp g = gidx(rows * n), r = AluExp::var(VarId::Ridx, DType::Int32, k - 1);
  AluExp a = AluExp::load(DType::Float32, 0, (g / n) * k + r);
  AluExp b = AluExp::load(DType::Float32, 1, strided_b ? (g % n) * k + r : r * n + g % n);
  Kernel kern;
  kern.size = rows * n;
  kern.inputs = {DType::Float32, DType::Float32, DType::Float32};
  kern.exp = AluExp::binary(AluOp::Mul, a, b);
  AluExp acc = AluExp::var(VarId::Acc, DType::Float32, 0);
  kern.reduction = Reduction{red, k, AluExp::binary(AluOp::Add, acc, AluExp::load(DType::Float32, 2, g % n))};
  return kern;
}

TEST(WasmSimd, RegisterBlockedReductionsAreBitExact) {
  KeepOptions keep;
  wasm::CodegenOptions o = keep.saved;
  o.tile = false;  // the 2-row products on the SIMD loop, not the tiled one
  keep.be.set_options(o);
  std::mt19937 rng(17);
  for (auto [rows, n, k, strided, red, groups] :
       {std::tuple{1, 55, 300, true, AluOp::Add, 4}, std::tuple{1, 55, 300, false, AluOp::Add, 4},
        std::tuple{2, 28, 40, true, AluOp::Add, 4}, std::tuple{1, 55, 64, true, AluOp::Max, 4},
        std::tuple{1, 6, 300, true, AluOp::Add, 1}, std::tuple{1, 55, 8, true, AluOp::Add, 1}}) {
    Kernel kern = blocked_product(rows, n, k, strided, red);
    wasm::CompiledKernel ck = wasm::compile_kernel(kern, o);
    EXPECT_TRUE(ck.simd_loop);
    EXPECT_EQ(ck.reduction_groups, groups) << "rows " << rows << ", n " << n << ", k " << k;
    std::vector<Bytes> ins = {special_values(DType::Float32, size_t(rows * k), rng),
                              special_values(DType::Float32, size_t(n * k), rng), special_values(DType::Float32, size_t(n), rng)};
    // Sums of finite values too (the special values make most sums inf or NaN).
    std::vector<Bytes> finite = ins;
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (Bytes& b : finite)
      for (size_t i = 0; i + 4 <= b.size(); i += 4) {
        const float v = u(rng) * (i % 12 == 0 ? 1e4f : 1.0f);
        std::memcpy(&b[i], &v, 4);
      }
    expect_same(kern, ins);
    expect_same(kern, finite);
    finite[1].resize(finite[1].size() - 6 * 4);  // a short b: its last loads read 0
    expect_same(kern, finite);
  }
}

}  // namespace
}  // namespace wasm_simd_test
#endif  // __EMSCRIPTEN__
