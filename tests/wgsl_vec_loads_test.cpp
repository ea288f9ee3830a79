// backend/webgpu/wgsl_vec_loads: which loads of an unrolled chunk become one vec4 load (the
// WGSL itself runs in js/test/webgpu.test.ts, whose quantized matvecs take this path).
#include <gtest/gtest.h>

#include "backend/webgpu/wgsl_vec_loads.h"
#include "ir/reduction_unroll.h"

namespace {

using namespace kiln;

AluExp ridx(int64_t k) { return AluExp::var(VarId::Ridx, DType::Int32, k - 1); }
AluExp gidx(int64_t n) { return AluExp::var(VarId::Gidx, DType::Int32, n - 1); }

// A q4 matvec term: word (g, ridx // 8) shifted by (ridx % 8) * 4, times x[ridx].
AluExp q4_term(int64_t n, int64_t k) {
  AluExp r = ridx(k);
  AluExp word = AluExp::load(DType::Uint32, 0, gidx(n) * (k / 8) + r / 8);
  AluExp code = AluExp::binary(AluOp::Shr, word, AluExp::cast(DType::Uint32, (r % 8) * 4));
  return AluExp::binary(AluOp::Mul, AluExp::cast(DType::Float32, code), AluExp::load(DType::Float32, 1, r));
}

TEST(WgslVecLoads, KnownMultiples) {
  EXPECT_EQ(webgpu::known_multiple(ridx(64) * 32), 32);
  EXPECT_EQ(webgpu::known_multiple(ridx(64) * 32 + gidx(8) * 12), 4);
  EXPECT_EQ(webgpu::known_multiple(ridx(64) * 32 + 2), 2);
  EXPECT_EQ(webgpu::known_multiple(ridx(64)), 1);
}

TEST(WgslVecLoads, ChunkOfAMatvecReadsXAndTheWordsByFour) {
  // Chunks of 32 values: x[ridx * 32 + u] in 8 quads; the 4 words of a row's block
  // (g * 16 + ridx * 4 + w) in 1 quad, as g * 16 is a multiple of 4.
  std::vector<AluExp> chunk = unroll_reduction(q4_term(8, 128), 128, 32);
  std::vector<webgpu::VecLoad> quads = webgpu::find_vec_loads(chunk);
  int x = 0, words = 0;
  for (const auto& q : quads) (q.arg == 1 ? x : words)++;
  EXPECT_EQ(x, 8);
  EXPECT_EQ(words, 1);
  for (const auto& q : quads)
    for (int lane = 0; lane < 4; lane++) EXPECT_EQ(q.lanes[size_t(lane)]->op, AluOp::Load);
}

TEST(WgslVecLoads, NoQuadWithoutAlignmentOrAllFourLanes) {
  // x[ridx * 8 + u + 2]: the lanes of each block of 4 are there, but the base is not a
  // known multiple of 4 plus an aligned offset for the first and last pairs.
  AluExp r = ridx(64);
  std::vector<AluExp> shifted;
  for (int u = 0; u < 8; u++) shifted.push_back(AluExp::load(DType::Float32, 0, r * 6 + u));
  EXPECT_TRUE(webgpu::find_vec_loads(shifted).empty());  // 6 * ridx: only a multiple of 2
  std::vector<AluExp> three;
  for (int u = 0; u < 3; u++) three.push_back(AluExp::load(DType::Float32, 0, r * 8 + u));
  EXPECT_TRUE(webgpu::find_vec_loads(three).empty());  // lane 3 missing
  std::vector<AluExp> bytes;
  for (int u = 0; u < 4; u++) bytes.push_back(AluExp::load(DType::Float16, 0, r * 8 + u));
  EXPECT_TRUE(webgpu::find_vec_loads(bytes).empty());  // 2-byte elements
}

}  // namespace
